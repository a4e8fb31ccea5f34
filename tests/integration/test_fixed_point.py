"""The fixed-point compiler and runtime, end to end through the CLI."""
import json
import os
import struct

import numpy as np
import pytest

from conftest import run_cli


def compile_(models, name, out, *args):
    run_cli("compile", os.path.join(models, f"{name}.onnx"), "-o", out, "-q", *args)
    return out


def run_prog(prog, inp_name, x, tmp_path, tag):
    np.save(tmp_path / f"{tag}_in.npy", x)
    run_cli("run", prog, "--input", f"{inp_name}={tmp_path}/{tag}_in.npy", "--output-dir", tmp_path / tag, "-q", "--raw")
    return {f[:-4]: np.load(tmp_path / tag / f) for f in os.listdir(tmp_path / tag) if f.endswith(".npy")}


def snr_db(ref, got):
    return 10 * np.log10(np.sum(ref.astype(np.float64) ** 2) / max(np.sum((ref - got).astype(np.float64) ** 2), 1e-30))


def test_seed_qat_experiment_bit_exact(models, tmp_path):
    """Seed thread 001: 0.8 must give exactly 0.796875 (TIDL gives 0.78125), and a sweep must match
    q1 = min(255, floor(x*256 + 0.5)), y = min(255, floor(q1/4 + 0.5)) / 64 bit for bit."""
    prog = compile_(models, "seed_qat", tmp_path / "prog", "--qat", "--scale-mode", "pow2")
    out = run_prog(prog, "x", np.full((1, 1, 5, 5), 0.8, np.float32), tmp_path, "one")
    assert np.all(out["y"] == np.float32(0.796875))
    xs = np.concatenate([np.linspace(-0.5, 5.0, 397), [0.0, 1 / 512, 3 / 512, 1.0, 255.5 / 256, 1.5, 4.0]])
    xs = xs.astype(np.float32)
    x = np.broadcast_to(xs[:, None, None, None], (len(xs), 1, 5, 5)).copy()
    got = run_prog(prog, "x", x, tmp_path, "sweep")
    q1 = np.clip(np.floor(xs.astype(np.float64) * 256 + 0.5), 0, 255)
    want = np.minimum(255, np.floor(q1 / 4 + 0.5)) / 64
    for i in range(len(xs)):
        assert np.all(got["y"][i] == np.float32(want[i])), f"x={xs[i]}: got {got['y'][i].flat[0]}, want {want[i]}"
        assert np.all(got["y.codes"][i] == want[i] * 64)


@pytest.mark.parametrize("bits", ["8", "16", "32"])
def test_batch_rows_bit_identical(models, tmp_path, bits):
    args = ["--bits", bits] + ([] if bits == "32" else ["--calib", f"image={models}/tiny_cnn_input.npy"])
    prog = compile_(models, "tiny_cnn", tmp_path / "prog", *args)
    x = np.load(os.path.join(models, "tiny_cnn_input.npy"))
    full = run_prog(prog, "image", x, tmp_path, "full")
    for r in range(x.shape[0]):
        one = run_prog(prog, "image", x[r:r + 1], tmp_path, f"r{r}")
        for k in one:
            assert one[k].tobytes() == full[k][r:r + 1].tobytes(), f"{bits}-bit output {k} row {r}"


# (FIXPOINT_ISA, FIXPOINT_AMX): every kernel choice; AMX tiles (8-bit convs) where the CPU has them.
KERNEL_CHOICES = [("scalar", "0"), ("avx2", "0"), ("avx512vnni", "0"), ("avx512vnni", "1")]


@pytest.mark.parametrize("bits", ["8", "16"])
def test_every_kernel_isa_gives_the_reference_bits(models, tmp_path, bits):
    """docs/performance.md: the optimized kernels of every ISA this CPU has, at 1 and 2 threads,
    give the same output bits as FIXPOINT_ISA=reference (the scalar reference kernels)."""
    prog = compile_(models, "tiny_cnn", tmp_path / "prog", "--bits", bits, "--calib", f"image={models}/tiny_cnn_input.npy")
    feed = ["--input", f"image={models}/tiny_cnn_input.npy", "-q", "--raw"]
    run_cli("run", prog, *feed, "-o", tmp_path / "ref", env={"FIXPOINT_ISA": "reference"})
    want = {f: (tmp_path / "ref" / f).read_bytes() for f in os.listdir(tmp_path / "ref")}
    ran = []
    for isa, amx in KERNEL_CHOICES:
        for threads in ["1", "2"]:
            out = tmp_path / f"{isa}_{amx}_{threads}"
            p = run_cli("run", prog, *feed, "-o", out, "--threads", threads, "--repeat", "2", check=False,
                        env={"FIXPOINT_ISA": isa, "FIXPOINT_AMX": amx})
            if p.returncode != 0:
                assert "that this CPU supports" in p.stderr or "cannot use AMX tiles" in p.stderr, p.stderr
                continue
            assert f"isa={isa}{'+amx' if amx == '1' else ''} threads={threads}" in p.stdout
            ran.append(isa)
            for f, b in want.items():
                assert (out / f).read_bytes() == b, f"{bits}-bit {f} with FIXPOINT_ISA={isa} --threads {threads}"
    assert "scalar" in ran


WHOLE_PROGRAMS = [("resnet18", "8"), ("resnet18", "16"), ("ocr_rec", "8"), ("ocr_rec", "16"), ("ocr_det", "8"),
                  ("ocr_det", "16"), ("zero_dce", "8"), ("zero_dce", "16"), ("resnet18", "16w8"), ("ocr_rec", "16w8"),
                  ("zero_dce", "16w8")]


@pytest.mark.parametrize("name,bits", WHOLE_PROGRAMS, ids=[f"{n}-int{b}" for n, b in WHOLE_PROGRAMS])
def test_whole_programs_give_the_reference_bytes_on_every_isa_and_thread_count(models, zero_dce, tmp_path, name, bits):
    """Issue 12: ResNet-18, the OCR recognizer and detector and Zero-DCE, compiled at 8 and 16
    bits (and at 16 bits with 8-bit weights, --params8), give the same output bytes (codes and dequantized values) with the optimized kernels of
    every ISA this CPU has at 1, 2 and 3 threads as with FIXPOINT_ISA=reference."""
    from conftest import OCR_ASSETS, OCR_MODELS
    if name == "resnet18":
        model, inp = os.path.join(models, "resnet18.onnx"), "input"
        x = np.load(os.path.join(models, "resnet18_input.npy"))[:1]
    elif name == "zero_dce":
        model, inp = zero_dce / "zero_dce.onnx", "image"
        x = np.load(zero_dce / "zero_dce_eval.npy")[:1]
    else:
        key = name[4:]
        model, inp = os.path.join(OCR_ASSETS, OCR_MODELS[key]), "x"
        x = np.load(os.path.join(models, f"ocr_{key}_input.npy"))
        if key == "det":
            x = np.ascontiguousarray(x[:, :, 160:416, 160:416])  # 256 x 256: the reference kernels are slow
    np.save(tmp_path / "x.npy", x)
    prog = tmp_path / "prog"
    width = ["--bits", "16", "--params8", "*"] if bits == "16w8" else ["--bits", bits]
    run_cli("compile", model, "-o", prog, "-q", *width, "--calib", f"{inp}={tmp_path}/x.npy")
    feed = ["--input", f"{inp}={tmp_path}/x.npy", "-q", "--raw"]
    run_cli("run", prog, *feed, "-o", tmp_path / "ref", env={"FIXPOINT_ISA": "reference"})
    want = {f: (tmp_path / "ref" / f).read_bytes() for f in os.listdir(tmp_path / "ref") if f.endswith(".npy")}
    assert want
    ran = set()
    for isa, amx in KERNEL_CHOICES:
        for threads in ["1", "2", "3"]:
            out = tmp_path / f"{isa}_{amx}_{threads}"
            p = run_cli("run", prog, *feed, "-o", out, "--threads", threads, check=False,
                        env={"FIXPOINT_ISA": isa, "FIXPOINT_AMX": amx})
            if p.returncode != 0:
                assert "that this CPU supports" in p.stderr or "cannot use AMX tiles" in p.stderr, p.stderr
                continue
            ran.add(isa)
            for f, b in want.items():
                assert (out / f).read_bytes() == b, \
                    f"{name} int{bits}: {f} with FIXPOINT_ISA={isa} FIXPOINT_AMX={amx} --threads {threads}"
    assert "scalar" in ran


def test_inputs_on_an_8_bit_grid_are_quantized_losslessly(models, tmp_path):
    """docs/arithmetic.md (7a): calibration images that are 8-bit pixels / 255 give the input
    scale 1/255 exactly (so the codes are the pixels); off-grid data gets the calibrated scale."""
    rng = np.random.default_rng(3)
    pixels = rng.integers(0, 200, (4, 3, 32, 32))
    np.save(tmp_path / "grid.npy", (pixels / 255.0).astype(np.float32))
    np.save(tmp_path / "off.npy", rng.uniform(0, 0.78, (4, 3, 32, 32)).astype(np.float32))
    for calib, want_grid in [("grid", True), ("off", False)]:
        prog = compile_(models, "tiny_cnn", tmp_path / calib, "--calib", f"image={tmp_path / calib}.npy")
        rep = json.loads((tmp_path / calib / "compile_report.json").read_text())
        s = rep["layers"][0]["inputs"][0]["scale"]
        assert (s == 1 / 255) == want_grid, (calib, s)
    # Codes R(x / s) at s = 1/255 are the pixels themselves (docs/arithmetic.md (5)).
    x = (pixels / 255.0).astype(np.float32)
    assert np.array_equal(np.floor(x.astype(np.float64) / (1 / 255) + 0.5), pixels)


def test_32_bit_program_equals_float_reference(models, tmp_path):
    prog = compile_(models, "tiny_cnn", tmp_path / "prog", "--bits", "32")
    x = np.load(os.path.join(models, "tiny_cnn_input.npy"))
    got = run_prog(prog, "image", x, tmp_path, "p")
    run_cli("run", os.path.join(models, "tiny_cnn.onnx"), "--input", f"image={models}/tiny_cnn_input.npy",
            "--output-dir", tmp_path / "f", "-q")
    ref = np.load(tmp_path / "f" / "probabilities.npy")
    # Conv+BN folding changes float rounding only.
    assert np.abs(got["probabilities"] - ref).max() <= 1e-5 * np.abs(ref).max()


@pytest.mark.parametrize("name,inp,data", [("tiny_cnn", "image", "tiny_cnn_input.npy"),
                                           ("resnet18", "input", "resnet18_input.npy")])
def test_16_bit_is_closer_to_float_than_8_bit(models, tmp_path, name, inp, data):
    x = np.load(os.path.join(models, data))
    run_cli("run", os.path.join(models, f"{name}.onnx"), "--input", f"{inp}={models}/{data}", "--output-dir",
            tmp_path / "f", "-q")
    ref = {f[:-4]: np.load(tmp_path / "f" / f) for f in os.listdir(tmp_path / "f")}
    snr = {}
    widths = {"8": ["--bits", "8"], "16": ["--bits", "16"], "16w8": ["--bits", "16", "--params8", "*"]}
    for bits, width in widths.items():
        prog = compile_(models, name, tmp_path / f"p{bits}", *width, "--calib", f"{inp}={models}/{data}")
        got = run_prog(prog, inp, x, tmp_path, f"b{bits}")
        snr[bits] = min(snr_db(ref[k], got[k]) for k in ref)
        layers = json.loads((prog / "compile_report.json").read_text())["layers"]
        weights = {l["weight_bits"] for l in layers if "weight_bits" in l}
        assert weights == {8 if bits != "16" else 16}, (bits, weights)
    print(f"{name}: SNR int8 {snr['8']:.1f} dB, int16 with 8-bit weights {snr['16w8']:.1f} dB, int16 {snr['16']:.1f} dB")
    assert snr["16"] > snr["8"] + 10
    assert snr["16"] > snr["16w8"] > snr["8"] + 3  # 16-bit activations remove their rounding, not the weights'
    assert snr["8"] > 20


def test_bad_artifacts_give_one_clear_error(models, tmp_path):
    prog = compile_(models, "tiny_cnn", tmp_path / "prog", "--calib", f"image={models}/tiny_cnn_input.npy")
    data = (prog / "model.fxp").read_bytes()
    x = f"image={models}/tiny_cnn_input.npy"
    cases = {
        "truncated": data[: len(data) // 2],
        "corrupted": data[:100] + bytes([data[100] ^ 0xFF]) + data[101:],
        "wrong_version": data[:8] + struct.pack("<I", 99) + data[12:],
        "not_fxp": b"hello world, definitely not a program",
    }
    expect = {"truncated": "truncated", "corrupted": "checksum", "wrong_version": "version 99", "not_fxp": "magic"}
    for case, blob in cases.items():
        d = tmp_path / case
        d.mkdir()
        (d / "model.fxp").write_bytes(blob)
        p = run_cli("run", d, "--input", x, "--output-dir", tmp_path / "o", check=False)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 1 and len(lines) == 1, (case, p.stderr)
        assert expect[case] in lines[0] and "model.fxp" in lines[0], (case, lines[0])
        if case != "not_fxp":  # the file named itself (it starts with the artifact's magic): the same error
            p = run_cli("run", d / "model.fxp", "--input", x, "--output-dir", tmp_path / "o", check=False)
            assert p.returncode == 1 and p.stderr.strip().splitlines() == lines, (case, p.stderr)
    # The good artifact named itself runs the program in its folder.
    run_cli("run", prog, "--input", x, "--output-dir", tmp_path / "dir", "--raw", "-q")
    run_cli("run", prog / "model.fxp", "--input", x, "--output-dir", tmp_path / "file", "--raw", "-q")
    outs = sorted(f.name for f in (tmp_path / "dir").glob("*.npy"))
    assert outs and outs == sorted(f.name for f in (tmp_path / "file").glob("*.npy"))
    for f in outs:
        assert (tmp_path / "dir" / f).read_bytes() == (tmp_path / "file" / f).read_bytes(), f


def test_compile_errors(models, tmp_path):
    m = os.path.join(models, "tiny_cnn.onnx")
    for args, mention in [(["--bits", "12"], "--bits"), (["--scale-mode", "log"], "--scale-mode"),
                          ([], "--calib"), (["--calib", "nosuch=x.npy"], "nosuch")]:
        p = run_cli("compile", m, "-o", tmp_path / "o", *args, check=False)
        assert p.returncode == 1 and mention in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


@pytest.mark.parametrize("bits", ["8", "16"])
def test_threads_give_the_same_bits(models, tmp_path, bits):
    prog = compile_(models, "tiny_cnn", tmp_path / "prog", "--bits", bits, "--calib", f"image={models}/tiny_cnn_input.npy")
    x = f"image={models}/tiny_cnn_input.npy"
    outs = []
    for t in ("1", "2", "3"):
        run_cli("run", prog, "--input", x, "--output-dir", tmp_path / f"t{t}", "-q", "--raw", "--threads", t)
        outs.append((tmp_path / f"t{t}" / "probabilities.codes.npy").read_bytes())
    assert outs[0] == outs[1] == outs[2]


def test_config_file_accepts_tidl_names(models, tmp_path):
    import json
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"tensor_bits": 8, "output_feature_16bit_names_list": "conv_3, op:Gemm",
                               "params_16bit_names_list": ["conv_13"], "calibration_frames": 2,
                               "quantization_scale_type": 0, "calib": [f"image={models}/tiny_cnn_input.npy"]}))
    out = tmp_path / "prog"
    run_cli("compile", os.path.join(models, "tiny_cnn.onnx"), "-o", out, "-q", "--config", cfg)
    rep = json.loads((out / "compile_report.json").read_text())
    bits = {l["name"]: l["bits"] for l in rep["layers"]}
    assert bits["conv_3"] == 16 and bits["gemm_19"] == 16 and bits["conv_13"] == 8
    assert rep["layers"][0]["outputs"][0]["dtype"] == "uint16"
    # the command line wins over the file
    run_cli("compile", os.path.join(models, "tiny_cnn.onnx"), "-o", out, "-q", "--config", cfg, "--bits16", "op:Conv")
    rep = json.loads((out / "compile_report.json").read_text())
    assert {l["name"]: l["bits"] for l in rep["layers"]}["gemm_19"] == 8
    cfg.write_text('{"tensor_bits": 8, "no_such_option": 1}')
    p = run_cli("compile", os.path.join(models, "tiny_cnn.onnx"), "-o", out, "--config", cfg, check=False)
    assert p.returncode == 1 and "no_such_option" in p.stderr


def test_calibration_methods_all_compile_and_run(models, tmp_path):
    x = np.load(os.path.join(models, "tiny_cnn_input.npy"))
    run_cli("run", os.path.join(models, "tiny_cnn.onnx"), "--input", f"image={models}/tiny_cnn_input.npy",
            "--output-dir", tmp_path / "f", "-q")
    ref = np.load(tmp_path / "f" / "probabilities.npy")
    for m in ("minmax", "percentile", "mse"):
        prog = compile_(models, "tiny_cnn", tmp_path / m, "--calib", f"image={models}/tiny_cnn_input.npy",
                        "--calib-method", m)
        got = run_prog(prog, "image", x, tmp_path, f"o{m}")["probabilities"]
        print(f"tiny_cnn int8 {m}: SNR {snr_db(ref, got):.1f} dB")
        assert snr_db(ref, got) > 30, m
    p = run_cli("compile", os.path.join(models, "tiny_cnn.onnx"), "-o", tmp_path / "x", "--calib",
                f"image={models}/tiny_cnn_input.npy", "--calib-method", "magic", check=False)
    assert p.returncode == 1 and "magic" in p.stderr
    # entropy (KL) is gone with a reason: it gave 0% on the OCR recognizer (docs/accuracy.md)
    p = run_cli("compile", os.path.join(models, "tiny_cnn.onnx"), "-o", tmp_path / "x", "--calib",
                f"image={models}/tiny_cnn_input.npy", "--calib-method", "entropy", check=False)
    assert p.returncode == 1 and "'entropy' was removed" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_calib_percentile_sets_the_clipped_ranges(models, tmp_path):
    calib = f"image={models}/tiny_cnn_input.npy"
    ranges = {}
    for pct in ("99.99", "99.9"):
        compile_(models, "tiny_cnn", tmp_path / pct, "--calib", calib, "--calib-percentile", pct)
        rep = json.loads((tmp_path / pct / "compile_report.json").read_text())
        assert rep["calib_method"] == "percentile" and rep["calib_percentile"] == float(pct)
        ranges[pct] = {o["tensor"]: o["scale"] for l in rep["layers"] for o in l["outputs"] if o["dtype"] in ("int8", "uint8")}
    # a lower percentile clips more: no 8-bit scale grows, and some shrink
    assert ranges["99.9"].keys() == ranges["99.99"].keys()
    assert all(ranges["99.9"][t] <= ranges["99.99"][t] for t in ranges["99.9"])
    assert any(ranges["99.9"][t] < ranges["99.99"][t] for t in ranges["99.9"])
    for args, want in ((["--calib-percentile", "30"], "--calib-percentile must be in (50, 100]"),
                       (["--calib-percentile", "99.9", "--calib-method", "mse"], "applies to --calib-method percentile")):
        p = run_cli("compile", os.path.join(models, "tiny_cnn.onnx"), "-o", tmp_path / "x", "--calib", calib, *args,
                    check=False)
        assert p.returncode == 1 and want in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


@pytest.mark.parametrize("key", ["rec", "cls"])
def test_16_bit_closer_than_8_bit_on_ocr_models(models, tmp_path, key):
    from conftest import OCR_ASSETS, OCR_MODELS
    model = os.path.join(OCR_ASSETS, OCR_MODELS[key])
    x = os.path.join(models, f"ocr_{key}_input.npy")
    base = np.load(x)
    rng = np.random.default_rng(3)
    calib = np.concatenate([base + rng.normal(0, 0.05, base.shape).astype(np.float32), base[..., ::-1]], axis=0)
    np.save(tmp_path / "calib.npy", calib)
    # Every traced tensor is compared (the final softmax of cls saturates, so its output alone
    # cannot tell widths apart); the median layer SNR must improve with 16 bits.
    import json
    run_cli("run", model, "--input", f"x={x}", "--output-dir", tmp_path / "f", "-q", "--trace", tmp_path / "tf")
    ref_index = json.loads((tmp_path / "tf" / "index.json").read_text())
    snr = {}
    for bits in ("8", "16"):
        run_cli("compile", model, "-o", tmp_path / f"p{bits}", "-q", "--bits", bits, "--calib", f"x={tmp_path}/calib.npy")
        run_cli("run", tmp_path / f"p{bits}", "--input", f"x={x}", "--output-dir", tmp_path / f"o{bits}", "-q",
                "--trace", tmp_path / f"t{bits}")
        idx = json.loads((tmp_path / f"t{bits}" / "index.json").read_text())
        vals = []
        for name, e in idx.items():
            if name in ref_index and "file" in e:  # entries without a file: removed by fusion
                a = np.load(tmp_path / "tf" / ref_index[name]["file"])
                b = np.load(tmp_path / f"t{bits}" / e["file"])
                if a.shape == b.shape and np.any(a):
                    vals.append(snr_db(a, b))
        snr[bits] = float(np.median(vals))
    print(f"ocr {key}: median layer SNR int8 {snr['8']:.1f} dB, int16 {snr['16']:.1f} dB")
    assert snr["16"] > snr["8"] + 10


def test_bias_correction_improves_resnet18_int8(models, tmp_path):
    x = np.random.default_rng(5).normal(0, 1, (2, 3, 224, 224)).astype(np.float32)
    np.save(tmp_path / "eval.npy", x)
    run_cli("run", os.path.join(models, "resnet18.onnx"), "--input", f"input={tmp_path}/eval.npy", "--output-dir",
            tmp_path / "f", "-q")
    ref = np.load(tmp_path / "f" / "logits.npy")
    snr = {}
    for tag, extra in (("plain", ["--no-bias-correction"]), ("bc", [])):  # bias correction is the default
        # (nearest weight rounding: bias correction's own gain, as measured when it was built)
        prog = compile_(models, "resnet18", tmp_path / tag, "--calib", f"input={models}/resnet18_input.npy",
                        "--no-adaptive-rounding", *extra)
        snr[tag] = snr_db(ref, run_prog(prog, "input", x, tmp_path, f"o{tag}")["logits"])
    print(f"resnet18 int8: SNR {snr['plain']:.1f} dB, with bias correction {snr['bc']:.1f} dB")
    assert snr["bc"] > snr["plain"] + 2
    rep = (tmp_path / "bc" / "compile_report.txt").read_text()
    assert "bias_correction: corrected the biases of 21 layer(s)" in rep


def test_trace_changes_no_bit_and_lists_fused_tensors(models, tmp_path):
    prog = compile_(models, "tiny_cnn", tmp_path / "p", "--calib", f"image={models}/tiny_cnn_input.npy")
    inp = f"image={models}/tiny_cnn_input.npy"
    run_cli("run", prog, "--input", inp, "-o", tmp_path / "plain", "-q", "--raw")
    run_cli("run", prog, "--input", inp, "-o", tmp_path / "traced", "-q", "--raw", "--trace", tmp_path / "t")
    for f in os.listdir(tmp_path / "plain"):
        assert (tmp_path / "plain" / f).read_bytes() == (tmp_path / "traced" / f).read_bytes(), f
    import json
    index = json.loads((tmp_path / "t" / "index.json").read_text())
    computed = {t: e for t, e in index.items() if "file" in e}
    removed = {t: e for t, e in index.items() if "removed" in e}
    assert all(e["subgraph"] == {"id": 0, "kind": "accelerator"} for e in computed.values())
    # Conv -> BN -> Relu became one op: the Conv and BN outputs are listed with the Relu output
    # that stands for them; that tensor's trace file holds the fused op's result.
    assert removed["conv_3_out"]["stand_in"] == "relu_9_out"
    assert removed["batchnormalization_8_out"]["stand_in"] == "relu_9_out"
    assert "relu_9_out" in computed
    codes = np.load(tmp_path / "t" / computed["probabilities"]["codes"])
    assert np.array_equal(codes, np.load(tmp_path / "plain" / "probabilities.codes.npy"))


def test_int16_headroom_keeps_values_beyond_the_calibrated_range(tmp_path):
    """(7b): a 16-bit program's ranges are the calibrated ones x 1.5, so an input 1.4x beyond
    anything calibration saw passes unclipped; --headroom16 1 clips it at the calibrated range."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.array([[[[0.5]]], [[[-2.0]]]], np.float32), "w")
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "m.onnx")
    rng = np.random.default_rng(3)
    np.save(tmp_path / "calib.npy", rng.uniform(-1, 1, (4, 1, 1, 4, 4)).astype(np.float32))
    x = rng.uniform(-1, 1, (1, 1, 4, 4)).astype(np.float32)
    x[0, 0, 0, 0] = 1.4
    np.save(tmp_path / "x.npy", x)
    want = np.concatenate([0.5 * x, -2.0 * x], axis=1)
    err = {}
    for h in ("1", "1.5"):
        run_cli("compile", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "--bits", "16",
                "--headroom16", h, "-o", tmp_path / f"p{h}", "-q")
        run_cli("run", tmp_path / f"p{h}", "--input", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / f"o{h}", "-q")
        err[h] = np.abs(np.load(tmp_path / f"o{h}" / "y.npy") - want).max()
    assert err["1.5"] < 1e-3, err  # a 16-bit step of a 2.8-wide range is ~1e-4
    assert err["1"] > 0.3, err      # 1.4 clipped to the calibrated max (~1): -2.8 -> ~-2


@pytest.mark.parametrize("kind", ["program", "float"])
def test_profile_lists_every_op_once_per_run(models, tmp_path, kind):
    """`run --profile`: one row per op type with its op count, times that add up to the total."""
    if kind == "program":
        model = compile_(models, "tiny_cnn", tmp_path / "prog", "--calib", f"image={models}/tiny_cnn_input.npy")
        ops = json.loads((tmp_path / "prog" / "compile_report.json").read_text())["layers"]
        want = len(ops)
    else:
        model, want = os.path.join(models, "tiny_cnn.onnx"), None
    p = run_cli("run", model, "--input", f"image={models}/tiny_cnn_input.npy", "-o", tmp_path / "o", "-q",
                "--repeat", "3", "--profile")
    lines = p.stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("profile:"))
    total, runs = float(lines[head].split()[1]), int(lines[head].split("over ")[1].split()[0])
    assert runs == 2  # the warm-up is left out
    rows = []
    for l in lines[head + 2:]:
        if l.startswith("slowest ops:"):
            break
        parts = l.split()
        rows.append((" ".join(parts[:-3]), int(parts[-3]), float(parts[-2])))
    assert abs(sum(r[2] for r in rows) - total) <= 0.01 * total + 0.005
    assert len({r[0] for r in rows}) == len(rows)
    if want is not None:  # the ops, and the quantization of the inputs on a line of its own
        assert sum(r[1] for r in rows if r[0] != "quantize inputs") == want
        assert [r[1] for r in rows if r[0] == "quantize inputs"] == [1]
    assert any(r[0].startswith("Conv") for r in rows)
