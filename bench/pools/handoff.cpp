/**
 *  @file   handoff.cpp
 *  @brief  The line hand-off model of the flat pool: ownership changes of cache lines per dispatch, and the
 *          critical path of the retirement fan-in, counted under a serialized schedule next to what the protocol
 *          says they must be. Exits 1 when a count differs from the protocol's or from a second run.
 *
 *  The counting and the schedule are in `handoff_atomic.hpp`, the pools in `handoff_model.cpp` (one translation
 *  unit per retirement variant, see `retire_variants.hpp`). Every configuration runs twice on fresh pools, and
 *  the two runs must agree to the last transfer.
 *
 *  What the protocol says, per dispatch of T contributors (derived from `flat.hpp`'s transitions T1-T3):
 *  - caller-inclusive: T - 1 workers read the dispatch line the caller wrote at T2, and each of the T - 1
 *    non-root contributors' retirement words is read once by its parent (T3): 2(T - 1). The claim line stays
 *    with the caller, which claims, joins and releases it.
 *  - caller-exclusive: the T contributors are all workers, so T of them read the dispatch line; T - 1 tree
 *    edges; the root, worker 0, pulls the claim line the caller wrote (the claim CAS) to release it, and the
 *    caller pulls it back when its join sees the pool free: 2T + 1 = 2(T - 1) + 3.
 *  - both: a body that increments one shared word adds T, one pull per contributor (the model's control).
 *  - the fan-in's critical path: `retirement_critical_path` (the tree's shape; `retire_variants.hpp`).
 *  None of this depends on the retirement variant but the critical path, nor on the padding (each protocol word
 *  has its own padded line either way).
 *
 *  Output: one markdown table of the shipped pool per padding (the library's default, and 64 bytes), one table
 *  of the fan-in's critical path per retirement variant, then `RESULT benchmark=handoff ...` rows.
 *  About two seconds on two cores: T = 255 hands the baton on ~10^3 times per dispatch, each a futex round trip.
 */
#include <cstdint>  // `std::uint64_t`
#include <cstdio>   // `std::printf`
#include <iterator> // `std::size`
#include <string>   // `std::string`
#include <vector>   // `std::vector`

#include <forkunion/base/types.hpp>

#include "retire_variants.hpp"
#include "usage.h"

namespace fu = forkunion;
namespace fub = forkunion::bench;

namespace {

constexpr std::size_t thread_counts_k[] = {2, 4, 16, 64, 255};

struct variant_t {
    char const *name;
    forkunion::child_order_t order;
    fub::handoff_variant_t const &model;
};

variant_t const variants_k[] = {
    {"tree", forkunion::child_order_t::first_to_last_k, fub::tree::handoff_variant},
    {"last_child_first", forkunion::child_order_t::last_to_first_k, fub::last_child_first::handoff_variant},
    {"flat_fan_in", forkunion::child_order_t::first_to_last_k, fub::flat_fan_in::handoff_variant},
};

/**  Ownership changes per dispatch of `threads` contributors, from the protocol (see the file comment). */
std::uint64_t protocol_transfers(std::size_t threads, bool exclusive) {
    return exclusive ? 2 * threads + 1 : 2 * (threads - 1);
}

char const *kind_name(bool exclusive) {
    return exclusive ? "exclusive" : "inclusive";
}

/**  What the runs found wrong, and the result rows, printed after the tables. */
struct checker_t {
    std::vector<std::string> failures, results;
    void expect(bool holds, std::string what) {
        if (!holds) failures.push_back(std::move(what));
    }
};

/**  Runs one configuration twice and checks everything about it; returns the first run's counts. */
fub::handoff_counts_t model_twice(checker_t &checker, variant_t const &variant, fub::padding_t padding,
                                  std::size_t threads, bool exclusive) {
    fub::handoff_counts_t const first = variant.model.count(padding, threads, exclusive);
    fub::handoff_counts_t const second = variant.model.count(padding, threads, exclusive);
    std::string const where = std::string(variant.name) + ", " + kind_name(exclusive) + ", " +
                              (padding == fub::padding_t::default_k ? "default" : "64-byte") +
                              " padding, T = " + std::to_string(threads) + ": ";
    checker.expect(first.spawned && first.accepted, where + "the pool did not spawn or refused a dispatch");
    checker.expect(first.steady && second.steady, where + "two consecutive dispatches moved different lines");
    checker.expect(first == second, where + "two runs on fresh pools differ");
    std::uint64_t const transfers = protocol_transfers(threads, exclusive);
    std::uint64_t const path = fub::retirement_critical_path(threads, variant.model.fan_in, variant.order, exclusive);
    checker.expect(first.for_n.transfers == transfers && first.for_threads.transfers == transfers,
                   where + "transfers " + std::to_string(first.for_n.transfers) + " (for_n), " +
                       std::to_string(first.for_threads.transfers) + " (for_threads), the protocol says " +
                       std::to_string(transfers));
    checker.expect(first.for_n_shared_counter.transfers == transfers + threads,
                   where + "a shared counter in the body moved " +
                       std::to_string(first.for_n_shared_counter.transfers - first.for_n.transfers) +
                       " more lines, not T");
    checker.expect(first.for_n.critical_path == path && first.for_threads.critical_path == path,
                   where + "critical path " + std::to_string(first.for_n.critical_path) + ", the tree's shape says " +
                       std::to_string(path));
    char row[320];
    std::snprintf(row, sizeof(row),
                  "RESULT benchmark=handoff variant=%s padding=%s pool=%s threads=%zu for_n=%llu for_threads=%llu "
                  "protocol=%llu minimum=%zu shared_counter_body=%llu critical_path=%llu tree_shape=%llu",
                  variant.name, padding == fub::padding_t::default_k ? "default" : "64", kind_name(exclusive), threads,
                  static_cast<unsigned long long>(first.for_n.transfers),
                  static_cast<unsigned long long>(first.for_threads.transfers),
                  static_cast<unsigned long long>(transfers), 2 * (threads - 1),
                  static_cast<unsigned long long>(first.for_n_shared_counter.transfers),
                  static_cast<unsigned long long>(first.for_n.critical_path), static_cast<unsigned long long>(path));
    checker.results.push_back(row);
    return first;
}

} // namespace

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nThe line hand-off model of the flat pool: transfers per dispatch and the fan-in's critical "
                    "path,\nchecked against the protocol's counts (exit status 1 on a difference). Reads no "
                    "environment variable.\n");
    checker_t checker;
    std::printf("# Line hand-off model of the flat pool (std::uint8_t indices, spin policy, serialized schedule)\n");
    variant_t const &shipped = variants_k[0];

    // The shipped pool, at both paddings: transfers per dispatch.
    std::uint64_t shipped_paths[std::size(thread_counts_k)] = {};
    for (fub::padding_t const padding : {fub::padding_t::default_k, fub::padding_t::hardware_line_k}) {
        std::size_t const line = padding == fub::padding_t::default_k ? fu::default_alignment_k : 64;
        std::printf("\n## Shipped pool (fan-in %zu, children waited for first to last), padding and lines of %zu "
                    "bytes\n\n",
                    shipped.model.fan_in, line);
        std::printf("| pool | T | for_n | for_threads | protocol | 2(T-1) | critical path | tree shape | "
                    "shared counter T-1 |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (bool const exclusive : {false, true})
            for (std::size_t index = 0; index != std::size(thread_counts_k); ++index) {
                std::size_t const threads = thread_counts_k[index];
                fub::handoff_counts_t const counts = model_twice(checker, shipped, padding, threads, exclusive);
                if (!exclusive) shipped_paths[index] = counts.for_n.critical_path;
                std::printf("| %s | %zu | %llu | %llu | %llu | %zu | %llu | %llu | %zu |\n", kind_name(exclusive),
                            threads, static_cast<unsigned long long>(counts.for_n.transfers),
                            static_cast<unsigned long long>(counts.for_threads.transfers),
                            static_cast<unsigned long long>(protocol_transfers(threads, exclusive)), 2 * (threads - 1),
                            static_cast<unsigned long long>(counts.for_n.critical_path),
                            static_cast<unsigned long long>(
                                fub::retirement_critical_path(threads, shipped.model.fan_in, shipped.order, exclusive)),
                            threads - 1);
            }
    }

    // The retirement variants at the default padding: the fan-in's critical path (each variant's transfers and
    // exclusive pools are checked against the protocol too, and go to the result rows).
    std::printf("\n## Critical path of the fan-in in line transfers, caller-inclusive (exclusive: +2), by variant\n\n"
                "| T | tree (shipped) | last_child_first | flat_fan_in | shared counter T-1 |\n"
                "| ---: | ---: | ---: | ---: | ---: |\n");
    for (std::size_t index = 0; index != std::size(thread_counts_k); ++index) {
        std::size_t const threads = thread_counts_k[index];
        std::printf("| %zu | %llu |", threads, static_cast<unsigned long long>(shipped_paths[index]));
        for (variant_t const &variant : variants_k) {
            if (&variant == &shipped) continue;
            fub::handoff_counts_t const counts =
                model_twice(checker, variant, fub::padding_t::default_k, threads, false);
            (void)model_twice(checker, variant, fub::padding_t::default_k, threads, true);
            std::printf(" %llu |", static_cast<unsigned long long>(counts.for_n.critical_path));
        }
        std::printf(" %zu |\n", threads - 1);
    }

    std::printf("\n");
    for (std::string const &result : checker.results) std::printf("%s\n", result.c_str());
    for (std::string const &failure : checker.failures) std::printf("FAILED: %s\n", failure.c_str());
    if (!checker.failures.empty()) return 1;
    std::printf("every count equals the protocol's and the tree shape's, in two runs of each configuration\n");
    return 0;
}
