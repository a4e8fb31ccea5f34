"""Single characters (0-9, A-Z: 36 classes) rendered in 32x32 grayscale, for a classifier trained
in the repo (scripts/make_glyph_cnn.py): a deterministic, seeded dataset with a train split and the
benchmarks' calibration, dev and test splits (sample i of split s seeded by (s, i), disjoint
seeds). Faces: the 48 Latin faces of ocr_lines.py; size 16-28 px, position jitter, rotation +-10
degrees, ink/paper grey levels, blur and noise. Input: (x/255 - 0.5) / 0.5, [1, 1, 32, 32]."""
import os
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ocr_lines import LATIN_FONTS, SPLIT_SEEDS  # noqa: E402

CLASSES = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SEEDS = {"train": 4004, **SPLIT_SEEDS}
SIZE = 32


def render(label, rng):
    font = ImageFont.truetype(LATIN_FONTS[int(rng.integers(len(LATIN_FONTS)))], int(rng.integers(16, 29)))
    paper, ink = int(rng.integers(150, 256)), int(rng.integers(0, 110))
    if rng.random() < 0.2:
        paper, ink = 255 - paper, 255 - ink
    img = Image.new("L", (2 * SIZE, 2 * SIZE), paper)
    d = ImageDraw.Draw(img)
    ch = CLASSES[label]
    left, top, right, bottom = d.textbbox((0, 0), ch, font=font)
    cx, cy = SIZE + int(rng.integers(-3, 4)), SIZE + int(rng.integers(-3, 4))
    d.text((cx - (left + right) / 2, cy - (top + bottom) / 2), ch, font=font, fill=ink)
    img = img.rotate(float(rng.uniform(-10, 10)), resample=Image.BICUBIC, fillcolor=paper)
    img = img.crop((SIZE // 2, SIZE // 2, SIZE // 2 + SIZE, SIZE // 2 + SIZE))
    if rng.random() < 0.3:
        img = img.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.3, 1.0))))
    a = np.asarray(img, np.float32)
    if rng.random() < 0.5:
        a = np.clip(a + rng.normal(0, float(rng.uniform(2, 15)), a.shape), 0, 255)
    return ((a / 255.0 - 0.5) / 0.5).astype(np.float32)[None, None]


class Glyphs:
    """glyphs.sample(split, i) -> (x [1, 1, 32, 32] float32, label int)."""

    def sample(self, split, i):
        if split not in SEEDS:
            raise ValueError(f"split must be one of {', '.join(SEEDS)}, got {split!r}")
        rng = np.random.default_rng([SEEDS[split], 13, i])  # 13: glyphs
        label = int(rng.integers(len(CLASSES)))
        return render(label, rng), label

    def split(self, split, n, start=0):
        return [self.sample(split, i) for i in range(start, start + n)]
