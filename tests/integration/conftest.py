"""Shared fixtures: the built CLI, generated models, the ONNX Runtime oracle."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("FIXPOINT_BUILD", os.path.join(ROOT, "build"))
CLI = os.path.join(BUILD, "fixpoint")
ORACLE = os.path.join(ROOT, "scripts", "oracle")
OCR_ASSETS = os.path.join(ORACLE, "node_modules", "@gutenye", "ocr-models", "assets")
OCR_MODELS = {
    "det": "ch_PP-OCRv4_det_infer.onnx",
    "rec": "ch_PP-OCRv4_rec_infer.onnx",
    "cls": "ch_ppocr_mobile_v2.0_cls_infer.onnx",
}


def run_cli(*args, check=True, env=None):
    p = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, errors="replace",
                       env=None if env is None else {**os.environ, **env})
    if check and p.returncode != 0:
        raise AssertionError(f"fixpoint {' '.join(map(str, args))} failed: {p.stderr}")
    return p


def run_ort(model, outdir, inputs, optimize=True):
    """optimize=False runs the operators as written (ONNX Runtime fuses QDQ pairs into integer
    kernels otherwise; on CPUs without VNNI its u8s8 AVX2 kernels saturate pair sums)."""
    specs = [f"{k}={v}" for k, v in inputs.items()]
    flags = [] if optimize else ["--no-optimize"]
    p = subprocess.run(["node", os.path.join(ORACLE, "ort_run.js"), str(model), str(outdir), *specs, *flags],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"onnxruntime failed on {model}: {p.stderr}")


def sanitize(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    """Generated models and inputs (scripts/make_models.py, scripts/make_ocr_inputs.py)."""
    d = tmp_path_factory.mktemp("models")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_models.py"), str(d)], check=True,
                   capture_output=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_ocr_inputs.py"), str(d)], check=True,
                   capture_output=True)
    return d


@pytest.fixture(scope="session")
def oracle():
    if not os.path.exists(os.path.join(ORACLE, "node_modules", "onnxruntime-node")):
        pytest.fail("ONNX Runtime is not installed: run scripts/setup.sh (npm install in scripts/oracle)")
    return ORACLE


def load_outputs(d):
    return {f[:-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")}


@pytest.fixture(scope="session")
def zero_dce(tmp_path_factory):
    """A Zero-DCE net trained here (scripts/make_zero_dce.py) and its float outputs."""
    d = tmp_path_factory.mktemp("zero_dce")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_zero_dce.py"), str(d)], check=True,
                   capture_output=True)
    run_cli("run", d / "zero_dce.onnx", "--input", f"image={d / 'zero_dce_eval.npy'}", "-o", d / "float", "-q")
    return d


def compile_run(d, name, *extra, bits=8):
    """Compiles the Zero-DCE net in d (the zero_dce fixture) on its calibration images with `extra`
    options and runs it on its evaluation images: (compile report, enhanced images)."""
    prog, out = d / f"prog_{name}", d / f"out_{name}"
    run_cli("compile", d / "zero_dce.onnx", "--calib", f"image={d / 'zero_dce_calib.npy'}", "-o", prog, "-q",
            "--bits", bits, *extra)
    run_cli("run", prog, "--input", f"image={d / 'zero_dce_eval.npy'}", "-o", out, "-q")
    report = json.loads((prog / "compile_report.json").read_text())
    return report, np.load(out / "enhanced.npy").astype(np.float64)


def psnr(ref, got):  # peak 1.0: the images live in [0, 1]
    return 10 * np.log10(1.0 / np.mean((ref - got) ** 2))
