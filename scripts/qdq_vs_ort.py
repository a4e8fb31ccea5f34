#!/usr/bin/python3
"""fixpoint against ONNX Runtime on a QDQ model, either direction:

  import   MODEL is any QDQ model; fixpoint compiles it (no calibration: the model's own scales,
           docs/arithmetic.md §2.6);
  export   MODEL is `fixpoint export-qdq DIR -o MODEL` and --program DIR is the program itself;

against ONNX Runtime running the model's operators as written (--no-optimize: on CPUs
without VNNI ONNX Runtime's fused u8s8 kernels saturate pair sums, so they are not the QDQ
definition there).

  layer by layer  each pair's tensor with the ops computing it cut out of the model down to the
                  pairs they read, fed the same input codes on both sides (ONNX Runtime's own
                  on import, the program's on export): steps = |fixpoint - ONNX Runtime| / output
                  scale, rounded to whole steps. ONNX Runtime computes
                  in float32 and rounds half to even, fixpoint exactly in integers and half up,
                  so a layer may differ by one step where the exact value sits next to a half.
  end to end      the whole model: the last quantized tensor (steps) and the outputs (in codes
                  when they are quantized).
                  One-step differences of early layers propagate, so deep networks differ by more
                  than one step at the end even when every layer agrees to within one.

usage: qdq_vs_ort.py MODEL.onnx --input NAME=FILE.npy [--program DIR] [--json FILE] [--layers N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import fixpoint

ORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle", "ort_run.js")


def sanitize(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def run_ort(model, outdir, feeds, work, optimize=False):
    specs = []
    for k, v in feeds.items():
        f = os.path.join(work, f"in_{sanitize(k)}.npy")
        np.save(f, v)
        specs.append(f"{k}={f}")
    p = subprocess.run(["node", ORT, model, outdir, *specs, *([] if optimize else ["--no-optimize"])],
                       capture_output=True, text=True)
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


def extract(model, inputs, output, path):
    """The nodes that compute `output` from `inputs` (and constants), as a model of their own
    (onnx.utils.extract_model needs inferred types, which com.microsoft's Q/DQ do not give)."""
    producer = {o: n for n in model.graph.node for o in n.output}
    inits = {i.name: i for i in model.graph.initializer}
    keep, used, todo = [], set(), [output]
    while todo:
        t = todo.pop()
        if t in inputs or t in inits or t in used or t not in producer:
            continue
        used.add(t)
        n = producer[t]
        if n not in keep:
            keep.append(n)
            todo.extend(i for i in n.input if i)
    order = [n for n in model.graph.node if n in keep]
    names = {i for n in order for i in n.input}
    g = helper.make_graph(order, "layer", [helper.make_tensor_value_info(i, TensorProto.FLOAT, None) for i in inputs],
                          [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
                          [inits[i] for i in names if i in inits])
    m = helper.make_model(g, opset_imports=list(model.opset_import))
    m.ir_version = model.ir_version
    onnx.save(m, path)


def code_steps(a, b, scale):
    """|a - b| in codes of `scale` (both dequantized codes, as float32: rounded to whole steps)."""
    return np.rint(np.abs(a.astype(np.float64) - b.astype(np.float64)) / scale)


def layer_inputs(model, t, pairs, dq_of, consts):
    """The pre-Q tensors of the pairs the ops computing tensor t read (walking back through
    float ops to DequantizeLinear outputs or pair codes), or None when a float tensor no pair
    covers feeds them."""
    producer = {o: n for n in model.graph.node for o in n.output}
    found, seen, todo = [], set(), [t]
    while todo:
        x = todo.pop()
        n = producer.get(x)
        if n is None:
            return None  # a graph input without a pair
        for i in n.input:
            if not i or i in consts or i in seen:
                continue
            seen.add(i)
            p = producer.get(i)
            if i in dq_of:
                found.append(dq_of[i])
            elif p is not None and p.op_type == "QuantizeLinear" and p.input[0] in pairs:
                found.append(p.input[0])  # a table op indexes the codes themselves
            else:
                todo.append(i)
    return sorted(set(found))


def compare(model_path, feeds, layers=None, work=None, program=None):
    """program=None: fixpoint compiles the QDQ model (import) and each layer gets ONNX Runtime's
    input codes on both sides; program=DIR: the model is DIR's export (fixpoint export-qdq) and
    ONNX Runtime's layers get the program's input codes."""
    model = onnx.load(model_path)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    pairs = qdq_pairs(model)
    dq_of = {dq: t for t, (_, dq) in pairs.items()}
    consts = set(inits) | {n.output[0] for n in model.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in inits}
    graph_inputs = {i.name for i in model.graph.input}

    def scale(t):
        return float(inits[pairs[t][0].input[1]])

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
        prog = fixpoint.compile(model_path) if program is None else fixpoint.load(program)
        ours = prog.run(feeds)
        traced = fixpoint.trace(prog, feeds)

        def our_value(t):  # fixpoint's value of pair tensor t (by its pre-Q name)
            dq = pairs[t][1]
            if program is None:
                return traced.get(t)
            name = dq[:-3] if dq.endswith("/dq") and dq[:-3] in graph_inputs else dq
            return traced.get(name)

        last = None
        for n in model.graph.node:  # the last quantized tensor a float op reads
            for i in n.input:
                if i in dq_of and n.op_type not in ("QuantizeLinear", "DequantizeLinear") and our_value(dq_of[i]) is not None:
                    last = dq_of[i]
        if last is not None:
            def agreement(a, b):
                steps = code_steps(a, b, scale(last))
                return {"max_steps": float(steps.max()), "identical": float(np.mean(steps == 0))}
            result["last_quantized"] = {"tensor": pairs[last][1], **agreement(our_value(last), ort[pairs[last][1]])}
            # ONNX Runtime with its default optimizations (its own integer kernels, exact sums,
            # requantized in float32 half to even) on the same input, against fixpoint and
            # against its QDQ operators as written: how far apart ONNX Runtime's two modes are.
            full = onnx.ModelProto()
            full.CopyFrom(model)
            if pairs[last][1] not in {o.name for o in full.graph.output}:
                full.graph.output.append(helper.make_tensor_value_info(pairs[last][1], TensorProto.FLOAT, None))
            full_path = os.path.join(w, "optimized.onnx")
            onnx.save(full, full_path)
            try:
                run_ort(full_path, os.path.join(w, "ort_opt"), feeds, w, optimize=True)
                opt = np.load(os.path.join(w, "ort_opt", sanitize(pairs[last][1]) + ".npy"))
                result["last_quantized"]["vs_ort_optimized"] = agreement(our_value(last), opt)
                result["ort_optimized_vs_as_written"] = agreement(opt, ort[pairs[last][1]])
            except RuntimeError as e:  # ONNX Runtime 1.30's optimizer adds a Round (opset 11) to a float
                # bias of an opset-9 QDQ model and then rejects the model
                result["ort_optimized_failed"] = str(e).splitlines()[0]
        result["outputs"] = {}
        for o in graph_outputs:
            # top-1 per row of the last axis (a classifier's batch, a recognizer's time steps)
            rows_same = ours[o].reshape(-1, ours[o].shape[-1]).argmax(1) == \
                ort_out[o].reshape(-1, ort_out[o].shape[-1]).argmax(1)
            r = {"max_rel": float(np.abs(ours[o] - ort_out[o]).max() / max(np.abs(ort_out[o]).max(), 1e-30)),
                 "argmax_rows_same": float(rows_same.mean()), "argmax_same": bool(rows_same.all())}
            if o in dq_of:  # a quantized output: compared in its codes
                steps = code_steps(ours[o], ort_out[o], scale(dq_of[o]))
                r.update(max_steps=float(steps.max()), identical_codes=float(np.mean(steps == 0)),
                         within_one_code=float(np.mean(steps <= 1)))
            result["outputs"][o] = r

        # Layer by layer: each pair's tensor computed from the codes its ops read, the same codes
        # on both sides.
        cut = 0
        for t, (q, out_dq) in pairs.items():
            ins = layer_inputs(model, t, pairs, dq_of, consts)
            if not ins:
                continue  # a graph input's pair, or fed by a float tensor no pair covers
            if layers is not None and cut >= layers:
                break
            sub = os.path.join(w, "sub.onnx")
            extract(model, ins, out_dq, sub)
            if program is None:
                layer_feeds = {i: ort[pairs[i][1]] for i in ins}
            else:
                layer_feeds = {i: our_value(i) for i in ins}
                if any(v is None for v in layer_feeds.values()) or our_value(t) is None:
                    continue
            cut += 1
            run_ort(sub, os.path.join(w, "sub"), layer_feeds, w)
            want = np.load(os.path.join(w, "sub", sanitize(out_dq) + ".npy"))
            got = fixpoint.compile(sub).run(layer_feeds)[out_dq] if program is None else our_value(t)
            steps = code_steps(got, want, scale(t))
            producer = next(n for n in model.graph.node if t in n.output)
            result["layers"].append({"node": producer.name, "op": producer.op_type, "tensor": out_dq,
                                     "max_steps": float(steps.max()), "identical": float(np.mean(steps == 0)),
                                     "size": int(steps.size)})
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--input", action="append", required=True, help="NAME=FILE.npy")
    ap.add_argument("--json")
    ap.add_argument("--layers", type=int, help="check only the first N quantized layers")
    ap.add_argument("--program", help="MODEL is this program folder's export (fixpoint export-qdq DIR -o MODEL)")
    a = ap.parse_args()
    feeds = {s.split("=", 1)[0]: np.load(s.split("=", 1)[1]) for s in a.input}
    r = compare(a.model, feeds, a.layers, program=a.program)
    print("| layer | op | max steps | identical |\n|---|---|---|---|")
    for l in r["layers"]:
        print(f"| {l['node']} | {l['op']} | {l['max_steps']:.0f} | {l['identical']:.4%} |")
    if r["layers"]:
        worst = max(l["max_steps"] for l in r["layers"])
        diff = sum(round((1 - l["identical"]) * l["size"]) for l in r["layers"])
        print(f"layer by layer ({'the program' if a.program else 'ONNX Runtime'}'s input codes on both sides): {len(r['layers'])} layers, max {worst:.0f} step, "
              f"{diff} of {sum(l['size'] for l in r['layers'])} codes differ")
    if "last_quantized" in r:
        lq = r["last_quantized"]
        print(f"end to end: last quantized tensor '{lq['tensor']}': max {lq['max_steps']:.0f} steps, "
              f"{lq['identical']:.3%} identical (ONNX Runtime's operators as written)")
        if "vs_ort_optimized" in lq:
            oo, vo = r["ort_optimized_vs_as_written"], lq["vs_ort_optimized"]
            print(f"  against ONNX Runtime optimized (its integer kernels): max {vo['max_steps']:.0f}, "
                  f"{vo['identical']:.3%} identical; ONNX Runtime optimized vs as written: max "
                  f"{oo['max_steps']:.0f} steps, {oo['identical']:.3%} identical")
        else:
            print(f"  ONNX Runtime optimized: {r['ort_optimized_failed']}")
    for o, v in r["outputs"].items():
        codes = (f", {v['identical_codes']:.4%} of its codes identical, {v['within_one_code']:.4%} within one, "
                 f"max {v['max_steps']:.0f}") if "identical_codes" in v else ""
        print(f"end to end: output '{o}': max |diff| / max |ONNX Runtime| {v['max_rel']:.2e}, argmax same "
              f"{v['argmax_same']}{codes}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(r, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
