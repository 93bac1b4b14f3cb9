# The summary of bench/compare.sh: reads its RESULT rows (one benchmark run per row, `key=value` fields) and prints
# the markdown tables, medians over the runs, min-max and the ratios. Kept in a file of its own, not inline in the
# script, so that no quote in it can end a shell string (e4052f3 did, and broke the README's first command); the
# ctest `bench.compare_summary` runs it over the rows of a short real run.
# Variables: `check`, the propagation CHECK run's outcome line; `csv`, when set, a folder where the charts' data go
# (dispatch.csv: a `for_n` per runtime, dispatch_all.csv: every row, nbody.csv, propagation.csv, in bench/plot.sh's format: label,median,min,max, then the raw figures).
# Exit status 3 when backends disagree on a result.
# One row of the dispatch CSVs: the label, then the floor multiple and the nanoseconds, each median, min, max.
function dispatch_csv_row(r) {
    printf "%s,%.4g,%.4g,%.4g,%.4g,%.4g,%.4g\n", r, median("dispatch_floor|" r), low("dispatch_floor|" r), high("dispatch_floor|" r), median("dispatch_ns|" r), low("dispatch_ns|" r), high("dispatch_ns|" r) > csv_file
}

function field(name,   i, pair) {
    for (i = 2; i <= NF; ++i) { split($i, pair, "="); if (pair[1] == name) return pair[2] }
    return ""
}
function add(key, value) { count[key]++; values[key, count[key]] = value + 0 }
function sorted_copy(key,   i, j, t, n) {
    n = count[key]
    for (i = 1; i <= n; ++i) tmp[i] = values[key, i]
    for (i = 2; i <= n; ++i) { t = tmp[i]; for (j = i - 1; j >= 1 && tmp[j] > t; --j) tmp[j + 1] = tmp[j]; tmp[j + 1] = t }
    return n
}
function median(key,   n) { n = sorted_copy(key); return n ? tmp[int((n + 1) / 2)] : 0 }
function low(key,   n) { n = sorted_copy(key); return n ? tmp[1] : 0 }
function high(key,   n) { n = sorted_copy(key); return n ? tmp[n] : 0 }
function remember(list, name) { if (!((list, name) in seen)) { seen[list, name] = 1; order[list, ++length_of[list]] = name } }
function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "-" }
function csv_open(name, title, ylabel, scale, header) {
    csv_file = csv "/" name ".csv"
    printf "# title: %s\n# ylabel: %s\n", title, ylabel > csv_file
    if (scale != "") printf "# scale: %s\n", scale > csv_file
    print header > csv_file
}

$1 == "RESULT" {
    benchmark = field("benchmark")
    if (benchmark == "nbody") {
        b = field("backend"); remember("nbody", b)
        add("nbody_us|" b, field("us_per_step")); add("nbody_floor|" b, field("dispatch_over_floor"))
        add("nbody_off|" b, field("off_caller")); add("floor", field("floor_ns"))
        state = field("state_after_8_steps"); if (!(state in states)) { states[state] = 1; state_count++ }
    } else if (benchmark == "propagation") {
        b = field("backend"); remember("propagation", b)
        add("prop_gteps|" b, field("gteps")); add("prop_ms|" b, field("ms_per_round")); add("floor", field("floor_ns"))
        edges = field("edges"); vertices = field("vertices")
        if (field("passes") + 0 > 0) {
            result = field("rounds") " rounds, " field("components") " components, checksum " field("checksum")
            outcome[b] = result
            if (!(result in outcomes)) { outcomes[result] = 1; outcome_count++ }
        } else if (!(b in outcome)) outcome[b] = "no pass finished in the window"
    } else if (benchmark == "dispatch") {
        r = field("row"); remember("dispatch", r)
        add("dispatch_ns|" r, field("ns")); add("dispatch_floor|" r, field("x_floor")); add("floor", field("floor_ns"))
        if (field("off_caller") != "") add("dispatch_off|" r, field("off_caller"))
    }
}
END {
    printf "Ping-pong floor (two pinned threads, two cache lines, one writer each), over every run: median %.0f ns, %.0f-%.0f ns.\n\n", median("floor"), low("floor"), high("floor")

    if (csv != "") {
        csv_open("dispatch", "Dispatch: one fork-join of T tasks on T threads, as a multiple of the run's own ping-pong floor",
                 "x floor (median of runs, min-max; lower is better)", "log", "label,median,min,max,ns_median,ns_min,ns_max")
        for (i = 1; i <= length_of["dispatch"]; ++i) {
            r = order["dispatch", i]
            # One `for_n` per runtime, and forkunion's `for_n_dynamic`; a runtime whose caller ran over 95 % of the
            # tasks did not fork, so its bar would not measure a fork-join. dispatch_all.csv has every row.
            if (r !~ /\/for_n\/empty$/ && r != "forkunion/for_n_dynamic/empty") continue
            if (count["dispatch_off|" r] && median("dispatch_off|" r) < 0.05) continue
            dispatch_csv_row(r)
        }
        close(csv_file)
        csv_open("dispatch_all", "Dispatch, every row: a fork-join of T tasks on T threads, as a multiple of the run's own ping-pong floor",
                 "x floor (median of runs, min-max; lower is better)", "log", "label,median,min,max,ns_median,ns_min,ns_max")
        for (i = 1; i <= length_of["dispatch"]; ++i) {
            r = order["dispatch", i]
            dispatch_csv_row(r)
        }
        close(csv_file)
        csv_open("nbody", "N-body: one dispatch of a step as a multiple of the run's own ping-pong floor",
                 "x floor (median of runs, min-max; lower is better)", "log", "label,median,min,max,us_per_step_median")
        for (i = 1; i <= length_of["nbody"]; ++i) {
            b = order["nbody", i]
            printf "%s,%.4g,%.4g,%.4g,%.4g\n", b, median("nbody_floor|" b), low("nbody_floor|" b), high("nbody_floor|" b), median("nbody_us|" b) > csv_file
        }
        close(csv_file)
        own = median("prop_gteps|forkunion_static_shared")
        csv_open("propagation", "Label propagation: GTEPS as a multiple of forkunion_static_shared's median",
                 "x forkunion_static_shared (median of runs, min-max; higher is better)", "log", "label,median,min,max,gteps_median")
        for (i = 1; i <= length_of["propagation"] && own > 0; ++i) {
            b = order["propagation", i]
            printf "%s,%.4g,%.4g,%.4g,%.4g\n", b, median("prop_gteps|" b) / own, low("prop_gteps|" b) / own, high("prop_gteps|" b) / own, median("prop_gteps|" b) > csv_file
        }
        close(csv_file)
    }

    reference = median("dispatch_ns|forkunion/for_n/empty"); reference_line = median("dispatch_ns|forkunion/for_n/line")
    print "### Dispatch latency: ns per fork-join of T tasks on T threads (bench/pools/dispatch.cpp)"
    print ""
    print "| row | ns (median) | min-max | x forkunion `for_n` | x floor | share of tasks off the caller |"
    print "| --- | ---: | ---: | ---: | ---: | ---: |"
    for (i = 1; i <= length_of["dispatch"]; ++i) {
        r = order["dispatch", i]; ns = median("dispatch_ns|" r)
        base = (r ~ /\/line$/) ? reference_line : reference
        off = count["dispatch_off|" r] ? sprintf("%.2f", median("dispatch_off|" r)) : "-"
        if (count["dispatch_off|" r] && median("dispatch_off|" r) < 0.05) off = off " (caller ran >95%)"
        printf "| `%s` | %.0f | %.0f-%.0f | %s | %.2f | %s |\n", r, ns, low("dispatch_ns|" r), high("dispatch_ns|" r), ratio(ns, base), median("dispatch_floor|" r), off
    }

    # The goals, from the medians in ns and, steadier on a shared machine, from the ratio of each run to its floor.
    gomp = median("dispatch_ns|forkunion_gomp/for_n/empty"); libgomp = median("dispatch_ns|libgomp/for_n/empty")
    gomp_floor = median("dispatch_floor|forkunion_gomp/for_n/empty"); libgomp_floor = median("dispatch_floor|libgomp/for_n/empty")
    own_floor = median("dispatch_floor|forkunion/for_n/empty")
    if (gomp > 0 && reference > 0 && libgomp > 0)
        printf "\nOpenMP drop-in: `parallel for` at %.2fx the `for_n` of ForkUnion (%.2fx by floor ratios; goal: at most 1.25x), %.2fx faster than libgomp (%.2fx by floor ratios; goal: at least 2x).\n", gomp / reference, gomp_floor / own_floor, libgomp / gomp, libgomp_floor / gomp_floor
    # The members of every GCC region first read `.omp_data_o`, on the stack of the caller; so do the tasks of the stack row.
    stack = median("dispatch_ns|forkunion/for_n/stack")
    if (gomp > 0 && stack > 0)
        printf "Like for like: the `parallel for` of the drop-in at %.2fx the `for_n` of ForkUnion whose tasks read one word the caller wrote for the dispatch (`forkunion/for_n/stack`), as the members of every GCC-compiled region read its `.omp_data_o`.\n", gomp / stack

    reference = median("nbody_us|forkunion_static_shared")
    print ""
    print "### N-body: microseconds per step, two dispatches per step (bench/nbody/nbody.cpp)"
    print ""
    print "| backend | us/step (median) | min-max | x forkunion_static_shared | one dispatch / floor | share of tasks off the caller |"
    print "| --- | ---: | ---: | ---: | ---: | ---: |"
    for (i = 1; i <= length_of["nbody"]; ++i) {
        b = order["nbody", i]; us = median("nbody_us|" b); off = median("nbody_off|" b)
        printf "| `%s` | %.2f | %.2f-%.2f | %s | %.2f | %.2f%s |\n", b, us, low("nbody_us|" b), high("nbody_us|" b), ratio(us, reference), median("nbody_floor|" b), off, off < 0.05 ? " (caller ran >95%)" : ""
    }
    printf "\nFinal states after 8 steps: %s.\n", state_count == 1 ? "bit-identical across every backend and run" : "DIFFER between backends (" state_count " distinct hashes)"

    reference = median("prop_gteps|forkunion_static_shared")
    print ""
    printf "### Label propagation: GTEPS, %s vertices, %s edges (bench/propagation/propagation.cpp)\n", vertices, edges
    print ""
    print "| backend | GTEPS (median) | min-max | x forkunion_static_shared | ms per round | result |"
    print "| --- | ---: | ---: | ---: | ---: | --- |"
    for (i = 1; i <= length_of["propagation"]; ++i) {
        b = order["propagation", i]; g = median("prop_gteps|" b)
        printf "| `%s` | %.3f | %.3f-%.3f | %s | %.1f | %s |\n", b, g, low("prop_gteps|" b), high("prop_gteps|" b), ratio(g, reference), median("prop_ms|" b), outcome[b]
    }
    printf "\nCHECK run (forkunion_static_shared, whole pass, serial run alongside): %s.\n", check
    printf "Converged results of the timed runs: %s.\n", outcome_count == 0 ? "no run finished a pass within its window (try a longer window)" : outcome_count == 1 ? "identical across every run that finished a pass" : "DIFFER between backends"
    if (outcome_count > 1 || state_count > 1) exit 3
}
