#!/usr/bin/python3
"""Compiles and runs the same programs with two fixpoint builds and compares every output byte for
byte (values and integer codes, `run --raw`): what a refactoring that must not change a bit is
checked with (docs/architecture.md).

usage: compare_builds.py OLD_BUILD_DIR NEW_BUILD_DIR [--work DIR] [--quick]

Programs (each at 8 and 16 bits unless noted): the bundled tiny_cnn, ResNet-18 (He init), the
seed-001 QAT experiment with its 404-point sweep (pow2, --qat), the TopK head (CPU fallback),
the planted-fault net of tests/integration/test_compare.py, Zero-DCE (trained here, ~1 min) and
the PaddleOCR v4 det/rec/cls models. --quick leaves out ResNet-18, Zero-DCE and OCR det.
Prints one line per program and a last line 'N identical, M different'; exits 1 on a difference.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OCR = os.path.join(ROOT, "scripts", "oracle", "node_modules", "@gutenye", "ocr-models", "assets")
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))


def sh(*args):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, args))}\n{p.stderr}")
    return p


def programs(work, quick):
    """(name, model, input name, input file, compile args) for every program to compare."""
    sh(sys.executable, os.path.join(ROOT, "scripts", "make_models.py"), work)
    sh(sys.executable, os.path.join(ROOT, "scripts", "make_ocr_inputs.py"), work)
    m = lambda f: os.path.join(work, f)  # noqa: E731
    xs = np.concatenate([np.linspace(-0.5, 5.0, 397), [0.0, 1 / 512, 3 / 512, 1.0, 255.5 / 256, 1.5, 4.0]])
    np.save(m("sweep.npy"), np.broadcast_to(xs.astype(np.float32)[:, None, None, None], (len(xs), 1, 5, 5)).copy())
    from test_compare import planted_fault_model, planted_samples  # the test's own builders
    planted_fault_model(m("planted.onnx"))

    class P:  # planted_samples writes into a path-like folder
        def __truediv__(self, f):
            return m(f)
    planted_samples(P())
    out = []
    for bits in ("8", "16"):
        b = ["--bits", bits]
        out.append((f"tiny_cnn/{bits}", m("tiny_cnn.onnx"), "image", m("tiny_cnn_input.npy"),
                    b + ["--calib", f"image={m('tiny_cnn_input.npy')}"]))
        out.append((f"topk_head/{bits}", m("topk_head.onnx"), "image", m("topk_head_input.npy"),
                    b + ["--calib", f"image={m('topk_head_calib.npy')}"]))
        out.append((f"planted_fault/{bits}", m("planted.onnx"), "x", m("b.npy"), b + ["--calib", f"x={m('calib.npy')}"]))
        for k, f in (("rec", "ch_PP-OCRv4_rec_infer.onnx"), ("cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx"),
                     ("det", "ch_PP-OCRv4_det_infer.onnx")):
            if quick and k == "det":
                continue
            x = m(f"ocr_{k}_input.npy")
            shape = "x=" + "x".join(map(str, np.load(x).shape))
            out.append((f"ocr_{k}/{bits}", os.path.join(OCR, f), "x", x, b + ["--calib", f"x={x}", "--shape", shape]))
        if not quick:
            out.append((f"resnet18/{bits}", m("resnet18.onnx"), "input", m("resnet18_input.npy"),
                        b + ["--calib", f"input={m('resnet18_input.npy')}"]))
    out.append(("seed_qat/sweep", m("seed_qat.onnx"), "x", m("sweep.npy"), ["--qat", "--scale-mode", "pow2"]))
    if not quick:
        sh(sys.executable, os.path.join(ROOT, "scripts", "make_zero_dce.py"), work)
        for bits in ("8", "16"):
            out.append((f"zero_dce/{bits}", m("zero_dce.onnx"), "image", m("zero_dce_eval.npy"),
                        ["--bits", bits, "--calib", f"image={m('zero_dce_calib.npy')}"]))
    return out


def outputs(d):
    return {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d)) if f.endswith(".npy")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--work")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="fixpoint_compare_builds_")
    os.makedirs(work, exist_ok=True)
    same = diff = 0
    for name, model, inp, x, args in programs(work, a.quick):
        got = {}
        for tag, build in (("old", a.old), ("new", a.new)):
            d = os.path.join(work, name.replace("/", "_") + "_" + tag)
            cli = os.path.join(build, "fixpoint")
            sh(cli, "compile", model, "-o", d, "-q", *args)
            sh(cli, "run", d, "--input", f"{inp}={x}", "-o", os.path.join(d, "out"), "-q", "--raw")
            got[tag] = outputs(os.path.join(d, "out"))
        ok = got["old"] == got["new"]
        same += ok
        diff += not ok
        bad = [f for f in got["old"] if got["old"][f] != got["new"].get(f)]
        print(f"{name:22s} {len(got['old'])} output file(s) {'identical' if ok else 'DIFFER: ' + ', '.join(bad)}")
    print(f"{same} identical, {diff} different")
    sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
