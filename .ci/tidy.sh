#!/usr/bin/env bash
# Naming rules (.clang-tidy): clang-tidy over one translation unit per public header, the same units the header
# check compiles. Any readability-identifier-naming finding fails the stage; the other checks only print.
set -euo pipefail
cd "$(dirname "$0")/.."
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
[[ -n $tidy ]] || { echo "tidy.sh: clang-tidy not found (apt-get install clang-tidy)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
headers=$(cd include && find . -name '*.hpp' | sed 's#^\./##' | sort)
units=()
for header in $headers; do
    unit="$work/$(echo "$header" | tr '/.' '__').cpp"
    printf '#include <%s>\n' "$header" >"$unit"
    units+=("$unit")
done
status=0
printf '%s\n' "${units[@]}" | xargs -P "$(nproc)" -n 4 "$tidy" --quiet --config-file=.clang-tidy --warnings-as-errors='readability-identifier-naming' \
    --extra-arg=-std=c++20 --extra-arg=-Iinclude >"$work/report.txt" 2>&1 || status=$?
grep -E "warning:|error:" "$work/report.txt" | sort -u || true
echo "tidy.sh: ${#units[@]} headers checked"
exit "$status"
