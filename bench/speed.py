#!/usr/bin/python3
"""Speed, measured as ratios against a peer timed in the same run (this machine is noisy):

  1. kernels: Google Benchmark (build/bench/kernels_bench), each integer Conv/MatMul layer with
     the scalar reference kernel vs. the optimized path with every ISA GEMM this CPU has;
     ratio = reference time / optimized time.
  2. models: whole-network latency (median of --repeat runs after a warm-up, one thread) of
     fixpoint's int8 and int16 programs with the reference kernels and with the runtime's ISA
     choice, and of fixpoint's float reference, against ONNX Runtime (CPU, float, one thread) on
     the same input; ratio = time / ONNX Runtime time (below 1 = faster than ONNX Runtime).

usage: bench/speed.py [--build DIR] [--repeat N] [--models tiny_cnn,ocr_rec,ocr_det] [--json FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
ASSETS = os.path.join(ROOT, "scripts", "oracle", "node_modules", "@gutenye", "ocr-models", "assets")
TIMING = re.compile(r"timing: .* median ([0-9.]+) ms")


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"speed.py: {' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return p.stdout


def median_ms(out):
    m = TIMING.search(out)
    if not m:
        sys.exit(f"speed.py: no timing line in:\n{out}")
    return float(m.group(1))


def kernels(build):
    out = run([os.path.join(build, "bench", "kernels_bench"), "--benchmark_format=json", "--benchmark_min_time=0.3"])
    times = {b["name"]: b["real_time"] for b in json.loads(out)["benchmarks"]}
    rows = []
    for name, t in times.items():
        layer, kernel = name.split("/", 1)
        if kernel != "reference":
            ref = times[f"{layer}/reference"]
            rows.append({"layer": layer, "kernel": kernel, "us": t, "reference_us": ref, "speedup": ref / t})
    return rows


def model_inputs(work):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_ocr_inputs.py"), work])
    return {
        "tiny_cnn": (os.path.join(ROOT, "models", "tiny_cnn.onnx"), "image", os.path.join(ROOT, "models", "tiny_cnn_input.npy")),
        "ocr_rec": (os.path.join(ASSETS, "ch_PP-OCRv4_rec_infer.onnx"), "x", os.path.join(work, "ocr_rec_input.npy")),
        "ocr_det": (os.path.join(ASSETS, "ch_PP-OCRv4_det_infer.onnx"), "x", os.path.join(work, "ocr_det_input.npy")),
    }


def models(build, names, repeat, work):
    cli = os.path.join(build, "fixpoint")
    table = model_inputs(work)
    rows = []
    for name in names:
        model, inp, npy = table[name]
        shape = "x".join(str(d) for d in __import__("numpy").load(npy).shape)
        prog = os.path.join(work, f"{name}_int8")
        # tiny_cnn keeps its dynamic batch (its sample input holds 4 images); the OCR models get
        # the fixed --shape of their input, as users of an accelerator compile them.
        fixed = [] if name == "tiny_cnn" else ["--shape", f"{inp}={shape}"]
        run([cli, "compile", model, "-o", prog, "--calib", f"{inp}={npy}", "-q"] + fixed)
        prog16 = os.path.join(work, f"{name}_int16")
        run([cli, "compile", model, "-o", prog16, "--bits", "16", "--calib", f"{inp}={npy}", "-q"] + fixed)
        feed = ["--input", f"{inp}={npy}", "-o", os.path.join(work, "out"), "-q", "--repeat", str(repeat)]
        env_ref = dict(os.environ, FIXPOINT_ISA="reference")
        isa = re.search(r"isa=(\S+)", run([cli, "run", prog] + feed)).group(1)
        r = {
            "model": name,
            "isa": isa,
            "ort_float_ms": median_ms(run(["node", os.path.join(ROOT, "scripts", "oracle", "ort_run.js"), model,
                                           os.path.join(work, "ort"), f"{inp}={npy}", "--repeat", str(repeat)])),
            "fixpoint_int8_ms": median_ms(run([cli, "run", prog] + feed)),
            "fixpoint_int8_reference_kernels_ms": median_ms(run([cli, "run", prog] + feed, env=env_ref)),
            "fixpoint_int16_ms": median_ms(run([cli, "run", prog16] + feed)),
            "fixpoint_int16_reference_kernels_ms": median_ms(run([cli, "run", prog16] + feed, env=env_ref)),
            "fixpoint_float_ms": median_ms(run([cli, "run", model] + fixed + feed)),
        }
        for k in ["fixpoint_int8_ms", "fixpoint_int8_reference_kernels_ms", "fixpoint_int16_ms",
                  "fixpoint_int16_reference_kernels_ms", "fixpoint_float_ms"]:
            r[k.replace("_ms", "_vs_ort")] = r[k] / r["ort_float_ms"]
        rows.append(r)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=6)
    ap.add_argument("--models", default="tiny_cnn,ocr_rec")
    ap.add_argument("--json", default=os.path.join(ROOT, "out", "bench", "speed.json"))
    a = ap.parse_args()
    result = {"kernels": kernels(a.build)}
    print(f"{'layer':28} {'kernel':28} {'us':>9} {'ref us':>9} {'speedup':>8}")
    for r in result["kernels"]:
        print(f"{r['layer']:28} {r['kernel']:28} {r['us']:9.1f} {r['reference_us']:9.1f} {r['speedup']:8.1f}")
    with tempfile.TemporaryDirectory() as work:
        result["models"] = models(a.build, [m for m in a.models.split(",") if m], a.repeat, work)
    print(f"\n{'model':10} {'isa':11} {'ORT float ms':>12} {'int8 ms':>9} {'x ORT':>6} {'int8 ref-kernels ms':>20} "
          f"{'x ORT':>6} {'float ms':>9} {'x ORT':>6}")
    for r in result["models"]:
        print(f"{r['model']:10} {r['isa']:11} {r['ort_float_ms']:12.2f} {r['fixpoint_int8_ms']:9.2f} "
              f"{r['fixpoint_int8_vs_ort']:6.2f} {r['fixpoint_int8_reference_kernels_ms']:20.2f} "
              f"{r['fixpoint_int8_reference_kernels_vs_ort']:6.2f} {r['fixpoint_float_ms']:9.2f} {r['fixpoint_float_vs_ort']:6.2f}")
    print(f"\n{'model':10} {'isa':11} {'ORT float ms':>12} {'int16 ms':>9} {'x ORT':>6} {'int16 ref-kernels ms':>20} {'x ORT':>6}")
    for r in result["models"]:
        print(f"{r['model']:10} {r['isa']:11} {r['ort_float_ms']:12.2f} {r['fixpoint_int16_ms']:9.2f} "
              f"{r['fixpoint_int16_vs_ort']:6.2f} {r['fixpoint_int16_reference_kernels_ms']:20.2f} "
              f"{r['fixpoint_int16_reference_kernels_vs_ort']:6.2f}")
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(result, f, indent=1)
    print(f"\nwrote {a.json}")


if __name__ == "__main__":
    main()
