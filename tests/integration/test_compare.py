"""fixpoint compare: per-layer float-vs-fixed errors on the real integer path, local vs
accumulated, and a planted fault it must name."""
import json
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from conftest import run_cli


def save_model(path, name, nodes, inits, in_channels, out_channels):
    """An opset-13 model from x [N, in_channels, 16, 16] to y [N, out_channels, 16, 16]."""
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", in_channels, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", out_channels, 16, 16])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def conv_relu_chain(path, layers):
    """x -> conv1 -> relu1 -> conv2 -> relu2 -> ... -> convN -> y, one (weights, bias or None)
    per conv, "same" padding; input [N, C, 16, 16]."""
    inits, nodes, x = [], [], "x"
    for i, (w, b) in enumerate(layers, 1):
        inits.append(numpy_helper.from_array(w.astype(np.float32), f"w{i}"))
        ins = [x, f"w{i}"]
        if b is not None:
            inits.append(numpy_helper.from_array(b.astype(np.float32), f"b{i}"))
            ins.append(f"b{i}")
        last = i == len(layers)
        out = "y" if last else f"c{i}"
        nodes.append(helper.make_node("Conv", ins, [out], name=f"conv{i}", pads=[w.shape[2] // 2] * 4))
        if not last:
            nodes.append(helper.make_node("Relu", [out], [f"r{i}"], name=f"relu{i}"))
            x = f"r{i}"
    save_model(path, "chain", nodes, inits, layers[0][0].shape[1], layers[-1][0].shape[0])


def planted_samples(tmp_path):
    """Calibration (6 images) and two input sets (1 and 2 images) for the planted-fault models."""
    rng = np.random.default_rng(12)
    np.save(tmp_path / "calib.npy", rng.uniform(0, 1, (6, 3, 16, 16)).astype(np.float32))
    np.save(tmp_path / "a.npy", rng.uniform(0, 1, (1, 3, 16, 16)).astype(np.float32))
    np.save(tmp_path / "b.npy", rng.uniform(0, 1, (2, 3, 16, 16)).astype(np.float32))


def planted_fault_model(path):
    """Conv1 -> Relu -> Conv2 (planted fault) -> Relu -> Conv3. Conv1's output channel 5 is
    always 0 (zero weights, negative bias, Relu). Conv2 gives that dead channel weights of 50:
    they never change its output in float, but per-channel 8-bit weight scales are set by
    them, so every real weight of Conv2 (|w| ~ 0.1, step 50/127) rounds to 0 or one step. A
    dead channel with large weights is a real-world pattern; Conv3 only inherits the damage."""
    rng = np.random.default_rng(11)
    w1 = rng.normal(0, 0.3, (8, 3, 3, 3))
    b1 = rng.normal(0, 0.05, 8)
    w1[5] = 0.0
    b1[5] = -1.0
    w2 = rng.normal(0, 0.1, (8, 8, 3, 3))
    w2[:, 5, 1, 1] = 50.0
    w3 = rng.normal(0, 0.1, (4, 8, 1, 1))
    conv_relu_chain(path, [(w1, b1), (w2, None), (w3, None)])


def test_compare_names_the_planted_fault(tmp_path):
    planted_fault_model(tmp_path / "m.onnx")
    planted_samples(tmp_path)
    run_cli("compile", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "-o", tmp_path / "p", "-q")
    p = run_cli("compare", tmp_path / "p", "--input", f"x={tmp_path / 'a.npy'}", "--input", f"x={tmp_path / 'b.npy'}",
                "-o", tmp_path / "c", "--report", tmp_path / "r.html")
    r = json.loads((tmp_path / "c" / "compare.json").read_text())
    assert r["samples"] == 2
    assert r["worst"][0] == "conv2"
    by = {l["name"]: l for l in r["layers"]}
    assert set(by) == {"conv1", "conv2", "conv3"}  # Relus fused into their Convs
    for l in r["layers"]:
        assert {"name", "op", "output", "bits", "snr_db", "local_snr_db", "max_abs_err", "saturated_pct"} <= set(l)
    # The fault is local to conv2; conv3 inherits it (its accumulated SNR << its local SNR).
    assert by["conv2"]["local_snr_db"] < 20 < 30 < by["conv1"]["local_snr_db"]
    assert by["conv3"]["snr_db"] < by["conv3"]["local_snr_db"] - 10
    assert p.stdout.split("encoding SNR):")[1].split()[0] == "conv2"
    html = (tmp_path / "r.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "conv2" in html and "<script src" not in html
    assert "Graph (accumulated SNR)" in html and html.count("<circle") > 1000  # graph and scatter plots
    assert "<h3>conv2 (Conv, 8-bit)" in html  # the worst layer gets its plots
    # With that layer's weights at 16 bits the fault disappears.
    run_cli("compile", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "-o", tmp_path / "p16", "-q",
            "--params16", "conv2")
    run_cli("compare", tmp_path / "p16", "--input", f"x={tmp_path / 'a.npy'}", "-o", tmp_path / "c16", "-q")
    r16 = {l["name"]: l for l in json.loads((tmp_path / "c16" / "compare.json").read_text())["layers"]}
    assert r16["conv2"]["local_snr_db"] > by["conv2"]["local_snr_db"] + 15


def test_html_report_renders_in_a_browser(tmp_path):
    """The report opened by a real browser (Debian's Chromium, headless; scripts/setup.sh installs
    it): the DOM has one table row per layer, scatter plots, histograms and the Graphviz graph,
    and the screenshot shows them: scatter blue, histogram orange, the SNR colors of the graph
    boxes and table cells (red for the faulty layers)."""
    from PIL import Image
    planted_fault_model(tmp_path / "m.onnx")
    planted_samples(tmp_path)
    run_cli("compile", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "-o", tmp_path / "p", "-q")
    run_cli("compare", tmp_path / "p", "--input", f"x={tmp_path / 'a.npy'}", "-o", tmp_path / "c", "-q",
            "--report", tmp_path / "r.html")
    browser = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--user-data-dir={tmp_path / 'profile'}"]
    url = (tmp_path / "r.html").as_uri()
    dom = subprocess.run(browser + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    body = dom.split("All layers")[1]
    assert body.count("<tr") == 1 + 3  # header + conv1..conv3
    # The row of conv2 (the planted fault: its own weights are crushed) blames its own error, not
    # its output encoding.
    header = [c.split(">")[-1] for c in body.split("</tr>")[0].split("</th>")[:-1]]
    row = [c for c in body.split("</tr>") if ">conv2<" in c][0]
    cells = [c.split(">")[-1] for c in row.split("</td>")[:-1]]
    assert float(cells[header.index("own dB")]) < 10 and float(cells[header.index("encoding dB")]) > 30
    assert dom.count("<svg") >= 3 * 2 + 1  # scatter + histogram per worst layer, and the graph
    assert "conv2" in dom.split("Graph (accumulated SNR)")[1]
    shot = tmp_path / "r.png"
    subprocess.run(browser + ["--window-size=1280,2400", f"--screenshot={shot}", url], capture_output=True,
                   timeout=120, check=True)
    img = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3).astype(int)
    assert img.shape[0] == 1280 * 2400

    def pixels(rgb, tol=12):
        return int(np.sum(np.all(np.abs(img - np.array(rgb)) <= tol, axis=1)))

    assert pixels((0x3b, 0x7d, 0xd8)) > 500  # scatter points
    assert pixels((0xd8, 0x84, 0x3b)) > 500  # histogram bars
    assert pixels((0xf8, 0xc9, 0xc4), tol=3) > 2000  # red: conv2 (and conv3) below 20 dB
    assert pixels((255, 255, 255), tol=0) < 0.97 * img.shape[0]  # not a blank page


def scaled_channel_model(path, factor=1000.0, channel=3):
    """The issue's planted fault: conv1 -> Relu -> conv2 -> Relu -> conv3 with conv2's output
    channel 3 (weights and bias) multiplied by 1000 and conv3's matching input weights divided by
    1000. Relu commutes with the positive factor, so the float function is unchanged; conv2's
    per-tensor 8-bit output range is ruined (the other seven channels round to zero)."""
    rng = np.random.default_rng(21)
    w1, b1 = rng.normal(0, 0.3, (8, 3, 3, 3)), rng.normal(0, 0.1, 8)
    w2, b2 = rng.normal(0, 0.15, (8, 8, 3, 3)), rng.normal(0, 0.1, 8)
    w3, b3 = rng.normal(0, 0.15, (4, 8, 3, 3)), rng.normal(0, 0.1, 4)
    w2[channel] *= factor
    b2[channel] *= factor
    w3[:, channel] /= factor
    conv_relu_chain(path, [(w1, b1), (w2, b2), (w3, b3)])


def test_compare_and_auto_mixed_find_a_channel_scaled_by_1000(tmp_path):
    scaled_channel_model(tmp_path / "m.onnx")
    scaled_channel_model(tmp_path / "ref.onnx", factor=1.0)
    planted_samples(tmp_path)
    feed = ["--input", f"x={tmp_path / 'a.npy'}"]
    run_cli("run", tmp_path / "m.onnx", *feed, "-o", tmp_path / "f1", "-q")
    run_cli("run", tmp_path / "ref.onnx", *feed, "-o", tmp_path / "f2", "-q")
    assert np.allclose(np.load(tmp_path / "f1" / "y.npy"), np.load(tmp_path / "f2" / "y.npy"), rtol=1e-4, atol=1e-5)
    # The fault as planted: channel equalization ((7d), the default) would rescale the channel
    # back, so it is off here (its own repair is checked at the end).
    calib = ["--calib", f"x={tmp_path / 'calib.npy'}", "--no-channel-equalization"]
    run_cli("compile", tmp_path / "m.onnx", *calib, "-o", tmp_path / "p", "-q")
    run_cli("compare", tmp_path / "p", *feed, "-o", tmp_path / "c", "-q")
    r = json.loads((tmp_path / "c" / "compare.json").read_text())
    by = {l["name"]: l for l in r["layers"]}
    assert r["worst"][0] == "conv2", r["worst"]
    # conv2's own SNR looks fine (its big channel dominates the energy); its encoding ruins conv3.
    assert by["conv2"]["own_snr_db"] > 30 and by["conv2"]["encoding_snr_db"] < 10
    assert by["conv3"]["snr_db"] < 10
    run_cli("compile", tmp_path / "m.onnx", *calib, "-o", tmp_path / "am", "-q", "--auto-mixed", "2")
    am = json.loads((tmp_path / "am" / "compile_report.json").read_text())["auto_mixed"]
    # conv2's output encoding is the fault; conv3's weights for the shrunken channel round to 0 at 8 bits
    # too (per output channel, the other inputs' weights set the scale): both are promoted, conv2 by
    # its output only (the cheaper fix: conv3's MACs at 16 bits instead of conv2's).
    assert am["out16"] == ["conv2"] and am["bits16"] == ["conv3"], am
    snr = am["output_snr_db"]
    assert snr["measured"] > snr["all_8bit"] + 20  # measured on the calibration samples before writing
    run_cli("compare", tmp_path / "am", *feed, "-o", tmp_path / "c2", "-q")
    fixed = json.loads((tmp_path / "c2" / "compare.json").read_text())["layers"][-1]
    assert fixed["snr_db"] > by["conv3"]["snr_db"] + 20
    # The default compile equalizes conv2's output channels: the x1000 channel comes down 4x (the
    # clamp of (7d), square-rooted) and the others go up; a partial repair (measured conv3 1.6 ->
    # 2.8 dB: the channel still spans 250x the others').
    run_cli("compile", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "-o", tmp_path / "eq", "-q")
    factors = json.loads((tmp_path / "eq" / "compile_report.json").read_text())["channel_factors"]
    conv2_out = by["conv2"]["output"]
    assert factors[conv2_out][3] == 0.25 and min(f for i, f in enumerate(factors[conv2_out]) if i != 3) > 1
    run_cli("compare", tmp_path / "eq", *feed, "-o", tmp_path / "c3", "-q")
    repaired = json.loads((tmp_path / "c3" / "compare.json").read_text())["layers"][-1]
    assert repaired["snr_db"] > by["conv3"]["snr_db"] + 0.5


def test_compare_errors_are_one_line(tmp_path, models):
    bad = run_cli("compare", tmp_path / "nowhere", "--input", f"x={tmp_path / 'a.npy'}", check=False)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "nowhere" in bad.stderr
    run_cli("compile", models / "tiny_cnn.onnx", "--calib", f"image={models / 'tiny_cnn_input.npy'}", "-o",
            tmp_path / "p", "-q")
    wrong = run_cli("compare", tmp_path / "p", "-q", "--input", f"nope={models / 'tiny_cnn_input.npy'}", check=False)
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1 and "nope" in wrong.stderr


def test_auto_mixed_promotes_the_planted_fault_within_budget(tmp_path):
    planted_fault_model(tmp_path / "m.onnx")
    rng = np.random.default_rng(13)
    np.save(tmp_path / "calib.npy", rng.uniform(0, 1, (4, 3, 16, 16)).astype(np.float32))
    np.save(tmp_path / "a.npy", rng.uniform(0, 1, (1, 3, 16, 16)).astype(np.float32))
    calib = f"x={tmp_path / 'calib.npy'}"
    # Budget 1.2x: conv2 (70% of the MACs) does not fit; budget 2x: it is promoted first.
    run_cli("compile", tmp_path / "m.onnx", "--calib", calib, "-o", tmp_path / "small", "-q", "--auto-mixed", "1.2")
    small = json.loads((tmp_path / "small" / "compile_report.json").read_text())["auto_mixed"]
    assert "conv2" not in small["bits16"] and small["cost_chosen"] <= small["budget"]
    run_cli("compile", tmp_path / "m.onnx", "--calib", calib, "-o", tmp_path / "p", "-q", "--auto-mixed", "2")
    rep = json.loads((tmp_path / "p" / "compile_report.json").read_text())
    am = rep["auto_mixed"]
    assert am["bits16"][0] == "conv2" and am["cost_chosen"] <= am["budget"] == 2 * am["cost_all_8bit"]
    assert {l["name"]: l["bits"] for l in rep["layers"]}["conv2"] == 16
    # The overrides file reproduces the choice through --config.
    run_cli("compile", tmp_path / "m.onnx", "--calib", calib, "-o", tmp_path / "again", "-q", "--config",
            tmp_path / "p" / "mixed_precision.json")
    again = json.loads((tmp_path / "again" / "compile_report.json").read_text())
    assert [(l["name"], l["bits"]) for l in again["layers"]] == [(l["name"], l["bits"]) for l in rep["layers"]]
    run_cli("compare", tmp_path / "p", "--input", f"x={tmp_path / 'a.npy'}", "-o", tmp_path / "c", "-q")
    last = json.loads((tmp_path / "c" / "compare.json").read_text())["layers"][-1]
    assert last["snr_db"] > 30  # the fault is gone from the output


def concat_conv_model(path):
    """x -> conv_a, conv_b -> Concat -> conv_c -> y: split_concat_conv turns conv_c into one
    Conv per Concat input and an Add of the partial sums (tensors the float graph lacks)."""
    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, s).astype(np.float32), n)
             for n, s in (("wa", (4, 3, 3, 3)), ("wb", (4, 3, 3, 3)), ("wc", (6, 8, 3, 3)))]
    nodes = [helper.make_node("Conv", ["x", "wa"], ["a"], name="conv_a", pads=[1] * 4),
             helper.make_node("Conv", ["x", "wb"], ["b0"], name="conv_b", pads=[1] * 4),
             helper.make_node("Relu", ["b0"], ["b"], name="relu_b"),
             helper.make_node("Concat", ["a", "b"], ["cat"], name="cat", axis=1),
             helper.make_node("Conv", ["cat", "wc"], ["y"], name="conv_c", pads=[1] * 4)]
    save_model(path, "concat_conv", nodes, inits, 3, 6)


def test_compare_and_auto_mixed_on_split_concat_conv(tmp_path):
    """The partial sums split_concat_conv makes have no float twin: compare measures the Add that
    joins them on the program's own partial sums instead of failing, and --auto-mixed (which
    mixes widths across the parts) compiles."""
    concat_conv_model(tmp_path / "m.onnx")
    planted_samples(tmp_path)
    run_cli("compile", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "-o", tmp_path / "p", "-q")
    rep = json.loads((tmp_path / "p" / "compile_report.json").read_text())
    assert any(r["pass"] == "split_concat_conv" for r in rep["rewrites"]), rep["rewrites"]
    run_cli("compare", tmp_path / "p", "--input", f"x={tmp_path / 'a.npy'}", "-o", tmp_path / "c")
    r = json.loads((tmp_path / "c" / "compare.json").read_text())
    by = {l["output"]: l for l in r["layers"]}
    assert by["y"]["snr_db"] > 25, by["y"]
    for factor in ("1.1", "1.25", "2"):
        run_cli("compile", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "-o", tmp_path / f"am{factor}",
                "--auto-mixed", factor, "-q")
        run_cli("run", tmp_path / f"am{factor}", "--input", f"x={tmp_path / 'a.npy'}", "--output-dir",
                tmp_path / f"o{factor}", "-q")


def dropout_mask_model(path):
    """conv -> Dropout (inference) whose bool mask is read: Not -> Cast -> Mul with the data ->
    conv2. The mask is not data: it has no fixed-point encoding (Swin-T's compare failed on it
    with 'tensor of dtype bool is not an integer code tensor' and no node named)."""
    rng = np.random.default_rng(7)
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32), "w1"),
             numpy_helper.from_array(rng.normal(0, 0.3, (4, 4, 1, 1)).astype(np.float32), "w2")]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], name="conv1", pads=[1] * 4),
             helper.make_node("Dropout", ["a"], ["d", "mask"], name="drop"),
             helper.make_node("Not", ["mask"], ["keep"], name="not"),
             helper.make_node("Cast", ["keep"], ["keepf"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Add", ["d", "keepf"], ["s"], name="add"),
             helper.make_node("Conv", ["s", "w2"], ["y"], name="conv2")]
    save_model(path, "dropout_mask", nodes, inits, 3, 4)


def test_compare_on_a_dropout_whose_mask_is_read(tmp_path):
    dropout_mask_model(tmp_path / "m.onnx")
    planted_samples(tmp_path)
    run_cli("compile", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "-o", tmp_path / "p", "-q")
    run_cli("compare", tmp_path / "p", "--input", f"x={tmp_path / 'a.npy'}", "-o", tmp_path / "c", "-q")
    r = json.loads((tmp_path / "c" / "compare.json").read_text())
    by = {l["output"]: l for l in r["layers"]}
    assert by["y"]["snr_db"] > 30, by["y"]
    assert "mask" not in by or by["mask"]["bits"] == 32, by.get("mask")


def test_auto_mixed_at_1_25_repairs_the_planted_fault_net_on_held_out_inputs(models, tmp_path):
    """Issue 15: on make_models.py's planted_fault (conv_7's channel 5 x1000, undone in conv_11),
    --auto-mixed 1.25 must raise the output SNR by >= 10 dB on inputs it was not chosen on, and
    its report must give the all-8-bit, predicted and measured output SNR on the calibration samples."""
    model, calib = models / "planted_fault.onnx", f"image={models / 'planted_fault_calib.npy'}"
    held_out = ["--input", f"image={models / 'planted_fault_input.npy'}"]
    run_cli("run", model, *held_out, "-o", tmp_path / "f", "-q")
    # The fault as planted (channel equalization, the default, repairs most of it: checked below).
    planted = "--no-channel-equalization"
    run_cli("compile", model, "--calib", calib, "-o", tmp_path / "p8", "-q", planted)
    run_cli("compile", model, "--calib", calib, "-o", tmp_path / "am", "-q", "--auto-mixed", "1.25", planted)
    ref = np.load(tmp_path / "f" / "features.npy").astype(np.float64)

    def snr(prog):
        run_cli("run", tmp_path / prog, *held_out, "-o", tmp_path / f"o_{prog}", "-q")
        got = np.load(tmp_path / f"o_{prog}" / "features.npy")
        return 10 * np.log10(np.sum(ref ** 2) / np.sum((ref - got) ** 2))

    s8, sam = snr("p8"), snr("am")
    am = json.loads((tmp_path / "am" / "compile_report.json").read_text())["auto_mixed"]
    print(f"planted_fault output SNR: all 8-bit {s8:.1f} dB, --auto-mixed 1.25 {sam:.1f} dB; {am['output_snr_db']}")
    assert sam >= s8 + 10, (s8, sam, am["bits16"], am["out16"])
    assert "conv_7" in am["bits16"] + am["out16"] and am["cost_chosen"] <= am["budget"] == 1.25 * am["cost_all_8bit"]
    snr_cal = am["output_snr_db"]
    assert snr_cal["measured"] >= snr_cal["all_8bit"] + 10 and snr_cal["predicted"] is not None
    # the overrides file reproduces the program through --config
    run_cli("compile", model, "--calib", calib, "-o", tmp_path / "again", "-q", "--config",
            tmp_path / "am" / "mixed_precision.json", planted)
    assert (tmp_path / "again" / "model.fxp").read_bytes() == (tmp_path / "am" / "model.fxp").read_bytes()
    # With the defaults: channel equalization alone repairs part of the fault (measured 2.7 -> 11.8
    # dB), and --auto-mixed 1.25 still raises the output SNR by >= 10 dB over it (measured 26.5 dB).
    run_cli("compile", model, "--calib", calib, "-o", tmp_path / "eq", "-q")
    run_cli("compile", model, "--calib", calib, "-o", tmp_path / "eq_am", "-q", "--auto-mixed", "1.25")
    seq, seq_am = snr("eq"), snr("eq_am")
    print(f"planted_fault output SNR with channel equalization {seq:.1f} dB, and --auto-mixed 1.25 {seq_am:.1f} dB")
    assert seq >= s8 + 5 and seq_am >= seq + 10
