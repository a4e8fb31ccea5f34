"""What every accuracy benchmark shares: the rows (float and compile options), programs compiled on
the calibration split, evaluation through fixpoint.evaluate (95% bootstrap intervals, paired
differences to float), the JSON result and the markdown table."""
import argparse
import json
import os
import subprocess
import sys
import time

import fixpoint

# Row name -> compile options (None: the float model itself, on the fast float path). Bias
# correction is on in every calibrated row unless the row turns it off.
ROWS = {
    "float": None,
    "int8": dict(bits=8),
    "int16": dict(bits=16),
    "int16-headroom1": dict(bits=16, headroom16=1.0),
    "int16w8": dict(bits=16, params8=["*"]),  # 16-bit activations, 8-bit weights
    "auto-mixed": dict(bits=8, auto_mixed=1.25),
    "range-search": dict(bits=8, range_search=True),
    "adaptive-rounding": dict(bits=8, adaptive_rounding=True),  # the default since session 37
    "nearest-rounding": dict(bits=8, adaptive_rounding=False),  # the default before
    "auto-mixed-adaptive-rounding": dict(bits=8, auto_mixed=1.25, adaptive_rounding=True),
    "range-search-adaptive-rounding": dict(bits=8, range_search=True, adaptive_rounding=True),
    "range-search-no-bias-correction": dict(bits=8, range_search=True, bias_correction=False),
    "channel-equalization": dict(bits=8, channel_equalization=True),  # docs/arithmetic.md (7d)
    "no-channel-equalization": dict(bits=8, channel_equalization=False),
    "symmetric": dict(bits=8, symmetric=True),
    "per-tensor-weights": dict(bits=8, per_tensor_weights=True),  # one weight scale per layer (TIDL's way)
    "narrow": dict(bits=8, narrow_intermediates=True),
    "narrow-stream": dict(bits=8, narrow_stream=True),
    "int16-narrow-stream": dict(bits=16, narrow_stream=True),
    "narrow-softmax": dict(bits=8, narrow_softmax=True),
    "narrow-symmetric": dict(bits=8, narrow_intermediates=True, symmetric=True),
    "minmax": dict(bits=8, calib_method="minmax"),
    "mse": dict(bits=8, calib_method="mse"),
    "no-bias-correction": dict(bits=8, bias_correction=False),
    "pow2": dict(bits=8, scale_mode="pow2"),
    # --calib-percentile (default 99.99): docs/accuracy.md's dev comparison
    "p99.9": dict(bits=8, calib_percentile=99.9),
    "p99.95": dict(bits=8, calib_percentile=99.95),
    "p99.999": dict(bits=8, calib_percentile=99.999),
}


def arguments(description, lines, calib, rows="float,int8,int16,auto-mixed"):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--split", default="dev", choices=["dev", "test"])
    ap.add_argument("--lines", type=int, default=lines, help="evaluation samples (the split's first N)")
    ap.add_argument("--calib", default=calib, help="calibration sizes (samples of the calibration split)")
    ap.add_argument("--calib-sets", type=int, default=1, help="disjoint calibration sets per size")
    ap.add_argument("--rows", default=rows, help=f"comma-separated, float first; any of {', '.join(ROWS)}")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--json", default="", help="write the result here")
    ap.add_argument("--markdown", default="", help="write the table here")
    ap.add_argument("--quiet", action="store_true")
    return ap


def check_arguments(ap, a):
    rows = [r for r in a.rows.split(",") if r]
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        ap.error(f"unknown row {', '.join(unknown)}; rows are {', '.join(ROWS)}")
    if not rows or rows[0] != "float":
        ap.error("--rows must start with float (the reference every row is compared with)")
    if a.lines < 1 or a.calib_sets < 1:
        ap.error("--lines and --calib-sets must be positive")
    try:
        sizes = [int(v) for v in a.calib.split(",") if v]
    except ValueError:
        ap.error(f"--calib must be comma-separated integers, got {a.calib!r}")
    if not sizes or min(sizes) < 1:
        ap.error("--calib needs at least one positive size")
    return rows, sizes


def logger(quiet, name):
    def log(msg):
        if not quiet:
            print(f"{name}: {msg}", file=sys.stderr, flush=True)
    return log


def build_sessions(model, rows, calib_sizes, calib_sets, calibration, log):
    """{label: session} and {label: how it was made}; calibration(n, start) -> [{input: array}].
    A program row appears once per calibration size and set: 'int8 [16]', 'int8 [16 #2]'."""
    sessions, made = {}, {}
    for row in rows:
        opts = ROWS[row]
        if opts is None:
            sessions[row] = fixpoint.InferenceSession(model)
            made[row] = {"options": None}
            continue
        for n in calib_sizes:
            for k in range(calib_sets):
                label = f"{row} [{n}{f' #{k + 1}' if calib_sets > 1 else ''}]"
                t = time.time()
                sessions[label] = fixpoint.compile(model, calibration(n, k * n), **opts)
                made[label] = {"options": opts, "calib_samples": n, "calib_start": k * n,
                               "compile_s": round(time.time() - t, 1)}
                log(f"compiled {label} in {made[label]['compile_s']} s")
    return sessions, made


def evaluate(sessions, made, samples, metric, a, title, groups=None):
    """Runs fixpoint.evaluate; returns the result dict (per row: mean, ci, diff to float, how it was
    made and, with groups [one label per sample], the metric per group)."""
    r = fixpoint.evaluate(sessions, samples, metric, batch=a.batch, progress=not a.quiet, show=False)
    result = {"title": title, "split": a.split, "samples": len(samples), "isa": fixpoint.kernel_isa(), "rows": {}}
    for label in sessions:
        row = {"mean": r.mean[label], "ci": list(r.ci[label]), **made[label],
               "diff": list(r.diff[label]) if label in r.diff else None,
               # per sample (numerator, denominator): any two rows can be compared paired later
               "scores": [[float(v * w), float(w)] for v, w in zip(r.scores[label], r.weights[label])]}
        if groups is not None:
            row["by_group"] = group_means(r.scores[label], r.weights[label], groups)
        result["rows"][label] = row
    return result


def compare_rows(model, rows, calib_sizes, calibration, samples, metric, a, title, unit, log, groups=None):
    """The usual benchmark: float and every program row of `model` over `samples`, evaluated,
    printed and written (--json, --markdown); returns the result."""
    sessions, made = build_sessions(model, rows, calib_sizes, a.calib_sets, calibration, log)
    t = time.time()
    result = evaluate(sessions, made, samples, metric, a, title, groups)
    log(f"evaluated {len(sessions)} sessions in {time.time() - t:.1f} s")
    write(result, markdown(result, unit), a)
    return result


def trained_model(work, filename, script, log):
    """work/filename, made once by scripts/<script> WORK (a model trained here) and reused."""
    path = os.path.join(work, filename)
    if not os.path.exists(path):
        log(f"training {filename} into {work} (scripts/{script})")
        root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
        subprocess.run([sys.executable, os.path.join(root, "scripts", script), work], check=True, capture_output=True)
    return path


def run_main(main, name):
    """Runs a benchmark's main; a fixpoint.Error ends it with one line naming the benchmark."""
    try:
        main()
    except fixpoint.Error as e:
        raise SystemExit(f"{name}: {e}")


def group_means(scores, weights, groups):
    """The metric per group from per-sample ratios and their weights."""
    out = {}
    for g in sorted(set(groups)):
        idx = [i for i, k in enumerate(groups) if k == g]
        out[g] = float(sum(scores[i] * weights[i] for i in idx) / sum(weights[i] for i in idx))
    return out


def paired(result, a, b):
    """(mean, lo, hi) of row b minus row a with the paired 95% bootstrap interval, from a saved result."""
    from fixpoint.evaluation import EvalResult
    r = EvalResult({a: [tuple(v) for v in result["rows"][a]["scores"]],
                    b: [tuple(v) for v in result["rows"][b]["scores"]]})
    return r.diff[b]


def markdown(result, unit, reference="float"):
    """The result as a markdown table; `reference` names the row the differences are to."""
    r = result
    head = (f"{r['title']}, {r['split']} split, {r['samples']} samples: {unit}, 95% bootstrap interval; difference "
            f"to {reference}, paired interval (* = excludes 0)\n\n"
            f"| program [calibration samples] | value | 95% CI | vs {reference} | 95% CI |\n|---|---|---|---|---|\n")
    rows = []
    for label, v in r["rows"].items():
        d = v.get("diff")
        diff = (f"{d[0]:+.2f} | [{d[1]:+.2f}, {d[2]:+.2f}]{'' if d[1] <= 0 <= d[2] else ' *'}" if d else " | ")
        rows.append(f"| {label} | {v['mean']:.2f} | [{v['ci'][0]:.2f}, {v['ci'][1]:.2f}] | {diff} |")
    return head + "\n".join(rows) + "\n"


def write(result, table, a):
    print(table)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table)
