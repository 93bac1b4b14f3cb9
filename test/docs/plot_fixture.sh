#!/usr/bin/env bash
# bench/plot.sh on test/docs/fixtures/chart.csv: the SVG it writes must parse as XML with an <svg> root and name
# every bar; a malformed CSV must be refused with status 1 and no SVG; --help must print the usage and exit 0.
# Exit 77 (skipped, with the reason) when neither gnuplot nor python3-matplotlib is installed.
#   bash plot_fixture.sh SOURCE_DIR WORK_DIR
set -euo pipefail
source_dir=$1 work=$2
plot=$source_dir/bench/plot.sh
rm -rf "$work"
mkdir -p "$work"

bash "$plot" --help >"$work/help.txt"
grep -q 'bash bench/plot.sh FILE.csv' "$work/help.txt" || { echo "plot.sh --help printed no usage" >&2; exit 1; }

if ! reason=$(bash "$plot" --check 2>&1); then
    echo "skipped: $reason"
    exit 77
fi

# A malformed CSV: refused, nothing drawn.
printf 'label,median,min,max\nreduce,fast,1,2\n' >"$work/bad.csv"
if bash "$plot" "$work/bad.csv" 2>"$work/bad.err"; then
    echo "plot.sh accepted a row whose median is not a number" >&2
    exit 1
fi
grep -q 'line 2' "$work/bad.err" || { echo "plot.sh refused without naming the line:" >&2; cat "$work/bad.err" >&2; exit 1; }
[[ ! -e $work/bad.svg ]] || { echo "plot.sh left bad.svg behind" >&2; exit 1; }

cp "$source_dir/test/docs/fixtures/chart.csv" "$work/chart.csv"
bash "$plot" "$work/chart.csv"
svg=$work/chart.svg
[[ -s $svg ]] || { echo "plot.sh wrote no $svg" >&2; exit 1; }
if command -v python3 >/dev/null 2>&1; then
    python3 - "$svg" <<'PYTHON'
import sys, xml.etree.ElementTree as tree
root = tree.parse(sys.argv[1]).getroot()
if root.tag != "{http://www.w3.org/2000/svg}svg":
    sys.exit("the root element is %s, not svg" % root.tag)
PYTHON
else
    grep -q '<svg' "$svg" && tail -c 200 "$svg" | grep -q '</svg>' || { echo "$svg is not a whole SVG" >&2; exit 1; }
fi
# Every label of the fixture is a text of the chart.
labels=$(grep -v '^#' "$work/chart.csv" | tail -n +2 | cut -d, -f1)
[[ -n $labels ]] || { echo "the fixture has no data row" >&2; exit 1; }
while read -r label; do
    grep -qF ">$label<" "$svg" || { echo "$svg lacks the bar label '$label'" >&2; exit 1; }
done <<<"$labels"
echo "plot.sh drew $(wc -l <<<"$labels") labelled bars into a valid $svg"
