#!/usr/bin/env bash
# Draws benchmark CSV files as SVG bar charts with gnuplot (Debian: gnuplot-nox), or with python3-matplotlib when
# gnuplot is absent:
#
#   bash bench/plot.sh FILE.csv...          # writes FILE.svg next to each FILE.csv
#   bash bench/plot.sh --check              # exit 0 if a plotting tool is installed, else 1 and the reason
#   bash bench/plot.sh --help
#
# The CSV format (written by bench/compare.sh and by forkunion_bench_algorithms with FORKUNION_ALGORITHMS_CSV):
#   # title: <the chart's title>
#   # ylabel: <the value axis' label>
#   # scale: log                            (optional: a logarithmic value axis, for ratios that span decades)
#   label,median,min,max[,...]
#   forkunion/for_n/empty,0.91,0.88,0.95
# One bar per data row, in file order: its height is `median`, its whisker spans `min`-`max`; columns after the
# fourth are ignored; a dashed line marks 1 (every chart of this repository shows ratios). Labels must not contain
# commas or double quotes. Exit status: 0, 1 for bad arguments or a malformed CSV, 2 when no plotting tool is
# installed (the message names the packages).
set -euo pipefail

usage() {
    echo "usage: plot.sh FILE.csv... | --check | --help"
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
}

tool() { # the plotting tool this machine has, or nothing
    if command -v gnuplot >/dev/null 2>&1; then
        echo gnuplot
    elif command -v python3 >/dev/null 2>&1 && python3 -c 'import matplotlib' >/dev/null 2>&1; then
        echo matplotlib
    fi
}

if (($# == 0)); then
    echo "plot.sh: expected CSV files (bash bench/plot.sh --help)" >&2
    exit 1
fi
for argument in "$@"; do
    if [[ $argument == -h || $argument == --help ]]; then
        usage
        exit 0
    fi
done
case $1 in
--check)
    if [[ -z $(tool) ]]; then
        echo "plot.sh: neither gnuplot nor python3-matplotlib is installed (apt-get install gnuplot-nox)" >&2
        exit 1
    fi
    exit 0
    ;;
-*)
    echo "plot.sh: unknown option '$1' (bash bench/plot.sh --help)" >&2
    exit 1
    ;;
esac

# Checks one CSV: a header naming label,median,min,max and at least one row of three numbers.
validate() {
    awk -F, '
        /^#/ || /^[ \t]*$/ { next }
        !header { header = 1; if ($1 != "label" || $2 != "median" || $3 != "min" || $4 != "max") bad = "the header is not label,median,min,max"; next }
        NF < 4 || $2 !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ || $3 !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ || $4 !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ || $1 ~ /"/ {
            if (!bad) bad = "line " NR " is not label,number,number,number"
        }
        { ++rows }
        END { if (!bad && !rows) bad = "no data row"; if (bad) { print bad; exit 1 } }' "$1"
}

meta() { # the value of a `# key: value` line
    sed -n "s/^# $2: //p" "$1" | head -n 1
}

plot_gnuplot() { # csv svg title ylabel scale
    local rows range="set yrange [0:*]"
    [[ $5 == log ]] && range="set logscale y; set yrange [0.5:*]"
    rows=$(grep -cv '^#\|^[[:space:]]*$' "$1")
    rows=$((rows - 1))
    local width=$((200 + 40 * rows))
    ((width < 640)) && width=640
    gnuplot <<EOF
set terminal svg size ${width},480 dynamic enhanced font "sans,11" background rgb "white"
set output "$2"
set datafile separator ","
set datafile commentschars "#"
set key noautotitle
set title "$(sed 's/"/\\"/g' <<<"$3")" noenhanced
set ylabel "$(sed 's/"/\\"/g' <<<"$4")" noenhanced
set style fill solid 0.8 border -1
set boxwidth 0.7
${range}
set xrange [-0.6:${rows}-0.4]
set xtics rotate by -35 left noenhanced nomirror
set grid ytics
set bmargin 8
plot "$1" every ::1 using 0:2:xticlabels(1) with boxes lc rgb "#4878a8", \
     "" every ::1 using 0:2:3:4 with yerrorbars lc rgb "#202020" pt 7 ps 0.3, \
     1 with lines dt 2 lc rgb "#a03030"
EOF
}

plot_matplotlib() { # csv svg title ylabel scale
    python3 - "$@" <<'EOF'
import csv, sys
import matplotlib
matplotlib.use("svg")
matplotlib.rcParams["svg.fonttype"] = "none"  # labels stay text: searchable, and smaller than glyph paths
import matplotlib.pyplot as plt
source, target, title, ylabel, scale = sys.argv[1:6]
with open(source) as handle:
    rows = list(csv.reader(line for line in handle if line.strip() and not line.startswith("#")))[1:]
labels = [row[0] for row in rows]
medians, lows, highs = ([float(row[i]) for row in rows] for i in (1, 2, 3))
figure, axes = plt.subplots(figsize=(max(6.4, 2 + 0.4 * len(rows)), 4.8))
axes.bar(range(len(rows)), medians, color="#4878a8",
         yerr=[[m - l for m, l in zip(medians, lows)], [h - m for m, h in zip(medians, highs)]], capsize=3)
axes.axhline(1, linestyle="--", color="#a03030")
axes.set_xticks(range(len(rows)), labels, rotation=35, ha="right")
if scale == "log":
    axes.set_yscale("log")
axes.set_title(title)
axes.set_ylabel(ylabel)
axes.grid(axis="y")
figure.tight_layout()
figure.savefig(target)
EOF
}

for csv in "$@"; do # every argument is checked before anything is drawn
    if [[ $csv != *.csv || ! -f $csv ]]; then
        echo "plot.sh: $csv: expected an existing .csv file (bash bench/plot.sh --help)" >&2
        exit 1
    fi
done
plotter=$(tool)
if [[ -z $plotter ]]; then
    echo "plot.sh: neither gnuplot nor python3-matplotlib is installed (apt-get install gnuplot-nox): no charts" >&2
    exit 2
fi
status=0
for csv in "$@"; do
    if ! reason=$(validate "$csv"); then
        echo "plot.sh: $csv: $reason" >&2
        status=1
        continue
    fi
    svg=${csv%.csv}.svg
    title=$(meta "$csv" title)
    ylabel=$(meta "$csv" ylabel)
    if ! "plot_$plotter" "$csv" "$svg" "${title:-$(basename "$csv" .csv)}" "${ylabel:-median, min-max}" \
        "$(meta "$csv" scale)" 2>"$svg.log"; then
        echo "plot.sh: $plotter failed on $csv:" >&2
        cat "$svg.log" >&2
        status=1
    elif [[ -s $svg.log ]]; then
        cat "$svg.log" >&2
    fi
    rm -f "$svg.log"
    [[ $status == 0 ]] && echo "$svg"
done
exit "$status"
