# Shell helpers shared by bench/compare.sh and .ci/bench.sh; source it, do not run it.

# Pins OpenMP like every other runtime (thread i on allowed CPU i) and makes its idle threads spin like the
# others', unless the caller already chose: OMP_PLACES = one place per allowed CPU, OMP_PROC_BIND=close,
# OMP_WAIT_POLICY=active. `OMP_PLACES=cores` would pin nothing on a VM that libomp reads as 1 core x 2 threads.
forkunion_openmp_environment() {
    local allowed places="" range first last cpu
    allowed=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status)
    for range in ${allowed//,/ }; do
        first=${range%-*}
        last=${range#*-}
        for ((cpu = first; cpu <= last; ++cpu)); do places+="${places:+,}{$cpu}"; done
    done
    export OMP_PLACES=${OMP_PLACES:-$places}
    export OMP_PROC_BIND=${OMP_PROC_BIND:-close}
    export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-active}
}

# `forkunion_backends_of <bench dir> <benchmark>`: prints "binary backend" per line, every backend once. The OpenMP
# rows of `forkunion_bench_<benchmark>_libomp` run on LLVM's libomp and those of `..._gomp` on ForkUnion's OpenMP
# drop-in; everything else comes from the main binary.
forkunion_backends_of() {
    local directory=$1 benchmark=$2 binary name
    for binary in "$directory/forkunion_bench_$benchmark" "$directory/forkunion_bench_${benchmark}_libomp" \
        "$directory/forkunion_bench_${benchmark}_gomp"; do
        [[ -x $binary ]] || continue
        while read -r name; do
            if [[ $binary == *_libomp && $name != libomp_* ]]; then continue; fi
            if [[ $binary == *_gomp && $name != forkunion_gomp_* ]]; then continue; fi
            echo "$binary $name"
        done < <("$binary" --list)
    done
}

# `forkunion_usage <max positionals> <usage> "$@"`: the command-line contract of bench/common/usage.h for scripts.
# `--help` or `-h` anywhere prints `usage: <script> <usage>` to stdout and exits 0; an unknown option (anything
# else starting with `-`) or more than <max positionals> arguments prints one line to stderr and exits 1.
forkunion_usage() {
    local positionals=$1 usage=$2 argument seen=0 program=${0##*/}
    shift 2
    for argument; do
        if [[ $argument == --help || $argument == -h ]]; then
            printf 'usage: %s %s\n' "$program" "$usage"
            exit 0
        fi
    done
    for argument; do
        if [[ $argument == -?* ]]; then
            echo "$program: unknown option '$argument' (see $program --help)" >&2
            exit 1
        fi
        seen=$((seen + 1))
        if ((seen > positionals)); then
            echo "$program: unexpected argument '$argument': at most $positionals allowed (see $program --help)" >&2
            exit 1
        fi
    done
}
