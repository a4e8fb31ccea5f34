#!/usr/bin/python3
"""The PaddleOCR v4 recognizer in float, int8, int16 and auto mixed precision, from Python:
character accuracy (%) on rendered text lines with known strings, each with a 95% bootstrap
interval and its paired difference to float (fixpoint.evaluate with a ratio metric). Calibration
lines come from the dataset's calibration split, evaluation lines from its dev split
(bench/accuracy/ocr_lines.py; bench/accuracy/ocr_rec.py is the full benchmark).

usage: examples/ocr_accuracy.py [--lines 40] [--calib-lines 8] [--auto-mixed 1.25] [--work DIR]
"""
import argparse
import os
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "accuracy"))
from ocr_lines import REC_MODEL as REC, OcrLines  # noqa: E402
from ocr_text import CharAccuracy  # noqa: E402

import fixpoint  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=40)
    ap.add_argument("--calib-lines", type=int, default=8)
    ap.add_argument("--auto-mixed", type=float, default=1.25, help="0: skip the auto-mixed program")
    ap.add_argument("--work", default=None, help="keep the compiled programs here")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="fixpoint_ocr_")
    lines = OcrLines()
    calib = [{"x": x} for x, _, _ in lines.split("calibration", a.calib_lines)]   # each [1, 3, 48, 320]
    samples = lines.feeds("dev", a.lines)                                          # ({"x": x}, text)
    sessions = {"float": fixpoint.InferenceSession(REC)}
    programs = {"int8": dict(bits=8), "int16": dict(bits=16)}
    if a.auto_mixed:
        programs[f"auto-mixed {a.auto_mixed:g}"] = dict(bits=8, auto_mixed=a.auto_mixed)
    for name, opts in programs.items():
        print(f"compiling {name} ...", file=sys.stderr)
        prog = fixpoint.compile(REC, calib, **opts)
        prog.save(os.path.join(work, name.replace(" ", "_")))
        sessions[name] = prog
    r = fixpoint.evaluate(sessions, samples, CharAccuracy(lines.alphabet.chars))
    for i, scores in r.disagreements[:3]:
        print(f"line #{i} {samples[i][1]!r}: " + ", ".join(f"{k} {v:.2f}" for k, v in scores.items()))
    print(f"programs in {work}")
    return r


if __name__ == "__main__":
    main()
