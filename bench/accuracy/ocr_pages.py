"""Rendered pages with known text boxes for the PaddleOCR v4 detector: a deterministic, seeded
dataset with three disjoint splits (calibration, dev, test), like ocr_lines.py (whose texts and
fonts it draws from).

A page is 640x640: paper of a random light colour (sometimes a gradient), 3-12 horizontal text
lines of random kinds, faces, sizes (16-44 px) and dark inks at random non-overlapping places;
then blur, noise and JPEG as for lines. The ground truth of each line is its ink box
(ImageDraw.textbbox). Preprocessing is PaddleOCR's det: BGR, (x/255 - mean) / std with ImageNet's
mean and std, NCHW."""
import io

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from ocr_lines import ASSETS, CJK_FONTS, LATIN_FONTS, SPLIT_SEEDS, Alphabet, TextSource, covers

DET_MODEL = f"{ASSETS}/ch_PP-OCRv4_det_infer.onnx"
PAGE = 640
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


def det_input(img):
    """PaddleOCR det preprocessing of an RGB page: BGR channel order, ImageNet normalization."""
    a = np.asarray(img.convert("RGB"), np.float32)[:, :, ::-1] / 255.0
    return np.ascontiguousarray(((a - MEAN) / STD).transpose(2, 0, 1)[None], dtype=np.float32)


def paper(rng):
    top = rng.integers(185, 256, 3).astype(np.float32)
    if rng.random() < 0.3:  # a vertical gradient
        bottom = np.clip(top + rng.integers(-50, 20, 3), 150, 255)
        t = np.linspace(0, 1, PAGE, dtype=np.float32)[:, None, None]
        a = top * (1 - t) + bottom * t
        return Image.fromarray(np.broadcast_to(a, (PAGE, PAGE, 3)).astype(np.uint8))
    return Image.new("RGB", (PAGE, PAGE), tuple(int(v) for v in top))


def render_page(source, rng):
    """(page image, [(text, (left, top, right, bottom))])."""
    img = paper(rng)
    draw = ImageDraw.Draw(img)
    boxes = []
    y = int(rng.integers(8, 40))
    for _ in range(int(rng.integers(3, 13))):
        kind, text = source.text(rng)
        faces = CJK_FONTS if kind == "chinese" else [(p, 0) for p in LATIN_FONTS] + CJK_FONTS
        faces = [f for f in faces if covers(*f, text)]
        path, index = faces[int(rng.integers(len(faces)))]
        font = ImageFont.truetype(path, int(rng.integers(16, 45)), index=index)
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
        w, h = right - left, bottom - top
        if w > PAGE - 16:
            continue
        if y + h > PAGE - 8:
            break
        x = int(rng.integers(8, PAGE - 8 - w + 1))
        ink = tuple(int(v) for v in rng.integers(0, 80, 3))
        draw.text((x - left, y - top), text, font=font, fill=ink)
        boxes.append((text, (x, y, x + w, y + h)))
        y += h + int(rng.integers(max(4, h // 3), h + 10))
    if rng.random() < 0.3:
        img = img.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.3, 1.0))))
    if rng.random() < 0.5:
        a = np.asarray(img, np.float32) + rng.normal(0, float(rng.uniform(2, 10)), (PAGE, PAGE, 3))
        img = Image.fromarray(np.clip(np.rint(a), 0, 255).astype(np.uint8))
    if rng.random() < 0.5:
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=int(rng.integers(35, 90)))
        img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    return img, boxes


class OcrPages:
    """pages.sample(split, i) -> (x [1, 3, 640, 640] float32, boxes [(text, (l, t, r, b))]);
    pages.split(split, n, start) the samples start..start+n-1."""

    def __init__(self):
        self.source = TextSource(Alphabet())

    def sample(self, split, i):
        if split not in SPLIT_SEEDS:
            raise ValueError(f"split must be one of {', '.join(SPLIT_SEEDS)}, got {split!r}")
        rng = np.random.default_rng([SPLIT_SEEDS[split], 7, i])  # 7: pages, not lines
        img, boxes = render_page(self.source, rng)
        return det_input(img), boxes

    def split(self, split, n, start=0):
        return [self.sample(split, i) for i in range(start, start + n)]
