#!/usr/bin/python3
"""fixpoint.dask.evaluate: the bundled tiny_cnn in float, int8 and int16 over N seeded images,
spread over a Dask cluster (a LocalCluster of 2 worker processes, or --scheduler ADDRESS for a
real one: see docs/scaling.md), checked against the same evaluation in this process.
Metric: top-1 agreement with the float model's class.

usage: examples/dask_evaluate.py [--images 64] [--scheduler tcp://host:8786]
"""
import argparse
import os
import sys
import tempfile

import numpy as np

import fixpoint
import fixpoint.dask

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MODEL = os.path.join(ROOT, "models", "tiny_cnn.onnx")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--scheduler", default=None)
    a = ap.parse_args()
    from distributed import Client, LocalCluster
    work = tempfile.mkdtemp(prefix="fixpoint_dask_")
    paths = {"float": MODEL}
    for bits in (8, 16):
        paths[f"int{bits}"] = os.path.join(work, f"int{bits}")
        fixpoint.compile(MODEL, os.path.join(ROOT, "models", "tiny_cnn_input.npy"), bits=bits).save(paths[f"int{bits}"])
    ref = fixpoint.InferenceSession(MODEL)
    xs = np.random.default_rng(5).uniform(0, 1, (a.images, 1, 3, 32, 32)).astype(np.float32)
    samples = [({"image": x}, int(np.argmax(ref.run(None, {"image": x})[0]))) for x in xs]
    metric = fixpoint.Top1("probabilities")
    cluster = None if a.scheduler else LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                                    dashboard_address=None)
    with Client(a.scheduler or cluster) as client:
        r = fixpoint.dask.evaluate(paths, samples, metric, client, chunk=16)
    if cluster is not None:
        cluster.close()
    local = fixpoint.evaluate({k: fixpoint.InferenceSession(p, threads=1) for k, p in paths.items()}, samples, metric,
                              progress=False, show=False)
    same = all(np.array_equal(r.scores[k], local.scores[k]) for k in paths)
    print(f"the cluster's per-sample values equal this process's: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
