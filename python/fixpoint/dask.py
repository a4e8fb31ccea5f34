"""fixpoint.dask: fixpoint.calibrate and fixpoint.evaluate spread over a Dask cluster (Debian
python3-distributed).

What goes to the workers: the session *paths* (a program folder or an .onnx file, which every
worker must be able to read: a shared file system on a real cluster), the metric function
(pickled), and the samples in chunks. Each worker process loads each artifact once and keeps it.
What comes back: per-sample metric values, merged in sample order, so the result is the numbers
a single-process fixpoint.evaluate gives on the same samples (docs/scaling.md)."""
import os

from ._core import Error
from .calibration import CalibrationStats
from .calibration import calibrate as _calibrate
from .evaluation import EvalResult, score_samples

_LOADED = {}  # on each worker: path -> InferenceSession, loaded once per process


def _session(path, threads):
    key = (path, threads)
    if key not in _LOADED:
        from .session import InferenceSession
        _LOADED[key] = InferenceSession(path, threads=threads)
    return _LOADED[key]


def _score_chunk(paths, chunk, metric, batch, start, threads):
    sessions = {name: _session(p, threads) for name, p in paths.items()}
    return start, score_samples(sessions, chunk, metric, batch, progress=False, start=start)


def evaluate(sessions, samples, metric, client, *, batch=1, chunk=16, reference=None, threads=1, show=True, top=5):
    """fixpoint.evaluate on a Dask client: sessions is {name: program folder or .onnx path};
    samples a sequence (len + slicing) of {input name: array} or (feeds, target), sent to the
    workers `chunk` at a time."""
    if not isinstance(sessions, dict) or not sessions:
        raise Error("fixpoint.dask.evaluate: sessions must be a non-empty dict {name: program folder or .onnx path}")
    paths = {}
    for name, p in sessions.items():
        if not isinstance(p, (str, os.PathLike)):
            raise Error(f"fixpoint.dask.evaluate: session '{name}' must be a path (a program folder or an .onnx "
                        "file) that the workers can read; Program objects stay in this process")
        paths[name] = os.path.abspath(os.fspath(p))
    n = len(samples)
    futures = [client.submit(_score_chunk, paths, list(samples[i:i + chunk]), metric, batch, i, threads, pure=False)
               for i in range(0, n, chunk)]
    parts = sorted(client.gather(futures), key=lambda r: r[0])
    scores = {name: [] for name in paths}
    for _, s in parts:
        for name in paths:
            scores[name].extend(s[name])
    r = EvalResult(scores, reference, top)
    if show:
        print(r.table)
    return r


def _calibrate_shard(model, shard, part, ranges, options):
    return _calibrate(model, shard, part=part, ranges=ranges, **options)


def calibrate(model, shards, client, **options):
    """Calibration statistics of model over shards (each a list of {input name: array} samples,
    or a .npy file / folder / {name: path} the workers can read), computed on the workers in two
    rounds: each shard's ranges, merged here; then each shard's histograms on the merged ranges,
    merged here. The result is exactly fixpoint.calibrate over all samples in one process, so
    fixpoint.compile(model, stats) gives the same artifact bytes (minmax needs only round 1)."""
    if not isinstance(model, (str, os.PathLike)):
        raise Error("fixpoint.dask.calibrate: model must be a path the workers can read")
    model = os.path.abspath(os.fspath(model))
    shards = list(shards)
    if not shards:
        raise Error("fixpoint.dask.calibrate: no shards")
    ranges = CalibrationStats.merge_all(client.gather(
        [client.submit(_calibrate_shard, model, s, "ranges", None, options, pure=False) for s in shards]))
    if options.get("calib_method") == "minmax":
        return ranges
    return CalibrationStats.merge_all(client.gather(
        [client.submit(_calibrate_shard, model, s, "histograms", ranges, options, pure=False) for s in shards]))
