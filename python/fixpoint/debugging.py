"""fixpoint.compare and fixpoint.trace: where and why the program departs from float."""
import json

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
