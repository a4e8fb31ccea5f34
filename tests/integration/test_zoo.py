"""The CI slice of the model zoo (scripts/zoo.py; the full table is in docs/accuracy.md): two
torchvision architectures at 64x64 with seeded weights. Each must match ONNX Runtime in float,
compile to one accelerator subgraph, and keep its int8/int16 output close to float."""
import json
import os
import subprocess
import sys

from conftest import BUILD, ROOT


def test_zoo_slice(tmp_path, oracle):
    out = tmp_path / "zoo.json"
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "zoo.py"), "--models",
                        "mobilenet_v3_small,squeezenet1_1", "--size", "64", "--work", str(tmp_path), "--json", str(out)],
                       capture_output=True, text=True, env={**os.environ, "FIXPOINT_BUILD": BUILD})
    print(p.stdout)
    assert p.returncode == 0, p.stdout + p.stderr
    for r in json.loads(out.read_text()):
        assert r["float_vs_ort"] < 1e-5, r
        assert r["subgraphs"] == {"accelerator": 1, "cpu": 0, "boundary_tensors": 0}, r
        # Measured 2026-12-01: mobilenet_v3_small 42.9 / 90.9 dB, squeezenet1_1 34.9 / 58.3 dB.
        assert r["int8_snr_db"] > 30, r
        assert r["int16_snr_db"] > 50, r
        assert r["worst_layer"] and r["worst_layer_int16"], r  # compare ran on both programs
        # --auto-mixed 1.25 ran, kept its budget's programs on the accelerator, and did not lose what int8 had.
        assert r["auto_mixed"]["snr_db"] > r["int8_snr_db"] - 1, r
