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


def test_analyze_measures_layers_that_exist_at_one_width_only(tmp_path):
    """Concat -> Conv is split per Concat input in 8-bit programs only (split_concat_conv), so
    its parts have no 16-bit twin: analyze measures them alone at 16 bits and gives null for
    "alone at 8 bits", and the 16-bit program's unsplit Conv the other way round (it failed
    with "--bits8 'c3/part0' matches no node" on the OCR recognizer)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array(rng.normal(0, s, shape).astype(np.float32), name) for name, shape, s in
             [("w1", (4, 3, 3, 3), 0.3), ("w2", (4, 3, 3, 3), 0.02), ("w3", (2, 8, 3, 3), 0.2)]]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], name="c1", pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "w2"], ["b"], name="c2", pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["a", "b"], ["ab"], name="cat", axis=1),
             helper.make_node("Conv", ["ab", "w3"], ["y"], name="c3", pads=[1, 1, 1, 1])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 16, 16])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "m.onnx")
    planted_samples(tmp_path)
    run_cli("analyze", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "--input",
            f"x={tmp_path / 'a.npy'}", "-o", tmp_path / "an", "-q")
    a = json.loads((tmp_path / "an" / "analysis.json").read_text())
    by = {l["name"]: l for l in a["layers"]}
    assert {"c1", "c2", "c3/part0", "c3"} <= set(by)
    part, whole = by["c3/part0"], by["c3"]
    assert part["alone_8bit"] is None and part["cost_at_8bit"] is None and part["alone_16bit"] is not None
    assert whole["alone_16bit"] is None and whole["gain_at_16bit"] is None and whole["alone_8bit"] is not None
    for l in a["layers"]:  # each measure that exists obeys its definition
        if l["alone_8bit"] is not None:
            assert abs(l["cost_at_8bit"] - (a["all_16bit"] - l["alone_8bit"])) < 1e-9
        if l["alone_16bit"] is not None:
            assert abs(l["gain_at_16bit"] - (l["alone_16bit"] - a["all_8bit"])) < 1e-9
    assert "c3" in a["rank_by_cost_at_8bit"] and "c3" not in a["rank_by_gain_at_16bit"]
    assert "c3/part0" in a["rank_by_gain_at_16bit"] and "c3/part0" not in a["rank_by_cost_at_8bit"]
    assert "c3/part0" in (tmp_path / "an" / "analysis.txt").read_text()
