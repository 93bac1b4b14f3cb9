/**
 *  @file   forkunion/detail/topology_wasm.hpp
 *  @brief  The WebAssembly back end of `forkunion/topology.hpp`: `wasm_topology_source_t`.
 *
 *  A WebAssembly module sees no processor, cache or memory structure: one compute domain over the threads the
 *  host can run (`wasm_cores_t`: the host's logical cores with `-pthread`, one without), ids `0 .. n-1`, and one
 *  memory domain of unknown size (the module's linear memory is one flat space). The rules are the portable
 *  back end's; only the core count differs. Declared only for emscripten targets.
 */
#pragma once
#include <cstddef> // `std::size_t`

#include <forkunion/cpu_mask.hpp>
#include <forkunion/detail/cores_wasm.hpp>
#include <forkunion/topology_facts.hpp>
#include <forkunion/types.hpp>

#if FORKUNION_OS_WASM
namespace forkunion::detail {

struct wasm_topology_source_t {
    static constexpr bool harvests_structure_k = false;
    using facts_t = topology_facts_t;

    /**  Cores `0 .. allowed_count() - 1`. */
    static void allowed_cores(cpu_mask_t &mask) noexcept {
        std::size_t count = wasm_cores_t::allowed_count();
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

} // namespace forkunion::detail
#endif // FORKUNION_OS_WASM
