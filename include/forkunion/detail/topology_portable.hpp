/**
 *  @file   forkunion/detail/topology_portable.hpp
 *  @brief  The portable back end of `forkunion/topology.hpp`: `portable_topology_source_t`.
 *
 *  Where no OS back end exists, a harvest describes one compute domain over `std::thread::hardware_concurrency()`
 *  cores (ids `0 .. n-1`) and one memory domain of unknown size: all a portable program can learn. It compiles
 *  on every OS, so the Linux tests run it too. Recorded sysfs trees are a Linux notion: `try_harvest_sysfs`
 *  answers false here.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <thread>  // `std::thread::hardware_concurrency`

#include <forkunion/cpu_mask.hpp>
#include <forkunion/topology_facts.hpp>

namespace forkunion::detail {

/**  @brief  The topology back end of last resort: static members only, the interface of `topology_facts.hpp`. */
struct portable_topology_source_t {
    static constexpr bool harvests_structure_k = false;
    using facts_t = topology_facts_t;

    /**  Cores `0 .. hardware_concurrency() - 1` (at least core 0). */
    static void allowed_cores(cpu_mask_t &mask) noexcept {
        mask.clear();
        std::size_t count = std::thread::hardware_concurrency();
        if (count == 0) count = 1; // "not computable" per the standard
        if (count > max_cpus_k) count = max_cpus_k;
        mask.set_range(0, count - 1);
    }

    /**  One domain over `allowed_cores`, marked harvested. @throws std::bad_alloc */
    template <typename harvest_t = facts_t>
    static bool try_harvest_live(harvest_t &facts) {
        cpu_mask_t allowed;
        allowed_cores(allowed);
        harvest_t harvest;
        assign_single_domain(harvest, allowed);
        harvest.harvested = true;
        facts = static_cast<harvest_t &&>(harvest);
        return true;
    }

    template <typename harvest_t = facts_t>
    static bool try_harvest_sysfs(char const *, cpu_mask_t const *, harvest_t &) noexcept {
        return false;
    }
};

} // namespace forkunion::detail
