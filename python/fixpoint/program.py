"""fixpoint.compile, fixpoint.load and the compiled Program."""
import json
import os
import tempfile
from collections.abc import Mapping


from . import _core
from ._core import Error
from .calibration import CalibrationStats, core_samples
from .session import node_args


class Program:
    """A compiled fixed-point program (what `fixpoint compile -o DIR` writes)."""

    def __init__(self, core, keep=None):
        self._core = core
        self._keep = keep  # a temporary folder holding a model given as bytes
        self._report = None

    def run(self, feeds):
        """Runs the program on {input name: numpy array} (float inputs are quantized with the
        program's scales) and returns {output name: float32 array} (dequantized). Releases the
        GIL; several Python threads may run one Program at once. A C-contiguous, aligned input
        array of the model's dtype is read in place (no copy) and never written."""
        return self._core.run(_feeds(feeds))[0]

    def run_codes(self, feeds):
        """Like run, but returns the integer codes of the fixed-point outputs (float outputs of
        CPU fallback ops are not included)."""
        return self._core.run(_feeds(feeds))[1]

    @property
    def threads(self):
        return getattr(self, "_threads", 1)

    @threads.setter
    def threads(self, n):
        """Threads of the integer kernels (any count gives the same bits); set before running."""
        if not isinstance(n, int) or n < 1:
            raise Error(f"threads: expected a positive integer, got {n!r}")
        self._core.set_threads(n)
        self._threads = n

    def save(self, directory):
        """Writes DIR/model.fxp and compile_report.{json,txt} (and mixed_precision.json after
        auto_mixed), the folder `fixpoint run DIR` and fixpoint.load(DIR) read."""
        self._core.save(os.fspath(directory))

    def export_qdq(self, path):
        """Writes the program as an ONNX QDQ model (`fixpoint export-qdq`): every tensor with
        codes gets QuantizeLinear/DequantizeLinear with its scale, zero point and width, weights
        and biases are the program's codes, float fallbacks stay float; ONNX Runtime runs it."""
        self._core.export_qdq(os.fspath(path))

    @property
    def report(self):
        """The compile report (compile_report.json) as a dict."""
        if self._report is None:
            self._report = json.loads(self._core.report_json())
        return self._report

    @property
    def report_text(self):
        """The compile report as text (compile_report.txt)."""
        return self._core.report_text()

    @property
    def inputs(self):
        """The program's inputs as NodeArg (name, shape, type)."""
        return node_args(self._core.inputs())

    @property
    def outputs(self):
        return node_args(self._core.outputs())

    @property
    def source_model(self):
        """The ONNX file the program was compiled from (compare runs its float reference)."""
        return self._core.source_model()

    def __repr__(self):
        ins = ", ".join(f"{a.name}{a.shape}" for a in self.inputs)
        return f"<fixpoint.Program {self.source_model!r} inputs [{ins}]>"


def load(directory):
    """Loads the program in DIR (written by Program.save or `fixpoint compile -o DIR`), or the
    artifact file DIR/model.fxp itself."""
    return Program(_core.load(os.fspath(directory)))


def compile(model, calibration=None, *, bits=None, config=None, verbose=False, **options):
    """Compiles an ONNX model to a fixed-point program.

    model        path of an .onnx file, or the serialized model as bytes
    calibration  samples for the activation ranges: a sequence of {input name: array} (fetched one
                 at a time), any other iterable of them (streamed to a temporary folder, never all
                 in memory), {input name: array stacked on a new first axis}, a .npy file or a
                 folder of .npy files (single-input models), {input name: path}, or
                 fixpoint.CalibrationStats (fixpoint.calibrate, merged shards; then samples=
                 gives the samples adaptive rounding reads, in any of the forms above: the first
                 32 of them are read, and with the first 32 of a one-pass compile's samples the
                 artifact is that compile's; without samples= the weights round to nearest)
    bits         8, 16 or 32 (float reference, no calibration)
    config       a dict of options by fixpoint's or TIDL's names (tensor_bits,
                 output_feature_16bit_names_list, deny_list, ...), as `fixpoint compile --config`
    options      any `fixpoint compile` option as a keyword: shape={"x": [1, 3, 48, 320]},
                 bits16=[...], bits8=[...], params16=[...], params8=[...], out16=[...], deny=[...], allow=[...],
                 auto_mixed=1.25, range_search=True, range_factors={...}, calib_method="mse", calib_percentile=99.9, scale_mode="pow2", qat=True, symmetric=True, per_tensor_weights=True,
                 bias_correction=False, adaptive_rounding=True, channel_equalization=True, narrow_intermediates=True, narrow_stream=True, narrow_softmax=True, headroom16=1.0,
                 disable_pass=[...];
                 they win
                 over config
    verbose      print the compiler's progress lines on stderr
    """
    keep = None
    if isinstance(model, (bytes, bytearray)):
        keep = tempfile.TemporaryDirectory(prefix="fixpoint_model_")
        path = os.path.join(keep.name, "model.onnx")
        with open(path, "wb") as f:
            f.write(model)
    elif isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
    else:
        raise Error(f"fixpoint.compile: model must be a path or ONNX bytes, got {type(model).__name__}")
    if bits is not None:
        options["bits"] = bits
    if config is not None and not isinstance(config, Mapping):
        raise Error(f"fixpoint.compile: config must be a dict, got {type(config).__name__}")
    for k in ("calib",):
        if k in options:
            raise Error(f"fixpoint.compile: give samples as calibration=..., not {k}=")
    stats = calibration._core if isinstance(calibration, CalibrationStats) else None
    samples = options.pop("samples", None)
    if samples is not None and stats is None:
        raise Error("fixpoint.compile: samples= goes with calibration statistics (fixpoint.CalibrationStats): they are "
                    "the samples adaptive rounding reads; with samples as calibration=, give them there")
    with core_samples(path, samples if stats is not None else calibration, options) as source:
        try:
            opts = json.dumps(options)
            cfg = json.dumps(dict(config or {}))
        except TypeError as e:
            raise Error(f"fixpoint.compile: an option value is not a plain value ({e})") from None
        core = _core.compile(path, cfg, opts, stats if stats is not None else source,
                             source if stats is not None else None, verbose)
    return Program(core, keep)


def _feeds(feeds):
    if not isinstance(feeds, Mapping):
        raise Error(f"inputs: expected a dict {{input name: numpy array}}, got {type(feeds).__name__}")
    return dict(feeds)


