#!/usr/bin/env bash
# The main job on the bundled default model (models/tiny_cnn.onnx): install, build, inspect,
# run in float, compile to int8 and int16, run the fixed-point programs, compare with float layer
# by layer (fixpoint compare), and measure float-vs-fixed accuracy.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
bash scripts/build.sh build
bash scripts/install_python.sh build
FP=build/fixpoint
step() { echo; echo "== $*"; }

step "fixpoint inspect models/tiny_cnn.onnx --shape image=4x3x32x32"
$FP inspect models/tiny_cnn.onnx --shape image=4x3x32x32

step "fixpoint run models/tiny_cnn.onnx --input image=models/tiny_cnn_input.npy --output-dir out/float"
$FP run models/tiny_cnn.onnx --input image=models/tiny_cnn_input.npy --output-dir out/float

for bits in 8 16; do
  step "fixpoint compile models/tiny_cnn.onnx -o out/int$bits --bits $bits --calib image=models/tiny_cnn_input.npy"
  $FP compile models/tiny_cnn.onnx -o out/int$bits --bits $bits --calib image=models/tiny_cnn_input.npy -q
  cat out/int$bits/compile_report.txt
  step "fixpoint run out/int$bits --input image=models/tiny_cnn_input.npy --output-dir out/int$bits/outputs"
  $FP run out/int$bits --input image=models/tiny_cnn_input.npy --output-dir out/int$bits/outputs
done

step "fixpoint compare out/int8 --input image=models/tiny_cnn_input.npy -o out/compare --report out/compare/report.html"
$FP compare out/int8 --input image=models/tiny_cnn_input.npy -o out/compare --report out/compare/report.html

step "float vs fixed point (calibrated on models/tiny_cnn_input.npy, evaluated on 8 other images)"
/usr/bin/python3 scripts/accuracy_report.py --quick --work out/accuracy
