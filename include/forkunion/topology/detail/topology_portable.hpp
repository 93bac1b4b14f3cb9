/**
 *  @file   forkunion/topology/detail/topology_portable.hpp
 *  @brief  The portable back end of `forkunion/topology/topology.hpp`: `portable_topology_source_t`, and the one-domain
 *          source it and the WebAssembly back end are made of.
 *
 *  Where no OS back end exists, a harvest describes one compute domain over `std::thread::hardware_concurrency()`
 *  cores (ids `0 .. n-1`) and one memory domain of unknown size: all a portable program can learn. It compiles
 *  on every OS, so the Linux tests run it too. Recorded sysfs trees are a Linux notion: `try_harvest_sysfs`
 *  answers false here.
 */
#pragma once
#include <cstddef> // `std::size_t`

#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/hardware/detail/cores_portable.hpp>
#include <forkunion/topology/topology_facts.hpp>

namespace forkunion::detail {

/**
 *  @brief  A topology back end that knows no structure: one compute domain over cores `0 .. n-1`, where n is
 *          `cores_type_::allowed_count()` (at least 1), and one memory domain. Static members only, the interface
 *          of `topology_facts.hpp`.
 */
template <typename cores_type_>
struct single_domain_topology_source_t {
    static constexpr bool harvests_structure_k = false;
    using facts_t = topology_facts_t;

    /**  Cores `0 .. allowed_count() - 1`, at most `max_cpus_k` of them. */
    static void allowed_cores(cpu_mask_t &mask) noexcept {
        std::size_t count = cores_type_::allowed_count();
        if (count == 0) count = 1;
        if (count > max_cpus_k) count = max_cpus_k;
        mask.clear();
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

/**  @brief  The topology back end of last resort: the cores `std::thread::hardware_concurrency()` reports. */
using portable_topology_source_t = single_domain_topology_source_t<portable_cores_t>;

} // namespace forkunion::detail
