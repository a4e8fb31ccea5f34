#!/usr/bin/env bash
# Makes `import fixpoint` work for /usr/bin/python3 with no environment variables: a .pth file in
# its site-packages names BUILD/python (the module scripts/build.sh built). usage: install_python.sh [BUILD]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
ls "$BUILD"/python/fixpoint/_core*.so >/dev/null 2>&1 || { echo "install_python: no module in $BUILD/python (build first)" >&2; exit 1; }
SITE="$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO mkdir -p "$SITE"
echo "$BUILD/python" | $SUDO tee "$SITE/fixpoint.pth" > /dev/null
(cd / && /usr/bin/python3 -c "import fixpoint; print('install_python: import fixpoint ->', fixpoint.__file__)")
