#!/usr/bin/python3
"""OCR detection benchmark: the PaddleOCR v4 detector's Hmean (IoU >= 0.5, DB post-processing) in
float and in fixed-point programs on one split of the rendered-pages dataset (ocr_pages.py),
through the Python module. Every row gets a 95% bootstrap interval (pages resampled whole) and
its paired difference to float.

    /usr/bin/python3 bench/accuracy/ocr_det.py --split test --lines 200 --calib 8

(--lines counts pages.) --rows picks other compile options (harness.ROWS).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ocr_boxes import DetHmean  # noqa: E402
from ocr_pages import DET_MODEL, OcrPages  # noqa: E402



def main(argv=None):
    ap = harness.arguments(__doc__.split("\n\n")[0], lines=200, calib="8", rows="float,int8,int16")
    a = ap.parse_args(argv)
    rows, calib_sizes = harness.check_arguments(ap, a)
    log = harness.logger(a.quiet, "ocr_det")
    pages = OcrPages()
    t = time.time()
    data = pages.split(a.split, a.lines)
    log(f"rendered {a.lines} {a.split} pages in {time.time() - t:.1f} s")

    def calibration(n, start):
        return [{"x": x} for x, _ in pages.split("calibration", n, start)]

    return harness.compare_rows(DET_MODEL, rows, calib_sizes, calibration, [({"x": x}, boxes) for x, boxes in data],
                                DetHmean(), a, "PaddleOCR v4 det", "Hmean (%)", log)


if __name__ == "__main__":
    harness.run_main(main, "ocr_det")
