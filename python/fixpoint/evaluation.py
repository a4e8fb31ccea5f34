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
                scores[name].append(float(metric(one, target)))
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


def bootstrap_ci(values, seed=BOOTSTRAP_SEED, resamples=BOOTSTRAP_RESAMPLES):
    """95% percentile-bootstrap interval of the mean (seeded: the same values give the same interval)."""
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), (resamples, len(v)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (float(lo), float(hi))


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
    .diff {session: (mean, lo, hi)} of session - reference (the first session) per sample,
    paired bootstrap; .disagreements [(sample index, {session: value})] largest spread first;
    .table (text)."""

    def __init__(self, scores, reference=None, top=5):
        self.scores = {k: np.asarray(v, dtype=np.float64) for k, v in scores.items()}
        names = list(self.scores)
        if not names:
            raise Error("fixpoint.evaluate: no sessions")
        self.reference = reference or names[0]
        if self.reference not in self.scores:
            raise Error(f"fixpoint.evaluate: reference '{self.reference}' is not a session ({', '.join(names)})")
        self.count = len(self.scores[names[0]])
        self.mean = {k: float(v.mean()) if len(v) else float("nan") for k, v in self.scores.items()}
        self.ci = {k: bootstrap_ci(v) for k, v in self.scores.items()}
        ref = self.scores[self.reference]
        self.diff = {}
        for k, v in self.scores.items():
            if k != self.reference:
                d = v - ref
                self.diff[k] = (float(d.mean()) if len(d) else float("nan"), *bootstrap_ci(d))
        stack = np.stack([self.scores[k] for k in names]) if self.count else np.zeros((len(names), 0))
        spread = stack.max(axis=0) - stack.min(axis=0) if self.count else np.zeros(0)
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
    metric     metric(outputs {name: array}, target) -> float, one value per sample
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
