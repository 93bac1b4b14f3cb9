#!/usr/bin/env bash
# The ports stage: the unit suites on Windows x64 (MinGW-w64, run under wine64) and on WebAssembly with and without
# threads (emscripten, run under Node.js). Needs Debian's g++-mingw-w64-x86-64-posix, wine, wine64 and
# emscripten. Each workflow's ctest prints its test time; the stage prints its wall time.
#
# The wine prefix (created once, ~20 s) lives outside the clone, in /var/cache/forkunion-wine (override with
# WINEPREFIX), so a warm run reuses it. Debian's emscripten ships its system libraries prebuilt in a frozen cache
# (/usr/share/emscripten/cache): nothing is built on first use, and EM_CACHE must stay unset.
set -euo pipefail
cd "$(dirname "$0")/.."
export WINEPREFIX=${WINEPREFIX:-/var/cache/forkunion-wine/prefix}
export WINEDEBUG=-all
wineserver=/usr/lib/wine/wineserver

mkdir -p "$(dirname "$WINEPREFIX")"
total=$SECONDS

# Boot the prefix, then keep one wine server up for the whole stage. A server that a test started would linger past
# its last client, and ctest waits for it to close the output it inherited: ~60 s after a ctest run otherwise.
start=$SECONDS
cmake/toolchains/wine_run.sh cmd /c exit
# The boot's own server would exit 60 s after its last client (`wine_run.sh` starts it so): replace it by one
# that stays until the trap below ends it.
"$wineserver" -k 2>/dev/null || true
"$wineserver" -p </dev/null >/dev/null 2>&1 || true
trap '"$wineserver" -k 2>/dev/null || true' EXIT
echo "---- wine prefix ${WINEPREFIX}: ready in $((SECONDS - start)) s"

cmake --workflow --preset cross-mingw64          # Windows x64: MinGW-w64, the suites under wine64
cmake --workflow --preset wasm-emscripten        # WebAssembly with threads: the suites under Node.js
cmake --workflow --preset wasm-emscripten-single # WebAssembly without threads: pools of the caller alone
echo "---- ports: passed in $((SECONDS - total)) s"
