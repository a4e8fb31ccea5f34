#!/usr/bin/python3
"""Classifier benchmark: top-1 accuracy of the glyph CNN trained in the repo
(scripts/make_glyph_cnn.py, 36 classes of rendered characters) in float and in fixed-point
programs, on one split of glyphs.py, through the Python module (fixpoint.Top1). 95% bootstrap
intervals and paired differences to float.

    /usr/bin/python3 bench/accuracy/glyph_cls.py --split test --lines 5000 --calib 32
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from glyphs import Glyphs  # noqa: E402

import fixpoint  # noqa: E402


class Top1Percent(fixpoint.Top1):
    """fixpoint.Top1 in percent."""

    def __call__(self, outputs, target):
        return 100.0 * super().__call__(outputs, target)


def model_path(work, log):
    """The glyph CNN, trained once into `work` (a few minutes) and reused."""
    path = os.path.join(work, "glyph_cnn.onnx")
    if not os.path.exists(path):
        log(f"training the glyph CNN into {work} (scripts/make_glyph_cnn.py)")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_glyph_cnn.py"), work], check=True,
                       capture_output=True)
    return path


def main(argv=None):
    ap = harness.arguments(__doc__.split("\n\n")[0], lines=5000, calib="32", rows="float,int8,int16")
    ap.add_argument("--work", default="/tmp/fixpoint_bench_glyphs", help="where the trained model is kept")
    a = ap.parse_args(argv)
    rows, calib_sizes = harness.check_arguments(ap, a)
    log = harness.logger(a.quiet, "glyph_cls")
    model = model_path(a.work, log)
    glyphs = Glyphs()
    data = glyphs.split(a.split, a.lines)

    def calibration(n, start):
        return [{"image": x} for x, _ in glyphs.split("calibration", n, start)]

    sessions, made = harness.build_sessions(model, rows, calib_sizes, a.calib_sets, calibration, log)
    t = time.time()
    result = harness.evaluate(sessions, made, [({"image": x}, label) for x, label in data], Top1Percent("logits"), a,
                              "glyph CNN (trained here)")
    log(f"evaluated {len(sessions)} sessions in {time.time() - t:.1f} s")
    harness.write(result, harness.markdown(result, "top-1 accuracy (%)"), a)
    return result


if __name__ == "__main__":
    try:
        main()
    except fixpoint.Error as e:
        raise SystemExit(f"glyph_cls: {e}")
