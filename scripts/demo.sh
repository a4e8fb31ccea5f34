#!/usr/bin/env bash
# The main job on the bundled default model: install, build, inspect, run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
bash scripts/build.sh build
echo
echo "== fixpoint inspect models/tiny_cnn.onnx --shape image=4x3x32x32"
build/fixpoint inspect models/tiny_cnn.onnx --shape image=4x3x32x32
echo
echo "== fixpoint run models/tiny_cnn.onnx --input image=models/tiny_cnn_input.npy --output-dir out"
build/fixpoint run models/tiny_cnn.onnx --input image=models/tiny_cnn_input.npy --output-dir out
