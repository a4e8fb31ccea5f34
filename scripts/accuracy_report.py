#!/usr/bin/python3
"""Measures float vs fixed-point accuracy on every model the project uses and prints a markdown
table (the numbers of docs/accuracy.md). Everything runs through the `fixpoint` CLI.

usage: accuracy_report.py [--build DIR] [--work DIR] [--quick] [--extra="--asymmetric ..."]
  --quick: the bundled tiny_cnn only (the README's main job)
  --extra: more `fixpoint compile` arguments for every fixed-point compile
"""
import argparse
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
ASSETS = os.path.join(ROOT, "scripts", "oracle", "node_modules", "@gutenye", "ocr-models", "assets")


def sh(*args):
    subprocess.run([str(a) for a in args], check=True)


def snr_db(ref, got):
    ref, got = ref.astype(np.float64), got.astype(np.float64)
    return 10 * np.log10(np.sum(ref ** 2) / max(np.sum((ref - got) ** 2), 1e-30))


class Runner:
    def __init__(self, build, work, extra=()):
        self.cli = os.path.join(build, "fixpoint")
        self.work = work
        self.extra = list(extra)

    def float_run(self, model, inp, x, tag):
        out = os.path.join(self.work, f"{tag}_float")
        sh(self.cli, "run", model, "--input", f"{inp}={x}", "-o", out, "-q")
        return {f[:-4]: np.load(os.path.join(out, f)) for f in os.listdir(out)}

    def fixed_run(self, model, inp, x, calib, bits, tag, *extra):
        prog = os.path.join(self.work, f"{tag}_prog{bits}")
        sh(self.cli, "compile", model, "-o", prog, "-q", "--bits", bits, "--calib", f"{inp}={calib}", *extra, *self.extra)
        out = os.path.join(self.work, f"{tag}_out{bits}")
        sh(self.cli, "run", prog, "--input", f"{inp}={x}", "-o", out, "-q")
        return {f[:-4]: np.load(os.path.join(out, f)) for f in os.listdir(out)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/fixpoint_accuracy")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--extra", default="")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    r = Runner(a.build, a.work, a.extra.split())
    m = os.path.join(a.work, "models")
    if a.quick:
        os.makedirs(m, exist_ok=True)
        import shutil
        shutil.copy(os.path.join(ROOT, "models", "tiny_cnn.onnx"), m)
        shutil.copy(os.path.join(ROOT, "models", "tiny_cnn_input.npy"), m)
    else:
        sh(sys.executable, os.path.join(ROOT, "scripts", "make_models.py"), m)
    rows = []

    def snr_row(name, model, inp, x, calib, what):
        tag = name.split()[0]
        ref = r.float_run(model, inp, x, tag)
        cells = []
        for bits in ("8", "16"):
            got = r.fixed_run(model, inp, x, calib, bits, tag)
            cells.append(min(snr_db(ref[k], got[k]) for k in ref))
        rows.append((name, what, f"SNR {cells[0]:.1f} dB", f"SNR {cells[1]:.1f} dB"))
        return ref

    # tiny_cnn: calibrate on its 4 sample images, evaluate on 8 other random images
    rng = np.random.default_rng(5)
    np.save(os.path.join(m, "tiny_eval.npy"), rng.uniform(0, 1, (8, 3, 32, 32)).astype(np.float32))
    snr_row("tiny_cnn (bundled)", os.path.join(m, "tiny_cnn.onnx"), "image", os.path.join(m, "tiny_eval.npy"),
            os.path.join(m, "tiny_cnn_input.npy"), "output SNR, 8 images")
    if not a.quick:
        # trained MLP: held-out accuracy and SNR
        model = os.path.join(m, "mlp_trained.onnx")
        x, calib = os.path.join(m, "mlp_trained_test.npy"), os.path.join(m, "mlp_trained_calib.npy")
        y = np.load(os.path.join(m, "mlp_trained_labels.npy"))
        ref = r.float_run(model, "features", x, "mlp")["logits"]
        cells = []
        for bits in ("8", "16"):
            got = r.fixed_run(model, "features", x, calib, bits, "mlp")["logits"]
            cells.append(f"SNR {snr_db(ref, got):.1f} dB, acc {100 * (got.argmax(1) == y).mean():.1f}%")
        rows.append(("Gemm MLP (trained here)", f"float acc {100 * (ref.argmax(1) == y).mean():.1f}% on 1000 held-out rows",
                     cells[0], cells[1]))
        # ResNet-18 architecture (He-initialised weights): calibrate on 2 images, evaluate on 2 others
        np.save(os.path.join(m, "resnet_eval.npy"), rng.normal(0, 1, (2, 3, 224, 224)).astype(np.float32))
        snr_row("ResNet-18 (He init)", os.path.join(m, "resnet18.onnx"), "input", os.path.join(m, "resnet_eval.npy"),
                os.path.join(m, "resnet18_input.npy"), "logit SNR, 2 images")
        # PaddleOCR det: binarized probability maps (DB threshold 0.3) float vs fixed point
        import ocr_eval
        from PIL import Image, ImageDraw, ImageFont
        def page(seed):
            g = np.random.default_rng(seed)
            img = Image.new("RGB", (640, 640), tuple(int(v) for v in g.integers(200, 256, 3)))
            d = ImageDraw.Draw(img)
            for i, t in enumerate(ocr_eval.make_lines(6, seed)):
                f = ImageFont.truetype(ocr_eval.font_path(ocr_eval.FONTS[i % 5]), int(g.integers(22, 44)))
                d.text((int(g.integers(5, 120)), 20 + 100 * i), t, font=f, fill=tuple(int(v) for v in g.integers(0, 60, 3)))
            arr = np.asarray(img, np.float32) / 255.0
            return ((arr - 0.5) / 0.5).transpose(2, 0, 1)
        np.save(os.path.join(m, "det_eval.npy"), np.stack([page(100)]))
        np.save(os.path.join(m, "det_calib.npy"), np.stack([page(200), page(201)]))
        det = os.path.join(ASSETS, "ch_PP-OCRv4_det_infer.onnx")
        ref = list(r.float_run(det, "x", os.path.join(m, "det_eval.npy"), "det").values())[0] > 0.3
        cells = []
        for bits in ("8", "16"):
            got = list(r.fixed_run(det, "x", os.path.join(m, "det_eval.npy"), os.path.join(m, "det_calib.npy"), bits,
                                   "det").values())[0] > 0.3
            iou = (ref & got).sum() / max((ref | got).sum(), 1)
            cells.append(f"pixels agree {100 * (ref == got).mean():.2f}%, text IoU {100 * iou:.1f}%")
        rows.append(("PaddleOCR v4 det", f"binarized map (p>0.3), 640x640 page, {100 * ref.mean():.1f}% text pixels",
                     cells[0], cells[1]))
    print("| model | measure | int8 | int16 |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
