#!/usr/bin/python3
"""Low-light enhancement benchmark: the Zero-DCE net trained here (scripts/make_zero_dce.py) on
darkened crops of scikit-image's sample photos, in float and in fixed-point programs, through the
Python module. Two questions, each with 95% bootstrap intervals over images:

  fidelity: how close a program's output is to the float model's (PSNR and SSIM against the float
            output, peak 1.0; issue 15's target is int8 >= 50 dB);
  task:     how well each enhances (PSNR and SSIM against the bright photo the crop was darkened
            from), with the paired difference to float.

Splits (disjoint photos): calibration = crops of the four training photos, dev = rocket, retina,
brick, coins, moon, cell; test = coffee, stereo_motorcycle, camera, clock, grass, gravel, page.
Each crop is 128x128 at a random place, darkened by a random gamma (1.8-3.0), exposure (0.35-0.7)
and sensor noise (make_zero_dce.darken), seeded by (split, index).

    /usr/bin/python3 bench/accuracy/zero_dce.py --split test --lines 120 --calib 16
"""
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import harness  # noqa: E402
from make_zero_dce import darken, photos  # noqa: E402  (the training's own darkening, one copy)
from ocr_lines import SPLIT_SEEDS  # noqa: E402


PHOTOS = {"calibration": ["astronaut", "chelsea", "immunohistochemistry", "hubble_deep_field"],
          "dev": ["rocket", "retina", "brick", "coins", "moon", "cell"],
          "test": ["coffee", "stereo_motorcycle", "camera", "clock", "grass", "gravel", "page"]}
SIZE = 128


class Crops:
    """crops.sample(split, i) -> (dark [1, 3, 128, 128], bright [3, 128, 128]) float32 in [0, 1]."""

    def __init__(self):
        self.photos = {}

    def photo(self, name):
        if name not in self.photos:
            if name == "stereo_motorcycle":
                from skimage import data
                self.photos[name] = data.stereo_motorcycle()[0].astype(np.float32) / 255.0
            else:
                (self.photos[name],) = photos([name])
        return self.photos[name]

    def sample(self, split, i):
        rng = np.random.default_rng([SPLIT_SEEDS[split], 11, i])  # 11: Zero-DCE crops
        names = PHOTOS[split]
        im = self.photo(names[int(rng.integers(len(names)))])
        y = int(rng.integers(0, im.shape[0] - SIZE + 1))
        x = int(rng.integers(0, im.shape[1] - SIZE + 1))
        bright = np.ascontiguousarray(im[y:y + SIZE, x:x + SIZE].transpose(2, 0, 1))
        dark = np.ascontiguousarray(darken(im[y:y + SIZE, x:x + SIZE], rng).transpose(2, 0, 1)[None])
        return dark, bright

    def split(self, split, n, start=0):
        return [self.sample(split, i) for i in range(start, start + n)]


def psnr(ref, got):
    mse = float(np.mean((np.asarray(ref, np.float64) - np.asarray(got, np.float64)) ** 2))
    return 10 * np.log10(1.0 / max(mse, 1e-20))


def ssim(ref, got):
    from skimage.metrics import structural_similarity
    return float(structural_similarity(np.asarray(ref, np.float64), np.asarray(got, np.float64), channel_axis=0,
                                       data_range=1.0))


class AgainstTarget:
    """Metric: PSNR (dB) or SSIM of the output 'enhanced' against the sample's target image.
    Picklable."""

    def __init__(self, kind):
        self.kind = kind

    def __call__(self, outputs, target):
        got = outputs["enhanced"][0]
        return psnr(target, got) if self.kind == "psnr" else 100.0 * ssim(target, got)


def main(argv=None):
    ap = harness.arguments(__doc__.split("\n\n")[0], lines=120, calib="16", rows="float,int8,int16,auto-mixed")
    ap.add_argument("--work", default="/tmp/fixpoint_bench_zero_dce", help="where the trained model is kept")
    a = ap.parse_args(argv)
    rows, calib_sizes = harness.check_arguments(ap, a)
    log = harness.logger(a.quiet, "zero_dce")
    model = harness.trained_model(a.work, "zero_dce.onnx", "make_zero_dce.py", log)
    crops = Crops()
    data = crops.split(a.split, a.lines)

    def calibration(n, start):
        return [{"image": x} for x, _ in crops.split("calibration", n, start)]

    sessions, made = harness.build_sessions(model, rows, calib_sizes, a.calib_sets, calibration, log)
    t = time.time()
    floats = [sessions["float"].run(None, {"image": x})[0] for x, _ in data]
    programs = {k: v for k, v in sessions.items() if k != "float"}
    results = {}
    for kind in ("psnr", "ssim"):
        results[f"fidelity_{kind}"] = harness.evaluate(
            programs, {k: made[k] for k in programs}, [({"image": x}, f[0]) for (x, _), f in zip(data, floats)],
            AgainstTarget(kind), a, f"Zero-DCE, {kind.upper()} against the float output")
        results[f"task_{kind}"] = harness.evaluate(
            sessions, made, [({"image": x}, bright) for x, bright in data], AgainstTarget(kind), a,
            f"Zero-DCE, {kind.upper()} against the bright photo")
    log(f"evaluated in {time.time() - t:.1f} s")
    tables = []
    for key, unit in (("fidelity_psnr", "PSNR (dB) vs float"), ("fidelity_ssim", "SSIM x100 vs float"),
                      ("task_psnr", "PSNR (dB) vs the bright photo"), ("task_ssim", "SSIM x100 vs the bright photo")):
        # the fidelity results have no float row: the first program is the reference column
        tables.append(harness.markdown(results[key], unit, next(iter(programs)) if key.startswith("fidelity") else "float"))
    harness.write({"split": a.split, "samples": a.lines, **results}, "\n".join(tables), a)
    return results


if __name__ == "__main__":
    harness.run_main(main, "zero_dce")
