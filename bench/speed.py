#!/usr/bin/python3
"""Speed, measured as ratios against a peer timed in the same run (this machine is noisy):

  1. kernels: Google Benchmark (build/bench/kernels_bench), each integer Conv/MatMul layer with
     the scalar reference kernel vs. the optimized path with every ISA GEMM this CPU has;
     ratio = reference time / optimized time.
  2. models: whole-network latency (median of --repeat runs after a warm-up; the median of
     --rounds such measurements, every configuration's rounds interleaved) of fixpoint's float
     path (1 and 2 threads, and the reference kernels) and its int8 and int16 programs (1 and 2
     threads with the runtime's ISA choice, one with the reference kernels) and int16w8 programs
     (16-bit activations, 8-bit weights: `--bits 16 --params8 '*'`; 1 and 2 threads), against ONNX Runtime 1.30 (CPU, float)
     at the same thread count on the same input; ratio = time / ONNX Runtime time (below 1 =
     faster than ONNX Runtime). Each ratio is also given paired by round (each round's time over
     ONNX Runtime's in the same round) as a median with a distribution-free interval for it (the
     sign test's order statistics; about 95% from 9 rounds, the whole range below 6): a target
     inside the interval is neither met nor missed on this run. resnet18 is torchvision's, exported with seeded random weights;
     zero_dce is the Zero-DCE net trained by scripts/make_zero_dce.py, on one 384x384 image.
     Also, for resnet18, ONNX Runtime's own int8 on a QDQ export of the same int8 program (`fixpoint export-qdq`:
     the program's per-channel int8 weights, activation scales and zero points; ORT fuses the
     Q/DQ pairs into its int8 kernels) and, for resnet18, batch-8 throughput (images/s).
  3. the machine's limits (build/bench/peak: vpdpbusd, vpdpwssd, FMA and, where the CPU has them,
     AMX TDPBSUD multiply-accumulates per second at 1 and 2 threads) and, per model and per
     slowest Conv/MatMul layer of the int8 program (`fixpoint run --profile`, MACs from `fixpoint
     inspect`), the GMAC/s reached and its share of the int8 peak (the AMX one where the run's
     kernels used the tiles, isa avx512vnni+amx; float rows: of the FMA peak of the float kernels' ISA).
  4. with --walltimes: wall time of `compile` of the OCR recognizer (100 calibration lines) and
     detector (100 pages at 640x640) and of `analyze` on the recognizer, against issue 13's budgets,
     and of the recognizer's compile with --range-search --adaptive-rounding.

usage: bench/speed.py [--build DIR] [--repeat N] [--rounds R] [--models tiny_cnn,ocr_rec,ocr_det,resnet18,zero_dce]
                      [--rows float,int8,int16,int16w8] [--no-kernels] [--walltimes] [--json FILE]
"""
import argparse
import json
import os
import re
import statistics
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


def median_interval(values, level=0.95):
    """A distribution-free interval for the median of `values`: the order statistics x(k) and
    x(n + 1 - k) (1-based, sorted) with the largest k whose coverage 1 - 2 P(Binomial(n, 1/2) < k)
    is at least `level`; with too few values for that, the whole range. Returns (median, lo, hi,
    coverage)."""
    from math import comb
    x, n = sorted(values), len(values)
    def coverage(k):
        return 1 - 2 * sum(comb(n, j) for j in range(k)) / 2 ** n
    k = 1
    while k + 1 <= (n + 1) // 2 and coverage(k + 1) >= level:
        k += 1
    return statistics.median(x), x[k - 1], x[n - k], coverage(k)


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


def peak(build):
    return json.loads(run([os.path.join(build, "bench", "peak"), "2"]))


PROFILE_OP = re.compile(r"^\s+([0-9.]+) ms\s+(\S+) \S+\s+node '([^']+)'", re.M)


def macs_by_node(cli, model, fixed):
    layers = json.loads(run([cli, "inspect", model, "--json"] + fixed))["layers"]
    return {l["name"]: l["macs"] or 0 for l in layers}  # (a dynamic batch dimension: no count)


def slow_layers(out, macs, ms_total):
    """The profile's slowest Conv/MatMul/Gemm ops with MACs: (node, ms, GMAC/s)."""
    rows = []
    for ms, op, node in PROFILE_OP.findall(out):
        if op in ("Conv", "MatMul", "Gemm", "ConvTranspose") and macs.get(node):
            rows.append({"node": node, "op": op, "ms": float(ms), "gmacs": macs[node] / float(ms) / 1e6})
    return rows


def model_inputs(work, names):
    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_ocr_inputs.py"), work])
    table = {
        "tiny_cnn": (os.path.join(ROOT, "models", "tiny_cnn.onnx"), "image", os.path.join(ROOT, "models", "tiny_cnn_input.npy")),
        "ocr_rec": (os.path.join(ASSETS, "ch_PP-OCRv4_rec_infer.onnx"), "x", os.path.join(work, "ocr_rec_input.npy")),
        "ocr_det": (os.path.join(ASSETS, "ch_PP-OCRv4_det_infer.onnx"), "x", os.path.join(work, "ocr_det_input.npy")),
    }
    if "zero_dce" in names:  # trained here (scripts/make_zero_dce.py, about a minute); one 384x384 image
        d = os.path.join(work, "zero_dce")
        os.makedirs(d, exist_ok=True)
        run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_zero_dce.py"), d])
        x = os.path.join(work, "zero_dce_input.npy")  # an evaluation crop (a photo it never saw), tiled 2 x 2
        np.save(x, np.ascontiguousarray(np.tile(np.load(os.path.join(d, "zero_dce_eval.npy"))[:1], (1, 1, 2, 2))))
        table["zero_dce"] = (os.path.join(d, "zero_dce.onnx"), "image", x)
    if "resnet18" in names:  # torchvision's ResNet-18, seeded random weights (scripts/zoo.py's export)
        from zoo import EXPORT
        model = os.path.join(work, "resnet18.onnx")
        run(["/usr/bin/python3", "-c", EXPORT, "resnet18", "224", model])
        x = os.path.join(work, "resnet18_input.npy")
        np.save(x, np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32))
        table["resnet18"] = (model, "x", x)
    return table


ROWS = ("float", "int8", "int16", "int16w8")
# Each fixed-point row's compile width (int16w8: 16-bit activations, 8-bit weights, --params8).
WIDTHS = {"int8": ["--bits", "8"], "int16": ["--bits", "16"], "int16w8": ["--bits", "16", "--params8", "*"]}


def models(build, names, repeat, work, rows_wanted, rounds):
    """Per model: every timed configuration run once per round, the rounds interleaved (ORT and
    fixpoint alike), each configuration's time the median of its rounds. This machine's speed
    drifts within minutes; timing ORT first and fixpoint a minute later skewed the ratios by up to
    40% at two threads."""
    cli = os.path.join(build, "fixpoint")
    table = model_inputs(work, names)
    rows = []
    for name in names:
        model, inp, npy = table[name]
        shape = "x".join(str(d) for d in __import__("numpy").load(npy).shape)
        # tiny_cnn keeps its dynamic batch (its sample input holds 4 images); the others get
        # the fixed --shape of their input, as users of an accelerator compile them.
        fixed = [] if name == "tiny_cnn" else ["--shape", f"{inp}={shape}"]
        feed = ["--input", f"{inp}={npy}", "-o", os.path.join(work, "out"), "-q", "--repeat", str(repeat)]
        env_ref = dict(os.environ, FIXPOINT_ISA="reference")
        def ort_cmd(m):
            return ["node", os.path.join(ROOT, "scripts", "oracle", "ort_run.js"), m, os.path.join(work, "ort"),
                    f"{inp}={npy}", "--repeat", str(repeat)]
        jobs = {"ort_float_ms": ort_cmd(model) + ["--threads", "1"], "ort_float_2t_ms": ort_cmd(model) + ["--threads", "2"]}
        r = {"model": name, "rounds": rounds}
        macs = macs_by_node(cli, model, fixed)
        r["macs"] = sum(macs.values())
        progs = {}
        if "float" in rows_wanted:
            jobs["fixpoint_float_ms"] = [cli, "run", model] + fixed + feed + ["--threads", "1"]
            jobs["fixpoint_float_2t_ms"] = [cli, "run", model] + fixed + feed + ["--threads", "2"]
        for row, width in WIDTHS.items():
            if row not in rows_wanted:
                continue
            prog = progs[row] = os.path.join(work, f"{name}_{row}")
            run([cli, "compile", model, "-o", prog, "--calib", f"{inp}={npy}", "-q"] + width + fixed)
            jobs[f"fixpoint_{row}_ms"] = [cli, "run", prog] + feed + ["--threads", "1"]
            jobs[f"fixpoint_{row}_2t_ms"] = [cli, "run", prog] + feed + ["--threads", "2"]
            if row == "int8" and name == "resnet18":  # the int8 peer (the OCR models' opset-9 QDQ exports do not load in ORT)
                qdq = os.path.join(work, f"{name}_int8_qdq.onnx")
                run([cli, "export-qdq", prog, "-o", qdq, "-q"])
                jobs["ort_int8_qdq_ms"] = ort_cmd(qdq) + ["--threads", "1"]
                jobs["ort_int8_qdq_2t_ms"] = ort_cmd(qdq) + ["--threads", "2"]
        times, last = {k: [] for k in jobs}, {}
        for _ in range(rounds):
            for k, cmd in jobs.items():
                last[k] = run(cmd)
                times[k].append(median_ms(last[k]))
        r.update({k: statistics.median(v) for k, v in times.items()})
        r["round_ms"] = times
        if "float" in rows_wanted:
            r["float_isa"] = re.search(r"isa=(\S+)", last["fixpoint_float_ms"]).group(1)
            r["fixpoint_float_reference_kernels_ms"] = median_ms(run([cli, "run", model, "--reference"] + fixed + feed))
        for row, prog in progs.items():
            r["isa"] = re.search(r"isa=(\S+)", last[f"fixpoint_{row}_ms"]).group(1)
            if row != "int16w8":  # (the int16 row's reference kernels already show the 16-bit ones' speed)
                r[f"fixpoint_{row}_reference_kernels_ms"] = median_ms(run([cli, "run", prog] + feed + ["--threads", "1"],
                                                                          env=env_ref))
            if row == "int8":  # where the int8 time goes: the slowest GEMM layers at 2 threads
                out = run([cli, "run", prog] + feed + ["--threads", "2", "--profile"])
                r["int8_2t_layers"] = slow_layers(out, macs, r["fixpoint_int8_2t_ms"])
        for k in [k for k in r if k.startswith("fixpoint_") and k.endswith("_ms")]:
            peer = "ort_float_2t_ms" if "_2t_" in k else "ort_float_ms"
            r[k.replace("_ms", "_vs_ort")] = r[k] / r[peer]
            if k in times:  # the paired ratios: each round's time over the peer's in the same round
                paired = [t / p for t, p in zip(times[k], times[peer])]
                r[k.replace("_ms", "_vs_ort_rounds")] = paired
                r[k.replace("_ms", "_vs_ort_interval")] = median_interval(paired)
        for t in ("", "_2t"):
            if f"ort_int8_qdq{t}_ms" in times:
                r[f"fixpoint_int8{t}_vs_ort_int8_interval"] = median_interval(
                    [f / p for f, p in zip(times[f"fixpoint_int8{t}_ms"], times[f"ort_int8_qdq{t}_ms"])])
        if name == "resnet18" and "int8" in rows_wanted:
            r.update(batch8(cli, work, repeat))
        rows.append(r)
    return rows


def batch8(cli, work, repeat):
    """ResNet-18 at batch 8: images/s of the int8 program and of ONNX Runtime float, 2 threads."""
    import numpy as np
    from zoo import EXPORT
    model = os.path.join(work, "resnet18_b8.onnx")
    run(["/usr/bin/python3", "-c", EXPORT, "resnet18", "224", model, "8"])
    x = os.path.join(work, "resnet18_b8_input.npy")
    batch = np.random.default_rng(2).standard_normal((8, 3, 224, 224)).astype(np.float32)
    np.save(x, batch)
    calib = os.path.join(work, "resnet18_b8_calib.npy")  # one calibration sample: the batch
    np.save(calib, batch[None])
    prog = os.path.join(work, "resnet18_b8_int8")
    run([cli, "compile", model, "-o", prog, "--calib", f"x={calib}", "-q"])
    feed = ["--input", f"x={x}", "-o", os.path.join(work, "out"), "-q", "--repeat", str(repeat), "--threads", "2"]
    ort = ["node", os.path.join(ROOT, "scripts", "oracle", "ort_run.js"), model, os.path.join(work, "ort"), f"x={x}",
           "--repeat", str(repeat), "--threads", "2"]
    fp, ort_ms = median_ms(run([cli, "run", prog] + feed)), median_ms(run(ort))
    return {"batch8_int8_2t_images_per_s": 8000 / fp, "batch8_ort_float_2t_images_per_s": 8000 / ort_ms}


def print_limits(lim, rows):
    t = lim["threads"]
    print(f"\nmachine limits (build/bench/peak, GMAC/s at 1 / {t} threads): "
          + ", ".join(f"{k} {lim.get(k + '_1t') or 0:.0f} / {lim.get(f'{k}_{t}t') or 0:.0f}"
                      for k in ("vpdpbusd_int8", "vpdpwssd_int16", "fma512_fp32", "fma256_fp32", "amx_int8")))
    int8_peak, fp_peak = lim.get(f"vpdpbusd_int8_{t}t"), lim.get(f"fma512_fp32_{t}t") or lim.get(f"fma256_fp32_{t}t")
    int16_peak, int16w8_peak = lim.get(f"vpdpwssd_int16_{t}t"), int8_peak and int8_peak / 2
    amx = any(r.get("isa", "").endswith("+amx") for r in rows) and lim.get(f"amx_int8_{t}t")
    if amx:  # the convs ran on AMX tiles: 16-bit ones as byte planes (2 products with int8 weights, 4 with int16)
        int8_peak, int16_peak, int16w8_peak = amx, amx / 4, amx / 2
    print(f"{'model':10} {'GMAC':>6} {'ORT f32 2t':>18} {'int8 2t':>18} {'ORT int8 QDQ 2t':>18} {'int16 2t':>18} "
          f"{'int16w8 2t':>18}")
    for r in rows:
        g = r["macs"] / 1e9
        def cell(key, p):
            if key not in r or not p:
                return ""
            rate = g / (r[key] / 1e3)
            return f"{rate:6.0f} ({100 * rate / p:3.0f}%)"
        print(f"{r['model']:10} {g:6.2f} {cell('ort_float_2t_ms', fp_peak):>18} {cell('fixpoint_int8_2t_ms', int8_peak):>18} "
              f"{cell('ort_int8_qdq_2t_ms', lim.get(f'vpdpbusd_int8_{t}t')):>18} {cell('fixpoint_int16_2t_ms', int16_peak):>18} "
              f"{cell('fixpoint_int16w8_2t_ms', int16w8_peak):>18}")
    if amx:
        print("(GMAC/s reached (share of the peak of its arithmetic: FMA for float; for fixpoint, AMX TDPBSUD for int8, "
              "a quarter of it for int16 and half for int16w8 (byte planes); vpdpbusd for ORT int8))")
    else:
        print("(GMAC/s reached (share of the peak of its arithmetic: FMA for float, vpdpbusd for int8, vpdpwssd for int16, "
              "half of vpdpbusd for int16w8: two byte planes))")
    for r in rows:
        if r.get("int8_2t_layers"):
            print(f"\n{r['model']} int8, 2 threads: slowest GEMM layers")
            for l in r["int8_2t_layers"]:
                share = f"{100 * l['gmacs'] / int8_peak:3.0f}%" if int8_peak else ""
                print(f"  {l['ms']:7.3f} ms {l['gmacs']:7.1f} GMAC/s {share:>5}  {l['op']:8} {l['node']}")
    for r in rows:
        if "ort_int8_qdq_ms" in r:
            print(f"\n{r['model']}: ONNX Runtime int8 (QDQ export) {r['ort_int8_qdq_ms']:.2f} / {r['ort_int8_qdq_2t_ms']:.2f} ms at 1 / 2 threads; "
                  f"fixpoint int8 / ORT int8 = {r['fixpoint_int8_ms'] / r['ort_int8_qdq_ms']:.2f}x / {r['fixpoint_int8_2t_ms'] / r['ort_int8_qdq_2t_ms']:.2f}x"
                  + "; paired by round " + " / ".join(
                      "{:.2f} [{:.2f}, {:.2f}]".format(*r[f"fixpoint_int8{t}_vs_ort_int8_interval"][:3]) for t in ("", "_2t")))
        if "batch8_int8_2t_images_per_s" in r:
            print(f"{r['model']} batch 8, 2 threads: fixpoint int8 {r['batch8_int8_2t_images_per_s']:.0f} images/s, "
                  f"ONNX Runtime float {r['batch8_ort_float_2t_images_per_s']:.0f} images/s")


def print_models(rows):
    """One table per kind of row: fixpoint ms (x ONNX Runtime float in the same run)."""
    cols = [("float 1t", "fixpoint_float_ms", "ort_float_ms"), ("float 2t", "fixpoint_float_2t_ms", "ort_float_2t_ms"),
            ("float ref-kernels", "fixpoint_float_reference_kernels_ms", "ort_float_ms"),
            ("int8 1t", "fixpoint_int8_ms", "ort_float_ms"), ("int8 2t", "fixpoint_int8_2t_ms", "ort_float_2t_ms"),
            ("int8 ref-kernels", "fixpoint_int8_reference_kernels_ms", "ort_float_ms"),
            ("int16 1t", "fixpoint_int16_ms", "ort_float_ms"), ("int16 2t", "fixpoint_int16_2t_ms", "ort_float_2t_ms"),
            ("int16 ref-kernels", "fixpoint_int16_reference_kernels_ms", "ort_float_ms"),
            ("int16w8 1t", "fixpoint_int16w8_ms", "ort_float_ms"), ("int16w8 2t", "fixpoint_int16w8_2t_ms", "ort_float_2t_ms")]
    cols = [c for c in cols if any(c[1] in r for r in rows)]
    print(f"\nms (x ONNX Runtime float, same threads, same run; medians of {rows[0].get('rounds', 1) if rows else 1} interleaved rounds)")
    print(f"{'model':10} {'ORT 1t':>8} {'ORT 2t':>8} " + " ".join(f"{c[0]:>20}" for c in cols))
    for r in rows:
        cells = [f"{r[c[1]]:9.2f} ({r[c[1]] / r[c[2]]:5.2f}x)" if c[1] in r else "" for c in cols]
        print(f"{r['model']:10} {r['ort_float_ms']:8.2f} {r['ort_float_2t_ms']:8.2f} " + " ".join(f"{c:>20}" for c in cells))
    # The same ratios round by round: the machine's speed drifts between rounds (and some
    # processes run uniformly slower), which the paired ratio of one round's interleaved runs
    # cancels in part; the interval says which differences from a target are results.
    def interval(r, c):
        return r.get(c[1].replace("_ms", "_vs_ort_interval"))
    paired = [c for c in cols if any(interval(r, c) for r in rows)]
    if not paired:
        return
    cover = min(interval(r, c)[3] for r in rows for c in paired if interval(r, c))
    print(f"\nx ONNX Runtime float, paired by round (each round's time over ONNX Runtime's in the same round): "
          f"median [interval for the median, coverage >= {100 * cover:.0f}%]")
    print(f"{'model':10} " + " ".join(f"{c[0]:>20}" for c in paired))
    for r in rows:
        cells = []
        for c in paired:
            iv = interval(r, c)
            cells.append(f"{iv[0]:.2f} [{iv[1]:.2f}, {iv[2]:.2f}]" if iv else "")
        print(f"{r['model']:10} " + " ".join(f"{c:>20}" for c in cells))


# Issue 13's wall-time budgets (seconds): (what, budget).
WALL_BUDGETS = {"compile_ocr_rec_100": ("compile OCR rec, 100 calibration lines", 15),
                "compile_ocr_det_100": ("compile OCR det, 100 calibration pages at 640x640", 60),
                "analyze_ocr_rec": ("analyze OCR rec, 8 calibration lines, 1 input line", 60),
                # the output-aware options (no budget of their own; issue 13's compile budget for
                # reference): range search and adaptive rounding on the same 100 lines
                "compile_ocr_rec_100_searches": ("compile OCR rec, 100 lines, --range-search --adaptive-rounding", None)}


def walltimes(build, work):
    """Wall time of the float-heavy commands: compile (calibration runs the float model over every
    sample) and analyze (2L+2 compiles and runs), on the OCR models at both threads' default."""
    import time
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    sys.path.insert(0, os.path.join(ROOT, "bench", "accuracy"))
    import numpy as np
    import ocr_eval  # noqa: E402  (the rendered lines of scripts/ocr_eval.py)
    from ocr_pages import OcrPages  # noqa: E402
    cli = os.path.join(build, "fixpoint")
    rec, det = (os.path.join(ASSETS, f"ch_PP-OCRv4_{m}_infer.onnx") for m in ("rec", "det"))
    lines = ocr_eval.batch_for(ocr_eval.make_lines(108, 2), 2).astype(np.float32)
    np.save(os.path.join(work, "rec100.npy"), lines[:100])
    np.save(os.path.join(work, "rec8.npy"), lines[100:])
    np.save(os.path.join(work, "rec1.npy"), lines[:1])
    pages = OcrPages()
    np.save(os.path.join(work, "det100.npy"), np.concatenate([pages.sample("calibration", i)[0] for i in range(100)]))
    cmds = {"compile_ocr_rec_100": [cli, "compile", rec, "--calib", f"x={work}/rec100.npy", "--shape", "x=1x3x48x320",
                                    "-o", f"{work}/rec8", "-q"],
            "compile_ocr_det_100": [cli, "compile", det, "--calib", f"x={work}/det100.npy", "--shape",
                                    "x=1x3x640x640", "-o", f"{work}/det8", "-q"],
            "analyze_ocr_rec": [cli, "analyze", rec, "--calib", f"x={work}/rec8.npy", "--input", f"x={work}/rec1.npy",
                                "--shape", "x=1x3x48x320", "-o", f"{work}/an", "-q"],
            "compile_ocr_rec_100_searches": [cli, "compile", rec, "--calib", f"x={work}/rec100.npy", "--shape",
                                             "x=1x3x48x320", "--range-search", "--adaptive-rounding", "-o",
                                             f"{work}/rec8s", "-q"]}
    out = {}
    print(f"\n{'command':64} {'wall s':>8} {'budget s':>9}")
    for key, cmd in cmds.items():
        t0 = time.perf_counter()
        run(cmd)
        out[key] = time.perf_counter() - t0
        what, budget = WALL_BUDGETS[key]
        print(f"{what:64} {out[key]:8.1f} {budget if budget else '-':>9}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per model; each time is their median")
    ap.add_argument("--models", default="tiny_cnn,ocr_rec")
    ap.add_argument("--rows", default=",".join(ROWS), help="which of float,int8,int16,int16w8 to time")
    ap.add_argument("--no-kernels", action="store_true", help="skip the Google Benchmark kernel table")
    ap.add_argument("--walltimes", action="store_true", help="also time compile and analyze of the OCR models")
    ap.add_argument("--json", default=os.path.join(ROOT, "out", "bench", "speed.json"))
    a = ap.parse_args()
    rows_wanted = [r for r in a.rows.split(",") if r]
    bad = [r for r in rows_wanted if r not in ROWS]
    if bad:
        sys.exit(f"speed.py: --rows {','.join(bad)}: not one of {','.join(ROWS)}")
    result = {"limits": peak(a.build), "kernels": [] if a.no_kernels else kernels(a.build)}
    if result["kernels"]:
        print(f"{'layer':28} {'kernel':28} {'us':>9} {'ref us':>9} {'speedup':>8}")
    for r in result["kernels"]:
        print(f"{r['layer']:28} {r['kernel']:28} {r['us']:9.1f} {r['reference_us']:9.1f} {r['speedup']:8.1f}")
    with tempfile.TemporaryDirectory() as work:
        result["models"] = models(a.build, [m for m in a.models.split(",") if m], a.repeat, work, rows_wanted, a.rounds)
    print_models(result["models"])
    print_limits(result["limits"], result["models"])
    if a.walltimes:
        with tempfile.TemporaryDirectory() as work:
            result["walltimes_s"] = walltimes(a.build, work)
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(result, f, indent=1)
    print(f"\nwrote {a.json}")


if __name__ == "__main__":
    main()
