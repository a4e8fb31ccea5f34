#!/usr/bin/python3
"""Peer measurement: runs ONNX Runtime (scripts/oracle, CPU) on exactly the ONNX backend tests
that fixpoint's conformance runner selects, with the same comparison (same shape and dtype,
|got - want| <= 1e-5 + 1e-3 |want|), and prints the pass count.

usage: bench/ort_conformance.py [BUILD_DIR]   (needs BUILD_DIR/tests/onnx_conformance)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
DATA = "/usr/share/libonnx-testdata/data"


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def close(got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind in "fc":
        return bool(np.all((np.abs(got - want) <= 1e-5 + 1e-3 * np.abs(want)) | (np.isnan(got) & np.isnan(want))))
    return bool(np.array_equal(got, want))


def run_test(d, tmp):
    m = onnx.load(os.path.join(d, "model.onnx"))
    init = {i.name for i in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in init]
    outs = [o.name for o in m.graph.output]
    k = 0
    while os.path.isdir(os.path.join(d, f"test_data_set_{k}")):
        ds = os.path.join(d, f"test_data_set_{k}")
        specs = []
        for i, n in enumerate(names):
            p = os.path.join(ds, f"input_{i}.pb")
            if not os.path.exists(p):
                break
            f = os.path.join(tmp, f"in{i}.npy")
            np.save(f, load_pb(p))
            specs.append(f"{n}={f}")
        outdir = os.path.join(tmp, f"out{k}")
        r = subprocess.run(["node", os.path.join(ROOT, "scripts/oracle/ort_run.js"), os.path.join(d, "model.onnx"),
                            outdir, *specs], capture_output=True, text=True)
        if r.returncode != 0:
            return r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed"
        for i, o in enumerate(outs):
            p = os.path.join(ds, f"output_{i}.pb")
            if not os.path.exists(p):
                break
            got = np.load(os.path.join(outdir, "".join(c if c.isalnum() or c in "._-" else "_" for c in o) + ".npy"))
            if not close(got, load_pb(p)):
                return f"output {o} differs"
        k += 1
    return ""


def main():
    tests = subprocess.run([os.path.join(BUILD, "tests", "onnx_conformance"), "--list", DATA], capture_output=True,
                           text=True, check=True).stdout.split()
    passed, failures = 0, []
    for d in tests:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                why = run_test(d, tmp)
            except Exception as e:  # npy dtype the oracle cannot write, etc.
                why = str(e)
        if why:
            failures.append(f"{os.path.relpath(d, DATA)}: {why[:160]}")
        else:
            passed += 1
    for f in failures:
        print("FAIL", f)
    print(f"onnxruntime-node 1.30.0: {passed} of {len(tests)} selected tests pass ({100.0 * passed / len(tests):.1f}%)")


if __name__ == "__main__":
    main()
