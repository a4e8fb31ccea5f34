"""Batch is never special: a batch of N gives, row for row, the same bits as N runs of batch 1."""
import os

import numpy as np
import pytest

from conftest import OCR_ASSETS, OCR_MODELS, load_outputs, run_cli

# (model, input name, input file or None for a rendered OCR input tiled with noise, batch)
CASES = {
    "tiny_cnn": ("tiny_cnn.onnx", "image", "tiny_cnn_input.npy"),
    "resnet18": ("resnet18.onnx", "input", "resnet18_input.npy"),
    "mlp_dynamic": ("mlp_dynamic.onnx", "features", "mlp_input.npy"),
    "shape_ops": ("shape_ops.onnx", "x", "shape_ops_input.npy"),
    "ocr_rec": (OCR_MODELS["rec"], "x", "ocr_rec_input.npy"),
    "ocr_cls": (OCR_MODELS["cls"], "x", "ocr_cls_input.npy"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_batch_rows_bit_identical(name, models, tmp_path):
    f, inp, data = CASES[name]
    model = os.path.join(OCR_ASSETS, f) if name.startswith("ocr_") else os.path.join(models, f)
    x = np.load(os.path.join(models, data))
    if x.shape[0] == 1:  # make a batch of 3 distinct rows
        rng = np.random.default_rng(7)
        x = np.concatenate([x, x + rng.normal(0, 0.1, x.shape).astype(np.float32), x[..., ::-1].copy()], axis=0)
    np.save(tmp_path / "batch.npy", x)
    run_cli("run", model, "--input", f"{inp}={tmp_path}/batch.npy", "--output-dir", tmp_path / "batch", "-q")
    full = load_outputs(tmp_path / "batch")
    for r in range(x.shape[0]):
        np.save(tmp_path / f"row{r}.npy", x[r:r + 1])
        run_cli("run", model, "--input", f"{inp}={tmp_path}/row{r}.npy", "--output-dir", tmp_path / f"r{r}", "-q")
        for k, v in load_outputs(tmp_path / f"r{r}").items():
            assert v.tobytes() == full[k][r:r + 1].tobytes(), f"{name}: output {k} row {r} differs from batch run"
