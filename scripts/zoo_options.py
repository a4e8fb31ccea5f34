#!/usr/bin/python3
"""Output SNR of zoo networks (scripts/zoo.py: seeded random weights, its calibration inputs)
under several compile options, on evaluation inputs from seed 100 (dev) or 200 (test): how
defaults that only the zoo exercises were chosen (docs/accuracy.md), e.g. --headroom16 (rows
int16-h1,int16-h1.5,...) and the wider residual stream (rows int8,int8-narrow-stream and int16,int16-narrow-stream).

usage: zoo_options.py --split dev|test [--models a,b] [--rows int16-h1,int16-h1.5] [--size 64]
                      [--inputs 8] [--work DIR]
rows: int8, int16, int8-narrow-stream, int8-narrow-softmax, int16-narrow-stream, int16-hH (--bits 16 --headroom16 H).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402
import fixpoint  # noqa: E402

ROWS = {"int8": dict(bits=8), "int16": dict(bits=16), "int8-narrow-stream": dict(bits=8, narrow_stream=True),
        "int8-narrow-softmax": dict(bits=8, narrow_softmax=True), "int16-narrow-stream": dict(bits=16, narrow_stream=True)}


def row_options(name):
    if name in ROWS:
        return ROWS[name]
    if name.startswith("int16-h"):
        return dict(bits=16, headroom16=float(name[len("int16-h"):]))
    raise SystemExit(f"zoo_options: unknown row {name!r} (int8, int16, int8-narrow-stream, int8-narrow-softmax, int16-narrow-stream, int16-hH)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=["dev", "test"], required=True)
    ap.add_argument("--models", default="swin_t,convnext_tiny,densenet121,efficientnet_b0,mobilenet_v3_large,"
                                        "resnet50,lraspp_mobilenet_v3_large")
    ap.add_argument("--rows", default="int16-h1,int16-h1.25,int16-h1.5,int16-h2,int16-h4")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--inputs", type=int, default=8)
    ap.add_argument("--work", default="/tmp/fixpoint_zoo_options")
    a = ap.parse_args()
    rows = [(r, row_options(r)) for r in a.rows.split(",")]
    for name in a.models.split(","):
        model = zoo.export(name, a.size, a.work)
        calib = [{"x": c} for c in zoo.inputs(a.size, 4)[1]]
        xs = np.random.default_rng(100 if a.split == "dev" else 200).standard_normal(
            (a.inputs, 1, 3, a.size, a.size)).astype(np.float32)
        session = fixpoint.InferenceSession(model)
        refs = [session.run(None, {"x": x})[0].astype(np.float64) for x in xs]
        for row, options in rows:
            p = fixpoint.compile(model, calib, **options)
            s = [zoo.snr(r, p.run({"x": x})["y"].astype(np.float64)) for x, r in zip(xs, refs)]
            print(f"{a.split} {name:28s} {row:20s} SNR mean {np.mean(s):6.1f} dB, min {np.min(s):6.1f}", flush=True)


if __name__ == "__main__":
    main()
