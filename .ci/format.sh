#!/usr/bin/env bash
# The format gate: every tracked C and C++ source (the recorded sysfs fixtures aside) is as clang-format 14 writes it
# with the repository's .clang-format. Comments are wrapped by hand (ReflowComments: false). To fix a failure:
#   git ls-files '*.c' '*.h' '*.cpp' '*.hpp' | grep -v '^test/fixtures/' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z $format ]]; then
    echo "format gate: clang-format not found (apt-get install clang-format)" >&2
    exit 1
fi
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' | grep -v '^test/fixtures/')
"$format" --dry-run -Werror "${files[@]}"
echo "format gate: ${#files[@]} files as $("$format" --version | head -1) writes them"
