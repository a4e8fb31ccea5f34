#!/usr/bin/python3
"""What the Python module adds to a run (issue 14: at most 5%): the int8 PaddleOCR v4 recognizer
(1x3x48x320) timed through `fixpoint run --repeat` (the C++ runtime alone: its own timer around
ProgramRunner::run) and through Program.run from Python (array conversion, GIL release, outputs
as numpy) on the same input, in alternating rounds so that machine noise hits both; the same thread count on both sides
(one by default).
Prints the median of each and the ratio python / C++.

usage: bench/python_overhead.py [--build DIR] [--rounds 5] [--repeat 10] [--threads 1]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
REC = os.path.join(ROOT, "scripts", "oracle", "node_modules", "@gutenye", "ocr-models", "assets",
                   "ch_PP-OCRv4_rec_infer.onnx")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import fixpoint
    rng = np.random.default_rng(0)
    calib = {"x": rng.uniform(-1, 1, (4, 3, 48, 320)).astype(np.float32)}
    x = rng.uniform(-1, 1, (1, 3, 48, 320)).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        prog = fixpoint.compile(REC, calib, shape={"x": [1, 3, 48, 320]})
        prog.save(os.path.join(d, "p"))
        prog.threads = a.threads
        np.save(os.path.join(d, "x.npy"), x)
        cpp, py = [], []
        prog.run({"x": x})  # warm-up
        for _ in range(a.rounds):
            out = subprocess.run([os.path.join(a.build, "fixpoint"), "run", os.path.join(d, "p"), "--input",
                                  f"x={os.path.join(d, 'x.npy')}", "-o", os.path.join(d, "o"), "-q", "--threads", str(a.threads), "--repeat",
                                  str(a.repeat + 1)], capture_output=True, text=True, check=True).stdout
            cpp.append(float(re.search(r"median ([0-9.]+) ms", out).group(1)))
            ts = []
            for _ in range(a.repeat):
                t0 = time.perf_counter()
                prog.run({"x": x})
                ts.append((time.perf_counter() - t0) * 1e3)
            py.append(float(np.median(ts)))
    c, p = float(np.median(cpp)), float(np.median(py))
    print(f"OCR rec int8, {a.threads} thread(s), isa {fixpoint.kernel_isa()}: C++ runtime {c:.2f} ms, Python Program.run {p:.2f} ms "
          f"(medians of {a.rounds} rounds x {a.repeat} runs); python / C++ = {p / c:.3f}")
    print("per-round medians (ms): C++", " ".join(f"{v:.2f}" for v in cpp), "| Python", " ".join(f"{v:.2f}" for v in py))


if __name__ == "__main__":
    main()
