"""fixpoint.compare, fixpoint.trace and fixpoint.analyze: where and why the program departs from
float, and which layers want 16 bits."""
import json
import os
from collections.abc import Mapping

from . import _core
from ._core import Error


class CompareReport:
    """Float reference vs program, layer by layer (what `fixpoint compare` writes as compare.json).
    .layers: one dict per program op output (snr_db accumulated, local_snr_db, own_snr_db,
    encoding_snr_db, cosine, max_abs, saturated_pct, ...), in program order; .worst: the node
    names adding the most error; .table: the text table; .to_html(path): the HTML report."""

    def __init__(self, core):
        self._core = core
        self.result = json.loads(core.json())
        self.layers = self.result["layers"]
        self.worst = self.result["worst"]

    @property
    def table(self):
        return self._core.table()

    def to_html(self, path):
        self._core.write_html(str(path))

    def __repr__(self):
        return f"<fixpoint.CompareReport {len(self.layers)} layers, worst {self.worst[:3]}>"


def compare(program, feeds):
    """Runs the float reference (the program's source model) and the program on feeds (a dict
    {input name: array}, or a list of them: results are pooled) and measures every layer."""
    from .program import Program
    if not isinstance(program, Program):
        raise Error(f"fixpoint.compare: expected a fixpoint.Program, got {type(program).__name__}")
    sets = [feeds] if hasattr(feeds, "items") else list(feeds)
    return CompareReport(_core.Compare(program._core, [dict(s) for s in sets]))


def trace(program, feeds):
    """Every tensor the program computes on feeds, by name, as float32 (dequantized) arrays."""
    from .program import Program
    if not isinstance(program, Program):
        raise Error(f"fixpoint.trace: expected a fixpoint.Program, got {type(program).__name__}")
    if not hasattr(feeds, "items"):
        raise Error(f"inputs: expected a dict {{input name: numpy array}}, got {type(feeds).__name__}")
    return program._core.trace(dict(feeds))


class Analysis:
    """Per-layer precision sensitivity (what `fixpoint analyze` writes as analysis.json).
    .result: the whole dict; .layers: one dict per candidate layer (alone_8bit, alone_16bit,
    cost_at_8bit, gain_at_16bit); .rank_by_gain_at_16bit / .rank_by_cost_at_8bit: layer names,
    largest first; .table(rows=20): the text table."""

    def __init__(self, result):
        self.result = result
        self.layers = result["layers"]
        self.rank_by_gain_at_16bit = result["rank_by_gain_at_16bit"]
        self.rank_by_cost_at_8bit = result["rank_by_cost_at_8bit"]

    def table(self, rows=20):
        return _core.sensitivity_table(json.dumps(self.result), rows)

    def __repr__(self):
        return (f"<fixpoint.Analysis {len(self.layers)} layers, metric {self.result['metric']}: all 8-bit "
                f"{self.result['all_8bit']:.4g}, all 16-bit {self.result['all_16bit']:.4g}>")


def analyze(model, calibration, feeds, *, metric="snr", layers=None, threads=1, config=None, verbose=False,
            **options):
    """Ranks layers by what 8 bits costs (every other layer at 16) and 16 bits gains (every other
    layer at 8), each layer alone, as `fixpoint analyze` (2L + 2 compiles on one calibration).

    model        path of an .onnx file
    calibration  samples, as fixpoint.compile takes them (not CalibrationStats)
    feeds        a dict {input name: array}, or a list of them, to measure on
    metric       "snr" (output SNR against the float reference, dB), or a callable
                 metric(fixed, reference) -> float, each a list of {output name: array} (one per
                 feed set); higher must mean better (e.g. an accuracy)
    layers       candidate layers (names, output tensors, globs, op:TYPE); default every layer
    options      any fixpoint.compile option (shape=, calib_method=, deny=, ...)
    """
    from .calibration import CalibrationStats, core_samples
    if not isinstance(model, (str, os.PathLike)):
        raise Error("fixpoint.analyze: model must be a path of an .onnx file")
    path = os.fspath(model)
    if calibration is None or isinstance(calibration, CalibrationStats):
        raise Error("fixpoint.analyze: calibration must be samples (it compiles 2L + 2 programs from them)")
    sets = [feeds] if isinstance(feeds, Mapping) else list(feeds)
    if config is not None and not isinstance(config, Mapping):
        raise Error(f"fixpoint.analyze: config must be a dict, got {type(config).__name__}")
    with core_samples(path, calibration, options) as source:
        try:
            opts, cfg = json.dumps(options), json.dumps(dict(config or {}))
        except TypeError as e:
            raise Error(f"fixpoint.analyze: an option value is not a plain value ({e})") from None
        r = _core.analyze(path, cfg, opts, source, [dict(s) if isinstance(s, Mapping) else s for s in sets], metric,
                          list(layers or []), int(threads), verbose)
    return Analysis(json.loads(r))
