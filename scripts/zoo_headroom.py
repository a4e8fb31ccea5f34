#!/usr/bin/python3
"""int16 output SNR of zoo networks for several 16-bit headrooms (docs/arithmetic.md (7b)): how
--headroom16 was chosen (docs/accuracy.md). The zoo's exports (scripts/zoo.py: seeded random
weights) and its calibration inputs; evaluation inputs from seed 100 (dev) or 200 (test).

usage: zoo_headroom.py --split dev|test [--models a,b] [--headroom 1,1.25,1.5,2,4] [--size 64] [--work DIR]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402
import fixpoint  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=["dev", "test"], required=True)
    ap.add_argument("--models", default="swin_t,convnext_tiny,densenet121,efficientnet_b0,mobilenet_v3_large,"
                                        "resnet50,lraspp_mobilenet_v3_large")
    ap.add_argument("--headroom", default="1,1.25,1.5,2,4")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--inputs", type=int, default=8)
    ap.add_argument("--work", default="/tmp/fixpoint_zoo_headroom")
    a = ap.parse_args()
    for name in a.models.split(","):
        model = zoo.export(name, a.size, a.work)
        calib = [{"x": c} for c in zoo.inputs(a.size, 4)[1]]
        xs = np.random.default_rng(100 if a.split == "dev" else 200).standard_normal(
            (a.inputs, 1, 3, a.size, a.size)).astype(np.float32)
        session = fixpoint.InferenceSession(model)
        refs = [session.run(None, {"x": x})[0].astype(np.float64) for x in xs]
        for h in [float(v) for v in a.headroom.split(",")]:
            p = fixpoint.compile(model, calib, bits=16, headroom16=h)
            s = [zoo.snr(r, p.run({"x": x})["y"].astype(np.float64)) for x, r in zip(xs, refs)]
            print(f"{a.split} {name:28s} H={h:<5} int16 SNR mean {np.mean(s):6.1f} dB, min {np.min(s):6.1f}", flush=True)


if __name__ == "__main__":
    main()
