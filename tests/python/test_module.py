"""import fixpoint: compile, run, save/load, InferenceSession, compare, trace, errors (issue 14)."""
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import fixpoint
from conftest import BUILD, ROOT

CLI = os.path.join(BUILD, "fixpoint")
MODEL = os.path.join(ROOT, "models", "tiny_cnn.onnx")
CALIB = os.path.join(ROOT, "models", "tiny_cnn_input.npy")  # 4 images [4, 3, 32, 32]


def images(n, seed):
    return np.random.default_rng(seed).uniform(0, 1, (n, 3, 32, 32)).astype(np.float32)


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    return fixpoint.compile(MODEL, {"image": np.load(CALIB)})


def cli(*args):
    p = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p


def fxp_bytes(program, d):
    program.save(d)
    return (d / "model.fxp").read_bytes()


def test_every_calibration_form_gives_the_cli_artifact(tmp_path):
    """Stacked arrays, a list of samples, a generator (spooled to disk), a path and {name: path}
    give the same artifact bytes as `fixpoint compile --calib`."""
    cli("compile", MODEL, "--calib", f"image={CALIB}", "-o", tmp_path / "cli", "-q")
    want = (tmp_path / "cli" / "model.fxp").read_bytes()
    stacked = np.load(CALIB)
    forms = {"stacked": {"image": stacked},
             "list": [{"image": stacked[i:i + 1]} for i in range(len(stacked))],
             "generator": ({"image": stacked[i:i + 1]} for i in range(len(stacked))),
             "path": CALIB,
             "named path": {"image": CALIB}}
    for name, calib in forms.items():
        assert fxp_bytes(fixpoint.compile(MODEL, calib), tmp_path / name) == want, name


def test_run_equals_the_cli_byte_for_byte(prog, tmp_path):
    x = images(2, 1)
    np.save(tmp_path / "x.npy", x)
    prog.save(tmp_path / "p")
    cli("run", tmp_path / "p", "--input", f"image={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "o", "-q", "--raw")
    out = prog.run({"image": x})["probabilities"]
    assert out.dtype == np.float32 and out.shape == (2, 10)
    assert out.tobytes() == np.load(tmp_path / "o" / "probabilities.npy").tobytes()
    codes = prog.run_codes({"image": x})["probabilities"]
    assert codes.tobytes() == np.load(tmp_path / "o" / "probabilities.codes.npy").tobytes()
    # and the float reference session equals `fixpoint run MODEL.onnx`
    cli("run", MODEL, "--input", f"image={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "f", "-q")
    f = fixpoint.InferenceSession(MODEL).run(None, {"image": x})[0]
    assert f.tobytes() == np.load(tmp_path / "f" / "probabilities.npy").tobytes()


def test_four_python_threads_give_the_bytes_of_one(prog):
    xs = [images(1, 10 + i) for i in range(8)]
    want = [prog.run({"image": x})["probabilities"].tobytes() for x in xs]
    got = [[None] * len(xs) for _ in range(4)]

    def work(t):
        for k in range(3):
            for i, x in enumerate(xs):
                got[t][i] = prog.run({"image": x})["probabilities"].tobytes()

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g == want for g in got)


def test_save_load_and_inference_session(prog, tmp_path):
    prog.save(tmp_path / "p")
    again = fixpoint.load(tmp_path / "p")
    x = images(3, 2)
    assert again.run({"image": x})["probabilities"].tobytes() == prog.run({"image": x})["probabilities"].tobytes()
    assert again.report["subgraph_counts"] == prog.report["subgraph_counts"]
    assert "bits: 8" in again.report_text
    sess = fixpoint.InferenceSession(tmp_path / "p", threads=2)
    (inp,), (out,) = sess.get_inputs(), sess.get_outputs()
    assert (inp.name, inp.shape, inp.type) == ("image", ["batch", 3, 32, 32], "tensor(float)")
    assert (out.name, out.shape) == ("probabilities", ["batch", 10])
    (y,) = sess.run(["probabilities"], {"image": x})
    assert y.tobytes() == prog.run({"image": x})["probabilities"].tobytes()  # threads: same bits
    with pytest.raises(fixpoint.Error, match="output 'nosuch' is not an output"):
        sess.run(["nosuch"], {"image": x})
    # The artifact file itself, as users name it: the same program, its reports from its folder.
    fxp = tmp_path / "p" / "model.fxp"
    (z,) = fixpoint.InferenceSession(fxp).run(None, {"image": x})
    assert z.tobytes() == y.tobytes()
    assert fixpoint.load(fxp).report["subgraph_counts"] == prog.report["subgraph_counts"]
    # Any other file is not a program (an ONNX model is tried, and fails naming the file).
    (tmp_path / "notes.txt").write_text("FIXPOIN")
    with pytest.raises(fixpoint.Error, match="notes.txt"):
        fixpoint.load(tmp_path / "notes.txt")


def test_options_config_and_tidl_names(tmp_path):
    calib = {"image": np.load(CALIB)}
    p16 = fixpoint.compile(MODEL, calib, config={"tensor_bits": 16})
    assert {l["bits"] for l in p16.report["layers"]} == {16}
    p8 = fixpoint.compile(MODEL, calib, config={"tensor_bits": 16}, bits=8)  # keywords win
    assert {l["bits"] for l in p8.report["layers"]} == {8}
    mixed = fixpoint.compile(MODEL, calib, bits16=["op:Gemm"], shape={"image": [1, 3, 32, 32]})
    bits = {l["name"]: l["bits"] for l in mixed.report["layers"]}
    assert bits["gemm_19"] == 16 and bits["conv_3"] == 8
    assert mixed.inputs[0].shape == [1, 3, 32, 32]
    # The range search by keyword; its choice (a dict) reproduces the program without searching.
    searched = fixpoint.compile(MODEL, calib, range_search=True)
    rs = searched.report["range_search"]
    assert rs["output_snr_db"]["chosen"] >= rs["output_snr_db"]["calibrated"] and len(rs["tensors"]) > 0
    again = fixpoint.compile(MODEL, calib, range_factors=rs["factors"])
    assert fxp_bytes(again, tmp_path / "again") == fxp_bytes(searched, tmp_path / "searched")
    rounded = fixpoint.compile(MODEL, calib, adaptive_rounding=True).report["adaptive_rounding"]["layers"]
    assert {l["layer"] for l in rounded} >= {"gemm_19"} and sum(l["codes_changed"] for l in rounded) > 0
    per_tensor = fixpoint.compile(MODEL, calib, per_tensor_weights=True)  # one weight scale per layer
    assert per_tensor.report["weight_scales"] == "per tensor" and searched.report["weight_scales"] == "per output channel"
    float_prog = fixpoint.compile(open(MODEL, "rb").read(), bits=32)  # ONNX bytes, no calibration
    x = images(1, 3)
    assert float_prog.run({"image": x})["probabilities"].shape == (1, 10)


def test_compare_and_trace(prog, tmp_path):
    x = images(2, 4)
    r = fixpoint.compare(prog, [{"image": x[:1]}, {"image": x[1:]}])
    names = [l["name"] for l in r.layers]
    assert "conv_3" in names and r.worst and all(w in names for w in r.worst)
    out = [l for l in r.layers if l["output"] == "probabilities"][0]
    assert 20 < out["snr_db"] < 200, out
    r.to_html(tmp_path / "r.html")
    assert "<html" in (tmp_path / "r.html").read_text()[:200].lower()
    assert "conv_3" in r.table
    t = fixpoint.trace(prog, {"image": x})
    assert t["probabilities"].tobytes() == prog.run({"image": x})["probabilities"].tobytes()
    assert t["image"].shape == (2, 3, 32, 32) and len(t) > 5


@pytest.mark.parametrize("feeds,message", [
    (lambda x: {"image": x.astype(np.float64)}, "input 'image': model expects float32, got float64"),
    (lambda x: {"image": x[:, :, :16]}, "input 'image'"),
    (lambda x: {}, "missing input 'image'"),
    (lambda x: {"image": x, "extra": x}, "input 'extra' is not an input of the model"),
    (lambda x: {"image": np.asfortranarray(x)}, "not C-contiguous"),
    (lambda x: {"image": x.tolist()}, "expected a numpy array, got list"),
    (lambda x: [x], "expected a dict"),
])
def test_bad_inputs_raise_one_line_errors(prog, feeds, message):
    x = images(2, 5)
    with pytest.raises(fixpoint.Error) as e:
        prog.run(feeds(x))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_bad_artifact_option_and_model_raise_errors(tmp_path, prog):
    prog.save(tmp_path / "p")
    blob = bytearray((tmp_path / "p" / "model.fxp").read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    (tmp_path / "p" / "model.fxp").write_bytes(bytes(blob))
    cases = [(lambda: fixpoint.load(tmp_path / "p"), "checksum"),
             (lambda: fixpoint.load(tmp_path / "nosuch"), "nosuch"),
             (lambda: fixpoint.compile(MODEL, CALIB, nosuch=1), "unknown option 'nosuch'"),
             (lambda: fixpoint.compile(MODEL, CALIB, bits=12), "'bits' must be 8, 16 or 32"),
             (lambda: fixpoint.compile(MODEL, CALIB, bits16=3), "'bits16' must be a string or a list"),
             (lambda: fixpoint.compile(MODEL, CALIB, config={"tensor_bits": "x"}), "'tensor_bits': wrong value type"),
             (lambda: fixpoint.compile(MODEL, [{"nosuch": np.zeros((1, 3, 32, 32), np.float32)}]), "nosuch"),
             (lambda: fixpoint.compile(tmp_path / "missing.onnx", CALIB), "missing.onnx"),
             (lambda: fixpoint.compile(MODEL), "calib"),
             (lambda: fixpoint.InferenceSession(tmp_path / "missing.onnx"), "missing.onnx")]
    for f, message in cases:
        with pytest.raises(fixpoint.Error) as e:
            f()
        assert message in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_imports_with_no_environment_from_any_folder(tmp_path):
    """What scripts/install_python.sh promises (checked when BUILD is the installed build)."""
    p = subprocess.run(["/usr/bin/python3", "-c", "import fixpoint, os; print(os.path.dirname(fixpoint.__file__))"],
                       capture_output=True, text=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    if os.path.realpath(p.stdout.strip()) != os.path.realpath(os.path.join(BUILD, "python", "fixpoint")):
        pytest.skip(f"the installed module is another build's ({p.stdout.strip()})")


def test_the_readme_python_example_runs(tmp_path):
    text = open(os.path.join(ROOT, "README.md")).read()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    code = code.replace('"out/py8"', repr(str(tmp_path / "py8")))
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        scope = {}
        exec(compile(code, "README.md", "exec"), scope)
    finally:
        os.chdir(cwd)
    assert scope["y"].shape == (2, 10) and (tmp_path / "py8" / "model.fxp").exists()


def test_analyze_equals_the_cli_and_takes_a_python_metric(tmp_path):
    x = images(2, 8)
    np.save(tmp_path / "x.npy", x)
    a = fixpoint.analyze(MODEL, {"image": np.load(CALIB)}, {"image": x}, layers=["conv_*"])
    cli("analyze", MODEL, "--calib", f"image={CALIB}", "--input", f"image={tmp_path / 'x.npy'}", "--layers", "conv_*",
        "-o", tmp_path / "a", "--quiet")
    want = json.loads((tmp_path / "a" / "analysis.json").read_text())
    assert a.result == want and len(a.layers) >= 2 and a.layers[0]["name"].startswith("conv_")
    assert a.rank_by_gain_at_16bit[0] in a.table() and "all 8-bit" in a.table()
    assert want["all_16bit"] > want["all_8bit"]

    def agreement(fixed, reference):  # share of images whose top class matches float's
        assert len(fixed) == len(reference) == 1
        return float(np.mean(fixed[0]["probabilities"].argmax(1) == reference[0]["probabilities"].argmax(1)))

    b = fixpoint.analyze(MODEL, {"image": np.load(CALIB)}, {"image": x}, metric=agreement, layers=["conv_3"])
    assert b.result["metric"] == "agreement" and b.result["float"] == 1.0
    assert 0.0 <= b.layers[0]["alone_8bit"] <= 1.0

    def broken(fixed, reference):
        raise ValueError("no labels here")

    with pytest.raises(fixpoint.Error, match="the metric raised ValueError: no labels here"):
        fixpoint.analyze(MODEL, {"image": np.load(CALIB)}, {"image": x}, metric=broken, layers=["conv_3"])
    with pytest.raises(fixpoint.Error, match="metric must be 'snr' or a callable"):
        fixpoint.analyze(MODEL, {"image": np.load(CALIB)}, {"image": x}, metric="accuracy")


def test_inputs_are_read_in_place_and_never_written(prog):
    """Aligned C-contiguous arrays of the model's dtype are read without a copy (Tensor views);
    a read-only array works and is left as it was; a misaligned one is copied: same bytes."""
    x = images(2, 11)
    want = prog.run({"image": x})["probabilities"].tobytes()
    ro = x.copy()
    ro.flags.writeable = False
    assert prog.run({"image": ro})["probabilities"].tobytes() == want
    assert np.array_equal(ro, x)
    raw = np.zeros(x.nbytes + 1, np.uint8)
    mis = np.frombuffer(raw.data, dtype=np.float32, count=x.size, offset=1).reshape(x.shape)
    assert mis.flags.c_contiguous and mis.ctypes.data % 4 != 0
    raw[1:] = np.frombuffer(x.tobytes(), np.uint8)
    assert prog.run({"image": mis})["probabilities"].tobytes() == want
    t = fixpoint.trace(prog, {"image": ro})
    assert t["image"].tobytes() == x.tobytes()
