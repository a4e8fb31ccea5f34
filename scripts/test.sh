#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test:
#   1. Release build: unit tests (GoogleTest), ONNX backend conformance, integration tests
#      (real models against ONNX Runtime, batch invariance, CLI error handling).
#   2. ASan+UBSan build: unit tests, conformance and the CLI error tests again.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
start=$(date +%s)

echo "== release build"
bash scripts/build.sh build -DFIXPOINT_WERROR=ON
bash scripts/install_python.sh build
# -j2: the unit tests (one process per test, temporary files named by pid) run beside the
# integration suite on the second core.
(cd build && ctest -j2 --output-on-failure --timeout 1200)

echo "== ASan+UBSan build"
# -O1 -g1: line-level stack traces at a fraction of -O2 -g's compile and link time.
BUILD_TYPE=RelWithDebInfo bash scripts/build.sh build-asan -DFIXPOINT_SANITIZE=ON \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest -j2 --output-on-failure --timeout 2400 -E integration)
FIXPOINT_BUILD="$ROOT/build-asan" /usr/bin/python3 -m pytest -q tests/integration/test_cli_errors.py

echo "== all tests passed in $(( $(date +%s) - start )) s"
