#!/usr/bin/env bash
# The ports stage: the unit suites on Windows x64 (MinGW-w64, run under wine64) and on WebAssembly (emscripten,
# run under Node.js, with and without threads). Needs Debian's g++-mingw-w64-x86-64-posix, wine, wine64 and
# emscripten. Each workflow prints its wall time, and the stage its total.
#
# Caches live outside the clone, so a warm run reuses them: the wine prefix (created once, ~20 s) in
# /var/cache/forkunion-wine, and emscripten's system libraries (built on first use, minutes) in
# /var/cache/forkunion-emscripten. Override with WINEPREFIX and EM_CACHE.
set -euo pipefail
cd "$(dirname "$0")/.."
export WINEPREFIX=${WINEPREFIX:-/var/cache/forkunion-wine/prefix}
export EM_CACHE=${EM_CACHE:-/var/cache/forkunion-emscripten}
mkdir -p "$(dirname "$WINEPREFIX")" "$EM_CACHE"
total=$SECONDS

# Test discovery runs each test program once at build time under a 60 s limit: boot the prefix before that.
start=$SECONDS
cmake/toolchains/wine_run.sh cmd /c exit
echo "---- wine prefix ${WINEPREFIX}: ready in $((SECONDS - start)) s"

for preset in cross-mingw64 wasm-emscripten wasm-emscripten-single; do
    start=$SECONDS
    cmake --workflow --preset "$preset"
    echo "---- ${preset}: passed in $((SECONDS - start)) s"
done
# The persistent wine server would outlive the stage by a minute: end it now.
WINEDEBUG=-all /usr/lib/wine/wineserver -k 2>/dev/null || true
echo "---- ports: passed in $((SECONDS - total)) s"
