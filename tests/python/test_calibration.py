"""Calibration statistics as a value (issue 14 item 3): fixpoint.calibrate, merge, save/load,
`fixpoint calibrate` / `compile --stats`, fixpoint.dask.calibrate. Shards merged in any order give
exactly the artifact bytes of one calibration over all samples, for every method (with the samples
adaptive rounding reads given beside the statistics; without them, the nearest-rounding artifact)."""
import itertools
import os
import subprocess

import numpy as np
import pytest

import fixpoint
from conftest import BUILD, ROOT

CLI = os.path.join(BUILD, "fixpoint")
MODEL = os.path.join(ROOT, "models", "tiny_cnn.onnx")


def images(n, seed):
    return np.random.default_rng(seed).uniform(0, 1, (n, 3, 32, 32)).astype(np.float32)


def fxp(program, d):
    program.save(d)
    return (d / "model.fxp").read_bytes()


@pytest.mark.parametrize("method", ["percentile", "mse", "minmax"])
@pytest.mark.parametrize("equalize", [False, True])
def test_shards_merged_in_any_order_give_the_one_pass_artifact(tmp_path, method, equalize):
    x = images(9, 1)
    eq = dict(channel_equalization=equalize)  # tiny_cnn's conv1 -> Relu -> MaxPool -> conv2 is rescaled
    want_program = fixpoint.compile(MODEL, {"image": x}, calib_method=method, **eq)
    assert any(r["pass"] == "channel_equalization" and r["detail"].startswith("rescaled the channels of 1 ")
               for r in want_program.report["rewrites"]) == equalize
    want = fxp(want_program, tmp_path / "one")
    shards = [{"image": x[:2]}, {"image": x[2:7]}, {"image": x[7:]}]
    ranges = [fixpoint.calibrate(MODEL, s, part="ranges", calib_method=method, **eq) for s in shards]
    for order in itertools.permutations(range(3)):
        merged = fixpoint.CalibrationStats.merge_all([ranges[i] for i in order])
        assert merged.samples == 9 and not merged.histograms
        if method == "minmax":
            parts = [merged]
        else:
            parts = [fixpoint.calibrate(MODEL, shards[i], part="histograms", ranges=merged, **eq) for i in order]
        stats = fixpoint.CalibrationStats.merge_all(parts)
        got = fxp(fixpoint.compile(MODEL, stats, calib_method=method, samples={"image": x}, **eq),
                  tmp_path / "".join(map(str, order)))
        assert got == want, (method, order)
    if equalize:
        # Whole calibrations of two shards equalized by their own ranges: not mergeable.
        with pytest.raises(fixpoint.Error, match="equalized their channels by different ranges"):
            fixpoint.CalibrationStats.merge_all([fixpoint.calibrate(MODEL, s, calib_method=method, **eq) for s in shards[:2]])
    # Statistics alone: weights rounded to nearest, as the one-pass compile without adaptive rounding.
    nearest = fxp(fixpoint.compile(MODEL, {"image": x}, calib_method=method, adaptive_rounding=False, **eq), tmp_path / "n")
    alone = fixpoint.compile(MODEL, stats, calib_method=method, **eq)
    assert fxp(alone, tmp_path / "alone") == nearest != want
    assert any(r["pass"] == "adaptive_rounding" and r["detail"].startswith("skipped") for r in alone.report["rewrites"])
    with pytest.raises(fixpoint.Error, match="samples= goes with calibration statistics"):
        fixpoint.compile(MODEL, {"image": x}, samples={"image": x})


def test_save_load_pickle_and_errors(tmp_path):
    x = images(4, 2)
    s = fixpoint.calibrate(MODEL, {"image": x})
    s.save(tmp_path / "s.fxs")
    back = fixpoint.CalibrationStats.load(tmp_path / "s.fxs")
    assert fxp(fixpoint.compile(MODEL, back), tmp_path / "a") == fxp(fixpoint.compile(MODEL, s), tmp_path / "b")
    import pickle
    assert fxp(fixpoint.compile(MODEL, pickle.loads(pickle.dumps(s))), tmp_path / "c") == (tmp_path / "a" / "model.fxp").read_bytes()
    ranges = fixpoint.calibrate(MODEL, {"image": x}, part="ranges")
    blob = bytearray((tmp_path / "s.fxs").read_bytes())
    blob[100] ^= 0xFF
    (tmp_path / "bad.fxs").write_bytes(bytes(blob))
    other = fixpoint.calibrate(MODEL, {"image": x[:1]}, shape={"image": [1, 3, 32, 32]})
    cases = [(lambda: fixpoint.CalibrationStats.load(tmp_path / "bad.fxs"), "checksum"),
             (lambda: fixpoint.compile(MODEL, ranges), "needs histograms"),
             (lambda: s.merge(ranges), "with and without histograms"),
             (lambda: s.merge(other), "different graphs"),
             (lambda: fixpoint.compile(MODEL, other), "another graph"),
             (lambda: fixpoint.calibrate(MODEL, {"image": x}, part="histograms"), "ranges="),
             (lambda: fixpoint.calibrate(MODEL, {"image": x}, part="histograms", ranges=s), "merged ranges")]
    for f, message in cases:
        with pytest.raises(fixpoint.Error) as e:
            f()
        assert message in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_cli_calibrate_rounds_and_compile_stats(tmp_path):
    x = images(5, 3)
    np.save(tmp_path / "all.npy", x)
    np.save(tmp_path / "a.npy", x[:3])
    np.save(tmp_path / "b.npy", x[3:])

    def cli(*args):
        p = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    cli("compile", MODEL, "--calib", f"image={tmp_path / 'all.npy'}", "-o", tmp_path / "one", "-q")
    for s in ("a", "b"):
        cli("calibrate", MODEL, "--calib", f"image={tmp_path / (s + '.npy')}", "--ranges-only", "-o", tmp_path / f"r{s}.fxs", "-q")
    for s in ("b", "a"):
        cli("calibrate", MODEL, "--calib", f"image={tmp_path / (s + '.npy')}", "--ranges", tmp_path / "rb.fxs",
            tmp_path / "ra.fxs", "-o", tmp_path / f"h{s}.fxs", "-q")
    cli("compile", MODEL, "--stats", tmp_path / "hb.fxs", tmp_path / "ha.fxs", "--calib", f"image={tmp_path / 'all.npy'}",
        "-o", tmp_path / "sharded", "-q")  # (--calib: the samples adaptive rounding reads)
    assert (tmp_path / "sharded" / "model.fxp").read_bytes() == (tmp_path / "one" / "model.fxp").read_bytes()
    # the Python value of the same samples is the same file's statistics
    py = fixpoint.compile(MODEL, fixpoint.CalibrationStats.load(tmp_path / "ha.fxs").merge(
        fixpoint.CalibrationStats.load(tmp_path / "hb.fxs")), samples=tmp_path / "all.npy")
    assert fxp(py, tmp_path / "py") == (tmp_path / "one" / "model.fxp").read_bytes()


def test_dask_calibrate_gives_the_single_process_artifact(tmp_path):
    distributed = pytest.importorskip("distributed")
    import fixpoint.dask
    x = images(8, 4)
    want = fxp(fixpoint.compile(MODEL, {"image": x}), tmp_path / "one")
    shards = [[{"image": x[i:i + 1]} for i in range(k, k + 3) if i < 8] for k in (0, 3, 6)]
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        stats = fixpoint.dask.calibrate(MODEL, shards, client)
    assert stats.samples == 8 and stats.histograms
    assert fxp(fixpoint.compile(MODEL, stats, samples={"image": x}), tmp_path / "dask") == want
