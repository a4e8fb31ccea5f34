#!/usr/bin/python3
"""Trains a small CNN on rendered characters (bench/accuracy/glyphs.py: 36 classes, 0-9 and A-Z)
with Debian's torch and exports it to ONNX: the classifier of issue 15's accuracy benchmarks,
with weights made in the repo. Deterministic (fixed seeds, one thread); nothing is downloaded.

usage: make_glyph_cnn.py OUTDIR [--train N] [--epochs E] [--arch small|resnet18]

Writes OUTDIR/glyph_cnn.onnx (--arch small, the default) or OUTDIR/glyph_resnet18.onnx: input
"image" [batch, 1, 32, 32], output "logits" [batch, 36].
small: Conv 3x3 (24) + BN + Relu, MaxPool; Conv 3x3 (48) + BN + Relu, MaxPool; Conv 3x3 (96) +
BN + Relu; GlobalAveragePool; Linear 96 -> 36.
resnet18: torchvision's ResNet-18 (36 classes) with a one-channel stem: a ResNet-18 with trained
weights, which cannot be downloaded here (issue 14's QDQ checks against ONNX Runtime use it).
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "accuracy"))
from glyphs import CLASSES, Glyphs  # noqa: E402


def net():
    def block(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU()]
    return nn.Sequential(*block(1, 24), nn.MaxPool2d(2), *block(24, 48), nn.MaxPool2d(2), *block(48, 96),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(96, len(CLASSES)))


def resnet18():
    import torchvision
    m = torchvision.models.resnet18(num_classes=len(CLASSES))
    m.conv1 = nn.Conv2d(1, 64, 7, 2, 3, bias=False)
    return m


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    out = args[0]
    n = int(args[args.index("--train") + 1]) if "--train" in args else 30000
    epochs = int(args[args.index("--epochs") + 1]) if "--epochs" in args else 6
    arch = args[args.index("--arch") + 1] if "--arch" in args else "small"
    if arch not in ("small", "resnet18"):
        sys.exit(f"make_glyph_cnn: --arch must be small or resnet18, got {arch!r}")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)  # deterministic reductions
    data = Glyphs().split("train", n)
    x = torch.from_numpy(np.concatenate([d[0] for d in data]))
    y = torch.tensor([d[1] for d in data])
    model = net() if arch == "small" else resnet18()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=4e-3, total_steps=epochs * (n // 128))
    g = torch.Generator().manual_seed(1)
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=g)
        total = 0.0
        for i in range(n // 128):
            idx = perm[i * 128:(i + 1) * 128]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
        print(f"epoch {epoch}: loss {total / (n // 128):.4f}", file=sys.stderr)
    model.eval()
    path = os.path.join(out, "glyph_cnn.onnx" if arch == "small" else "glyph_resnet18.onnx")
    torch.onnx.export(model, torch.zeros(1, 1, 32, 32), path, input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=13)
    print(f"make_glyph_cnn: wrote {path}")


if __name__ == "__main__":
    main()
