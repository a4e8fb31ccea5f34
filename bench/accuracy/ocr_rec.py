#!/usr/bin/python3
"""OCR recognition benchmark: the PaddleOCR v4 recognizer's character accuracy in float and in
fixed-point programs on one split of the rendered-lines dataset (ocr_lines.py), through the
Python module (fixpoint.compile, fixpoint.InferenceSession, fixpoint.evaluate with a ratio
metric; spaces removed from reading and label, as PaddleOCR's own RecMetric does, unless
--count-spaces). Every row gets a 95% bootstrap interval and its paired difference to float.

Splits: calibration (programs are calibrated on its first N lines, or on K disjoint sets of N),
dev (choose defaults and methods here), test (report only). One command runs float, int8, int16
and auto-mixed:

    /usr/bin/python3 bench/accuracy/ocr_rec.py --split test --lines 1000 --calib 16,64

--rows picks other compile options (harness.ROWS) for the table of docs/accuracy.md;
--against-float scores each program against the float model's reading of each line instead of its
label (how closely a program reproduces float, which the label hides: float's own errors).
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ocr_lines import REC_MODEL, OcrLines  # noqa: E402
from ocr_text import CharAccuracy, accuracy_unit, ctc_decode  # noqa: E402


def main(argv=None):
    ap = harness.arguments(__doc__.split("\n\n")[0], lines=1000, calib="16,64")
    ap.add_argument("--count-spaces", action="store_true", help="score spaces too (PaddleOCR's metric removes them)")
    ap.add_argument("--against-float", action="store_true",
                    help="score each program against the float model's reading instead of the label (fidelity)")
    a = ap.parse_args(argv)
    rows, calib_sizes = harness.check_arguments(ap, a)
    log = harness.logger(a.quiet, "ocr_rec")
    lines = OcrLines()
    t = time.time()
    data = lines.split(a.split, a.lines)
    log(f"rendered {a.lines} {a.split} lines in {time.time() - t:.1f} s")

    def calibration(n, start):
        return [{"x": x} for x, _, _ in lines.split("calibration", n, start)]

    metric = CharAccuracy(lines.alphabet.chars, spaces=a.count_spaces)
    title = "PaddleOCR v4 rec" + (" (spaces counted)" if a.count_spaces else "")
    samples = [({"x": x}, text) for x, text, _ in data]
    groups = [kind for _, _, kind in data]
    if not a.against_float:
        return harness.compare_rows(REC_MODEL, rows, calib_sizes, calibration, samples, metric, a, title,
                                    accuracy_unit(a.count_spaces), log, groups)
    # Fidelity: each program scored against the float model's reading of the line, not its label.
    sessions, made = harness.build_sessions(REC_MODEL, rows, calib_sizes, a.calib_sets, calibration, log)
    ref = sessions.pop("float")
    made.pop("float")
    if not sessions:
        ap.error("--against-float needs a program row besides float")
    readings = []
    for i in range(0, len(data), a.batch):
        batch = np.concatenate([x for x, _, _ in data[i:i + a.batch]])
        readings += ctc_decode(ref.run(None, {"x": batch})[0], lines.alphabet.chars)
    t = time.time()
    result = harness.evaluate(sessions, made, [(feeds, reading) for (feeds, _), reading in zip(samples, readings)],
                              metric, a, title + ", against the float model's reading", groups)
    log(f"evaluated {len(sessions)} sessions in {time.time() - t:.1f} s")
    harness.write(result, harness.markdown(result, accuracy_unit(a.count_spaces, against_float=True), next(iter(sessions))), a)
    return result


if __name__ == "__main__":
    harness.run_main(main, "ocr_rec")
