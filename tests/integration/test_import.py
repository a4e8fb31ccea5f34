"""Import corner cases: old opsets (attribute forms the later opsets moved to inputs), external
data files, dynamic dims bound by --shape."""
import json
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import run_cli


def make(tmp_path, nodes, inputs, outputs, opset, inits=(), name="m"):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 3 if opset < 7 else 7
    p = tmp_path / f"{name}.onnx"
    onnx.save(m, str(p))
    return p


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def run_one(tmp_path, model, feeds):
    args = []
    for k, v in feeds.items():
        np.save(tmp_path / f"{k}.npy", v)
        args += ["--input", f"{k}={tmp_path}/{k}.npy"]
    run_cli("run", model, *args, "--output-dir", tmp_path / "out", "-q")
    return {f[:-4]: np.load(tmp_path / "out" / f) for f in os.listdir(tmp_path / "out")}


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10


@pytest.mark.parametrize("opset,node,expect", [
    (4, helper.make_node("Reshape", ["x"], ["y"], shape=[6, 4]), X.reshape(6, 4)),
    (1, helper.make_node("Slice", ["x"], ["y"], starts=[1], ends=[3], axes=[2]), X[:, :, 1:3]),
    (2, helper.make_node("Pad", ["x"], ["y"], pads=[0, 0, 1, 0, 0, 2], mode="edge"),
     np.pad(X, [(0, 0), (0, 0), (1, 2)], mode="edge")),
    (1, helper.make_node("Pad", ["x"], ["y"], paddings=[0, 0, 1, 0, 0, 2], value=7.0),
     np.pad(X, [(0, 0), (0, 0), (1, 2)], constant_values=7)),
    (6, helper.make_node("Clip", ["x"], ["y"], min=-2.0, max=5.0), np.clip(X, -2, 5)),
    (11, helper.make_node("Squeeze", ["x"], ["y"], axes=[0]), None),
    (11, helper.make_node("Split", ["x"], ["y"], axis=2, split=[4]), X),
    (5, helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32), X.astype(np.int32)),
    (12, helper.make_node("ReduceSum", ["x"], ["y"], axes=[1], keepdims=0), X.sum(axis=1)),
    (12, helper.make_node("Softmax", ["x"], ["y"], axis=1), None),
])
def test_old_opset_forms(tmp_path, opset, node, expect):
    x = X[:1] if node.op_type == "Squeeze" else X
    m = make(tmp_path, [node], [vi("x", list(x.shape))], [vi("y", None)], opset)
    y = run_one(tmp_path, m, {"x": x})["y"]
    if node.op_type == "Squeeze":
        expect = x[0]
    if node.op_type == "Softmax":  # opset < 13: softmax over the flattened [1:] dims
        f = x.reshape(2, -1)
        e = np.exp(f - f.max(axis=1, keepdims=True))
        expect = (e / e.sum(axis=1, keepdims=True)).reshape(x.shape)
    assert y.shape == expect.shape
    np.testing.assert_allclose(y, expect, rtol=1e-6)


def test_legacy_broadcast_add(tmp_path):
    b = np.array([100, 200, 300], np.float32)
    node = helper.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=1)
    m = make(tmp_path, [node], [vi("x", [2, 3, 4]), vi("b", [3])], [vi("y", None)], 6)
    y = run_one(tmp_path, m, {"x": X, "b": b})["y"]
    np.testing.assert_array_equal(y, X + b[None, :, None])


def test_external_data(tmp_path):
    w = np.random.default_rng(0).normal(size=(64, 32)).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [vi("x", [2, 64])],
                          [vi("y", None)], [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, str(tmp_path / "ext.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=0)
    assert os.path.getsize(tmp_path / "ext.onnx") < 1000
    x = np.random.default_rng(1).normal(size=(2, 64)).astype(np.float32)
    y = run_one(tmp_path, tmp_path / "ext.onnx", {"x": x})["y"]
    np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-5)
    os.remove(tmp_path / "weights.bin")
    p = run_cli("inspect", tmp_path / "ext.onnx", check=False)
    assert p.returncode == 1 and "weights.bin" in p.stderr


def test_symbolic_dims_bound_by_shape_option(models):
    p = run_cli("inspect", os.path.join(models, "shape_ops.onnx"), "--shape", "x=2x3x16x16", "--json")
    info = json.loads(p.stdout)
    assert info["outputs"][0]["shape"] == "2x4"
    ops = {l["op"] for l in info["layers"]}
    assert not ops & {"Shape", "Gather", "Unsqueeze", "Concat"}, "shape arithmetic should fold once shapes are bound"
    assert info["macs"] == 2 * 8 * 16 * 16 * 27
    raw = json.loads(run_cli("inspect", os.path.join(models, "shape_ops.onnx"), "--json", "--raw").stdout)
    assert "Shape" in {l["op"] for l in raw["layers"]}


def test_ocr_models_inspect_with_bound_shapes():
    from conftest import OCR_ASSETS, OCR_MODELS
    for key, shape in [("det", "1x3x640x640"), ("rec", "1x3x48x320"), ("cls", "1x3x48x192")]:
        p = run_cli("inspect", os.path.join(OCR_ASSETS, OCR_MODELS[key]), "--shape", f"x={shape}", "--json")
        info = json.loads(p.stdout)
        assert info["macs_complete"], key
        assert all("?" not in l["output_shape"] and "Dynamic" not in l["output_shape"] for l in info["layers"]), key
