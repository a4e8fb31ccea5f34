#!/usr/bin/python3
"""fixpoint.dask.calibrate: calibrate the bundled tiny_cnn on N seeded images split into shards,
each shard's statistics computed on a Dask worker (a LocalCluster of 2 worker processes, or
--scheduler ADDRESS for a real one: see docs/scaling.md) and merged here; then compile from the
merged statistics (and up to 32 of the images, which adaptive rounding reads: samples=) and check
the artifact is the same bytes as one compile over all images in this process, for each
calibration method.

usage: examples/dask_calibrate.py [--images 64] [--shards 4] [--scheduler tcp://host:8786]
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


def artifact(program, d):
    program.save(d)
    with open(os.path.join(d, "model.fxp"), "rb") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--scheduler", default=None)
    a = ap.parse_args()
    from distributed import Client, LocalCluster
    xs = np.random.default_rng(3).uniform(0, 1, (a.images, 1, 3, 32, 32)).astype(np.float32)
    samples = [{"image": x} for x in xs]
    shards = [samples[i::a.shards] for i in range(a.shards)]  # interleaved: no shard sees the images in order
    x_test = np.random.default_rng(4).uniform(0, 1, (8, 3, 32, 32)).astype(np.float32)
    ref = fixpoint.InferenceSession(MODEL).run(None, {"image": x_test})[0]
    cluster = None if a.scheduler else LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                                    dashboard_address=None)
    ok = True
    work = tempfile.mkdtemp(prefix="fixpoint_dask_calibrate_")
    print(f"{a.images} images in {a.shards} shards")
    print(f"{'method':12s} {'same bytes':>10s} {'int8 SNR dB':>12s}")
    with Client(a.scheduler or cluster) as client:
        for method in ("percentile", "mse", "minmax"):
            stats = fixpoint.dask.calibrate(MODEL, shards, client, calib_method=method)
            sharded = fixpoint.compile(MODEL, stats, calib_method=method, samples=samples[:32])
            one = fixpoint.compile(MODEL, samples, calib_method=method)
            same = artifact(sharded, os.path.join(work, f"{method}_sharded")) == artifact(one, os.path.join(work, method))
            y = sharded.run({"image": x_test})["probabilities"]
            snr = 10 * np.log10((ref ** 2).sum() / max(((ref - y) ** 2).sum(), 1e-30))
            print(f"{method:12s} {str(same):>10s} {snr:12.1f}")
            ok = ok and same
    if cluster is not None:
        cluster.close()
    print(f"sharded statistics on the cluster give the single-process artifact: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
