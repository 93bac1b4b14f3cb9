#!/usr/bin/env bash
# Compile cost of the umbrella header: a hello world that includes <forkunion.hpp> and runs one for_n, against the
# same program with only <thread>, <atomic> and <vector>, and the flat-pool-only program (<forkunion/flat.hpp>).
# Best of N runs of `g++ -O2 -c` each, in CPU time (user + system of the compiler), which a busy neighbour stretches
# far less than wall time. Fails when the umbrella costs more than 1.25x the baseline: including forkunion must stay
# cheap as layers are added. A ratio over the limit is measured once more before failing, since even CPU time moves
# a little on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
compiler=${CXX:-g++}
runs=${FORKUNION_COMPILE_RUNS:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/baseline.cpp" <<'CPP'
#include <atomic>
#include <thread>
#include <vector>
int main() {
    std::atomic<int> sum {0};
    std::vector<std::thread> threads;
    for (int t = 0; t != 2; ++t) threads.emplace_back([&] { sum.fetch_add(1); });
    for (auto &thread : threads) thread.join();
    return sum.load() == 2 ? 0 : 1;
}
CPP
cat >"$work/forkunion.cpp" <<'CPP'
#include <atomic>
#include <forkunion.hpp>
int main() {
    forkunion::flat_pool_t pool;
    if (!pool.spawn(2)) return 1;
    std::atomic<int> sum {0};
    pool.for_n(2, [&](std::size_t) noexcept { sum.fetch_add(1); }).join_or_run_on_caller();
    return sum.load() == 2 ? 0 : 1;
}
CPP

best_of() {
    local source=$1 best=""
    for ((run = 0; run < runs; ++run)); do
        local seconds elapsed
        # CPU time (user + system) of the compiler, not wall time: the machines are shared, and a busy neighbour
        # stretches wall time far more than it stretches the compiler's own CPU time.
        seconds=$( { TIMEFORMAT='%U %S'; time "$compiler" -std=c++20 -O2 -Iinclude -c "$source" -o "$work/out.o" 2>/dev/null; } 2>&1) || {
            echo "compile_cost: $source does not compile" >&2
            exit 1
        }
        elapsed=$(awk -v t="$seconds" 'BEGIN { split(t, p, " "); printf "%d", (p[1] + p[2]) * 1000 }')
        if [[ -z "$best" || $elapsed -lt $best ]]; then best=$elapsed; fi
    done
    echo "$best"
}

sed 's|<forkunion.hpp>|<forkunion/flat.hpp>|' "$work/forkunion.cpp" >"$work/flat.cpp"

measure() { # prints "<baseline ms> <umbrella ms> <flat ms>"
    echo "$(best_of "$work/baseline.cpp") $(best_of "$work/forkunion.cpp") $(best_of "$work/flat.cpp")"
}
verdict() { awk -v a="$2" -v b="$1" 'BEGIN { exit !(a / b <= 1.25) }'; }
read -r baseline umbrella flat < <(measure)
if ! verdict "$baseline" "$umbrella"; then
    echo "compile cost: $(awk -v a="$umbrella" -v b="$baseline" 'BEGIN { printf "%.2f", a / b }')x on the first try; measuring again"
    read -r baseline umbrella flat < <(measure)
fi
for program in umbrella flat; do
    ours=${!program}
    header=$([[ $program == flat ]] && echo "<forkunion/flat.hpp>" || echo "<forkunion.hpp>")
    ratio=$(awk -v a="$ours" -v b="$baseline" 'BEGIN { printf "%.2f", a / b }')
    echo "compile cost ($compiler -O2, CPU time, best of $runs): <thread>+<atomic>+<vector> ${baseline} ms," \
         "${header} ${ours} ms, ratio ${ratio}x (limit 1.25x)"
done
if ! verdict "$baseline" "$umbrella"; then
    echo "compile_cost: <forkunion.hpp> costs more than 1.25x the baseline" >&2
    exit 1
fi
