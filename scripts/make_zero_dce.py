#!/usr/bin/python3
"""Builds a Zero-DCE low-light enhancement network (Guo et al., CVPR 2020), trains it here
without reference images on darkened scikit-image sample photos, and exports it to ONNX with
PyTorch (the curve step written with torch.pow(x, 2), as the published code does). Nothing is
downloaded: the photos ship with Debian's python3-skimage. Deterministic (fixed seeds, one thread).

usage: make_zero_dce.py OUTDIR [--steps N]

Writes:
  zero_dce.onnx        input "image" [batch, 3, height, width] in [0, 1], output "enhanced"
  zero_dce_calib.npy   16 darkened crops (128x128) of the training photos, for calibration
  zero_dce_eval.npy    4 darkened 192x192 crops of photos never seen in training (rocket, coffee,
                       camera, retina), for the float-vs-fixed PSNR measurement

Network (DCE-Net): seven 3x3 convs (32 channels) with Relu and Concat skips (x3+x4, x2+x5,
x1+x6), Tanh on 24 curve-parameter maps, sliced into eight 3-channel maps r_i; then eight
steps x = x + r_i * (x^2 - x). Losses: spatial consistency, exposure (E = 0.6), colour
constancy and illumination smoothness, weighted 1, 10, 5, 200 as in the authors' code.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from skimage import data


class DCENet(nn.Module):
    def __init__(self, nf=32):
        super().__init__()
        self.e1 = nn.Conv2d(3, nf, 3, 1, 1)
        self.e2 = nn.Conv2d(nf, nf, 3, 1, 1)
        self.e3 = nn.Conv2d(nf, nf, 3, 1, 1)
        self.e4 = nn.Conv2d(nf, nf, 3, 1, 1)
        self.e5 = nn.Conv2d(2 * nf, nf, 3, 1, 1)
        self.e6 = nn.Conv2d(2 * nf, nf, 3, 1, 1)
        self.e7 = nn.Conv2d(2 * nf, 24, 3, 1, 1)

    def curves(self, x):
        x1 = F.relu(self.e1(x))
        x2 = F.relu(self.e2(x1))
        x3 = F.relu(self.e3(x2))
        x4 = F.relu(self.e4(x3))
        x5 = F.relu(self.e5(torch.cat([x3, x4], 1)))
        x6 = F.relu(self.e6(torch.cat([x2, x5], 1)))
        return torch.tanh(self.e7(torch.cat([x1, x6], 1)))

    def forward(self, x):
        a = self.curves(x)
        for i in range(8):
            r = a[:, 3 * i:3 * i + 3]  # exported as Slice
            x = x + r * (torch.pow(x, 2) - x)
        return x


def photos(names):
    out = []
    for n in names:
        im = getattr(data, n)()
        if im.ndim == 2:
            im = np.stack([im] * 3, -1)
        out.append(im[..., :3].astype(np.float32) / 255.0)
    return out


def darken(img, rng):
    # Low light: a gamma curve and an exposure cut, with a little sensor noise.
    g = rng.uniform(1.8, 3.0)
    k = rng.uniform(0.35, 0.7)
    x = k * img ** g + rng.normal(0, 0.005, img.shape).astype(np.float32)
    return (np.round(np.clip(x, 0, 1) * 255) / 255).astype(np.float32)  # stored as an 8-bit photo


def crops(imgs, n, size, rng):
    out = []
    for i in range(n):
        im = imgs[i % len(imgs)]
        y = rng.integers(0, im.shape[0] - size + 1)
        x = rng.integers(0, im.shape[1] - size + 1)
        out.append(darken(im[y:y + size, x:x + size], rng).transpose(2, 0, 1))
    return np.stack(out)


def losses(x, y, a):
    # Spatial consistency: local differences of 4x4-pooled intensity are kept.
    k = torch.tensor([[[[0, 0, 0], [-1, 1, 0], [0, 0, 0]]], [[[0, 0, 0], [0, 1, -1], [0, 0, 0]]],
                      [[[0, -1, 0], [0, 1, 0], [0, 0, 0]]], [[[0, 0, 0], [0, 1, 0], [0, -1, 0]]]], dtype=torch.float32)
    px = F.avg_pool2d(x.mean(1, keepdim=True), 4)
    py = F.avg_pool2d(y.mean(1, keepdim=True), 4)
    spa = ((F.conv2d(px, k, padding=1) - F.conv2d(py, k, padding=1)) ** 2).sum(1).mean()
    exp = ((F.avg_pool2d(y.mean(1, keepdim=True), 16) - 0.6) ** 2).mean()
    m = y.mean((2, 3))
    col = ((m[:, 0] - m[:, 1]) ** 2 + (m[:, 0] - m[:, 2]) ** 2 + (m[:, 1] - m[:, 2]) ** 2).mean()
    tv = ((a[:, :, 1:, :] - a[:, :, :-1, :]) ** 2).mean() + ((a[:, :, :, 1:] - a[:, :, :, :-1]) ** 2).mean()
    return spa + 10 * exp + 5 * col + 200 * tv


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    out = args[0]
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 300
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)  # deterministic reductions
    rng = np.random.default_rng(0)
    train = photos(["astronaut", "chelsea", "immunohistochemistry", "hubble_deep_field"])
    net = DCENet()
    for p in net.parameters():  # the authors' init: N(0, 0.02) weights
        if p.dim() == 4:
            nn.init.normal_(p, 0.0, 0.02)
        else:
            nn.init.zeros_(p)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-4)
    for step in range(steps):
        x = torch.from_numpy(crops(train, 8, 64, rng))
        a = net.curves(x)
        y = x
        for i in range(8):
            y = y + a[:, 3 * i:3 * i + 3] * (torch.pow(y, 2) - y)
        loss = losses(x, y, a)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == steps - 1:
            print(f"step {step}: loss {loss.item():.5f}", file=sys.stderr)
    net.eval()
    calib = crops(train, 16, 128, np.random.default_rng(1))
    evals = np.concatenate([crops(photos([n]), 1, 192, np.random.default_rng(2 + i))
                            for i, n in enumerate(["rocket", "coffee", "camera", "retina"])])
    np.save(os.path.join(out, "zero_dce_calib.npy"), calib)
    np.save(os.path.join(out, "zero_dce_eval.npy"), evals)
    path = os.path.join(out, "zero_dce.onnx")
    torch.onnx.export(net, torch.from_numpy(evals[:1]), path, opset_version=13, input_names=["image"],
                      output_names=["enhanced"],
                      dynamic_axes={"image": {0: "batch", 2: "height", 3: "width"}, "enhanced": {0: "batch", 2: "height", 3: "width"}})
    with torch.no_grad():
        y = net(torch.from_numpy(evals)).numpy()
    print(f"wrote {path}: eval mean brightness {evals.mean():.3f} -> {y.mean():.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
