#!/usr/bin/python3
"""OCR recognition benchmark: the PaddleOCR v4 recognizer's character accuracy in float and in
fixed-point programs on one split of the rendered-lines dataset (ocr_lines.py), through the
Python module (fixpoint.compile, fixpoint.InferenceSession, fixpoint.evaluate). Every row gets a
95% bootstrap interval and its paired difference to float with its own interval.

Splits: calibration (programs are calibrated on its first N lines, or on K disjoint sets of N),
dev (choose defaults and methods here), test (report only). One command runs float, int8, int16
and auto-mixed:

    /usr/bin/python3 bench/accuracy/ocr_rec.py --split test --lines 1000 --calib 16,64

--rows picks other compile options (see ROWS) for the table of docs/accuracy.md.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ocr_lines import REC_MODEL, OcrLines  # noqa: E402
from ocr_text import CharAccuracy  # noqa: E402

import fixpoint  # noqa: E402

# Row name -> compile options (None: the float model itself, on the fast float path).
ROWS = {
    "float": None,
    "int8": dict(bits=8),
    "int16": dict(bits=16),
    "auto-mixed": dict(bits=8, auto_mixed=1.25),
    "symmetric": dict(bits=8, symmetric=True),
    "narrow": dict(bits=8, narrow_intermediates=True),
    "narrow-symmetric": dict(bits=8, narrow_intermediates=True, symmetric=True),
    "minmax": dict(bits=8, calib_method="minmax"),
    "mse": dict(bits=8, calib_method="mse"),
    "bias-correction": dict(bits=8, bias_correction=True),
    "pow2": dict(bits=8, scale_mode="pow2"),
}


def parse_ints(text, what):
    try:
        return [int(v) for v in text.split(",") if v]
    except ValueError:
        raise SystemExit(f"ocr_rec: {what} must be comma-separated integers, got {text!r}") from None


def build_sessions(rows, calib_sizes, calib_sets, lines, log):
    """{label: session} and {label: how it was made}. A program row appears once per calibration
    size and set: 'int8 [16]', 'int8 [16 #2]'."""
    sessions, made = {}, {}
    for row in rows:
        opts = ROWS[row]
        if opts is None:
            sessions[row] = fixpoint.InferenceSession(REC_MODEL)
            made[row] = {"options": None}
            continue
        sizes = [0] if opts.get("bits") == 32 else calib_sizes
        for n in sizes:
            for k in range(calib_sets):
                label = f"{row} [{n}{f' #{k + 1}' if calib_sets > 1 else ''}]"
                calib = [{"x": x} for x, _, _ in lines.split("calibration", n, start=k * n)]
                t = time.time()
                sessions[label] = fixpoint.compile(REC_MODEL, calib, **opts)
                made[label] = {"options": opts, "calib_lines": n, "calib_start": k * n,
                               "compile_s": round(time.time() - t, 1)}
                log(f"compiled {label} in {made[label]['compile_s']} s")
    return sessions, made


def kind_accuracy(scores, weights, kinds):
    """Character accuracy per text kind from the per-line ratios and their weights (lengths)."""
    out = {}
    for kind in sorted(set(kinds)):
        idx = [i for i, k in enumerate(kinds) if k == kind]
        out[kind] = float(sum(scores[i] * weights[i] for i in idx) / sum(weights[i] for i in idx))
    return out


def markdown(result):
    r = result
    head = (f"PaddleOCR v4 rec, {r['split']} split, {r['lines']} lines: character accuracy (%), 95% bootstrap "
            "interval; difference to float, paired interval (* = excludes 0)\n\n"
            "| program [calibration lines] | accuracy | 95% CI | vs float | 95% CI |\n|---|---|---|---|---|\n")
    rows = []
    for label, v in r["rows"].items():
        d = v.get("diff")
        diff = (f"{d[0]:+.2f} | [{d[1]:+.2f}, {d[2]:+.2f}]{'' if d[1] <= 0 <= d[2] else ' *'}" if d else " | ")
        rows.append(f"| {label} | {v['mean']:.2f} | [{v['ci'][0]:.2f}, {v['ci'][1]:.2f}] | {diff} |")
    return head + "\n".join(rows) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=["dev", "test"])
    ap.add_argument("--lines", type=int, default=1000, help="evaluation lines (the split's first N)")
    ap.add_argument("--calib", default="16,64", help="calibration sizes (lines of the calibration split)")
    ap.add_argument("--calib-sets", type=int, default=1, help="disjoint calibration sets per size")
    ap.add_argument("--rows", default="float,int8,int16,auto-mixed",
                    help=f"comma-separated, float first; any of {', '.join(ROWS)}")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--json", default="", help="write the result here")
    ap.add_argument("--markdown", default="", help="write the table here")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    rows = [r for r in a.rows.split(",") if r]
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        ap.error(f"unknown row {', '.join(unknown)}; rows are {', '.join(ROWS)}")
    if not rows or rows[0] != "float":
        ap.error("--rows must start with float (the reference every row is compared with)")
    if a.lines < 1 or a.calib_sets < 1:
        ap.error("--lines and --calib-sets must be positive")
    calib_sizes = parse_ints(a.calib, "--calib")

    def log(msg):
        if not a.quiet:
            print(f"ocr_rec: {msg}", file=sys.stderr, flush=True)

    lines = OcrLines()
    t = time.time()
    data = lines.split(a.split, a.lines)
    texts = [text for _, text, _ in data]
    kinds = [kind for _, _, kind in data]
    log(f"rendered {a.lines} {a.split} lines in {time.time() - t:.1f} s")
    sessions, made = build_sessions(rows, calib_sizes, a.calib_sets, lines, log)
    metric = CharAccuracy(lines.alphabet.chars)
    t = time.time()
    r = fixpoint.evaluate(sessions, [({"x": x}, text) for x, text, _ in data], metric, batch=a.batch,
                          progress=not a.quiet, show=False)
    log(f"evaluated {len(sessions)} sessions in {time.time() - t:.1f} s")
    result = {"split": a.split, "lines": a.lines, "isa": fixpoint.kernel_isa(), "rows": {}}
    for label in sessions:
        result["rows"][label] = {"mean": r.mean[label], "ci": list(r.ci[label]), **made[label],
                                 "diff": list(r.diff[label]) if label in r.diff else None,
                                 "by_kind": kind_accuracy(r.scores[label], r.weights[label], kinds)}
    table = markdown(result)
    print(table)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table)
    return result


if __name__ == "__main__":
    try:
        main()
    except fixpoint.Error as e:
        raise SystemExit(f"ocr_rec: {e}")
