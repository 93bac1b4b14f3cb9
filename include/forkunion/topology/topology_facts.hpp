/**
 *  @file   forkunion/topology/topology_facts.hpp
 *  @brief  `topology_facts_t`: the plain data every topology back end fills and `machine_topology_t` answers from.
 *
 *  The one interface between the OS back ends (`topology_linux.hpp`, `topology_portable.hpp`) and the queries of
 *  `topology.hpp`: each back end lives in its own header and fills the same plain data. A back end builds a complete
 *  `topology_facts_t` on the side and hands it over only when every step succeeded, so a topology is never half-filled.
 *  Construction allocates (`detail::array_t`), which may throw `std::bad_alloc`; the callers in `topology.hpp` catch it
 *  and report a failed harvest.
 *
 *  Invariants every back end establishes (and `test/topology/topology_test.cpp` checks on every tree it harvests):
 *  - at least one compute and one memory domain;
 *  - `cores` is the concatenation of the compute domains' cores, each run ascending, no id twice in the whole;
 *  - every `memory_domain` of a compute domain is a valid memory-domain index;
 *  - levels are dense: `0 .. compute_levels - 1`, each used by some domain;
 *  - `distances` is `memory.size()` squared, row-major, 0 = not declared;
 *  - memory domains ascend by `node_id`; each one's huge-page run ascends by page size.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/base/array.hpp>

namespace forkunion {

/**
 *  @brief  Where a figure came from, so that a comparison with another tool compares only what both know.
 *  - `unknown_k`: no source answered; the figure is 0.
 *  - `os_k`: the operating system's description (sysfs on Linux, the processor-information call on Windows); for a
 *    cache, 0 then means the OS lists caches but none is private to the domain.
 *  - `cpuid_k`: the processor's own description (`calling_cpu_caches()`), used only where the OS lists no cache.
 */
enum class fact_source_t : std::uint8_t { unknown_k = 0, os_k = 1, cpuid_k = 2 };

/**  @brief  One compute domain: a run of `topology_facts_t::cores` and what is known about those cores. */
struct compute_domain_facts_t {
    std::size_t first_core = 0;    ///< Offset of the domain's first core in `topology_facts_t::cores`.
    std::size_t cores_count = 0;   ///< Cores in the domain, at least 1.
    std::size_t memory_domain = 0; ///< Index of the memory domain local to these cores.
    std::size_t level = 0;         ///< Dense rank of the capacity class; higher = faster.
    std::size_t capacity = 0;      ///< Largest `cpu_capacity` in the class (1024 = the fastest core), 0 unknown.
    std::uint64_t cache_bytes = 0; ///< Largest data or unified cache no core outside the domain shares; 0 unknown.
    fact_source_t cache_source = fact_source_t::unknown_k; ///< Where `cache_bytes` came from.
};

/**  @brief  Free huge pages of one page size. */
struct huge_pages_facts_t {
    std::uint64_t page_bytes = 0; ///< e.g. 2 MiB or 1 GiB.
    std::uint64_t free_pages = 0; ///< `free_hugepages`: pages an allocation can still take.
};

/**  @brief  One memory domain: a NUMA node (CPU-less ones included). */
struct memory_domain_facts_t {
    std::size_t node_id = 0;          ///< The OS node id (`nodeN`); ids may be sparse.
    std::uint64_t ram_bytes = 0;      ///< `MemTotal` of the node; 0 unknown.
    std::size_t first_huge_pages = 0; ///< Offset of this domain's run in `topology_facts_t::huge_pages`.
    std::size_t huge_page_sizes = 0;  ///< Length of that run.
};

/**
 *  @brief  Everything a harvest learned. See the file comment for the invariants. Use `topology_facts_t`.
 *
 *  A template with no meaningful parameter, only so that a translation unit that includes the umbrella but never
 *  builds a topology instantiates none of its arrays' code (`.ci/compile_cost.sh` holds the umbrella to 1.25x a
 *  `<thread>` hello world).
 */
template <typename = void>
struct basic_topology_facts_t {
    detail::array_t<std::uint32_t> cores;
    detail::array_t<compute_domain_facts_t> compute;
    detail::array_t<memory_domain_facts_t> memory;
    detail::array_t<huge_pages_facts_t> huge_pages;        ///< Per memory domain, in runs.
    detail::array_t<huge_pages_facts_t> global_huge_pages; ///< Machine-wide, one entry per page size.
    detail::array_t<std::uint8_t> distances;               ///< `memory.size()²`, row-major; 0 = not declared.
    std::size_t compute_levels = 1;
    std::size_t online_cores = 0; ///< Online cores of the machine, whether or not this process may use them.
    bool harvested = false;       ///< False for the one-domain stand-in used before or without a harvest.

    /**  The ACPI SLIT distance of a node from itself. */
    static constexpr std::uint8_t local_distance_k = 10;
};

using topology_facts_t = basic_topology_facts_t<>;

/**
 *  @brief  Makes `facts` the stand-in: one compute domain over `allowed` (or over CPU 0 if it is empty), one memory
 *          domain (node 0, RAM unknown) at declared distance 10 from itself, `harvested` false.
 *  @throws std::bad_alloc
 *  A template (over `topology_facts_t`) for the same reason as `basic_topology_facts_t`.
 */
template <typename facts_t>
void assign_single_domain(facts_t &facts, cpu_mask_t const &allowed) {
    facts.cores.clear(), facts.compute.clear(), facts.memory.clear();
    facts.huge_pages.clear(), facts.global_huge_pages.clear();
    for (std::size_t id = allowed.first(); id != cpu_mask_t::npos_k; id = allowed.next_from(id + 1))
        facts.cores.push_back(static_cast<std::uint32_t>(id));
    if (facts.cores.empty()) facts.cores.push_back(0);
    compute_domain_facts_t domain;
    domain.cores_count = facts.cores.size();
    facts.compute.push_back(domain);
    facts.memory.push_back(memory_domain_facts_t{});
    facts.distances.assign(1, facts_t::local_distance_k);
    facts.compute_levels = 1;
    facts.online_cores = facts.cores.size();
    facts.harvested = false;
}

} // namespace forkunion
