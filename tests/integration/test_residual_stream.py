"""Transformer widths (docs/arithmetic.md §2.7). The residual stream of a pre-norm transformer is
stored one width up (16 bits in 8-bit programs, 32 in 16-bit ones): a class token 50x smaller than the patch tokens
shares their per-tensor scale, and at 8 bits the LayerNormalization that reads it turns its few
codes into full-size noise the head then reads (torchvision's ViT-B/16: 12.5 dB int8 output
SNR). A Softmax over rows of more than 16 entries stores its output at 16 bits: an 8-bit step of
1/255 leaves a probability near 1/N a handful of codes (ViT-B/16 at 224: 197 tokens)."""
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import run_cli, run_ort


def vit_like(path, d=32, tokens=4, blocks=2):
    """patches = x W_e; stream = Concat(class token, patches) + positions; blocks of
    stream += LN(stream) W_k; head = LN(stream)[:, 0]. Class token and positions ~ N(0, 0.02)
    (ViT's initialisation), patches ~ N(0, 1)."""
    rng = np.random.default_rng(3)
    inits, nodes = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value, np.float32), name))
        return name

    nodes.append(helper.make_node("MatMul", ["x", const("w_embed", rng.normal(0, d ** -0.5, (d, d)))], ["patches"],
                                  name="embed"))
    nodes.append(helper.make_node("Concat", [const("cls", rng.normal(0, 0.02, (1, 1, d))), "patches"], ["tokens"],
                                  name="concat", axis=1))
    nodes.append(helper.make_node("Add", ["tokens", const("pos", rng.normal(0, 0.02, (1, tokens + 1, d)))], ["s0"],
                                  name="add_pos"))
    ones, zeros = const("gamma", np.ones(d)), const("beta", np.zeros(d))
    s = "s0"
    for k in range(blocks):
        nodes.append(helper.make_node("LayerNormalization", [s, ones, zeros], [f"h{k}"], name=f"ln{k}", axis=-1))
        nodes.append(helper.make_node("MatMul", [f"h{k}", const(f"w{k}", rng.normal(0, d ** -0.5, (d, d)))], [f"a{k}"],
                                      name=f"mlp{k}"))
        nodes.append(helper.make_node("Add", [s, f"a{k}"], [f"s{k + 1}"], name=f"residual{k}"))
        s = f"s{k + 1}"
    nodes.append(helper.make_node("LayerNormalization", [s, ones, zeros], ["hf"], name="ln_final", axis=-1))
    inits.append(numpy_helper.from_array(np.array(0, np.int64), "token0"))
    nodes.append(helper.make_node("Gather", ["hf", "token0"], ["y"], name="head", axis=1))
    g = helper.make_graph(nodes, "vit_like", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, tokens, d])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, d])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def snr(ref, got):
    return 10 * np.log10((ref ** 2).sum() / ((ref - got) ** 2).sum())


@pytest.mark.parametrize("bits,wide,floor,gain", [(8, 16, 30, 10), (16, 32, 75, 10)])
def test_residual_stream_is_one_width_up_and_keeps_the_class_token(tmp_path, bits, wide, floor, gain):
    """8-bit programs store the stream at 16 bits, 16-bit programs at 32 (the class token row at the
    patches' 16-bit scale keeps about 50 dB, ViT-B/16's int16 output 49.9 dB at 224)."""
    vit_like(tmp_path / "m.onnx")
    rng = np.random.default_rng(4)
    np.save(tmp_path / "calib.npy", rng.standard_normal((4, 1, 4, 32)).astype(np.float32))
    np.save(tmp_path / "x.npy", rng.standard_normal((1, 4, 32)).astype(np.float32))  # held out
    run_cli("run", tmp_path / "m.onnx", "--input", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / "float", "-q")
    ref = np.load(tmp_path / "float" / "y.npy").astype(np.float64)
    out = {}
    for name, extra in (("wide", []), ("narrow", ["--narrow-stream"])):
        run_cli("compile", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "-o", tmp_path / name, "-q",
                "--bits", str(bits), *extra)
        rep = json.loads((tmp_path / name / "compile_report.json").read_text())
        run_cli("run", tmp_path / name, "--input", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / f"o_{name}", "-q")
        out[name] = (rep, snr(ref, np.load(tmp_path / f"o_{name}" / "y.npy").astype(np.float64)))
    rep, stream = out["wide"]
    # Every Add a LayerNormalization reads, and the Concat where the class token joins.
    key = f"residual_stream_{wide}bit"
    assert sorted(rep[key]) == ["s0", "s1", "s2", "tokens"], rep[key]
    assert rep[f"residual_stream_{bits if bits == 16 else 32}bit"] == []
    dtypes = {l["name"]: l["outputs"][0]["dtype"] for l in rep["layers"]}
    assert dtypes["add_pos"] == f"int{wide}" and dtypes["ln0"] == f"int{bits}", dtypes
    assert out["narrow"][0][key] == []
    narrow = out["narrow"][1]
    print(f"class-token head, int{bits} output SNR: {wide}-bit stream {stream:.1f} dB, {bits}-bit stream {narrow:.1f} dB")
    assert stream >= floor and stream >= narrow + gain, (stream, narrow)
    if bits == 16:  # the 32-bit codes run on the reference kernels' exact paths: same bits on every ISA
        run_cli("run", tmp_path / "wide", "--input", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / "o_ref", "-q",
                env={"FIXPOINT_ISA": "reference"})
        assert (tmp_path / "o_ref" / "y.npy").read_bytes() == (tmp_path / "o_wide" / "y.npy").read_bytes()


def test_out16_applies_to_concat_and_layernorm(tmp_path):
    """--out16 on a Concat or a LayerNormalization stores its output at 16 bits (it was ignored
    for every op whose prepare step chose the output width itself)."""
    vit_like(tmp_path / "m.onnx")
    np.save(tmp_path / "calib.npy", np.random.default_rng(4).standard_normal((2, 1, 4, 32)).astype(np.float32))
    run_cli("compile", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "-o", tmp_path / "p", "-q",
            "--narrow-stream", "--out16", "concat,ln0")
    layers = {l["name"]: l for l in json.loads((tmp_path / "p" / "compile_report.json").read_text())["layers"]}
    assert [layers[n]["outputs"][0]["dtype"] for n in ("concat", "ln0", "ln1")] == ["int16", "int16", "int8"]


def test_softmax_over_long_rows_is_16_bit(tmp_path):
    """Near-uniform attention over 200 entries: each probability ~1/200 is about one 8-bit code."""
    rng = np.random.default_rng(5)
    w = numpy_helper.from_array(rng.normal(0, 0.05, (16, 200)).astype(np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["logits"], name="scores"),
             helper.make_node("Softmax", ["logits"], ["p"], name="softmax", axis=-1),
             helper.make_node("Identity", ["p"], ["y"], name="out")]
    g = helper.make_graph(nodes, "attention_row", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 200])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, tmp_path / "m.onnx")
    np.save(tmp_path / "calib.npy", rng.standard_normal((4, 1, 8, 16)).astype(np.float32))
    np.save(tmp_path / "x.npy", rng.standard_normal((1, 8, 16)).astype(np.float32))
    run_cli("run", tmp_path / "m.onnx", "--input", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / "float", "-q")
    ref = np.load(tmp_path / "float" / "y.npy").astype(np.float64)
    got = {}
    for name, extra in (("wide", []), ("narrow", ["--narrow-softmax"])):
        run_cli("compile", tmp_path / "m.onnx", "--calib", f"x={tmp_path / 'calib.npy'}", "-o", tmp_path / name, "-q",
                *extra)
        layers = {l["name"]: l for l in json.loads((tmp_path / name / "compile_report.json").read_text())["layers"]}
        run_cli("run", tmp_path / name, "--input", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / f"o_{name}", "-q")
        got[name] = (layers["softmax"]["outputs"][0]["dtype"], snr(ref, np.load(tmp_path / f"o_{name}" / "y.npy")))
    print(f"Softmax over 200 entries, output SNR: 16-bit {got['wide'][1]:.1f} dB, 8-bit {got['narrow'][1]:.1f} dB")
    assert got["wide"][0] == "uint16" and got["narrow"][0] == "uint8"
    assert got["wide"][1] >= 40 and got["narrow"][1] <= 25, got


def test_a_qdq_models_own_softmax_pair_wins(tmp_path, oracle):
    """In an imported QDQ model the pair on a long Softmax's output keeps its 8 bits (§2.6): the
    program compiles without calibration and uses the pair's scale."""
    inits = [numpy_helper.from_array(np.float32(v), n) for n, v in (("sx", 0.05), ("sp", 1 / 256))]
    inits += [numpy_helper.from_array(np.uint8(z), n) for n, z in (("zx", 128), ("zp", 0))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"], name="qx"),
             helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"], name="dqx"),
             helper.make_node("Softmax", ["xd"], ["p"], name="softmax", axis=-1),
             helper.make_node("QuantizeLinear", ["p", "sp", "zp"], ["pq"], name="qp"),
             helper.make_node("DequantizeLinear", ["pq", "sp", "zp"], ["y"], name="dqp")]
    g = helper.make_graph(nodes, "qdq_softmax", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 64])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, tmp_path / "m.onnx")
    run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "p", "-q")
    layers = {l["name"]: l for l in json.loads((tmp_path / "p" / "compile_report.json").read_text())["layers"]}
    out = layers["softmax"]["outputs"][0]
    assert out["dtype"] == "uint8" and out["scale"] == 1 / 256, out  # was 1/255, the pair ignored
    x = np.random.default_rng(6).normal(0, 2, (1, 4, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    run_cli("run", tmp_path / "p", "--input", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / "o", "-q")
    run_ort(tmp_path / "m.onnx", tmp_path / "ort", {"x": tmp_path / "x.npy"}, optimize=False)
    steps = np.abs(np.load(tmp_path / "o" / "y.npy") - np.load(tmp_path / "ort" / "y.npy")) * 256
    assert steps.max() <= 1 + 1e-3, steps.max()
