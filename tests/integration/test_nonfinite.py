"""Non-finite values (docs/arithmetic.md 2.8): the float reference propagates NaN and Inf as ONNX
Runtime does, programs map NaN to the zero point and saturate Inf, and `run` and calibration
say how many non-finite values they met instead of hiding them."""
import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conftest import load_outputs, run_cli, run_ort

X = np.array([[[[1.0, np.nan, -2.0, 0.5], [np.inf, -np.inf, 3.0, -0.25],
                [0.0, 2.0, -1.0, np.nan], [4, 5, 6, 7]]]], np.float32)

# One node per float kernel that reads the input elementwise or by windows; each output is
# compared with ONNX Runtime's on the same input.
UNARY = ["Relu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu", "Elu", "Softplus", "Abs", "Neg",
         "Exp", "Erf", "Sqrt", "Reciprocal", "Floor", "Ceil", "Sign", "Selu", "Celu", "ThresholdedRelu", "Softsign",
         "Round", "Log", "Softmax", "LogSoftmax", "GlobalAveragePool", "ReduceSum", "ReduceMean"]
WINDOWED = {"AveragePool": dict(kernel_shape=[2, 2])}
BINARY = {"Max": ["x", "half"], "Min": ["x", "half"], "Clip": ["x", "lo", "hi"], "Conv": ["x", "w"],
          "PRelu": ["x", "slope"], "Add": ["x", "half"], "Mul": ["x", "half"], "Pow": ["x", "half"],
          "Div": ["x", "half"], "MatMul": ["x", "eye"], "InstanceNormalization": ["x", "one", "zero"],
          "CumSum": ["x", "axis"], "Where": ["cond", "x", "half"], "LayerNormalization": ["x", "ones4", "zeros4"]}
# Max-type reductions: NaN wherever any element of the window is NaN (ONNX Runtime's answer
# there depends on its SIMD max's operand order: it may keep or drop the NaN).
MAXLIKE = {"MaxPool": dict(kernel_shape=[2, 2]), "GlobalMaxPool": {}, "ReduceMax": {}, "ReduceMin": {}}


def nonfinite_model(path):
    nodes, outs = [], []

    def add(op, ins, **attr):
        nodes.append(h.make_node(op, ins, [f"y_{op}"], **attr))
        outs.append(h.make_tensor_value_info(f"y_{op}", T.FLOAT, None))

    for op in UNARY:
        add(op, ["x"])
    for op, attr in {**WINDOWED, **MAXLIKE}.items():
        add(op, ["x"], **attr)
    for op, ins in BINARY.items():
        add(op, ins, **(dict(pads=[1, 1, 1, 1]) if op == "Conv" else {}))
    nodes.append(h.make_node("Resize", ["x", "", "scales"], ["y_Resize"], mode="linear"))
    outs.append(h.make_tensor_value_info("y_Resize", T.FLOAT, None))
    inits = [nh.from_array(np.array([0.5], np.float32), "half"), nh.from_array(np.ones((2, 1, 3, 3), np.float32), "w"),
             nh.from_array(np.array(-1.0, np.float32), "lo"), nh.from_array(np.array(1.0, np.float32), "hi"),
             nh.from_array(np.array([0.1], np.float32), "slope"), nh.from_array(np.eye(4, dtype=np.float32), "eye"),
             nh.from_array(np.ones(1, np.float32), "one"), nh.from_array(np.zeros(1, np.float32), "zero"),
             nh.from_array(np.array(3, np.int64), "axis"), nh.from_array(np.array([True, False, True, False]), "cond"),
             nh.from_array(np.ones(4, np.float32), "ones4"), nh.from_array(np.zeros(4, np.float32), "zeros4"),
             nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    g = h.make_graph(nodes, "nonfinite", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 4, 4])], outs, inits)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)


def test_float_reference_propagates_like_onnxruntime(oracle, tmp_path):
    model, x = tmp_path / "nonfinite.onnx", tmp_path / "x.npy"
    nonfinite_model(model)
    np.save(x, X)
    p = run_cli("run", model, "--input", f"x={x}", "--output-dir", tmp_path / "fp", "-q")
    assert "input 'x' holds 2 NaN and 2 Inf value(s)" in p.stderr
    run_ort(model, tmp_path / "ort", {"x": x})
    ours, ref = load_outputs(tmp_path / "fp"), load_outputs(tmp_path / "ort")
    assert sorted(ours) == sorted(ref)
    checked = 0
    for k in ref:
        a, b = ours[k], ref[k]
        assert a.shape == b.shape, k
        op = k[2:]
        if op in MAXLIKE:
            # Every ONNX Runtime NaN is ours too; where we say NaN and it does not, the window held a NaN.
            assert np.all(np.isnan(a)[np.isnan(b)]), k
            both = ~np.isnan(a) & ~np.isnan(b)
            np.testing.assert_array_equal(a[both], b[both], err_msg=k)
            continue
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"{k}: NaN positions")
        np.testing.assert_array_equal(np.isposinf(a), np.isposinf(b), err_msg=f"{k}: +Inf positions")
        np.testing.assert_array_equal(np.isneginf(a), np.isneginf(b), err_msg=f"{k}: -Inf positions")
        fin = np.isfinite(b)
        np.testing.assert_allclose(a[fin], b[fin], rtol=1e-5, atol=1e-6, err_msg=k)
        checked += 1
    assert checked == len(ref) - len(MAXLIKE)


def test_nan_in_one_pixel_makes_nan_outputs(models, oracle, tmp_path):
    """The issue's case: a NaN pixel in the bundled model's input is not swallowed."""
    model = os.path.join(models, "tiny_cnn.onnx")
    x = np.load(os.path.join(models, "tiny_cnn_input.npy")).copy()
    x.flat[5] = np.nan
    np.save(tmp_path / "x.npy", x)
    p = run_cli("run", model, "--input", f"image={tmp_path / 'x.npy'}", "--output-dir", tmp_path / "fp", "-q")
    assert "holds 1 NaN and 0 Inf" in p.stderr
    run_ort(model, tmp_path / "ort", {"image": tmp_path / "x.npy"})
    ours, ref = load_outputs(tmp_path / "fp"), load_outputs(tmp_path / "ort")
    for k in ref:
        assert np.isnan(ref[k]).any(), "the oracle itself propagates the NaN"
        np.testing.assert_array_equal(np.isnan(ours[k]), np.isnan(ref[k]), err_msg=k)


def test_program_maps_nan_to_zero_point_and_saturates_inf(models, tmp_path):
    """NaN -> the zero point (real 0), +-Inf -> the ends of the code range; calibration counts
    the non-finite values it ignored."""
    model = os.path.join(models, "tiny_cnn.onnx")
    x = np.load(os.path.join(models, "tiny_cnn_input.npy"))
    calib = np.stack([x, x * 0.5, x * -1.0])
    calib[1].flat[3] = np.nan
    calib[2].flat[7] = np.inf
    np.save(tmp_path / "calib.npy", calib)
    p = run_cli("compile", model, "-o", tmp_path / "q8", "--calib", f"image={tmp_path / 'calib.npy'}", "-q")
    assert "calibration met 1 NaN and 1 Inf value(s) in its samples" in p.stderr
    rep = __import__("json").load(open(tmp_path / "q8" / "compile_report.json"))
    assert rep["calibration_nonfinite"]["input_nan"] == 1 and rep["calibration_nonfinite"]["input_inf"] == 1
    # The same input with the NaN replaced by 0 gives the same codes as with the NaN.
    xn, x0 = x.copy(), x.copy()
    xn.flat[9], x0.flat[9] = np.nan, 0.0
    xi, xb = x.copy(), x.copy()
    xi.flat[9], xb.flat[9] = np.inf, 1e30
    for name, arr in {"nan": xn, "zero": x0, "inf": xi, "big": xb}.items():
        np.save(tmp_path / f"{name}.npy", arr)
        q = run_cli("run", tmp_path / "q8", "--input", f"image={tmp_path / (name + '.npy')}", "--output-dir",
                    tmp_path / name, "--raw", "-q")
        if name in ("nan", "inf"):
            assert "holds" in q.stderr
    for a, b in (("nan", "zero"), ("inf", "big")):
        oa, ob = load_outputs(tmp_path / a), load_outputs(tmp_path / b)
        for k in oa:
            np.testing.assert_array_equal(oa[k], ob[k], err_msg=f"{a} vs {b}: {k}")
            assert np.isfinite(oa[k]).all()
