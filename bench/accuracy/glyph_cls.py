#!/usr/bin/python3
"""Classifier benchmark: top-1 accuracy of the glyph CNN trained in the repo
(scripts/make_glyph_cnn.py, 36 classes of rendered characters) in float and in fixed-point
programs, on one split of glyphs.py, through the Python module (fixpoint.Top1). 95% bootstrap
intervals and paired differences to float.

    /usr/bin/python3 bench/accuracy/glyph_cls.py --split test --lines 5000 --calib 32
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from glyphs import Glyphs  # noqa: E402

import fixpoint  # noqa: E402


class Top1Percent(fixpoint.Top1):
    """fixpoint.Top1 in percent."""

    def __call__(self, outputs, target):
        return 100.0 * super().__call__(outputs, target)


def main(argv=None):
    ap = harness.arguments(__doc__.split("\n\n")[0], lines=5000, calib="32", rows="float,int8,int16")
    ap.add_argument("--work", default="/tmp/fixpoint_bench_glyphs", help="where the trained model is kept")
    a = ap.parse_args(argv)
    rows, calib_sizes = harness.check_arguments(ap, a)
    log = harness.logger(a.quiet, "glyph_cls")
    model = harness.trained_model(a.work, "glyph_cnn.onnx", "make_glyph_cnn.py", log)
    glyphs = Glyphs()
    data = glyphs.split(a.split, a.lines)

    def calibration(n, start):
        return [{"image": x} for x, _ in glyphs.split("calibration", n, start)]

    return harness.compare_rows(model, rows, calib_sizes, calibration, [({"image": x}, label) for x, label in data],
                                Top1Percent("logits"), a, "glyph CNN (trained here)", "top-1 accuracy (%)", log)


if __name__ == "__main__":
    harness.run_main(main, "glyph_cls")
