"""fixpoint.calibrate and CalibrationStats: calibration statistics as a value, made on any part
of the samples, merged, saved, and given to fixpoint.compile instead of samples."""
import contextlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence

import numpy as np

from . import _core
from ._core import Error


class CalibrationStats:
    """What a compile's calibration measures (per-tensor ranges, input grids, |x| histograms),
    for one graph: the model as compiled with given options (shape, bits, disable_pass).
    Statistics of shards merge exactly: see fixpoint.calibrate's two rounds, or
    fixpoint.dask.calibrate, which runs them."""

    def __init__(self, core):
        self._core = core

    def merge(self, *others):
        """A new CalibrationStats with these and others' samples (any order gives the same)."""
        r = self._core
        for o in others:
            if not isinstance(o, CalibrationStats):
                raise Error(f"CalibrationStats.merge: expected CalibrationStats, got {type(o).__name__}")
            r = r.merged(o._core)
        return CalibrationStats(r)

    @staticmethod
    def merge_all(parts):
        parts = list(parts)
        if not parts:
            raise Error("CalibrationStats.merge_all: no statistics")
        return parts[0].merge(*parts[1:])

    def save(self, path):
        """FILE.fxs (what `fixpoint calibrate -o` writes; `fixpoint compile --stats` reads it)."""
        self._core.save(os.fspath(path))

    @staticmethod
    def load(path):
        return CalibrationStats(_core.load_stats(os.fspath(path)))

    @property
    def samples(self):
        return self._core.samples()

    @property
    def histograms(self):
        """False for ranges only (round 1 of a sharded calibration)."""
        return self._core.histograms()

    def __reduce__(self):  # pickled as the file's bytes (Dask ships them)
        return (_from_bytes, (bytes(self._core.to_bytes()),))

    def __repr__(self):
        return f"<fixpoint.CalibrationStats {self._core.describe()}>"


def _from_bytes(b):
    return CalibrationStats(_core.stats_from_bytes(b))


def calibrate(model, samples, *, part="all", ranges=None, config=None, verbose=False, **options):
    """Calibration statistics of model on samples (any form fixpoint.compile accepts), with the
    compile's options (those that shape the graph matter: shape, bits, disable_pass, ...).

    part="all"         ranges and histograms in one go (one machine)
    part="ranges"      round 1 of a sharded calibration: each shard's ranges; merge them
    part="histograms"  round 2: each shard's histograms on ranges= (round 1 merged); merging
                       the results gives exactly the statistics of part="all" on all samples
    """
    if isinstance(model, (bytes, bytearray)) or not isinstance(model, (str, os.PathLike)):
        raise Error("fixpoint.calibrate: model must be a path of an .onnx file")
    path = os.fspath(model)
    if ranges is not None and not isinstance(ranges, CalibrationStats):
        raise Error(f"fixpoint.calibrate: ranges must be CalibrationStats, got {type(ranges).__name__}")
    with core_samples(path, samples, options) as source:
        core = _core.calibrate(path, json.dumps(dict(config or {})), json.dumps(options), source, part,
                               ranges._core if ranges is not None else None, verbose)
    return CalibrationStats(core)


class _Stacked(Sequence):
    """{name: array [N, ...]} as a sequence of samples {name: array[i]}."""

    def __init__(self, arrays):
        lens = {k: len(v) for k, v in arrays.items()}
        if len(set(lens.values())) > 1:
            raise Error(f"calibration: stacked arrays have different sample counts {lens}")
        self._a = arrays
        self._n = next(iter(lens.values()), 0)

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if i >= self._n:
            raise IndexError(i)
        return {k: np.ascontiguousarray(v[i]) for k, v in self._a.items()}


@contextlib.contextmanager
def core_samples(model_path, calibration, options):
    """Samples in the form the extension takes, for the length of a `with`: yields a sequence
    source (or None) and puts file specs in options["calib"]; a one-shot iterable spooled to
    disk is removed on exit, whatever happens inside. No samples (None): yields None."""
    if calibration is None:
        yield None
        return
    source, specs, spool = samples_for_core(model_path, calibration)
    if specs is not None:
        options["calib"] = specs
    try:
        yield source
    finally:
        if spool is not None:
            spool.cleanup()


def samples_for_core(model_path, calibration):
    """-> (sequence source or None, file specs or None, temporary folder to remove or None)."""
    if isinstance(calibration, (str, os.PathLike)):
        names = [n for n, _, _ in _core.model_inputs(model_path)]
        if len(names) != 1:
            raise Error(f"calibration: a path without input names needs a model with one input; this one has {names}; "
                        "give {input name: path}")
        return None, [f"{names[0]}={os.fspath(calibration)}"], None
    if isinstance(calibration, Mapping):
        values = list(calibration.values())
        if values and all(isinstance(v, (str, os.PathLike)) for v in values):
            return None, [f"{k}={os.fspath(v)}" for k, v in calibration.items()], None
        if values and all(isinstance(v, np.ndarray) for v in values):
            return _Stacked(dict(calibration)), None, None
        raise Error("calibration: a dict must map input names to paths or to arrays stacked on a new first axis")
    if isinstance(calibration, Sequence) and not isinstance(calibration, (bytes, bytearray)):
        return calibration, None, None
    try:
        it = iter(calibration)
    except TypeError:
        raise Error(f"calibration: expected samples, a path or a dict, got {type(calibration).__name__}") from None
    # A one-shot iterable (a generator): each sample goes to disk as it comes.
    spool = tempfile.TemporaryDirectory(prefix="fixpoint_calib_")
    names = None
    count = 0
    for i, sample in enumerate(it):
        if not isinstance(sample, Mapping):
            spool.cleanup()
            raise Error(f"calibration sample {i}: expected a dict {{input name: numpy array}}")
        if names is None:
            names = list(sample)
            for n in names:
                os.makedirs(os.path.join(spool.name, _safe(n)))
        for n in names:
            if n not in sample:
                spool.cleanup()
                raise Error(f"calibration sample {i}: input '{n}' is missing")
            np.save(os.path.join(spool.name, _safe(n), f"{i:09d}.npy"), np.asarray(sample[n]))
        count += 1
    if count == 0:
        spool.cleanup()
        raise Error("calibration: the iterable gave no samples")
    return None, [f"{n}={os.path.join(spool.name, _safe(n))}" for n in names], spool


def _safe(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name) or "_"
