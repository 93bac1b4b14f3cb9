#!/usr/bin/env bash
# usage: overhead.sh [--build DIR] [--rounds N] [--threads N] [--quick] [--also NAME=DIR] [-- program arguments]
# The OpenMP overhead table: forkunion_bench_omp_overhead (one binary, built by gcc -fopenmp against libgomp) run
# under libgomp, LLVM's libomp and ForkUnion's drop-in, each with OMP_WAIT_POLICY=active and passive, interleaved:
# every round runs each runtime and policy once, in turn, so a slow moment of the machine is shared out rather than
# landing on one column. Prints per construct the median over rounds of each run's median overhead (µs) and the
# drop-in's ratio to libgomp under the same policy.
#   --build DIR   the build folder (default build_release): DIR/bench/forkunion_bench_omp_overhead and the drop-in's
#                 DIR/c/gomp/forkunion_libgomp/libgomp.so.1
#   --rounds N    interleaved rounds (default 3)
#   --threads N   OMP_NUM_THREADS (default 2)
#   --quick       one round of single short measurements: checks that every runtime prints every row (CI's smoke)
#   --also NAME=DIR  one more runtime, DIR/libgomp.so.1 (another build of the drop-in, say), with its own columns
# libomp runs as libgomp.so.1 through LD_LIBRARY_PATH (it implements the GOMP ABI); without it its column is "-".
set -euo pipefail

build=build_release
rounds=3
threads=2
quick=0
program_arguments=()
also_names=()
also_dirs=()
while (($#)); do
    case $1 in
    --help | -h)
        sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a count}; shift 2 ;;
    --threads) threads=${2:?--threads needs a count}; shift 2 ;;
    --quick) quick=1; shift ;;
    --also)
        [[ ${2:-} =~ ^[a-z0-9_-]+=.+ && -e ${2#*=}/libgomp.so.1 ]] ||
            { echo "overhead.sh: --also expects NAME=DIR with DIR/libgomp.so.1, got '${2:-}'" >&2; exit 2; }
        also_names+=("${2%%=*}"); also_dirs+=("$(cd "${2#*=}" && pwd)"); shift 2 ;;
    --) shift; program_arguments=("$@"); break ;;
    *) echo "overhead.sh: unknown argument '$1' (--help for usage)" >&2; exit 2 ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "overhead.sh: --rounds expects a positive integer, got '$rounds'" >&2; exit 2; }
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "overhead.sh: --threads expects a positive integer, got '$threads'" >&2; exit 2; }

program=$build/bench/forkunion_bench_omp_overhead
dropin_dir=$build/c/gomp/forkunion_libgomp
for required in "$program" "$dropin_dir/libgomp.so.1"; do
    [[ -e $required ]] || { echo "overhead.sh: $required not found (cmake --build $build --target forkunion_bench_omp_overhead forkunion_gomp)" >&2; exit 1; }
done
if ((quick)); then
    rounds=1
    program_arguments=(--outer 1 --target-us 20 "${program_arguments[@]}")
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
libomp=""
for candidate in /usr/lib/llvm-*/lib/libomp.so.5 /usr/lib/x86_64-linux-gnu/libomp.so.5; do
    [[ -e $candidate ]] && libomp=$candidate
done
runtimes=(libgomp forkunion)
if [[ -n $libomp ]]; then
    mkdir -p "$work/libomp"
    ln -s "$libomp" "$work/libomp/libgomp.so.1"
    runtimes=(libgomp libomp forkunion)
else
    echo "# libomp: not found (apt-get install libomp-dev); its column is '-'"
fi

runtimes+=("${also_names[@]}")
mapfile -t constructs < <("$program" --list)
echo "# $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $threads threads; $rounds rounds"
for ((round = 1; round <= rounds; ++round)); do
    for policy in active passive; do
        for runtime in "${runtimes[@]}"; do
            environment=(OMP_NUM_THREADS="$threads" OMP_WAIT_POLICY="$policy")
            case $runtime in
            libgomp) expected=/libgomp.so.1 ;;
            libomp) environment+=(LD_LIBRARY_PATH="$work/libomp"); expected="$work/libomp/libgomp.so.1" ;;
            forkunion) environment+=(LD_LIBRARY_PATH="$dropin_dir"); expected="$dropin_dir/libgomp.so.1" ;;
            *)
                for ((a = 0; a < ${#also_names[@]}; ++a)); do
                    [[ ${also_names[a]} == "$runtime" ]] && directory=${also_dirs[a]}
                done
                environment+=(LD_LIBRARY_PATH="$directory"); expected="$directory/libgomp.so.1" ;;
            esac
            output=$work/$runtime.$policy.$round
            if ! env "${environment[@]}" "$program" "${program_arguments[@]}" >"$output" 2>&1; then
                echo "overhead.sh: $runtime ($policy) failed:" >&2
                cat "$output" >&2
                exit 1
            fi
            served=$(sed -n 's/^# runtime: //p' "$output")
            if [[ $served != *"$expected" ]]; then
                echo "overhead.sh: the $runtime run was served by '$served'" >&2
                exit 1
            fi
            for construct in "${constructs[@]}"; do
                row=$(awk -v c="$construct" '$1 == "ROW" && $2 == c { print $3 }' "$output")
                if [[ -z $row ]]; then
                    echo "overhead.sh: the $runtime ($policy) run printed no $construct row:" >&2
                    cat "$output" >&2
                    exit 1
                fi
                echo "$runtime $policy $construct $row" >>"$work/rows"
            done
        done
    done
done

# The table: per construct and policy, the median over rounds for each runtime, and forkunion / libgomp.
awk -v constructs="${constructs[*]}" -v extra="${also_names[*]}" '
function median(key,    n, i, j, t, v) {
    n = count[key]
    if (n == 0) return ""
    for (i = 1; i <= n; ++i) v[i] = values[key, i]
    for (i = 2; i <= n; ++i) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; --j) v[j + 1] = v[j]; v[j + 1] = t }
    return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function cell(value) { return value == "" ? "-" : sprintf("%.3f", value) }
function ratio(a, b) { return (a == "" || b == "" || b <= 0) ? "-" : sprintf("%.2fx", a / b) }
{ key = $1 SUBSEP $2 SUBSEP $3; values[key, ++count[key]] = $4 }
END {
    m = split(extra, extras, " ")
    header = "| construct (us)"
    rule = "| ---"
    for (p = 1; p <= 2; ++p) {
        policy = p == 1 ? "active" : "passive"
        header = header " | libgomp " policy " | libomp " policy " | drop-in " policy " | drop-in/libgomp"
        rule = rule " | ---: | ---: | ---: | ---:"
        for (e = 1; e <= m; ++e) { header = header " | " extras[e] " " policy " | " extras[e] "/libgomp"; rule = rule " | ---: | ---:" }
    }
    print header " |"
    print rule " |"
    n = split(constructs, names, " ")
    for (c = 1; c <= n; ++c) {
        line = "| " names[c]
        for (p = 1; p <= 2; ++p) {
            policy = p == 1 ? "active" : "passive"
            g = median("libgomp" SUBSEP policy SUBSEP names[c])
            o = median("libomp" SUBSEP policy SUBSEP names[c])
            f = median("forkunion" SUBSEP policy SUBSEP names[c])
            line = line " | " cell(g) " | " cell(o) " | " cell(f) " | " ratio(f, g)
            for (e = 1; e <= m; ++e) {
                x = median(extras[e] SUBSEP policy SUBSEP names[c])
                line = line " | " cell(x) " | " ratio(x, g)
            }
        }
        print line " |"
    }
}' "$work/rows"
