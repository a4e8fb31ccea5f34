#!/usr/bin/python3
"""The PaddleOCR v4 recognizer in float, int8, int16 and auto mixed precision, from Python:
character accuracy per rendered text line (known strings), each with a 95% bootstrap interval
and its paired difference to float (fixpoint.evaluate). Calibration lines differ from the
evaluation lines (different strings, fonts sizes and seeds).

usage: examples/ocr_accuracy.py [--lines 40] [--calib-lines 8] [--auto-mixed 1.25] [--work DIR]
"""
import argparse
import os
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from ocr_eval import ASSETS, REC, batch_for, ctc_decode, edit_distance, make_lines  # noqa: E402

import fixpoint  # noqa: E402

with open(os.path.join(ASSETS, "ppocr_keys_v1.txt"), encoding="utf-8") as f:
    CHARS = ["<blank>"] + [l.rstrip("\n") for l in f] + [" "]


def char_accuracy(outputs, truth):
    """One line's character accuracy: 1 - edit distance / length (CTC-decoded prediction)."""
    (probs,) = outputs.values()
    pred = ctc_decode(probs, CHARS)[0]
    return 1.0 - edit_distance(pred, truth) / len(truth)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=40)
    ap.add_argument("--calib-lines", type=int, default=8)
    ap.add_argument("--auto-mixed", type=float, default=1.25, help="0: skip the auto-mixed program")
    ap.add_argument("--work", default=None, help="keep the compiled programs here")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="fixpoint_ocr_")
    calib = batch_for(make_lines(a.calib_lines, 2), 12)            # [N, 3, 48, 320]
    truth = make_lines(a.lines, 1)
    images = batch_for(truth, 11)
    samples = [({"x": images[i:i + 1]}, truth[i]) for i in range(len(truth))]
    shape = {"x": [1, 3, 48, 320]}
    sessions = {"float": fixpoint.InferenceSession(REC)}
    programs = {"int8": dict(bits=8), "int16": dict(bits=16)}
    if a.auto_mixed:
        programs[f"auto-mixed {a.auto_mixed:g}"] = dict(bits=8, auto_mixed=a.auto_mixed)
    for name, opts in programs.items():
        print(f"compiling {name} ...", file=sys.stderr)
        prog = fixpoint.compile(REC, {"x": calib}, shape=shape, **opts)
        prog.save(os.path.join(work, name.replace(" ", "_")))
        sessions[name] = prog
    r = fixpoint.evaluate(sessions, samples, char_accuracy)
    for i, scores in r.disagreements[:3]:
        print(f"line #{i} {truth[i]!r}: " + ", ".join(f"{k} {v:.2f}" for k, v in scores.items()))
    print(f"programs in {work}")
    return r


if __name__ == "__main__":
    main()
