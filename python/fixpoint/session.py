"""fixpoint.InferenceSession: ONNX Runtime's InferenceSession interface over a compiled program
(a folder) or the float reference (an .onnx file), so an evaluation loop switches in one line."""
import os

from . import _core
from ._core import Error

# dtype names -> ONNX Runtime's NodeArg.type strings
_ORT_TYPES = {"float32": "tensor(float)", "float64": "tensor(double)", "float16": "tensor(float16)",
              "uint8": "tensor(uint8)", "int8": "tensor(int8)", "uint16": "tensor(uint16)", "int16": "tensor(int16)",
              "int32": "tensor(int32)", "int64": "tensor(int64)", "uint32": "tensor(uint32)",
              "uint64": "tensor(uint64)", "bool": "tensor(bool)"}


class NodeArg:
    """An input or output: .name, .shape (ints; a str for a symbolic dim, None for an unknown
    one), .type ("tensor(float)", as ONNX Runtime says it)."""

    def __init__(self, name, shape, dtype):
        self.name = name
        self.shape = shape
        self.type = _ORT_TYPES.get(dtype, f"tensor({dtype})")

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def node_args(infos):
    return [NodeArg(n, s, t) for n, s, t in infos]


class InferenceSession:
    """InferenceSession(path_or_dir, threads=None, reference=False): a folder written by fixpoint
    compile (or Program.save), or its model.fxp, runs the fixed-point program; an .onnx file runs
    the float model on the fast float path (reference=True: the simple reference kernels).
    threads: kernel threads (default: all cores; any count gives the same bits)."""

    def __init__(self, path_or_dir, threads=None, reference=False, **_ort_kwargs):
        from .program import load
        p = os.fspath(path_or_dir)
        if _core.program_file(p):  # a folder `fixpoint compile` wrote, or its model.fxp
            self._program = load(p)
            self._program.threads = threads or os.cpu_count() or 1
            self._run = self._program.run
            self._inputs, self._outputs = self._program.inputs, self._program.outputs
        else:
            if not os.path.exists(p):
                raise Error(f"'{p}': no such file or folder")
            self._program = None
            self._reference = bool(reference)
            model = _core.FloatModel(p, threads or 0, bool(reference))
            self._run = lambda feeds: model.run(dict(feeds))
            self._inputs, self._outputs = node_args(model.inputs()), node_args(model.outputs())

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_providers(self):
        if self._program is not None:
            return ["FixpointExecutionProvider"]
        return ["FixpointFloatReference" if self._reference else "FixpointFloat"]

    def run(self, output_names, input_feed, run_options=None):
        """Outputs listed in output_names (None or []: all, in graph order), as numpy arrays."""
        if not hasattr(input_feed, "items"):
            raise Error(f"inputs: expected a dict {{input name: numpy array}}, got {type(input_feed).__name__}")
        out = self._run(input_feed)
        names = list(output_names) if output_names else [o.name for o in self._outputs]
        missing = [n for n in names if n not in out]
        if missing:
            raise Error(f"output '{missing[0]}' is not an output of the model (its outputs: "
                        f"{', '.join(repr(o.name) for o in self._outputs)})")
        return [out[n] for n in names]
