"""Real models agree with ONNX Runtime (the float oracle), for any batch size.

Agreement: same output names and shapes, and max |fixpoint - ort| <= 1e-4 * max |ort| per output
(relative to the output's peak; elementwise relative error is meaningless near zero).
"""
import os

import numpy as np
import pytest

from conftest import OCR_ASSETS, OCR_MODELS, load_outputs, run_cli, run_ort

REL_TOL = 1e-4

# (model file, input name, input file, needs oracle's npm package)
CASES = {
    "tiny_cnn": ("tiny_cnn.onnx", "image", "tiny_cnn_input.npy"),
    "resnet18": ("resnet18.onnx", "input", "resnet18_input.npy"),
    "mlp_batch5": ("mlp_batch5.onnx", "features", "mlp_input.npy"),
    "shape_ops": ("shape_ops.onnx", "x", "shape_ops_input.npy"),
    "ocr_det": (OCR_MODELS["det"], "x", "ocr_det_input.npy"),
    "ocr_rec": (OCR_MODELS["rec"], "x", "ocr_rec_input.npy"),
    "ocr_cls": (OCR_MODELS["cls"], "x", "ocr_cls_input.npy"),
}


def model_path(models, name):
    f = CASES[name][0]
    return os.path.join(OCR_ASSETS, f) if name.startswith("ocr_") else os.path.join(models, f)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_onnxruntime(name, models, oracle, tmp_path):
    model = model_path(models, name)
    _, inp, f = CASES[name]
    inputs = {inp: os.path.join(models, f)}
    run_cli("run", model, "--input", f"{inp}={inputs[inp]}", "--output-dir", tmp_path / "fp", "-q")
    run_ort(model, tmp_path / "ort", inputs)
    ours, ref = load_outputs(tmp_path / "fp"), load_outputs(tmp_path / "ort")
    assert sorted(ours) == sorted(ref)
    for k in ref:
        assert ours[k].shape == ref[k].shape, k
        err = float(np.abs(ours[k].astype(np.float64) - ref[k]).max())
        peak = float(np.abs(ref[k]).max())
        print(f"{name}/{k}: max abs err {err:.3g}, peak {peak:.3g}, relative {err / peak:.3g}")
        assert err <= REL_TOL * peak, f"{name}/{k}: max abs err {err} > {REL_TOL} * {peak}"


def test_static_batch5_mlp_all_rows(models, oracle, tmp_path):
    """The seed thread's failure: a batch-5 Gemm MLP right only on row 0. Every row must match
    ONNX Runtime and, bit for bit, the same MLP run one row at a time."""
    x = np.load(os.path.join(models, "mlp_input.npy"))
    run_cli("run", os.path.join(models, "mlp_batch5.onnx"), "--input", f"features={models}/mlp_input.npy",
            "--output-dir", tmp_path / "b5", "-q")
    run_ort(os.path.join(models, "mlp_batch5.onnx"), tmp_path / "ort", {"features": f"{models}/mlp_input.npy"})
    got = np.load(tmp_path / "b5" / "scores.npy")
    ref = np.load(tmp_path / "ort" / "scores.npy")
    assert got.shape == (5, 5)
    for r in range(5):
        assert np.abs(got[r] - ref[r]).max() <= REL_TOL * np.abs(ref).max(), f"row {r}"
        np.save(tmp_path / f"row{r}.npy", x[r:r + 1])
        run_cli("run", os.path.join(models, "mlp_dynamic.onnx"), "--input", f"features={tmp_path}/row{r}.npy",
                "--output-dir", tmp_path / f"r{r}", "-q")
        one = np.load(tmp_path / f"r{r}" / "scores.npy")
        assert one.tobytes() == got[r:r + 1].tobytes(), f"row {r} differs from its batch-1 run"
