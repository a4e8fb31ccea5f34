"""Quantization chosen by measured error on the Zero-DCE net trained here, checked on images it
was not chosen on: compile --range-search (docs/arithmetic.md (7c): 8-bit ranges chosen by the
error they cause at the graph outputs; the choice is a --config file, measured before it is
kept), --adaptive-rounding ((10c): weight codes rounded by the layer output error) and channel
equalization ((7d), the default: activation channels rescaled to one calibrated range)."""
import json

import numpy as np

from conftest import compile_run, psnr, run_cli

MIN_AR_GAIN = 0.3  # measured +0.58 dB (47.87 -> 48.45)


def test_range_search_improves_zero_dce_on_held_out_images(zero_dce, tmp_path):
    ref = np.load(zero_dce / "float" / "enhanced.npy").astype(np.float64)
    # (nearest rounding and no channel equalization on both sides: the search's own gain, as
    # measured when it was built; equalization takes over part of it, e6's too wide range)
    plain_opts = ["--no-adaptive-rounding", "--no-channel-equalization"]
    _, plain = compile_run(zero_dce, "rs_plain", *plain_opts)
    report, searched = compile_run(zero_dce, "rs", "--range-search", *plain_opts)
    rs = report["range_search"]
    snr = rs["output_snr_db"]
    print(f"zero_dce --range-search: calibration SNR {snr['calibrated']:.2f} -> {snr['chosen']:.2f} dB, factors "
          f"{rs['factors']}; held-out PSNR {psnr(ref, plain):.2f} -> {psnr(ref, searched):.2f} dB")
    assert rs["factors"] and all(f != 1.0 for f in rs["factors"].values())
    # Measured on the calibration images before it is kept: never below the calibrated ranges.
    assert snr["chosen"] >= snr["calibrated"] + 0.5
    for t in rs["tensors"]:  # each kept factor is the best one tried for its tensor
        tried = {float(k): v for k, v in t["output_snr_db_by_factor"].items() if isinstance(v, float)}
        if t["factor"] != 1.0:
            assert tried[t["factor"]] == max(tried.values()), t
    # On the evaluation images (other crops than calibration): measured 47.9 -> 48.9 dB.
    assert psnr(ref, searched) >= psnr(ref, plain) + 0.5
    # The written choice reproduces the program through --config, without searching again.
    _, again = compile_run(zero_dce, "rs_again", "--config", zero_dce / "prog_rs" / "mixed_precision.json",
                           *plain_opts)
    assert np.array_equal(again, searched)
    cfg = json.loads((zero_dce / "prog_rs" / "mixed_precision.json").read_text())
    assert cfg == {"range_factors": rs["factors"]}


def test_range_search_then_auto_mixed(zero_dce):
    report, _ = compile_run(zero_dce, "rs_am", "--range-search", "--auto-mixed", "1.1")
    assert report["range_search"]["factors"] and "auto_mixed" in report
    # auto-mixed starts from the searched ranges: its all-8-bit SNR is the search's result.
    assert abs(report["auto_mixed"]["output_snr_db"]["all_8bit"] - report["range_search"]["output_snr_db"]["chosen"]) < 3


def test_range_search_errors_are_one_line(zero_dce, tmp_path):
    calib = ["--calib", f"image={zero_dce / 'zero_dce_calib.npy'}"]
    r = run_cli("compile", zero_dce / "zero_dce.onnx", *calib, "--bits", "16", "--range-search", "-o", tmp_path / "p",
                check=False)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "--range-search" in r.stderr and "--bits 8" in r.stderr
    r = run_cli("compile", zero_dce / "zero_dce.onnx", "--range-search", "-o", tmp_path / "p", check=False)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "calibration" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"range_factors": {"/Relu_output_0": -1}}))
    r = run_cli("compile", zero_dce / "zero_dce.onnx", *calib, "--config", bad, "-o", tmp_path / "p", check=False)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "range_factors" in r.stderr and "/Relu_output_0" in r.stderr


def test_adaptive_rounding_on_zero_dce(zero_dce):
    ref = np.load(zero_dce / "float" / "enhanced.npy").astype(np.float64)
    # (no channel equalization on either side: the rounding's own gain, as measured when it was built)
    _, plain = compile_run(zero_dce, "ar_plain", "--no-adaptive-rounding", "--no-channel-equalization")
    report, rounded = compile_run(zero_dce, "ar", "--adaptive-rounding", "--no-channel-equalization")
    _, default = compile_run(zero_dce, "ar_default", "--no-channel-equalization")
    assert np.array_equal(default, rounded)  # the default since session 37
    layers = report["adaptive_rounding"]["layers"]
    print(f"zero_dce --adaptive-rounding: {sum(l['codes_changed'] for l in layers)} of "
          f"{sum(l['codes'] for l in layers)} codes moved; held-out PSNR {psnr(ref, plain):.2f} -> "
          f"{psnr(ref, rounded):.2f} dB")
    assert len(layers) == 10  # the seven 3x3 convs, three of them split over their Concat inputs (split_concat_conv)
    assert all(l["codes_changed"] > 0 and l["weight_error_reduction_db"] > 1 for l in layers), layers
    assert psnr(ref, rounded) >= psnr(ref, plain) + MIN_AR_GAIN
    # --range-search after adaptive rounding rounds once (codes kept with the statistics).
    report, both = compile_run(zero_dce, "ar_rs", "--adaptive-rounding", "--range-search", "--no-channel-equalization")
    print(f"zero_dce --adaptive-rounding --range-search: held-out PSNR {psnr(ref, both):.2f} dB")
    assert report["adaptive_rounding"]["layers"] == layers
    assert psnr(ref, both) >= psnr(ref, rounded) + 0.2  # measured +0.40 dB


def test_channel_equalization_on_zero_dce(zero_dce, tmp_path):
    """(7d), the default: e1-e6's output channels rescaled to one calibrated range (e6's span 10x)
    and the convs reading them compensating. Measured on the evaluation images, against the same
    compile without it; the program's rescaled tensors stay readable in the model's units (run
    --trace) and compare measures them in the program's."""
    ref = np.load(zero_dce / "float" / "enhanced.npy").astype(np.float64)
    _, plain = compile_run(zero_dce, "ce_plain", "--no-channel-equalization")
    report, eq = compile_run(zero_dce, "ce")
    _, on = compile_run(zero_dce, "ce_on", "--channel-equalization")
    assert np.array_equal(on, eq)
    said = [r for r in report["rewrites"] if r["pass"] == "channel_equalization"]
    assert said and said[0]["detail"].startswith("rescaled the channels of 6 activation(s)"), said
    print(f"zero_dce channel equalization: held-out PSNR {psnr(ref, plain):.2f} -> {psnr(ref, eq):.2f} dB")
    assert psnr(ref, eq) >= psnr(ref, plain) + 0.7  # measured +1.43 dB (48.45 -> 49.87)
    # The trace writes e6's output in the model's units: the float model's values, to 8 bits.
    x = np.load(zero_dce / "zero_dce_eval.npy")[:1]
    np.save(tmp_path / "x.npy", x)
    run_cli("run", zero_dce / "zero_dce.onnx", "--input", f"image={tmp_path / 'x.npy'}", "-o", tmp_path / "f", "-q",
            "--trace", tmp_path / "tf")
    run_cli("run", zero_dce / "prog_ce", "--input", f"image={tmp_path / 'x.npy'}", "-o", tmp_path / "q", "-q",
            "--trace", tmp_path / "tq")
    index = json.loads((tmp_path / "tq" / "index.json").read_text())
    e6 = index["/Relu_5_output_0"]
    assert len(e6["channel_factors"]) == 32
    model_e6 = np.load(tmp_path / "tf" / index["/Relu_5_output_0"]["file"]).astype(np.float64)
    traced_e6 = np.load(tmp_path / "tq" / e6["file"]).astype(np.float64)
    assert 10 * np.log10(np.sum(model_e6 ** 2) / np.sum((model_e6 - traced_e6) ** 2)) > 25
    codes = np.load(tmp_path / "tq" / e6["codes"]).astype(np.float64)
    f = np.array(e6["channel_factors"])[None, :, None, None]
    assert np.allclose(traced_e6 * f, codes * e6["scale"], rtol=1e-5, atol=1e-6)  # codes: the program's units
    run_cli("compare", zero_dce / "prog_ce", "--input", f"image={tmp_path / 'x.npy'}", "-o", tmp_path / "c", "-q")
    layers = {l["output"]: l for l in json.loads((tmp_path / "c" / "compare.json").read_text())["layers"]}
    for l in layers.values():  # a unit mix-up (model vs program) would show as a few dB
        assert l["encoding_snr_db"] > 25 and l["local_snr_db"] > 15, l
