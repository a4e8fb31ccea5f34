"""examples/ on small data (issue 14 item 6): they run, print the table, and check themselves."""
import os
import subprocess
import sys

from conftest import ROOT


def run_example(name, *args):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name), *args], capture_output=True, text=True,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def test_ocr_accuracy_example():
    out = run_example("ocr_accuracy.py", "--lines", "4", "--calib-lines", "4", "--auto-mixed", "1.25")
    rows = {l.split()[0]: l for l in out.splitlines() if l.split() and l.split()[0] in ("float", "int8", "int16", "auto-mixed")}
    assert set(rows) == {"float", "int8", "int16", "auto-mixed"}, out
    mean = {k: float(v.split()[1] if k != "auto-mixed" else v.split()[2]) for k, v in rows.items()}
    assert all(50 < m <= 100 for m in mean.values()), out  # rendered lines: the recognizer reads most characters (%)


def test_dask_evaluate_example():
    out = run_example("dask_evaluate.py", "--images", "16")
    assert "the cluster's per-sample values equal this process's: True" in out, out


def test_dask_calibrate_example():
    out = run_example("dask_calibrate.py", "--images", "12", "--shards", "3")
    assert "sharded statistics on the cluster give the single-process artifact: True" in out, out
