#!/usr/bin/python3
"""Quantizes a float ONNX model to QDQ format the way ONNX Runtime's static quantizer
(`quantize_static`, QuantFormat.QDQ, MinMax calibration, per_channel=True) does, so that fixpoint's
QDQ import can be checked against ONNX Runtime without its Python package (not in Debian):

  - activations: QuantizeLinear -> DequantizeLinear on every float tensor (graph inputs and node
    outputs), uint8 asymmetric from the MinMax range over the calibration samples widened to
    include 0 (scale = (max - min) / 255, zero point = round(-min / scale));
  - a Relu that is the only reader of a Conv's output is removed, the Conv's output taking the
    Relu's range (ONNX Runtime's "removable activation");
  - MaxPool, Flatten and Reshape outputs share their input's scale and zero point;
  - Conv and Gemm weights: int8, symmetric, per output channel (scale = max |w| / 127), through a
    DequantizeLinear; biases: int32 with scale input scale x weight scale, zero point 0;
  - graph outputs stay float (the final Gemm's logits are not quantized).

Ranges come from ONNX Runtime (scripts/oracle/ort_run.js) running the float model with every
float tensor exposed as an output.

usage: quantize_qdq.py MODEL.onnx OUT.onnx --calib NAME=FILE.npy [--torchvision NAME --size S]
  --calib FILE holds N samples stacked on a leading axis ([N, ...model input shape]).
  --torchvision NAME first exports torchvision's NAME (seeded random weights, scripts/zoo.py) to MODEL.onnx.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT = os.path.join(HERE, "oracle", "ort_run.js")
SHARES_INPUT_ENCODING = {"MaxPool", "Flatten", "Reshape"}


def sanitize(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def float_tensors(model):
    """Graph inputs and node outputs of type float, in graph order."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)}
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    names += [o for n in model.graph.node for o in n.output if o]
    return [t for t in names if types.get(t) == TensorProto.FLOAT]


def minmax_ranges(model, feeds_file, input_name, work):
    """{tensor: (min, max)} over the samples of feeds_file, from ONNX Runtime."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    outputs = {o.name for o in probe.graph.output}
    tensors = float_tensors(model)
    for t in tensors:
        if t not in outputs and t != input_name:
            probe.graph.output.append(helper.make_tensor_value_info(t, TensorProto.FLOAT, None))
    path = os.path.join(work, "probe.onnx")
    onnx.save(probe, path)
    samples = np.load(feeds_file)
    lo, hi = {}, {}
    for i, s in enumerate(samples):
        np.save(os.path.join(work, "s.npy"), s)
        out = os.path.join(work, f"o{i}")
        subprocess.run(["node", ORT, path, out, f"{input_name}={os.path.join(work, 's.npy')}"], check=True,
                       capture_output=True)
        for t in tensors:
            v = s if t == input_name else np.load(os.path.join(out, sanitize(t) + ".npy"))
            lo[t] = min(lo.get(t, np.inf), float(v.min()))
            hi[t] = max(hi.get(t, -np.inf), float(v.max()))
    return {t: (lo[t], hi[t]) for t in tensors}


def uint8_encoding(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zp = int(np.clip(np.round(-lo / float(scale)), 0, 255))
    return scale, zp


def quantize(model, ranges):
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    # Removable activations: Conv -> Relu (sole reader) becomes one Conv writing the Relu's output.
    removed = set()
    for n in g.node:
        if n.op_type == "Conv" and len(consumers.get(n.output[0], [])) == 1:
            r = consumers[n.output[0]][0]
            if r.op_type == "Relu":
                n.output[0] = r.output[0]
                removed.add(id(r))
    nodes = [n for n in g.node if id(n) not in removed]
    producer = {o: n for n in nodes for o in n.output}
    graph_outputs = {o.name for o in g.output}

    encoding = {}
    for t in [i.name for i in g.input if i.name not in inits] + [o for n in nodes for o in n.output]:
        if t not in ranges or t in graph_outputs:
            continue
        p = producer.get(t)
        if p is not None and p.op_type in SHARES_INPUT_ENCODING and p.input[0] in encoding:
            encoding[t] = encoding[p.input[0]]
        else:
            encoding[t] = uint8_encoding(*ranges[t])

    new_inits, out_nodes = [], []

    def const(name, value):
        new_inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def qdq(t):
        s, z = encoding[t]
        sn, zn = const(f"{t}_scale", np.float32(s)), const(f"{t}_zero_point", np.uint8(z))
        out_nodes.append(helper.make_node("QuantizeLinear", [t, sn, zn], [f"{t}_QuantizeLinear_Output"],
                                          name=f"{t}_QuantizeLinear"))
        out_nodes.append(helper.make_node("DequantizeLinear", [f"{t}_QuantizeLinear_Output", sn, zn],
                                          [f"{t}_DequantizeLinear_Output"], name=f"{t}_DequantizeLinear"))

    def dq(t):
        return f"{t}_DequantizeLinear_Output" if t in encoding else t

    dropped = set()
    for t in [i.name for i in g.input]:
        if t in encoding:
            qdq(t)
    for n in nodes:
        ins = [dq(i) for i in n.input]
        if n.op_type in ("Conv", "Gemm") and n.input[1] in inits:
            w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
            trans_b = any(a.name == "transB" and a.i for a in n.attribute)
            wc = w if n.op_type == "Conv" or trans_b else w.T  # output channels first
            absmax = np.abs(wc.reshape(wc.shape[0], -1)).max(1)
            sw = np.where(absmax > 0, absmax / 127.0, 1.0).astype(np.float32)
            shape = (-1,) + (1,) * (w.ndim - 1)
            axis = 0 if n.op_type == "Conv" or trans_b else 1
            wq = np.clip(np.round(w / (sw.reshape(shape) if axis == 0 else sw)), -127, 127).astype(np.int8)
            wn = n.input[1]
            out_nodes.append(helper.make_node("DequantizeLinear", [const(f"{wn}_quantized", wq),
                                                                   const(f"{wn}_scale", sw)],
                                              [f"{wn}_DequantizeLinear_Output"], name=f"{wn}_DequantizeLinear",
                                              axis=axis))
            ins[1] = f"{wn}_DequantizeLinear_Output"
            dropped.add(wn)
            if len(n.input) > 2 and n.input[2] in inits and n.input[0] in encoding:
                b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float64)
                sb = (np.float32(encoding[n.input[0]][0]) * sw).astype(np.float32)
                bq = np.round(b / sb).astype(np.int32)
                bn = n.input[2]
                out_nodes.append(helper.make_node("DequantizeLinear", [const(f"{bn}_quantized", bq),
                                                                       const(f"{bn}_scale", sb)],
                                                  [f"{bn}_DequantizeLinear_Output"], name=f"{bn}_DequantizeLinear",
                                                  axis=0))
                ins[2] = f"{bn}_DequantizeLinear_Output"
                dropped.add(bn)
        del n.input[:]
        n.input.extend(ins)
        out_nodes.append(n)
        for o in n.output:
            if o in encoding:
                qdq(o)
    kept = [i for i in g.initializer if i.name not in dropped]
    del g.node[:]
    g.node.extend(out_nodes)
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    del g.value_info[:]
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--calib", required=True, help="NAME=FILE.npy, samples stacked on a leading axis")
    ap.add_argument("--torchvision", help="export this torchvision model (seeded random weights) to MODEL first")
    ap.add_argument("--size", type=int, default=224)
    a = ap.parse_args()
    if a.torchvision:
        sys.path.insert(0, HERE)
        import zoo
        subprocess.run([sys.executable, "-c", zoo.EXPORT, a.torchvision, str(a.size), a.model], check=True)
    name, feeds = a.calib.split("=", 1)
    model = onnx.load(a.model)
    with tempfile.TemporaryDirectory() as work:
        ranges = minmax_ranges(model, feeds, name, work)
    onnx.save(quantize(model, ranges), a.out)
    print(f"quantize_qdq: {a.out}: {len(ranges)} float tensors calibrated on {len(np.load(feeds))} samples")


if __name__ == "__main__":
    main()
