"""fixpoint: compile ONNX models to fixed-point (int8/int16) programs, run them bit-exactly as an
edge accelerator would, and find where the quantized output departs from float.

    import fixpoint
    prog = fixpoint.compile("model.onnx", calibration=samples, bits=8, shape={"x": [1, 3, 224, 224]})
    y = prog.run({"x": x})["y"]
    sess = fixpoint.InferenceSession("prog_dir")   # ONNX Runtime's interface
    report = fixpoint.compare(prog, {"x": x})

Every failure raises fixpoint.Error with the same one-line message as the CLI.
"""
from ._core import Error
from .calibration import CalibrationStats, calibrate
from .program import Program, compile, load
from .session import InferenceSession, NodeArg
from .debugging import Analysis, CompareReport, analyze, compare, trace
from .evaluation import EvalResult, Top1, evaluate

__all__ = ["Error", "CalibrationStats", "calibrate", "Program", "compile", "load", "InferenceSession", "NodeArg", "CompareReport", "compare", "trace", "Analysis", "analyze",
           "EvalResult", "Top1", "evaluate", "kernel_isa"]
__version__ = "0.1.0"


def kernel_isa() -> str:
    """The ISA of the optimized integer kernels chosen for this CPU ("scalar", "avx2",
    "avx512vnni", "avx512vnni+amx" where 8-bit convs run on AMX tiles; FIXPOINT_ISA forces one,
    FIXPOINT_AMX=0 turns the tiles off). Every choice gives the same bits."""
    from ._core import kernel_isa as _isa
    return _isa()
