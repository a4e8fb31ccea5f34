#!/usr/bin/python3
"""Builds the models fixpoint's tests and examples use, with onnx.helper and numpy only
(deterministic: fixed seeds). Nothing is downloaded.

usage: make_models.py OUTDIR [--only NAME ...]

Models:
  tiny_cnn       the bundled default model: Conv+BN+Relu, MaxPool, Conv+Relu, GAP, Gemm, Softmax
                 (dynamic batch "batch"); its sample input tiny_cnn_input.npy (batch 4)
  resnet18       torchvision's ResNet-18 architecture, He-initialised weights, random BN
                 statistics, dynamic batch; resnet18_input.npy (batch 2, 224x224)
  mlp_batch5     a Gemm-only MLP (4 features -> 5 classes) exported with a static batch of 5,
                 like the seed thread's classifier; mlp_dynamic is the same weights with a
                 dynamic batch; mlp_input.npy holds 5 rows
  mlp_trained    a Gemm MLP trained here with numpy on a synthetic 5-class task, with its
                 held-out set (mlp_trained_test.npy, mlp_trained_labels.npy) and calibration rows
  seed_qat       the seed thread's QAT experiment: Clip(0,1) -> pass-through Conv -> Clip(0,4)
  topk_head      a conv backbone (Conv+Relu x2, GAP, Gemm) whose 20 scores go through TopK(k=3):
                 an op the fixed-point engine lacks, so it runs on the CPU; topk_head_input.npy
                 (batch 3) and topk_head_calib.npy
  planted_fault  four Convs (Relu between) where conv_7's output channel 5 is scaled x1000 (weights and
                 bias) and conv_11 divides its input channel 5 by 1000: float output unchanged, but
                 one 8-bit scale must cover a range 1000x the other channels' (issue 15's test of
                 --auto-mixed); planted_fault_calib.npy (16) and planted_fault_input.npy (8)
  shape_ops      a graph whose Reshape target is computed by Shape/Gather/Unsqueeze/Concat,
                 with Resize, Pad, Split, Transpose, Slice: exercises constant folding
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.count = 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, array, prefix="w"):
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def node(self, op, inputs, n_out=1, prefix=None, **attrs):
        nm = self.name(prefix or op.lower())
        outs = [f"{nm}_out{i}" if n_out > 1 else f"{nm}_out" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=nm, **attrs))
        return outs if n_out > 1 else outs[0]

    def conv(self, x, cin, cout, k, stride=1, pad=0, group=1, bias=True):
        fan_in = cin // group * k * k
        w = self.rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // group, k, k)).astype(np.float32)
        ins = [x, self.const(w)]
        if bias:
            ins.append(self.const(self.rng.normal(0, 0.05, cout).astype(np.float32), "b"))
        return self.node("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=group)

    def bn(self, x, c):
        r = self.rng
        return self.node("BatchNormalization", [
            x, self.const(r.uniform(0.5, 1.5, c).astype(np.float32), "gamma"),
            self.const(r.normal(0, 0.1, c).astype(np.float32), "beta"),
            self.const(r.normal(0, 0.1, c).astype(np.float32), "mean"),
            self.const(r.uniform(0.5, 1.5, c).astype(np.float32), "var")], epsilon=1e-5)

    def gemm(self, x, fin, fout):
        w = self.rng.normal(0, np.sqrt(2.0 / fin), (fout, fin)).astype(np.float32)
        b = self.rng.normal(0, 0.05, fout).astype(np.float32)
        return self.node("Gemm", [x, self.const(w), self.const(b, "b")], transB=1)

    def model(self, name, inputs, outputs):
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="fixpoint-make_models")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def tiny_cnn():
    b = Builder(1)
    x = b.conv("image", 3, 8, 3, pad=1)
    x = b.node("Relu", [b.bn(x, 8)])
    x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = b.node("Relu", [b.conv(x, 8, 16, 3, pad=1)])
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x], axis=1)
    x = b.gemm(x, 16, 10)
    b.node("Softmax", [x], axis=1)
    b.nodes[-1].output[0] = "probabilities"
    m = b.model("tiny_cnn", [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
                [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10])])
    inp = np.random.default_rng(100).uniform(0, 1, (4, 3, 32, 32)).astype(np.float32)
    return m, {"tiny_cnn_input.npy": inp}


def resnet18():
    b = Builder(2)
    x = b.node("Relu", [b.bn(b.conv("input", 3, 64, 7, stride=2, pad=3, bias=False), 64)])
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, cout in enumerate([64, 128, 256, 512]):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            y = b.node("Relu", [b.bn(b.conv(x, cin, cout, 3, stride=stride, pad=1, bias=False), cout)])
            y = b.bn(b.conv(y, cout, cout, 3, pad=1, bias=False), cout)
            skip = x
            if stride != 1 or cin != cout:
                skip = b.bn(b.conv(x, cin, cout, 1, stride=stride, bias=False), cout)
            x = b.node("Relu", [b.node("Add", [y, skip])])
            cin = cout
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)
    b.gemm(x, 512, 1000)
    b.nodes[-1].output[0] = "logits"
    m = b.model("resnet18", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 224, 224])],
                [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1000])])
    inp = np.random.default_rng(101).normal(0, 1, (2, 3, 224, 224)).astype(np.float32)
    return m, {"resnet18_input.npy": inp}


def mlp(batch):
    b = Builder(3)
    x = b.node("Relu", [b.gemm("features", 4, 64)])
    x = b.node("Relu", [b.gemm(x, 64, 64)])
    b.gemm(x, 64, 5)
    b.nodes[-1].output[0] = "scores"
    m = b.model("mlp", [helper.make_tensor_value_info("features", TensorProto.FLOAT, [batch, 4])],
                [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [batch, 5])])
    inp = np.random.default_rng(102).normal(0, 3, (5, 4)).astype(np.float32)
    return m, {"mlp_input.npy": inp}


def mlp_trained():
    """A Gemm MLP (8 features -> 32 -> 32 -> 5 classes) trained here with numpy on a synthetic
    task (Gaussian class clusters through a fixed random nonlinearity); held-out set included."""
    rng = np.random.default_rng(6)
    centers = rng.normal(0, 2.0, (5, 8))
    mix = rng.normal(0, 1.0, (8, 8))

    def data(n):
        y = rng.integers(0, 5, n)
        x = centers[y] + rng.normal(0, 1.2, (n, 8))
        return np.tanh(x @ mix / 3) * 3 + 0.1 * x, y

    xtr, ytr = data(4000)
    xte, yte = data(1000)
    sizes = [8, 32, 32, 5]
    W = [rng.normal(0, np.sqrt(2 / a), (a, b)) for a, b in zip(sizes, sizes[1:])]
    B = [np.zeros(b) for b in sizes[1:]]
    for step in range(1500):  # full-batch gradient descent with momentum
        idx = rng.integers(0, len(xtr), 256)
        h, acts = xtr[idx], [xtr[idx]]
        for i in range(3):
            h = h @ W[i] + B[i]
            if i < 2:
                h = np.maximum(h, 0)
            acts.append(h)
        p = np.exp(h - h.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g = p
        g[np.arange(len(idx)), ytr[idx]] -= 1
        g /= len(idx)
        for i in reversed(range(3)):
            gw, gb = acts[i].T @ g, g.sum(0)
            if i > 0:
                g = (g @ W[i].T) * (acts[i] > 0)
            W[i] -= 0.1 * gw
            B[i] -= 0.1 * gb
    b = Builder(6)
    x = "features"
    for i in range(3):
        x = b.node("Gemm", [x, b.const(W[i].T.astype(np.float32)), b.const(B[i].astype(np.float32), "b")], transB=1)
        if i < 2:
            x = b.node("Relu", [x])
    b.nodes[-1].output[0] = "logits"
    m = b.model("mlp_trained", [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", 8])],
                [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 5])])
    return m, {"mlp_trained_test.npy": xte.astype(np.float32), "mlp_trained_labels.npy": yte.astype(np.int64),
               "mlp_trained_calib.npy": xtr[:200].astype(np.float32)}


def shape_ops():
    b = Builder(4)
    x = b.node("Relu", [b.conv("x", 3, 8, 3, pad=1)])                      # N x 8 x 16 x 16
    x = b.node("Resize", [x, "", b.const(np.array([1, 1, 2, 2], np.float32), "scales")], mode="linear")
    x = b.node("Pad", [x, b.const(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")], mode="reflect")
    a, c = b.node("Split", [x], n_out=2, axis=1)                           # 2 x (N x 4 x 34 x 34)
    x = b.node("Mul", [a, b.node("Sigmoid", [c])])
    s = b.node("Shape", [x])
    n = b.node("Gather", [s, b.const(np.array(0, np.int64), "idx")], axis=0)
    n = b.node("Unsqueeze", [n, b.const(np.array([0], np.int64), "axes")])
    tgt = b.node("Concat", [n, b.const(np.array([4, -1], np.int64), "rest")], axis=0)
    x = b.node("Reshape", [x, tgt])                                          # N x 4 x 1156
    x = b.node("Transpose", [x], perm=[0, 2, 1])
    x = b.node("Slice", [x, b.const(np.array([0], np.int64)), b.const(np.array([1000], np.int64)),
                          b.const(np.array([1], np.int64)), b.const(np.array([2], np.int64))])
    x = b.node("ReduceMean", [x], axes=[1], keepdims=0)
    b.node("Softmax", [x], axis=-1)
    b.nodes[-1].output[0] = "y"
    m = b.model("shape_ops", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
    inp = np.random.default_rng(103).normal(0, 1, (3, 3, 16, 16)).astype(np.float32)
    return m, {"shape_ops_input.npy": inp}


def seed_qat():
    """The seed thread's experiment: 1x1x5x5 input -> Clip(0, 1) -> Conv with two identical 3x3
    kernels that pass the input through (centre tap 1) -> Clip(0, 4)."""
    b = Builder(5)
    lo, hi1, hi4 = (b.const(np.array(v, np.float32), "c") for v in (0.0, 1.0, 4.0))
    x = b.node("Clip", ["x", lo, hi1])
    w = np.zeros((2, 1, 3, 3), np.float32)
    w[:, 0, 1, 1] = 1.0
    x = b.node("Conv", [x, b.const(w), b.const(np.zeros(2, np.float32), "b")], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    b.node("Clip", [x, lo, hi4])
    b.nodes[-1].output[0] = "y"
    m = b.model("seed_qat", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 5, 5])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2, 5, 5])])
    return m, {"seed_qat_input.npy": np.full((1, 1, 5, 5), 0.8, np.float32)}


def topk_head():
    b = Builder(7)
    x = b.node("Relu", [b.conv("image", 3, 8, 3, stride=2, pad=1)])
    x = b.node("Relu", [b.conv(x, 8, 16, 3, stride=2, pad=1)])
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)
    x = b.gemm(x, 16, 20)
    b.node("TopK", [x, b.const(np.array([3], np.int64), "k")], n_out=2, axis=1)
    b.nodes[-1].output[0] = "top_scores"
    b.nodes[-1].output[1] = "top_classes"
    m = b.model("topk_head", [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
                [helper.make_tensor_value_info("top_scores", TensorProto.FLOAT, ["batch", 3]),
                 helper.make_tensor_value_info("top_classes", TensorProto.INT64, ["batch", 3])])
    rng = np.random.default_rng(103)
    return m, {"topk_head_input.npy": rng.uniform(0, 1, (3, 3, 32, 32)).astype(np.float32),
               "topk_head_calib.npy": rng.uniform(0, 1, (8, 3, 32, 32)).astype(np.float32)}


def planted_fault():
    b = Builder(7)
    x = b.node("Relu", [b.conv("image", 3, 8, 3, pad=1)])
    x = b.node("Relu", [b.conv(x, 8, 16, 3, pad=1)])
    x = b.node("Relu", [b.conv(x, 16, 16, 3, pad=1)])
    b.conv(x, 16, 8, 3, pad=1)
    b.nodes[-1].output[0] = "features"
    inits = {t.name: t for t in b.inits}
    planted, reader = b.nodes[2], b.nodes[4]  # conv_7 and conv_11
    w2, b2 = (numpy_helper.to_array(inits[n]).copy() for n in planted.input[1:3])
    w3 = numpy_helper.to_array(inits[reader.input[1]]).copy()
    w2[5] *= 1000
    b2[5] *= 1000
    w3[:, 5] /= 1000  # Relu(1000 t) / 1000 = Relu(t): the float function is unchanged
    for name, arr in zip(list(planted.input[1:3]) + [reader.input[1]], (w2, b2, w3)):
        inits[name].CopyFrom(numpy_helper.from_array(arr.astype(np.float32), name))
    m = b.model("planted_fault", [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
                [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", 8, 32, 32])])
    rng = np.random.default_rng(70)
    return m, {"planted_fault_calib.npy": rng.uniform(0, 1, (16, 3, 32, 32)).astype(np.float32),
               "planted_fault_input.npy": rng.uniform(0, 1, (8, 3, 32, 32)).astype(np.float32)}


MODELS = {
    "planted_fault": planted_fault,
    "tiny_cnn": tiny_cnn,
    "resnet18": resnet18,
    "mlp_batch5": lambda: mlp(5),
    "mlp_dynamic": lambda: mlp("batch"),
    "shape_ops": shape_ops,
    "seed_qat": seed_qat,
    "mlp_trained": mlp_trained,
    "topk_head": topk_head,
}


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    out = sys.argv[1]
    only = sys.argv[3:] if len(sys.argv) > 2 and sys.argv[2] == "--only" else list(MODELS)
    os.makedirs(out, exist_ok=True)
    for name in only:
        model, arrays = MODELS[name]()
        onnx.save(model, os.path.join(out, name + ".onnx"))
        for fname, arr in arrays.items():
            np.save(os.path.join(out, fname), arr)
        print(f"make_models: wrote {name}.onnx")


if __name__ == "__main__":
    main()
