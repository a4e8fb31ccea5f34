#!/usr/bin/python3
"""A QDQ model compiled by fixpoint (no calibration: the model's own scales, docs/arithmetic.md
§2.6) against ONNX Runtime running the model's operators as written (--no-optimize: on CPUs
without VNNI ONNX Runtime's fused u8s8 kernels saturate pair sums, so they are not the QDQ
definition there).

  layer by layer  each quantized op (Conv, Gemm, Add, Relu, pools, ... whose output has a Q/DQ
                  pair) cut out of the model with its Q/DQ inputs, fed ONNX Runtime's own input
                  codes: steps = |fixpoint - ONNX Runtime| / output scale. ONNX Runtime computes
                  in float32 and rounds half to even, fixpoint exactly in integers and half up,
                  so a layer may differ by one step where the exact value sits next to a half.
  end to end      the whole model: the last quantized tensor (steps) and the float outputs.
                  One-step differences of early layers propagate, so deep networks differ by more
                  than one step at the end even when every layer agrees to within one.

usage: qdq_vs_ort.py MODEL.onnx --input NAME=FILE.npy [--json FILE] [--layers N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.utils
from onnx import TensorProto, helper, numpy_helper

import fixpoint

ORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle", "ort_run.js")


def sanitize(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def run_ort(model, outdir, feeds, work):
    specs = []
    for k, v in feeds.items():
        f = os.path.join(work, f"in_{sanitize(k)}.npy")
        np.save(f, v)
        specs.append(f"{k}={f}")
    p = subprocess.run(["node", ORT, model, outdir, *specs, "--no-optimize"], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"onnxruntime failed on {model}: {p.stderr.strip()}")


def qdq_pairs(model):
    """{tensor: (QuantizeLinear node, DequantizeLinear output)} for every Q -> DQ pair."""
    readers = {}
    for n in model.graph.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    pairs = {}
    for q in model.graph.node:
        if q.op_type != "QuantizeLinear":
            continue
        dqs = [d for d in readers.get(q.output[0], []) if d.op_type == "DequantizeLinear"]
        if dqs:
            pairs[q.input[0]] = (q, dqs[0].output[0])
    return pairs


def compare(model_path, feeds, layers=None, work=None):
    model = onnx.load(model_path)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    pairs = qdq_pairs(model)
    dq_of = {dq: t for t, (_, dq) in pairs.items()}
    const_dq = {n.output[0] for n in model.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in inits}
    result = {"layers": []}
    with tempfile.TemporaryDirectory(dir=work) as w:
        # ONNX Runtime's value of every DequantizeLinear output (the codes each layer reads).
        probe = onnx.ModelProto()
        probe.CopyFrom(model)
        known = {o.name for o in probe.graph.output}
        for t, (_, dq) in pairs.items():
            if dq not in known:
                probe.graph.output.append(helper.make_tensor_value_info(dq, TensorProto.FLOAT, None))
        probe_path = os.path.join(w, "probe.onnx")
        onnx.save(probe, probe_path)
        run_ort(probe_path, os.path.join(w, "ort"), feeds, w)
        ort = {dq: np.load(os.path.join(w, "ort", sanitize(dq) + ".npy")) for _, (_, dq) in pairs.items()}
        graph_outputs = [o.name for o in model.graph.output]
        ort_out = {o: np.load(os.path.join(w, "ort", sanitize(o) + ".npy")) for o in graph_outputs}

        # End to end.
        prog = fixpoint.compile(model_path)
        ours = prog.run(feeds)
        traced = fixpoint.trace(prog, feeds)
        last = None
        for n in model.graph.node:  # the last quantized tensor a float-fallback op reads
            for i in n.input:
                if i in dq_of and n.op_type not in ("QuantizeLinear", "DequantizeLinear") and dq_of[i] in traced:
                    last = dq_of[i]
        if last is not None:
            q = pairs[last][0]
            steps = np.abs(traced[last].astype(np.float64) - ort[pairs[last][1]]) / float(inits[q.input[1]])
            result["last_quantized"] = {"tensor": last, "max_steps": float(steps.max()),
                                        "identical": float(np.mean(steps < 1e-3))}
        result["outputs"] = {o: {"max_rel": float(np.abs(ours[o] - ort_out[o]).max() / max(np.abs(ort_out[o]).max(), 1e-30)),
                                 "argmax_same": bool(ours[o].argmax() == ort_out[o].argmax())} for o in graph_outputs}

        # Layer by layer, each fed ONNX Runtime's own input codes.
        cut = 0
        for n in model.graph.node:
            if n.op_type in ("QuantizeLinear", "DequantizeLinear") or n.output[0] not in pairs:
                continue
            acts = [i for i in n.input if i and i not in inits and i not in const_dq]
            if not acts or any(i not in dq_of for i in acts):
                continue  # reads a float tensor no pair covers: not a quantized layer
            ins = [dq_of[i] for i in acts]
            if layers is not None and cut >= layers:
                break
            cut += 1
            sub = os.path.join(w, "sub.onnx")
            out_dq = pairs[n.output[0]][1]
            onnx.utils.extract_model(model_path, sub, ins, [out_dq])
            layer_feeds = {t: ort[pairs[t][1]] for t in ins}
            run_ort(sub, os.path.join(w, "sub"), layer_feeds, w)
            want = np.load(os.path.join(w, "sub", sanitize(out_dq) + ".npy"))
            got = fixpoint.compile(sub).run(layer_feeds)[out_dq]
            steps = np.abs(got.astype(np.float64) - want) / float(inits[pairs[n.output[0]][0].input[1]])
            result["layers"].append({"node": n.name, "op": n.op_type, "max_steps": float(steps.max()),
                                     "identical": float(np.mean(steps < 1e-3)), "size": int(steps.size)})
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--input", action="append", required=True, help="NAME=FILE.npy")
    ap.add_argument("--json")
    ap.add_argument("--layers", type=int, help="check only the first N quantized layers")
    a = ap.parse_args()
    feeds = {s.split("=", 1)[0]: np.load(s.split("=", 1)[1]) for s in a.input}
    r = compare(a.model, feeds, a.layers)
    print("| layer | op | max steps | identical |\n|---|---|---|---|")
    for l in r["layers"]:
        print(f"| {l['node']} | {l['op']} | {l['max_steps']:.0f} | {l['identical']:.4%} |")
    if r["layers"]:
        worst = max(l["max_steps"] for l in r["layers"])
        diff = sum(round((1 - l["identical"]) * l["size"]) for l in r["layers"])
        print(f"layer by layer (ONNX Runtime's input codes): {len(r['layers'])} layers, max {worst:.0f} step, "
              f"{diff} of {sum(l['size'] for l in r['layers'])} codes differ")
    if "last_quantized" in r:
        lq = r["last_quantized"]
        print(f"end to end: last quantized tensor '{lq['tensor']}': max {lq['max_steps']:.0f} steps, "
              f"{lq['identical']:.2%} identical")
    for o, v in r["outputs"].items():
        print(f"end to end: output '{o}': max |diff| / max |ONNX Runtime| {v['max_rel']:.2e}, argmax same {v['argmax_same']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(r, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
