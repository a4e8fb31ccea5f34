"""fixpoint analyze: two-sided per-layer precision sensitivity; compile --bits8."""
import json
import stat

from conftest import run_cli
from test_compare import planted_fault_model, planted_samples


def planted(tmp_path):
    planted_fault_model(tmp_path / "m.onnx")
    planted_samples(tmp_path)
    return ["--calib", f"x={tmp_path / 'calib.npy'}", "--input", f"x={tmp_path / 'a.npy'}", "--input",
            f"x={tmp_path / 'b.npy'}"]


def test_analyze_ranks_the_planted_fault_first_both_ways(tmp_path):
    args = planted(tmp_path)
    p = run_cli("analyze", tmp_path / "m.onnx", *args, "-o", tmp_path / "an")
    a = json.loads((tmp_path / "an" / "analysis.json").read_text())
    assert a["metric"] == "snr_db"
    assert a["all_16bit"] > a["all_8bit"] + 20  # the fault ruins int8
    by = {l["name"]: l for l in a["layers"]}
    assert set(by) == {"conv1", "conv2", "conv3"}
    assert a["rank_by_gain_at_16bit"][0] == "conv2" and a["rank_by_cost_at_8bit"][0] == "conv2"
    # conv2 alone at 16 bits recovers most of the all-16-bit quality; alone at 8 bits it loses most.
    assert by["conv2"]["gain_at_16bit"] > 20 and by["conv2"]["cost_at_8bit"] > 20
    for name in ["conv1", "conv3"]:  # the others: no gain alone, and a cost far below the fault's
        assert abs(by[name]["gain_at_16bit"]) < 3 and by[name]["cost_at_8bit"] < by["conv2"]["cost_at_8bit"] - 10
    for l in a["layers"]:  # the definitions of the two numbers
        assert abs(l["cost_at_8bit"] - (a["all_16bit"] - l["alone_8bit"])) < 1e-9
        assert abs(l["gain_at_16bit"] - (l["alone_16bit"] - a["all_8bit"])) < 1e-9
    rows = p.stdout.split("gain at 16")[1].splitlines()[1:]
    assert rows[0].split()[:3] == ["1", "conv2", "Conv"]
    assert "analyze: layer 3/3" in p.stderr  # progress lines
    assert "conv3" in (tmp_path / "an" / "analysis.txt").read_text()
    # --layers restricts the candidates.
    run_cli("analyze", tmp_path / "m.onnx", *args, "-o", tmp_path / "an1", "-q", "--layers", "conv1,conv3")
    a1 = json.loads((tmp_path / "an1" / "analysis.json").read_text())
    assert [l["name"] for l in a1["layers"]] == ["conv1", "conv3"]


def write_metric(path, body):
    path.write_text("#!/usr/bin/python3\nimport os, sys\nimport numpy as np\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_analyze_with_an_executable_metric(tmp_path):
    """--metric FILE: called with the fixed and float output folders (one subfolder per input
    set); its last stdout line is the score, higher is better."""
    args = planted(tmp_path)
    metric = write_metric(tmp_path / "neg_max_err.py", """
fixed, ref = sys.argv[1], sys.argv[2]
sets = sorted(os.listdir(ref))
assert sets == ["0", "1"] and sorted(os.listdir(fixed)) == sets
err = max(np.abs(np.load(f"{fixed}/{s}/y.npy") - np.load(f"{ref}/{s}/y.npy")).max() for s in sets)
print("some log line")
print(-err)
""")
    run_cli("analyze", tmp_path / "m.onnx", *args, "-o", tmp_path / "an", "-q", "--metric", metric)
    a = json.loads((tmp_path / "an" / "analysis.json").read_text())
    assert a["metric"] == str(metric) and a["float"] == 0.0  # float against itself
    assert a["all_8bit"] < a["all_16bit"] < 0
    assert a["rank_by_gain_at_16bit"][0] == "conv2" and a["rank_by_cost_at_8bit"][0] == "conv2"
    assert not (tmp_path / "an" / "metric_work").exists()  # scratch outputs removed


def test_analyze_errors_are_one_line(tmp_path):
    args = planted(tmp_path)
    missing = run_cli("analyze", tmp_path / "m.onnx", *args, "-o", tmp_path / "an", "--metric", tmp_path / "nope.py",
                      check=False)
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1 and "nope.py" in missing.stderr
    bad = write_metric(tmp_path / "bad.py", "print('accuracy: high')\n")
    p = run_cli("analyze", tmp_path / "m.onnx", *args, "-o", tmp_path / "an", "-q", "--metric", bad, check=False)
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and "bad.py" in p.stderr and "one number" in p.stderr
    crash = write_metric(tmp_path / "crash.py", "sys.exit(3)\n")
    p = run_cli("analyze", tmp_path / "m.onnx", *args, "-o", tmp_path / "an", "-q", "--metric", crash, check=False)
    assert p.returncode == 1 and "crash.py" in p.stderr and "exit status 3" in p.stderr
    p = run_cli("analyze", tmp_path / "m.onnx", *args, "-o", tmp_path / "an", "-q", "--layers", "nothing*", check=False)
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and "--layers" in p.stderr
    p = run_cli("analyze", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "--input",
                f"image={tmp_path / 'a.npy'}", "-o", tmp_path / "an", "-q", check=False)
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and "image" in p.stderr


def test_compile_bits8_keeps_layers_at_8_bits_in_a_16_bit_program(tmp_path):
    planted(tmp_path)
    calib = f"x={tmp_path / 'calib.npy'}"
    run_cli("compile", tmp_path / "m.onnx", "--calib", calib, "-o", tmp_path / "p", "-q", "--bits", "16",
            "--bits8", "conv2")
    bits = {l["name"]: l["bits"] for l in json.loads((tmp_path / "p" / "compile_report.json").read_text())["layers"]}
    assert bits == {"conv1": 16, "conv2": 8, "conv3": 16}
    p = run_cli("compile", tmp_path / "m.onnx", "--calib", calib, "-o", tmp_path / "p8", "-q", "--bits8", "conv2",
                check=False)
    assert p.returncode == 1 and "--bits8" in p.stderr and p.stderr.count("\n") == 1
