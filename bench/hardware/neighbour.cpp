/**
 *  @file   neighbour.cpp
 *  @brief  What an idle pool costs the code beside it: an OpenMP matrix product and a serial loop in the same
 *          process, timed with no pool, next to an idle pool in each idle policy, as a markdown table.
 *
 *  The neighbour is a 512 x 512 `double` matrix product under `#pragma omp parallel for` (the compiler's OpenMP
 *  runtime with its own defaults: the user's code, not ours) followed by a serial pass over the same rows (the
 *  serial code after a parallel region). The pool is a caller-inclusive `flat_pool_t` of all allowed cores that
 *  ran one dispatch and then stays idle, in one of: the adaptive default (spin for its window, then park), spin,
 *  `sleep(0)`. Before each timed product the pool has been idle for 10 ms, a hundred times the default window,
 *  so the adaptive pool's workers are parked by then (that is the state a neighbour meets between a pool's bursts).
 *
 *  Every round runs each case once, in the same order (none, adaptive, spin, sleep), and builds its pool afresh;
 *  the table gives each case's median over the rounds and its ratio to the no-pool median of the same run.
 *
 *  Environment (unset or empty keeps the default; a malformed value names itself and exits 1):
 *  - `FORKUNION_ROUNDS` (count, default 7, at least 1): rounds;
 *  - `FORKUNION_NEIGHBOUR_SIZE` (count, default 512, 16 to 4096): the matrices' order.
 */
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include <forkunion.hpp>

#include "harness.hpp"

namespace fu = forkunion;
using clock_type = std::chrono::steady_clock;

namespace {

struct matrices_t {
    std::size_t order;
    std::vector<double> a, b, c;
    explicit matrices_t(std::size_t n) : order(n), a(n * n), b(n * n), c(n * n) {
        for (std::size_t i = 0; i != n * n; ++i) {
            a[i] = static_cast<double>(i % 7) - 3.0;
            b[i] = static_cast<double>(i % 5) * 0.5;
        }
    }
};

/**  The parallel region: c = a · b, rows split across the OpenMP team (i-k-j order, so the inner loop vectorizes). */
void product(matrices_t &m) {
    std::size_t const n = m.order;
    double const *a = m.a.data(), *b = m.b.data();
    double *c = m.c.data();
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t row = 0; row < static_cast<std::ptrdiff_t>(n); ++row) {
        double *out = c + static_cast<std::size_t>(row) * n;
        for (std::size_t j = 0; j != n; ++j) out[j] = 0;
        for (std::size_t k = 0; k != n; ++k) {
            double const scale = a[static_cast<std::size_t>(row) * n + k];
            double const *in = b + k * n;
            for (std::size_t j = 0; j != n; ++j) out[j] += scale * in[j];
        }
    }
}

/**  The serial code after the region: one pass over c, 4 flops per element. */
double serial_pass(matrices_t const &m) {
    double sum = 0;
    for (double value : m.c) sum += value * value - 0.5 * value;
    return sum;
}

struct sample_t {
    double product_ms, serial_ms;
};

enum class case_t { none_k, adaptive_k, spin_k, sleep_k };

char const *name_of(case_t kind) {
    switch (kind) {
    case case_t::none_k:
        return "no pool";
    case case_t::adaptive_k:
        return "idle pool, adaptive default";
    case case_t::spin_k:
        return "idle pool, spin";
    default:
        return "idle pool, sleep(0)";
    }
}

sample_t run_case(case_t kind, matrices_t &m, double &checksum) {
    fu::flat_pool_t pool;
    if (kind != case_t::none_k) {
        if (!pool.spawn(fu::allowed_cores_count()))
            fu::bench::fail(fu::bench::exit_unavailable_k, "neighbour: spawn failed");
        fu::idle_policy_t const policy = kind == case_t::spin_k    ? fu::idle_policy_t::spin()
                                         : kind == case_t::sleep_k ? fu::idle_policy_t::sleep(0)
                                                                   : pool.idle_policy();
        if (!pool.set_idle_policy(policy)) fu::bench::fail(fu::bench::exit_unavailable_k, "neighbour: policy refused");
        pool.for_threads([](std::size_t) noexcept {}).join_or_run_on_caller();
    }
    // Idle long enough for an adaptive pool's workers to leave their spin window (10 ms: 100x the default).
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto const start = clock_type::now();
    product(m);
    auto const middle = clock_type::now();
    checksum += serial_pass(m);
    auto const end = clock_type::now();
    return {std::chrono::duration<double, std::milli>(middle - start).count(),
            std::chrono::duration<double, std::milli>(end - middle).count()};
}

} // namespace

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nWhat an idle pool costs an OpenMP matrix product and a serial loop beside it, per idle "
                    "policy.\n"
                    "environment (unset or empty keeps the default; a malformed value exits with status 1):\n"
                    "  FORKUNION_ROUNDS          7; 1 to 1000 rounds\n"
                    "  FORKUNION_NEIGHBOUR_SIZE  512; 16 to 4096, the matrices' order\n"
                    "  OMP_NUM_THREADS and the rest of the OpenMP runtime's variables shape the product's team\n");
    std::size_t rounds = 7, order = 512;
    fu::bench::detail::read_count("FORKUNION_ROUNDS", 1, 1000, rounds);
    fu::bench::detail::read_count("FORKUNION_NEIGHBOUR_SIZE", 16, 4096, order);
#if defined(_OPENMP)
    int const team = omp_get_max_threads();
#else
    int const team = 1; // built without OpenMP: the product runs serially, the comparison still holds
#endif
    matrices_t m(order);
    constexpr case_t cases[] = {case_t::none_k, case_t::adaptive_k, case_t::spin_k, case_t::sleep_k};
    std::vector<double> products[4], serials[4];
    double checksum = 0;
    for (std::size_t round = 0; round != rounds; ++round)
        for (std::size_t i = 0; i != 4; ++i) {
            sample_t const sample = run_case(cases[i], m, checksum);
            products[i].push_back(sample.product_ms);
            serials[i].push_back(sample.serial_ms);
        }
    std::printf("%zu x %zu matrix product on an OpenMP team of %d, then a serial pass; pool of %zu threads; "
                "median of %zu rounds (checksum %.6g)\n\n",
                order, order, team, fu::allowed_cores_count(), rounds, checksum);
    std::printf("| beside the product | product ms | x no pool | serial pass ms | x no pool |\n");
    std::printf("| --- | ---: | ---: | ---: | ---: |\n");
    double const product_base = fu::bench::median(products[0]), serial_base = fu::bench::median(serials[0]);
    for (std::size_t i = 0; i != 4; ++i) {
        double const product_ms = fu::bench::median(products[i]), serial_ms = fu::bench::median(serials[i]);
        std::printf("| %s | %.2f | %.2f | %.3f | %.2f |\n", name_of(cases[i]), product_ms, product_ms / product_base,
                    serial_ms, serial_ms / serial_base);
    }
    return 0;
}
