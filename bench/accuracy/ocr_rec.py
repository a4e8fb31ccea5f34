#!/usr/bin/python3
"""OCR recognition benchmark: the PaddleOCR v4 recognizer's character accuracy in float and in
fixed-point programs on one split of the rendered-lines dataset (ocr_lines.py), through the
Python module (fixpoint.compile, fixpoint.InferenceSession, fixpoint.evaluate with a ratio
metric). Every row gets a 95% bootstrap interval and its paired difference to float.

Splits: calibration (programs are calibrated on its first N lines, or on K disjoint sets of N),
dev (choose defaults and methods here), test (report only). One command runs float, int8, int16
and auto-mixed:

    /usr/bin/python3 bench/accuracy/ocr_rec.py --split test --lines 1000 --calib 16,64

--rows picks other compile options (harness.ROWS) for the table of docs/accuracy.md.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ocr_lines import REC_MODEL, OcrLines  # noqa: E402
from ocr_text import CharAccuracy  # noqa: E402



def main(argv=None):
    ap = harness.arguments(__doc__.split("\n\n")[0], lines=1000, calib="16,64")
    a = ap.parse_args(argv)
    rows, calib_sizes = harness.check_arguments(ap, a)
    log = harness.logger(a.quiet, "ocr_rec")
    lines = OcrLines()
    t = time.time()
    data = lines.split(a.split, a.lines)
    log(f"rendered {a.lines} {a.split} lines in {time.time() - t:.1f} s")

    def calibration(n, start):
        return [{"x": x} for x, _, _ in lines.split("calibration", n, start)]

    return harness.compare_rows(REC_MODEL, rows, calib_sizes, calibration,
                                [({"x": x}, text) for x, text, _ in data], CharAccuracy(lines.alphabet.chars), a,
                                "PaddleOCR v4 rec", "character accuracy (%)", log, groups=[kind for _, _, kind in data])


if __name__ == "__main__":
    harness.run_main(main, "ocr_rec")
