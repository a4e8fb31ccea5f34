"""fixpoint.evaluate and fixpoint.dask.evaluate (issue 14 items 4 and 5)."""
import numpy as np
import pytest

import fixpoint
from conftest import ROOT

MODEL = f"{ROOT}/models/tiny_cnn.onnx"
CALIB = f"{ROOT}/models/tiny_cnn_input.npy"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("eval")
    for bits in (8, 16):
        fixpoint.compile(MODEL, CALIB, bits=bits).save(d / f"int{bits}")
    rng = np.random.default_rng(3)
    xs = rng.uniform(0, 1, (48, 1, 3, 32, 32)).astype(np.float32)
    ref = fixpoint.InferenceSession(MODEL)
    # target: the float model's own class, so float scores 1 and the programs their agreement
    samples = [({"image": x}, int(np.argmax(ref.run(None, {"image": x})[0]))) for x in xs]
    sessions = {"float": MODEL, "int8": str(d / "int8"), "int16": str(d / "int16")}
    return sessions, samples


def test_evaluate_scores_intervals_and_disagreements(setup, capsys):
    paths, samples = setup
    sessions = {k: fixpoint.InferenceSession(p) for k, p in paths.items()}
    r = fixpoint.evaluate(sessions, samples, fixpoint.Top1("probabilities"), progress=False)
    assert r.count == 48 and r.mean["float"] == 1.0 and r.ci["float"] == (1.0, 1.0)
    for k in ("int8", "int16"):
        lo, hi = r.ci[k]
        assert lo <= r.mean[k] <= hi and 0 <= lo and hi <= 1
        m, dlo, dhi = r.diff[k]
        assert m == pytest.approx(r.mean[k] - 1.0) and dlo <= m <= dhi
    # the samples where a program missed the float class, in sample order, up to 5
    missed = [i for i in range(48) if r.scores["int8"][i] == 0 or r.scores["int16"][i] == 0]
    assert [i for i, _ in r.disagreements] == missed[:5]
    assert all(v["float"] == 1.0 and min(v.values()) == 0.0 for _, v in r.disagreements)
    assert "int8" in capsys.readouterr().out  # the table is printed
    # the same values again give the same intervals (seeded bootstrap)
    again = fixpoint.evaluate(sessions, samples, fixpoint.Top1("probabilities"), progress=False, show=False)
    assert again.ci == r.ci and again.diff == r.diff


def test_batching_gives_the_same_scores(setup):
    paths, samples = setup
    prog = fixpoint.load(paths["int8"])
    one = fixpoint.evaluate({"int8": prog}, samples, fixpoint.Top1("probabilities"), progress=False, show=False)
    four = fixpoint.evaluate({"int8": prog}, samples, fixpoint.Top1("probabilities"), batch=4, progress=False,
                             show=False)
    assert np.array_equal(one.scores["int8"], four.scores["int8"])


def test_dask_evaluate_on_a_local_cluster_gives_the_single_process_numbers(setup):
    distributed = pytest.importorskip("distributed")
    import fixpoint.dask
    paths, samples = setup
    local = fixpoint.evaluate({k: fixpoint.InferenceSession(p, threads=1) for k, p in paths.items()}, samples,
                              fixpoint.Top1("probabilities"), progress=False, show=False)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        r = fixpoint.dask.evaluate(paths, samples, fixpoint.Top1("probabilities"), client, chunk=10, show=False)
        with pytest.raises(fixpoint.Error, match="must be a path"):
            fixpoint.dask.evaluate({"p": fixpoint.load(paths["int8"])}, samples, fixpoint.Top1("probabilities"), client)
    for k in paths:
        assert np.array_equal(r.scores[k], local.scores[k]), k
    assert r.ci == local.ci and r.diff == local.diff


class FixedOutputs:
    """A session whose output for sample i is row i of a table (feeds carry the row index)."""

    def __init__(self, rows):
        self.rows = rows

    def run(self, feeds):
        return {"y": self.rows[feeds["i"][:, 0]]}


def test_ratio_metric_is_a_ratio_of_sums_with_paired_resamples():
    # (numerator, denominator) per sample, like character accuracy: (characters right, characters)
    rng = np.random.default_rng(11)
    n = 60
    lengths = rng.integers(1, 30, n).astype(np.float64)
    right_a = np.minimum(lengths, rng.integers(0, 30, n))
    right_b = np.minimum(lengths, right_a + rng.integers(0, 2, n))
    sessions = {"a": FixedOutputs(right_a), "b": FixedOutputs(right_b), "a2": FixedOutputs(right_a.copy())}
    samples = [({"i": np.array([[i]])}, lengths[i]) for i in range(n)]

    def metric(outputs, target):
        return (float(outputs["y"][0]), float(target))

    r = fixpoint.evaluate(sessions, samples, metric, batch=7, progress=False, show=False)
    assert r.mean["a"] == pytest.approx(right_a.sum() / lengths.sum())  # not the mean of per-line ratios
    assert r.mean["a"] != pytest.approx(np.mean(right_a / lengths))
    assert np.array_equal(r.weights["a"], lengths) and np.allclose(r.scores["b"], right_b / lengths)
    # the interval is the percentile interval of resampled ratios of sums (same seeded draws)
    idx = np.random.default_rng(0).integers(0, n, (2000, n))
    boot_a = right_a[idx].sum(1) / lengths[idx].sum(1)
    boot_b = right_b[idx].sum(1) / lengths[idx].sum(1)
    assert r.ci["a"] == pytest.approx(tuple(np.percentile(boot_a, [2.5, 97.5])))
    m, lo, hi = r.diff["b"]
    assert m == pytest.approx(r.mean["b"] - r.mean["a"]) and m > 0
    assert (lo, hi) == pytest.approx(tuple(np.percentile(boot_b - boot_a, [2.5, 97.5])))
    # paired: a session identical to the reference differs by exactly 0 in every resample
    assert r.diff["a2"] == (0.0, 0.0, 0.0)
    with pytest.raises(fixpoint.Error, match="ratio metric"):
        fixpoint.evaluate(sessions, samples, lambda o, t: (1.0, 2.0, 3.0), progress=False, show=False)
