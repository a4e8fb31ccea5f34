#!/usr/bin/python3
"""Renders text images (Pillow + DejaVu fonts, no downloads) and writes them preprocessed the
way PaddleOCR v4 expects: RGB, (x/255 - 0.5)/0.5, NCHW float32.

usage: make_ocr_inputs.py OUTDIR
  ocr_rec_input.npy   1x3x48x320  one text line, height 48, aspect kept, right-padded with 0
  ocr_cls_input.npy   1x3x48x192  the same line for the direction classifier
  ocr_det_input.npy   1x3x640x640 a page with several text lines
"""
import os
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def normalize(img):
    a = np.asarray(img.convert("RGB"), dtype=np.float32) / 255.0
    return ((a - 0.5) / 0.5).transpose(2, 0, 1)[None].copy()


def render_line(text, size=32):
    font = ImageFont.truetype(FONT, size)
    left, top, right, bottom = font.getbbox(text)
    img = Image.new("RGB", (right - left + 16, bottom - top + 12), "white")
    ImageDraw.Draw(img).text((8 - left, 6 - top), text, font=font, fill="black")
    return img


def rec_input(img, height=48, width=320):
    """PaddleOCR rec preprocessing: resize to height, keep aspect (cap at width), pad right."""
    w = min(width, max(1, int(round(img.width * height / img.height))))
    resized = normalize(img.resize((w, height), Image.BILINEAR))
    out = np.zeros((1, 3, height, width), np.float32)
    out[..., :w] = resized
    return out


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    line = render_line("fixpoint 2026 quantized")
    np.save(os.path.join(out, "ocr_rec_input.npy"), rec_input(line))
    np.save(os.path.join(out, "ocr_cls_input.npy"), rec_input(line, 48, 192))
    page = Image.new("RGB", (640, 640), (235, 235, 225))
    d = ImageDraw.Draw(page)
    for i, text in enumerate(["Edge accelerators", "run int8 programs", "fixpoint tells you why",
                              "the output differs", "0.796875 != 0.78125"]):
        d.text((30 + 10 * i, 40 + 115 * i), text, font=ImageFont.truetype(FONT, 36 + 4 * (i % 3)), fill=(20, 20, 30))
    np.save(os.path.join(out, "ocr_det_input.npy"), normalize(page))
    print("make_ocr_inputs: wrote ocr_rec_input.npy, ocr_cls_input.npy, ocr_det_input.npy")


if __name__ == "__main__":
    main()
