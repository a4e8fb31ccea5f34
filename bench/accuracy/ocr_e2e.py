#!/usr/bin/python3
"""End-to-end OCR benchmark: rendered pages (ocr_pages.py) -> PaddleOCR v4 detector -> DB boxes ->
crops -> recognizer -> text, scored by character accuracy against the page's known lines (spaces
removed, as PaddleOCR's own metric does, unless --count-spaces; a true line no detection matches
at IoU >= 0.5 counts as all characters wrong). Each row runs both models
in the same mode: float, or both compiled with the row's options (det calibrated on calibration
pages, rec on calibration lines). 95% bootstrap intervals over pages, paired differences to float.

    /usr/bin/python3 bench/accuracy/ocr_e2e.py --split test --lines 100 --calib 8,16

--calib takes two sizes: detector pages, recognizer lines.
"""
import os
import sys
import time

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ocr_boxes import DET_OUTPUT, db_boxes, iou  # noqa: E402
from ocr_lines import REC_MODEL, OcrLines, rec_input  # noqa: E402  (rec preprocessing)
from ocr_pages import DET_MODEL, MEAN, STD, OcrPages  # noqa: E402
from ocr_text import REC_OUTPUT, accuracy_unit, ctc_decode, edit_distance, scored_text  # noqa: E402

import fixpoint  # noqa: E402


def page_image(x):
    """The RGB page back from the det input (undo BGR and the ImageNet normalization)."""
    a = (x[0].transpose(1, 2, 0) * STD + MEAN)[:, :, ::-1]
    return Image.fromarray(np.clip(np.rint(a * 255), 0, 255).astype(np.uint8))


class Pipeline:
    """A session for fixpoint.evaluate: run({"x": one page}) -> {"boxes": [1] object holding the K
    boxes, "texts": [1] object holding their K texts} (one entry along the batch axis, as evaluate
    slices outputs per sample)."""

    def __init__(self, det, rec, chars):
        self.det, self.rec, self.chars = det, rec, chars

    @staticmethod
    def outputs(session, feeds, name):
        if hasattr(session, "get_outputs"):
            return session.run([name], feeds)[0]
        return session.run(feeds)[name]

    def run(self, feeds):
        x = feeds["x"]
        boxes = db_boxes(self.outputs(self.det, {"x": x}, DET_OUTPUT)[0, 0])
        page = page_image(x)
        texts = []
        if boxes:
            crops = np.concatenate([rec_input(page.crop(tuple(int(round(v)) for v in b))) for b in boxes])
            texts = ctc_decode(self.outputs(self.rec, {"x": crops}, REC_OUTPUT), self.chars)
        out = {"boxes": np.empty(1, dtype=object), "texts": np.empty(1, dtype=object)}
        out["boxes"][0], out["texts"][0] = [tuple(b) for b in boxes], list(texts)
        return out


class PageCharAccuracy:
    """Ratio metric: (100 (characters right), characters) over a page's true lines; each true line
    is read from the detection matching it best (IoU >= 0.5, one to one), else from nothing. Texts
    as ocr_text.scored_text gives them (spaces removed, PaddleOCR's convention, unless spaces)."""

    def __init__(self, spaces=False):
        self.spaces = spaces

    def __call__(self, outputs, target):
        boxes, texts = outputs["boxes"][0], outputs["texts"][0]
        pairs = sorted(((iou(b, t), i, j) for i, b in enumerate(boxes) for j, (_, t) in enumerate(target)), reverse=True)
        read, used = {}, set()
        for v, i, j in pairs:
            if v >= 0.5 and i not in used and j not in read:
                used.add(i)
                read[j] = texts[i]
        truth = [scored_text(text, self.spaces) for text, _ in target]
        right = sum(len(t) - edit_distance(scored_text(read.get(j, ""), self.spaces), t) for j, t in enumerate(truth))
        return (100.0 * right, float(sum(len(t) for t in truth)))


def main(argv=None):
    ap = harness.arguments(__doc__.split("\n\n")[0], lines=100, calib="8,16", rows="float,int8,int16")
    ap.add_argument("--count-spaces", action="store_true", help="score spaces too (PaddleOCR's metric removes them)")
    a = ap.parse_args(argv)
    a.batch = 1  # pages differ in their number of boxes
    rows, sizes = harness.check_arguments(ap, a)
    if len(sizes) != 2:
        ap.error("--calib takes two sizes: detector pages, recognizer lines")
    log = harness.logger(a.quiet, "ocr_e2e")
    pages, lines = OcrPages(), OcrLines()
    data = pages.split(a.split, a.lines)
    sessions, made = {}, {}
    for row in rows:
        opts = harness.ROWS[row]
        if opts is None:
            sessions[row] = Pipeline(fixpoint.InferenceSession(DET_MODEL), fixpoint.InferenceSession(REC_MODEL),
                                     lines.alphabet.chars)
            made[row] = {"options": None}
            continue
        t = time.time()
        det = fixpoint.compile(DET_MODEL, [{"x": x} for x, _ in pages.split("calibration", sizes[0])], **opts)
        rec = fixpoint.compile(REC_MODEL, [{"x": x} for x, _, _ in lines.split("calibration", sizes[1])], **opts)
        label = f"{row} [{sizes[0]}, {sizes[1]}]"
        sessions[label] = Pipeline(det, rec, lines.alphabet.chars)
        made[label] = {"options": opts, "calib_pages": sizes[0], "calib_lines": sizes[1],
                       "compile_s": round(time.time() - t, 1)}
        log(f"compiled {label} in {made[label]['compile_s']} s")
    result = harness.evaluate(sessions, made, [({"x": x}, boxes) for x, boxes in data], PageCharAccuracy(a.count_spaces), a,
                              "PaddleOCR v4 det + rec, end to end")
    harness.write(result, harness.markdown(result, accuracy_unit(a.count_spaces)), a)
    return result


if __name__ == "__main__":
    harness.run_main(main, "ocr_e2e")
