/**
 *  @file   algorithms.cpp
 *  @brief  The README's algorithms section, compiled and run: a sum-and-max in one pass, a reproducible sum, a
 *          search that stops early, a scan, a sort, and a call from inside a callback. Checks every answer against
 *          the serial `std::` one and exits 1 on a mismatch.
 */
#include <algorithm>  // `std::max_element`, `std::find_if`, `std::is_sorted`
#include <cstdio>     // `std::printf`
#include <cstring>    // `std::memcmp`
#include <functional> // `std::greater`
#include <limits>     // `std::numeric_limits`
#include <numeric>    // `std::accumulate`
#include <vector>

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nThe parallel algorithms, each answer checked against std::. Reads no environment variable.\n");
    fu::flat_pool_t pool;
    if (!pool.spawn(fu::allowed_cores_count())) return 1;
    std::vector<double> prices(10'000'000);
    for (std::size_t i = 0; i != prices.size(); ++i) prices[i] = 1.0 + static_cast<double>(i * 7919 % 1000) / 1000.0;

    struct stats_t {
        double sum, max;
    };
    auto both = [](stats_t a, stats_t b) noexcept { return stats_t{a.sum + b.sum, a.max < b.max ? b.max : a.max}; };
    auto spread = [](double price) noexcept { return stats_t{price, price}; };
    stats_t const lowest = {0.0, -std::numeric_limits<double>::infinity()};
    stats_t const stats = fu::transform_reduce(pool, prices.begin(), prices.end(), lowest, both, spread);

    double const total = fu::reduce(pool, prices.begin(), prices.end(), 0.0);
    fu::flat_pool_t one_thread;
    if (!one_thread.spawn(1)) return 1;
    double const again = fu::reduce(one_thread, prices.begin(), prices.end(), 0.0);
    bool const identical = std::memcmp(&total, &again, sizeof total) == 0; // bit for bit, at any thread count

    auto const first_expensive = fu::find_if(fu::with_grain(pool, 1024), prices.begin(), prices.end(),
                                             [](double price) noexcept { return price > 1.998; });
    bool const all_positive = fu::all_of(pool, prices.begin(), prices.end(), [](double p) noexcept { return p > 0; });

    std::vector<double> running(prices.size());
    fu::inclusive_scan(pool, prices.begin(), prices.end(), running.begin());
    std::vector<double> ranked = prices;
    fu::sort(pool, ranked.begin(), ranked.end(), std::greater<>{});

    double nested = 0;
    auto inside = [&](std::size_t thread) noexcept {
        if (thread == 0) nested = fu::reduce(pool, prices.begin(), prices.end(), 0.0); // the pool is busy: runs here
    };
    if (!pool.for_threads(inside).join()) return 1;

    std::printf("sum %.3f (serial %.3f), max %.3f, reproducible: %s\n", stats.sum,
                std::accumulate(prices.begin(), prices.end(), 0.0), stats.max, identical ? "yes" : "no");
    std::printf("first price above 1.998 at %td, all positive: %s, running total %.3f, top price %.3f\n",
                first_expensive - prices.begin(), all_positive ? "yes" : "no", running.back(), ranked.front());
    bool const correct =
        identical && nested == total && stats.sum == total &&
        stats.max == *std::max_element(prices.begin(), prices.end()) &&
        first_expensive == std::find_if(prices.begin(), prices.end(), [](double price) { return price > 1.998; }) &&
        all_positive && std::is_sorted(ranked.begin(), ranked.end(), std::greater<>{});
    return correct ? 0 : 1;
}
