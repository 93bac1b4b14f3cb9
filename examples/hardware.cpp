// The hardware layer in one page: what this CPU offers and what this build can use, the wait `nap()` parks idle
// workers on, and two atomic verbs the standard lacks, used from a fork-join loop.
#include <cstdint>
#include <cstdio>

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nThis CPU's capabilities, the idle wait and two atomic verbs. Reads no environment variable.\n");
    char names[256];
    fu::name_capabilities(fu::runtime_capabilities(), names, sizeof names);
    std::printf("this CPU offers:      %s\n", names);
    fu::name_capabilities(fu::comptime_capabilities(), names, sizeof names);
    std::printf("this build can use:   %s\n", names);
    char const *nap = fu::nap_backend_t::instruction();
    std::printf("nap() parks on:       %s\n", nap ? nap : "the pause hint (no usable address monitor)");

    fu::flat_pool_t pool;
    if (!pool.spawn(fu::allowed_cores_count())) return 1;
    // From now on, idle workers light-sleep on the generation's cache line (the policy persists until changed).
    if (!pool.set_idle_policy(fu::idle_policy_t::nap())) return 1;

    constexpr std::uint64_t capacity = 100;
    alignas(8) std::uint64_t largest = 0, admitted = 0; // plain integers, touched only through atomic references
    auto offer = [&](std::size_t task) noexcept {
        fu::atomic_ref_t<std::uint64_t>(largest).fetch_max(task * 7 % 1000, std::memory_order_relaxed);
        // A bounded counter: adds only while the old value is at most `capacity - 1`.
        fu::atomic_ref_t<std::uint64_t>(admitted).fetch_add_if_at_most(1, capacity - 1, std::memory_order_relaxed);
    };
    if (!pool.for_n(1000, offer).join()) return 1;
    std::printf("largest %llu, admitted %llu of 1000 (capacity %llu)\n", (unsigned long long)largest,
                (unsigned long long)admitted, (unsigned long long)capacity);
    return largest == 999 && admitted == capacity ? 0 : 1;
}
