"""fixpoint.evaluate: float and quantized sessions over a dataset, each metric with a 95%
bootstrap confidence interval, the difference to the reference session with its own (paired)
interval, and the samples on which the sessions disagree most."""
import sys
from collections.abc import Mapping

import numpy as np

from ._core import Error

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0


def run_session(session, feeds):
    """{output name: array} from a fixpoint.Program, a fixpoint.InferenceSession or any object with
    ONNX Runtime's run(output_names, feeds) and get_outputs()."""
    if hasattr(session, "get_outputs"):
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, session.run(names, feeds)))
    if hasattr(session, "run"):
        return session.run(feeds)
    raise Error(f"fixpoint.evaluate: a session must be a Program or have run(output_names, feeds); got "
                f"{type(session).__name__}")


def split_sample(sample, i):
    """A sample is {input name: array} or (feeds, target)."""
    if isinstance(sample, Mapping):
        return sample, None
    if isinstance(sample, tuple) and len(sample) == 2 and isinstance(sample[0], Mapping):
        return sample
    raise Error(f"fixpoint.evaluate: sample {i} must be {{input name: array}} or (feeds, target)")


def score_samples(sessions, samples, metric, batch=1, progress=False, start=0):
    """Per-sample metric values: {session name: [float, ...]} in sample order."""
    scores = {name: [] for name in sessions}
    pending = []
    bar = None
    if progress:
        try:
            from tqdm import tqdm
            total = len(samples) if hasattr(samples, "__len__") else None
            bar = tqdm(total=total, desc="evaluate", unit="sample", file=sys.stderr)
        except ImportError:
            bar = None

    def flush():
        if not pending:
            return
        feeds = {k: np.concatenate([f[k] for f, _ in pending]) for k in pending[0][0]}
        for name, s in sessions.items():
            out = run_session(s, feeds)
            offset = 0
            for f, target in pending:
                n = len(next(iter(f.values())))
                one = {k: v[offset:offset + n] for k, v in out.items()}
                offset += n
                scores[name].append(score_value(metric(one, target)))
        if bar is not None:
            bar.update(len(pending))
        pending.clear()

    for i, sample in enumerate(samples):
        pending.append(split_sample(sample, start + i))
        if len(pending) >= batch:
            flush()
    flush()
    if bar is not None:
        bar.close()
    return scores


def score_value(v, metric_name="metric"):
    """A metric's value for one sample: a number, or (numerator, denominator) for a ratio metric."""
    if isinstance(v, tuple):
        if len(v) != 2:
            raise Error(f"fixpoint.evaluate: {metric_name} returned a tuple of {len(v)}; a ratio metric returns "
                        "(numerator, denominator)")
        return (float(v[0]), float(v[1]))
    return float(v)


def ratio_parts(values):
    """(numerators, denominators) of per-sample values: a plain value v is (v, 1)."""
    num = np.array([v[0] if isinstance(v, tuple) else v for v in values], dtype=np.float64)
    den = np.array([v[1] if isinstance(v, tuple) else 1.0 for v in values], dtype=np.float64)
    return num, den


def bootstrap_means(num, den, seed=BOOTSTRAP_SEED, resamples=BOOTSTRAP_RESAMPLES):
    """sum(num[idx]) / sum(den[idx]) for `resamples` seeded resamples idx of the samples (with
    replacement). Every session draws the same idx, so differences of these are paired."""
    n = len(num)
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    step = max(1, min(resamples, 4_000_000 // max(n, 1)))  # bounded memory for large datasets
    for start in range(0, resamples, step):
        m = min(step, resamples - start)
        idx = rng.integers(0, n, (m, n))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + m] = num[idx].sum(axis=1) / den[idx].sum(axis=1)
    return out


def percentile_ci(means):
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (float(lo), float(hi))


def bootstrap_ci(values, seed=BOOTSTRAP_SEED, resamples=BOOTSTRAP_RESAMPLES):
    """95% percentile-bootstrap interval of the mean (ratio of sums for (numerator, denominator)
    values), seeded: the same values give the same interval."""
    if len(values) == 0:
        return (float("nan"), float("nan"))
    return percentile_ci(bootstrap_means(*ratio_parts(values), seed, resamples))


class Top1:
    """Metric: 1.0 when the argmax of `output` (over its last axis) equals the target class, or,
    with target None, nothing to compare with: an error. Picklable (Dask ships it)."""

    def __init__(self, output):
        self.output = output

    def __call__(self, outputs, target):
        if target is None:
            raise Error("Top1: the samples carry no target; give (feeds, target) pairs")
        return float(np.mean(np.argmax(outputs[self.output], axis=-1) == np.asarray(target)))


class EvalResult:
    """.scores {session: per-sample values}; .mean and .ci {session: 95% interval};
    .diff {session: (mean, lo, hi)} of session - reference (the first session), paired bootstrap
    (each resample draws the same samples for every session); .disagreements [(sample index,
    {session: value})] largest spread first; .table (text).

    A metric returning (numerator, denominator) per sample is a ratio metric (character accuracy:
    (characters right, characters)): the mean is sum(numerators) / sum(denominators), every
    bootstrap resample takes that ratio over its samples, and .scores holds the per-sample ratios
    with .weights the denominators. Plain values have weight 1."""

    def __init__(self, scores, reference=None, top=5):
        names = list(scores)
        if not names:
            raise Error("fixpoint.evaluate: no sessions")
        self.reference = reference or names[0]
        if self.reference not in scores:
            raise Error(f"fixpoint.evaluate: reference '{self.reference}' is not a session ({', '.join(names)})")
        parts = {k: ratio_parts(v) for k, v in scores.items()}
        with np.errstate(invalid="ignore", divide="ignore"):
            self.scores = {k: num / den for k, (num, den) in parts.items()}
        self.weights = {k: den for k, (_, den) in parts.items()}
        self.count = len(self.scores[names[0]])
        if self.count == 0:
            nan = float("nan")
            self.mean = {k: nan for k in names}
            self.ci = {k: (nan, nan) for k in names}
            self.diff = {k: (nan, nan, nan) for k in names if k != self.reference}
            self.disagreements = []
            return
        self.mean = {k: float(num.sum() / den.sum()) for k, (num, den) in parts.items()}
        boot = {k: bootstrap_means(num, den) for k, (num, den) in parts.items()}
        self.ci = {k: percentile_ci(b) for k, b in boot.items()}
        self.diff = {k: (self.mean[k] - self.mean[self.reference], *percentile_ci(b - boot[self.reference]))
                     for k, b in boot.items() if k != self.reference}
        stack = np.stack([self.scores[k] for k in names])
        spread = stack.max(axis=0) - stack.min(axis=0)
        order = np.argsort(-spread, kind="stable")[:top]
        self.disagreements = [(int(i), {k: float(self.scores[k][i]) for k in names}) for i in order if spread[i] > 0]

    @property
    def table(self):
        lines = [f"{'session':<20} {'mean':>10} {'95% CI':>24} {'vs ' + self.reference:>26}"]
        for k in self.scores:
            lo, hi = self.ci[k]
            d = ""
            if k in self.diff:
                m, dlo, dhi = self.diff[k]
                sig = "" if dlo <= 0 <= dhi else " *"
                d = f"{m:+.4f} [{dlo:+.4f}, {dhi:+.4f}]{sig}"
            lines.append(f"{k:<20} {self.mean[k]:>10.4f} {f'[{lo:.4f}, {hi:.4f}]':>24} {d:>26}")
        lines.append(f"{self.count} samples; 95% bootstrap intervals ({BOOTSTRAP_RESAMPLES} resamples, paired for "
                     "differences); * = the interval excludes 0")
        if self.disagreements:
            lines.append("most disagreement: " + ", ".join(f"#{i}" for i, _ in self.disagreements))
        return "\n".join(lines)

    def __repr__(self):
        return f"<fixpoint.EvalResult {self.count} samples, " + ", ".join(
            f"{k} {self.mean[k]:.4f}" for k in self.scores) + ">"


def evaluate(sessions, samples, metric, *, batch=1, reference=None, progress=True, show=True, top=5):
    """Runs every session over samples and scores each with metric(outputs, target) -> float.

    sessions   {name: fixpoint.Program | fixpoint.InferenceSession | ONNX Runtime session}
    samples    iterable of {input name: array} or (feeds, target); arrays carry the batch axis
    metric     metric(outputs {name: array}, target) -> float, one value per sample, or
               (numerator, denominator) for a ratio metric (see EvalResult)
    batch      samples concatenated along axis 0 per run (the model must accept that batch)
    reference  the session the others are compared with (default: the first)
    """
    if not isinstance(sessions, Mapping) or not sessions:
        raise Error("fixpoint.evaluate: sessions must be a non-empty dict {name: session}")
    if not callable(metric):
        raise Error("fixpoint.evaluate: metric must be callable metric(outputs, target) -> float")
    if not isinstance(batch, int) or batch < 1:
        raise Error(f"fixpoint.evaluate: batch must be a positive integer, got {batch!r}")
    r = EvalResult(score_samples(sessions, samples, metric, batch, progress), reference, top)
    if show:
        print(r.table)
    return r
