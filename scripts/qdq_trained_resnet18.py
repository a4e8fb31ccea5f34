#!/usr/bin/python3
"""Issue 14's QDQ checks on a ResNet-18 with trained weights (none can be downloaded here):
torchvision's ResNet-18 trained on rendered glyphs (scripts/make_glyph_cnn.py --arch resnet18),
16 calibration-split glyphs, 64 dev-split glyphs as the evaluation batch.

  import  the model quantized as ONNX Runtime's static quantizer does it (quantize_qdq.py),
          compiled without calibration, against ONNX Runtime (qdq_vs_ort.py: layer by layer, end
          to end against ORT's operators as written and against ORT optimized, and ORT's two
          modes against each other);
  export  fixpoint's own int8 program (calibrated on the same 16 glyphs), `fixpoint export-qdq`,
          run by ONNX Runtime against the program.

usage: qdq_trained_resnet18.py [--work DIR] [--train 12000] [--epochs 3]
"""
import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "bench", "accuracy"))
import qdq_vs_ort  # noqa: E402
from glyphs import Glyphs  # noqa: E402

CLI = os.path.join(os.environ.get("FIXPOINT_BUILD", os.path.join(HERE, "..", "build")), "fixpoint")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default="/tmp/fixpoint_qdq_resnet18")
    ap.add_argument("--train", type=int, default=12000)
    ap.add_argument("--epochs", type=int, default=3)
    a = ap.parse_args()
    w = a.work
    os.makedirs(w, exist_ok=True)
    model = os.path.join(w, "glyph_resnet18.onnx")
    if not os.path.exists(model):
        subprocess.run([sys.executable, os.path.join(HERE, "make_glyph_cnn.py"), w, "--arch", "resnet18", "--train",
                        str(a.train), "--epochs", str(a.epochs)], check=True)
    g = Glyphs()
    calib, x = os.path.join(w, "calib.npy"), os.path.join(w, "x64.npy")
    np.save(calib, np.stack([s for s, _ in g.split("calibration", 16)]))
    np.save(x, np.concatenate([s for s, _ in g.split("dev", 64)]))
    feeds = {"image": np.load(x)}

    qdq = os.path.join(w, "qdq.onnx")
    subprocess.run([sys.executable, os.path.join(HERE, "quantize_qdq.py"), model, qdq, "--calib", f"image={calib}"],
                   check=True, capture_output=True)
    r = qdq_vs_ort.compare(qdq, feeds)
    report("import (the ORT-quantized model compiled without calibration)", r)

    prog, exported = os.path.join(w, "p8"), os.path.join(w, "fx.onnx")
    subprocess.run([CLI, "compile", model, "--calib", f"image={calib}", "-o", prog, "-q"], check=True)
    subprocess.run([CLI, "export-qdq", prog, "-o", exported, "-q"], check=True)
    report("export (fixpoint export-qdq of the int8 program, run by ONNX Runtime)",
           qdq_vs_ort.compare(exported, feeds, program=prog))


def report(title, r):
    layers = r["layers"]
    differ = sum(round((1 - l["identical"]) * l["size"]) for l in layers)
    print(f"{title}:\n  layer by layer: {len(layers)} layers, max {max(l['max_steps'] for l in layers):.0f} step, "
          f"{differ} of {sum(l['size'] for l in layers)} codes differ")
    lq = r["last_quantized"]
    print(f"  last quantized tensor vs ORT as written: max {lq['max_steps']:.0f} steps, {lq['identical']:.3%} identical")
    if "vs_ort_optimized" in lq:
        vo, oo = lq["vs_ort_optimized"], r["ort_optimized_vs_as_written"]
        print(f"  vs ORT optimized: max {vo['max_steps']:.0f}, {vo['identical']:.3%}; ORT optimized vs ORT as written: "
              f"max {oo['max_steps']:.0f}, {oo['identical']:.3%}")
    for o, v in r["outputs"].items():
        codes = (f"; output codes {v['identical_codes']:.3%} identical, {v['within_one_code']:.3%} within one"
                 if "identical_codes" in v else "")
        print(f"  output '{o}': top-1 same on {v['argmax_rows_same']:.1%} of rows{codes}")


if __name__ == "__main__":
    main()
