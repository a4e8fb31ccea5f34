#!/usr/bin/python3
"""The model zoo (issue 16): torchvision architectures nobody here wrote, exported with torch at
opset 13 with seeded random weights (no trained weights can be downloaded; every all-zero tensor,
e.g. ViT's head, is re-initialised so that no output is trivially zero), then for each:

  float      max |fixpoint float - ONNX Runtime| relative to max |ONNX Runtime|
  int8/16    output SNR of the compiled program against fixpoint's float output (dB)
  subgraphs  accelerator + CPU subgraphs of the int8 program, and the ops that fall back
  compile    wall time of the int8 compile (calibration included)
  worst      `fixpoint compare`'s worst layer of the int8 program (compare runs on the int16 program too)
  mixed      int8 with `--auto-mixed FACTOR` (default 1.25): output SNR and the layers it promoted

usage: zoo.py [--models a,b,...] [--size 224] [--calib 4] [--auto-mixed 1.25|0] [--work DIR] [--json FILE]
Inputs: standard-normal images (seeded); calibration: --calib other seeded images.
Prints one Markdown table row per model (the table in docs/accuracy.md); --json writes all fields.
A model that fails says why in its row; the exit code is 1 if any did.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CLI = os.path.join(os.environ.get("FIXPOINT_BUILD", os.path.join(ROOT, "build")), "fixpoint")
ORT = os.path.join(ROOT, "scripts", "oracle", "ort_run.js")

MODELS = ["mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large", "efficientnet_b0", "resnet50",
          "resnext50_32x4d", "shufflenet_v2_x1_0", "squeezenet1_1", "densenet121", "convnext_tiny", "swin_t",
          "vit_b_16", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large", "fcn_resnet50"]

EXPORT = """
import sys, torch, torchvision
torch.manual_seed(0)
name, size, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
batch = int(sys.argv[4]) if len(sys.argv) > 4 else 1
seg = name.startswith(("deeplabv3", "lraspp", "fcn"))
ctor = getattr(torchvision.models.segmentation if seg else torchvision.models, name)
kw = {"weights": None, "weights_backbone": None} if seg else {"weights": None}
if seg:
    kw["aux_loss"] = False
if name.startswith("vit"):
    kw["image_size"] = size
m = ctor(**kw).eval()
with torch.no_grad():
    for p in list(m.parameters()) + list(m.buffers()):
        if p.is_floating_point() and p.numel() > 1 and not p.abs().sum():
            p.normal_(0, 0.02)  # e.g. ViT's zero-initialised head: no trivially zero output
class Out(torch.nn.Module):  # segmentation models return a dict
    def __init__(self, m):
        super().__init__()
        self.m = m
    def forward(self, x):
        y = self.m(x)
        return y["out"] if isinstance(y, dict) else y
torch.onnx.export(Out(m), torch.randn(batch, 3, size, size), path, opset_version=13, input_names=["x"],
                  output_names=["y"])
"""


def sh(*args, **kw):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, errors="replace", **kw)
    if p.returncode != 0:
        raise RuntimeError(((p.stderr or p.stdout).strip().splitlines() or ["failed"])[-1][:200])
    return p


def snr(ref, got):
    noise = ((ref - got) ** 2).sum()
    return float("inf") if noise == 0 else 10 * np.log10((ref ** 2).sum() / noise)


def export(name, size, work):
    """work/name/m.onnx, exported once (seeded weights, see EXPORT)."""
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    model = os.path.join(d, "m.onnx")
    if not os.path.exists(model):
        sh(sys.executable, "-c", EXPORT, name, size, model)
    return model


def inputs(size, n_calib):
    """(the evaluation input [1, 3, size, size], n_calib calibration inputs [n, 1, 3, size, size]), seeded."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 3, size, size)).astype(np.float32)
    return x, rng.standard_normal((n_calib, 1, 3, size, size)).astype(np.float32)


def evaluate(name, size, n_calib, work, auto_mixed):
    model = export(name, size, work)
    d = os.path.dirname(model)
    r = {"model": name, "size": size}
    x, calib = inputs(size, n_calib)
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "calib.npy"), calib)
    xin = f"x={os.path.join(d, 'x.npy')}"
    sh(CLI, "run", model, "--input", xin, "-o", os.path.join(d, "float"), "-q")
    ref = np.load(os.path.join(d, "float", "y.npy")).astype(np.float64)
    sh("node", ORT, model, os.path.join(d, "ort"), xin)
    ort = np.load(os.path.join(d, "ort", "y.npy")).astype(np.float64)
    r["float_vs_ort"] = float(np.abs(ref - ort).max() / max(np.abs(ort).max(), 1e-30))
    for bits in (8, 16):
        out = os.path.join(d, f"p{bits}")
        t0 = time.time()
        sh(CLI, "compile", model, "--calib", f"x={os.path.join(d, 'calib.npy')}", "--bits", bits, "-o", out, "-q")
        if bits == 8:
            r["compile_s"] = round(time.time() - t0, 1)
            rep = json.load(open(os.path.join(out, "compile_report.json")))
            r["subgraphs"] = rep["subgraph_counts"]
            r["fallback_ops"] = sorted({f["op"] for f in rep["fallback_nodes"]})
        sh(CLI, "run", out, "--input", xin, "-o", os.path.join(d, f"o{bits}"), "-q")
        r[f"int{bits}_snr_db"] = round(snr(ref, np.load(os.path.join(d, f"o{bits}", "y.npy")).astype(np.float64)), 1)
    for bits in (8, 16):
        sh(CLI, "compare", os.path.join(d, f"p{bits}"), "--input", xin, "-o", os.path.join(d, f"cmp{bits}"), "-q")
        worst = json.load(open(os.path.join(d, f"cmp{bits}", "compare.json")))["worst"]
        r["worst_layer" if bits == 8 else "worst_layer_int16"] = worst[0] if worst else ""
    if auto_mixed:
        out = os.path.join(d, "pam")
        sh(CLI, "compile", model, "--calib", f"x={os.path.join(d, 'calib.npy')}", "--bits", 8, "--auto-mixed",
           auto_mixed, "-o", out, "-q")
        am = json.load(open(os.path.join(out, "compile_report.json")))["auto_mixed"]
        sh(CLI, "run", out, "--input", xin, "-o", os.path.join(d, "oam"), "-q")
        r["auto_mixed"] = {"factor": auto_mixed, "bits16": am["bits16"], "out16": am["out16"],
                           "snr_db": round(snr(ref, np.load(os.path.join(d, "oam", "y.npy")).astype(np.float64)), 1)}
    return r


def row(r):
    if "error" in r:
        return f"| {r['model']} | {r['size']}² | failed: {r['error']} | | | | | | |"
    sg = r["subgraphs"]
    fb = ", ".join(r["fallback_ops"]) or "none"
    am = r.get("auto_mixed")
    mixed = f"{am['snr_db']} ({len(am['bits16'])} + {len(am['out16'])})" if am else "—"
    return (f"| {r['model']} | {r['size']}² | {r['float_vs_ort']:.1e} | {r['int8_snr_db']} | {r['int16_snr_db']} | "
            f"{mixed} | {sg['accelerator']} + {sg['cpu']} ({fb}) | {r['compile_s']} s | `{r['worst_layer']}` |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--calib", type=int, default=4)
    ap.add_argument("--auto-mixed", type=float, default=1.25, help="factor of the mixed column; 0: skip it")
    ap.add_argument("--work")
    ap.add_argument("--json")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="fixpoint_zoo_")
    print("| model | input | float vs ORT (rel.) | int8 SNR dB | int16 SNR dB | int8 --auto-mixed SNR dB (layers + "
          "outputs at 16 bits) | subgraphs acc + cpu (CPU ops) | int8 compile | compare's worst layer (int8) |")
    print("|---|---|---|---|---|---|---|---|---|")
    results, failed = [], False
    for name in a.models.split(","):
        try:
            r = evaluate(name, a.size, a.calib, work, a.auto_mixed)
        except Exception as e:  # one line per model, the run goes on
            r, failed = {"model": name, "size": a.size, "error": str(e)}, True
        results.append(r)
        print(row(r), flush=True)
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
