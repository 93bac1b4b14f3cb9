// First steps, as the README shows them: a pool on every allowed core, the four loops, and what a refused
// dispatch looks like. `join()` returns a `[[nodiscard]] status_t`, and
// `join_or_run_on_caller()` runs every task whatever happens.
#include <atomic>  // `std::atomic`
#include <cstdio>  // `std::printf`
#include <cstdlib> // `EXIT_FAILURE`
#include <vector>  // `std::vector`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(
        argc, argv, "", 0,
        "\nA pool on every allowed core, the four loops and a refused dispatch. Reads no environment variable.\n");
    fu::flat_pool_t pool;
    if (fu::status_t status = pool.spawn(fu::allowed_cores_count()); !status)
        return std::fprintf(stderr, "spawn failed: %s\n", status.name()), EXIT_FAILURE;

    std::vector<double> squares(1000);
    pool.for_n(squares.size(), [&](std::size_t i) noexcept { squares[i] = double(i) * double(i); })
        .join_or_run_on_caller();

    std::atomic<std::size_t> primes{0}, up{0};
    std::atomic<double> total{0};
    pool.for_threads([&](std::size_t thread) noexcept { up.fetch_add(thread + 1); }).join_or_run_on_caller();
    pool.for_n_dynamic(10000,
                       [&](std::size_t n) noexcept { // uneven tasks: idle threads steal
                           bool prime = n > 1;
                           for (std::size_t d = 2; d * d <= n && prime; ++d) prime = n % d != 0;
                           if (prime) primes.fetch_add(1, std::memory_order_relaxed);
                       })
        .join_or_run_on_caller();
    pool.for_slices(squares.size(),
                    [&](std::size_t first, std::size_t count) noexcept {
                        double partial = 0; // per-thread setup hoisted out of the inner loop
                        for (std::size_t i = first; i != first + count; ++i) partial += squares[i];
                        total.fetch_add(partial, std::memory_order_relaxed);
                    })
        .join_or_run_on_caller();

    // A dispatch from inside a callback is refused (one dispatch at a time): check the status, or run it here.
    std::atomic<std::size_t> nested_ran{0}, refusals{0};
    pool.for_threads([&](std::size_t) noexcept {
            if (fu::status_t const nested = pool.for_n(4, [&](std::size_t) noexcept { nested_ran++; }).join(); !nested)
                refusals.fetch_add(1); // `contended`: nothing ran
            pool.for_n(4, [&](std::size_t) noexcept { nested_ran++; }).join_or_run_on_caller(); // runs all 4 here
        })
        .join_or_run_on_caller();

    std::printf("%zu primes, sum of squares %.0f, %zu refusals, %zu nested tasks ran\n", primes.load(), total.load(),
                refusals.load(), nested_ran.load());
    std::size_t const threads = pool.threads_count();
    return primes == 1229 && total == 332833500.0 && up == threads * (threads + 1) / 2 && refusals == threads &&
                   nested_ran == 4 * threads
               ? EXIT_SUCCESS
               : EXIT_FAILURE;
}
