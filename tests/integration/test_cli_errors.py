"""Bad input never crashes: every failure is one clear line on stderr naming what is at fault,
and a non-zero exit code."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import run_cli


def expect_error(args, *must_mention, code=None):
    p = run_cli(*args, check=False)
    assert p.returncode != 0, f"expected failure, got success: {p.stdout}"
    assert p.returncode in (1, 2), f"exit code {p.returncode} (crash?): {p.stderr}"
    if code is not None:
        assert p.returncode == code
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, f"expected one error line, got: {p.stderr!r}"
    assert lines[0].startswith("fixpoint: error: "), lines[0]
    for m in must_mention:
        assert m in lines[0], f"{m!r} not in {lines[0]!r}"
    return lines[0]


def save(model, path):
    onnx.save(model, str(path))
    return str(path)


def one_node_model(tmp_path, op, attrs=None, x_shape=(1, 1, 5, 5), w_shape=(1, 1, 3, 3), name="bad_node"):
    w = numpy_helper.from_array(np.ones(w_shape, np.float32), "w")
    node = helper.make_node(op, ["x", "w"] if op in ("Conv", "ConvTranspose") else ["x"], ["y"], name=name,
                            **(attrs or {}))
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / f"{op}.onnx")


@pytest.fixture
def x_npy(tmp_path):
    p = tmp_path / "x.npy"
    np.save(p, np.ones((1, 1, 5, 5), np.float32))
    return str(p)


def test_missing_model_file(tmp_path, x_npy):
    expect_error(["run", tmp_path / "nope.onnx", "--input", f"x={x_npy}", "-o", tmp_path / "o"], "nope.onnx")


def test_empty_model_file(tmp_path, x_npy):
    p = tmp_path / "empty.onnx"
    p.write_bytes(b"")
    expect_error(["run", p, "--input", f"x={x_npy}", "-o", tmp_path / "o"], "empty.onnx")


def test_truncated_model(models, tmp_path):
    data = open(os.path.join(models, "tiny_cnn.onnx"), "rb").read()
    p = tmp_path / "truncated.onnx"
    p.write_bytes(data[: len(data) // 2])
    expect_error(["inspect", p], "truncated.onnx")


def test_random_bytes_model(tmp_path):
    p = tmp_path / "random.onnx"
    p.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    expect_error(["inspect", p], "random.onnx")


def test_bit_flipped_models_never_crash(models, tmp_path):
    """Random corruptions of a real model: either a clean error (exit 1) or a run; never a signal."""
    data = bytearray(open(os.path.join(models, "tiny_cnn.onnx"), "rb").read())
    rng = np.random.default_rng(1234)
    print("seed 1234")
    x = tmp_path / "x.npy"
    np.save(x, np.ones((1, 3, 32, 32), np.float32))
    for i in range(25):
        d = bytearray(data)
        for pos in rng.integers(0, len(d), 8):
            d[pos] = int(rng.integers(0, 256))
        p = tmp_path / f"flip{i}.onnx"
        p.write_bytes(bytes(d))
        r = run_cli("run", p, "--input", f"image={x}", "-o", tmp_path / "o", "-q", check=False)
        assert r.returncode in (0, 1), f"corruption {i}: exit {r.returncode}: {r.stderr}"
        if r.returncode:
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_missing_input(tmp_path, x_npy):
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"], name="add")], "g",
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 1, 5, 5]) for n in "ab"],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "two.onnx")
    expect_error(["run", m, "--input", f"a={x_npy}", "-o", tmp_path / "o"], "missing input 'b'")


def test_unknown_input_name(models, tmp_path, x_npy):
    expect_error(["run", os.path.join(models, "tiny_cnn.onnx"), "--input", f"nosuch={x_npy}", "-o", tmp_path / "o"],
                 "'nosuch'")


def test_wrong_input_dtype(models, tmp_path):
    p = tmp_path / "int.npy"
    np.save(p, np.ones((1, 3, 32, 32), np.int32))
    expect_error(["run", os.path.join(models, "tiny_cnn.onnx"), "--input", f"image={p}", "-o", tmp_path / "o"],
                 "input 'image'", "float32", "int32")


def test_wrong_input_shape(models, tmp_path):
    p = tmp_path / "bad.npy"
    np.save(p, np.ones((1, 3, 31, 32), np.float32))
    expect_error(["run", os.path.join(models, "tiny_cnn.onnx"), "--input", f"image={p}", "-o", tmp_path / "o"],
                 "image", "1x3x31x32")


def test_wrong_input_rank(models, tmp_path):
    p = tmp_path / "bad.npy"
    np.save(p, np.ones((3, 32, 32), np.float32))
    expect_error(["run", os.path.join(models, "tiny_cnn.onnx"), "--input", f"image={p}", "-o", tmp_path / "o"],
                 "image", "rank")


def test_truncated_npy(models, tmp_path):
    p = tmp_path / "trunc.npy"
    np.save(p, np.ones((1, 3, 32, 32), np.float32))
    p.write_bytes(p.read_bytes()[:200])
    expect_error(["run", os.path.join(models, "tiny_cnn.onnx"), "--input", f"image={p}", "-o", tmp_path / "o"],
                 "trunc.npy", "truncated")


def test_fortran_order_npy(models, tmp_path):
    p = tmp_path / "f.npy"
    np.save(p, np.asfortranarray(np.ones((1, 3, 32, 32), np.float32)))
    expect_error(["run", os.path.join(models, "tiny_cnn.onnx"), "--input", f"image={p}", "-o", tmp_path / "o"],
                 "f.npy", "Fortran")


def test_unknown_op(tmp_path, x_npy):
    m = one_node_model(tmp_path, "Det", name="mystery")  # Det: a real ONNX op we do not implement
    expect_error(["run", m, "--input", f"x={x_npy}", "-o", tmp_path / "o"], "mystery", "Det", "not supported")


def test_custom_domain_op(tmp_path, x_npy):
    g = helper.make_graph([helper.make_node("FancyOp", ["x"], ["y"], name="fancy", domain="com.vendor")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.vendor", 1)]),
             tmp_path / "custom.onnx")
    expect_error(["run", m, "--input", f"x={x_npy}", "-o", tmp_path / "o"], "fancy", "com.vendor.FancyOp")


def test_cyclic_graph(tmp_path, x_npy):
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
             helper.make_node("Relu", ["a"], ["b"], name="second")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
                          [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)])
    m = save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "cycle.onnx")
    expect_error(["run", m, "--input", f"x={x_npy}", "-o", tmp_path / "o"], "cycle")


def test_dangling_tensor(tmp_path, x_npy):
    g = helper.make_graph([helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "dangling.onnx")
    expect_error(["run", m, "--input", f"x={x_npy}", "-o", tmp_path / "o"], "adder", "ghost")


@pytest.mark.parametrize("attrs,mention", [
    ({"pads": [-1, -1, -1, -1]}, "pads"),
    ({"strides": [0, 0]}, "stride"),
    ({"dilations": [0, 1]}, "dilation"),
    ({"kernel_shape": [5, 5]}, "kernel_shape"),
    ({"group": 0}, "group"),
    ({"strides": [1]}, "strides"),
    ({"auto_pad": "BOGUS"}, "auto_pad"),
])
def test_absurd_conv_attributes(tmp_path, x_npy, attrs, mention):
    m = one_node_model(tmp_path, "Conv", attrs, name="conv_bad")
    expect_error(["run", m, "--input", f"x={x_npy}", "-o", tmp_path / "o"], "conv_bad", mention)


@pytest.mark.parametrize("attrs,mention", [
    ({"kernel_shape": [3, 3], "strides": [0, 1]}, "stride"),
    ({"kernel_shape": [9, 9]}, "does not fit"),
    ({"kernel_shape": [0, 3]}, "kernel"),
])
def test_absurd_pool_attributes(tmp_path, x_npy, attrs, mention):
    m = one_node_model(tmp_path, "MaxPool", attrs, name="pool_bad")
    expect_error(["run", m, "--input", f"x={x_npy}", "-o", tmp_path / "o"], "pool_bad", mention)


def test_bad_shape_option(models):
    expect_error(["inspect", os.path.join(models, "tiny_cnn.onnx"), "--shape", "image=1xthreex32"], "--shape")
    expect_error(["inspect", os.path.join(models, "tiny_cnn.onnx"), "--shape", "nosuch=1x3x32x32"], "nosuch")
    expect_error(["inspect", os.path.join(models, "tiny_cnn.onnx"), "--shape", "image=1x4x32x32"], "image",
                 "dimension 1")


def test_unknown_option_and_subcommand(models):
    expect_error(["run", os.path.join(models, "tiny_cnn.onnx"), "--bogus"], code=2)
    expect_error(["frobnicate"], code=2)


def test_every_subcommand_has_help():
    for sub in ["inspect", "run"]:
        p = run_cli(sub, "--help")
        assert "Usage" in p.stdout and sub in p.stdout


@pytest.mark.parametrize("option", ["--bits16", "--params16", "--params8", "--out16", "--deny", "--allow"])
def test_a_layer_list_entry_that_matches_nothing_is_an_error(models, tmp_path, option):
    # A typo used to compile the layer at its default width without a word.
    calib = f"image={os.path.join(models, 'tiny_cnn_input.npy')}"
    expect_error(["compile", os.path.join(models, "tiny_cnn.onnx"), "--calib", calib, "-o", tmp_path / "p", option,
                  "conv_3,cnov_typo"], option, "'cnov_typo' matches no node", code=1)
    # names of the model as imported, output tensor names and globs match; op:TYPE is a type filter
    # that may match nothing (TIDL configs deny "MaxPool, Tanh" for every model of a project)
    run_cli("compile", os.path.join(models, "tiny_cnn.onnx"), "--calib", calib, "-o", tmp_path / "ok", "-q",
            "--bits16", "conv_*,op:Gemm,probabilities,op:LSTM")


def test_headroom16_out_of_range(models, tmp_path):
    m, x = os.path.join(models, "tiny_cnn.onnx"), os.path.join(models, "tiny_cnn_input.npy")
    expect_error(["compile", m, "--calib", f"image={x}", "-o", tmp_path / "p", "--bits", "16", "--headroom16", "0.5"],
                 "headroom16", "[1, 1000]", code=1)
