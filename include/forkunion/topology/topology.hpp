/**
 *  @file   forkunion/topology/topology.hpp
 *  @brief  `machine_topology_t`: the compute and memory domains of the machine, as the OS declares them.
 *
 *  A machine has two axes. A **compute domain** is a group of cores that share a NUMA node and a capacity
 *  (QoS) class: what a pool spawns onto and pins its threads to. A **memory domain** is a NUMA node, CPU-less ones
 *  (CXL, HBM) included: what an allocator binds pages to. `local_memory_of(d)` bridges them. Compute domains
 *  carry dense **levels**, higher = faster (capacity classes ranked across the machine). What the hardware
 *  *measures* (latency, bandwidth, memory levels) is the Fabric's business, not this header's.
 *
 *  @code
 *  fu::machine_topology_t topology;
 *  if (!topology.try_harvest()) std::puts("no topology: one domain of all allowed cores");
 *  for (std::size_t d = 0; d != topology.compute_domains_count(); ++d)
 *      for (std::uint32_t core : topology.cores_in(d)) use(d, core, topology.local_memory_of(d));
 *  @endcode
 *
 *  @section harvest Harvests
 *  - `try_harvest()`: the running OS. On Linux: sysfs, narrowed to the calling thread's affinity mask (so
 *    `taskset -c 0` sees one core). On Windows: `GetLogicalProcessorInformationEx`, every processor group,
 *    narrowed to the process's affinity mask. On WebAssembly: one domain of the threads the host can run.
 *    Elsewhere: one domain of `std::thread::hardware_concurrency()` cores.
 *  - `try_harvest_from_sysfs(root)`: a recorded Linux tree, where `root` stands for `/` (so it reads
 *    `root/sys/devices/system/node/…`); not narrowed by this process's mask. An overload narrows it to a given
 *    `cpu_mask_t`. On other OSes it answers false.
 *  - `try_harvest_from_processor_information(buffer, bytes)`: a recorded Windows
 *    `GetLogicalProcessorInformationEx(RelationAll)` buffer, on any OS (the rules are in
 *    `forkunion/topology/detail/topology_windows.hpp`); not narrowed by this process's mask. An overload narrows it.
 *  A harvest either succeeds whole or returns false and leaves the object answering exactly as before; it never
 *  half-fills. It fails when no usable CPU can be found (no sysfs, no online CPU, none allowed) or memory runs
 *  out. The rules that turn sysfs files into domains are written once, in `forkunion/topology/detail/topology_linux.hpp`.
 *
 *  @section fallback Before, or without, a harvest
 *  A default-constructed topology, and one whose harvests all failed, answers for **one compute domain and one
 *  memory domain** over the cores this thread may run on (its affinity mask on Linux): level 0, capacity 0,
 *  cache 0, RAM 0, no huge pages, node id 0, declared distance 10 from itself. Code that never checks
 *  `try_harvest` still gets a working single-domain machine.
 *
 *  @section queries Queries
 *  Every query is `const`, `noexcept`, allocation-free and O(1), except the totals (a sum over memory domains)
 *  and the huge-page queries (a sum over page sizes). Domain indices are dense `std::size_t` from 0. An index out
 *  of range is not undefined behaviour: counts, sizes, levels and ids answer 0, `cores_in` answers an empty
 *  view, `local_memory_of` answers 0. Byte counts are `std::uint64_t` (RAM exceeds 4 GiB on 32-bit hosts too).
 *  0 also means "unknown" for capacities, caches, RAM and distances.
 *
 *  @section threads Threads and lifetime
 *  Immutable between harvests: any number of threads may query a topology concurrently. A harvest is a write:
 *  it must not run concurrently with queries or another harvest of the same object, and it invalidates the views
 *  `cores_in` returned. Copying and moving work like `std::vector` (copies allocate and may throw).
 *
 *  @section backends Back ends
 *  `basic_machine_topology_t<source_t>` answers from a `topology_facts_t` that a source fills:
 *  `detail::linux_topology_source_t` (`topology_linux.hpp`), `detail::windows_topology_source_t`
 *  (`topology_windows.hpp`), `detail::wasm_topology_source_t` (`topology_wasm.hpp`) or
 *  `detail::portable_topology_source_t` (`topology_portable.hpp`); `topology_source_t` picks the one for this OS,
 *  and `machine_topology_t` uses it.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/topology/topology_facts.hpp>
#include <forkunion/topology/detail/topology_linux.hpp>
#include <forkunion/topology/detail/topology_portable.hpp>
#include <forkunion/topology/detail/topology_wasm.hpp>
#include <forkunion/topology/detail/topology_windows.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/topology/deprecated.hpp>

namespace forkunion {

#if FORKUNION_OS_LINUX
using topology_source_t = detail::linux_topology_source_t;
#elif FORKUNION_OS_WINDOWS
using topology_source_t = detail::windows_topology_source_t;
#elif FORKUNION_OS_WASM
using topology_source_t = detail::wasm_topology_source_t;
#else
using topology_source_t = detail::portable_topology_source_t;
#endif

/**
 *  @brief  The machine's compute and memory domains. See the file comment for the contract.
 *  @tparam source_type_  The back end that harvests: `detail::linux_topology_source_t` or
 *  `detail::portable_topology_source_t`.
 */
template <typename source_type_ = topology_source_t>
class basic_machine_topology_t {
public:
    using source_t = source_type_;
    /**  The facts a source fills: `topology_facts_t`. Named through `source_t` so that nothing of it is
     *  instantiated before this class is (compile cost). */
    using facts_t = typename source_t::facts_t;

private:
    facts_t facts_;

    /**  Takes `harvest` if `attempt` filled it; false (and no change) otherwise or if memory ran out. */
    template <typename attempt_t>
    bool try_replace_(attempt_t &&attempt) noexcept {
        FORKUNION_TRY {
            facts_t harvest;
            if (!attempt(harvest)) return false;
            facts_ = static_cast<facts_t &&>(harvest); // vector moves: no allocation, no throw
            return true;
        }
        FORKUNION_CATCH_ALL { // `std::bad_alloc` (or `std::length_error`) from the vectors: nothing was replaced
            return false;
        }
    }

    compute_domain_facts_t const *compute_(std::size_t d) const noexcept {
        return d < facts_.compute.size() ? &facts_.compute[d] : nullptr;
    }
    memory_domain_facts_t const *memory_(std::size_t m) const noexcept {
        return m < facts_.memory.size() ? &facts_.memory[m] : nullptr;
    }
    static std::uint64_t sum_pages_(huge_pages_facts_t const *pages, std::size_t count, bool bytes) noexcept {
        std::uint64_t total = 0;
        for (std::size_t i = 0; i != count; ++i)
            total += bytes ? pages[i].free_pages * pages[i].page_bytes : pages[i].free_pages;
        return total;
    }

public:
    /**
     *  @brief  The single-domain stand-in over the calling thread's allowed cores (one system call on Linux).
     *          If even that cannot be allocated (or after a move), `cores_in(0)` is empty while the counts still
     *          answer 1.
     */
    basic_machine_topology_t() noexcept {
        cpu_mask_t allowed;
        source_t::allowed_cores(allowed);
        FORKUNION_TRY {
            assign_single_domain(facts_, allowed);
        }
        FORKUNION_CATCH_ALL {
            facts_ = facts_t{}; // empty vectors: the queries answer for one core-less domain
        }
    }

    /**
     *  @brief  Harvests the running OS: sysfs narrowed by this thread's affinity mask on Linux, one domain of
     *          `hardware_concurrency()` cores elsewhere. Blocking (file reads); not concurrent with queries.
     *  @return True if the object now describes the machine; false leaves it answering as before.
     */
    [[nodiscard]] bool try_harvest() noexcept {
        return try_replace_([](facts_t &harvest) { return source_t::try_harvest_live(harvest); });
    }

    /**
     *  @brief  Harvests a recorded sysfs tree in which `root` stands for `/` (Linux only; false elsewhere).
     *          Every online CPU of the tree counts, whatever this process's affinity.
     */
    [[nodiscard]] bool try_harvest_from_sysfs(char const *root) noexcept {
        return try_replace_([&](facts_t &harvest) { return source_t::try_harvest_sysfs(root, nullptr, harvest); });
    }

    /**
     *  @brief  Harvests a recorded sysfs tree narrowed to the CPUs of `allowed`, as if this process's affinity
     *          mask were `allowed`. False if no online CPU of the tree is in `allowed`.
     */
    [[nodiscard]] bool try_harvest_from_sysfs(char const *root, cpu_mask_t const &allowed) noexcept {
        return try_replace_([&](facts_t &harvest) { return source_t::try_harvest_sysfs(root, &allowed, harvest); });
    }

    /**
     *  @brief  Harvests a recorded Windows `GetLogicalProcessorInformationEx(RelationAll)` buffer of `bytes`
     *          bytes (64-bit layout), on any OS. Every active processor of the buffer counts. False if the buffer
     *          has no processor-group record before its framing breaks, or no active processor.
     */
    [[nodiscard]] bool try_harvest_from_processor_information(void const *buffer, std::size_t bytes) noexcept {
        return try_replace_([&](facts_t &harvest) {
            return detail::windows_topology_parser_t::try_parse(buffer, bytes, nullptr, harvest);
        });
    }

    /**  @brief  The same, narrowed to the CPU ids of `allowed` (dense across groups). */
    [[nodiscard]] bool try_harvest_from_processor_information(void const *buffer, std::size_t bytes,
                                                              cpu_mask_t const &allowed) noexcept {
        return try_replace_([&](facts_t &harvest) {
            return detail::windows_topology_parser_t::try_parse(buffer, bytes, &allowed, harvest);
        });
    }

    /**  @brief  Whether a harvest succeeded (false for the single-domain stand-in). */
    bool harvested() const noexcept { return facts_.harvested; }

    /**  @brief  The raw facts every query reads; for bindings and reports. */
    facts_t const &facts() const noexcept { return facts_; }

    // Compute axis.

    /**  @brief  Compute domains: (NUMA node with usable cores) × (capacity class), by node then by class; >= 1. */
    std::size_t compute_domains_count() const noexcept { return facts_.compute.empty() ? 1 : facts_.compute.size(); }

    /**  @brief  Distinct capacity classes among the usable cores; >= 1. */
    std::size_t compute_levels_count() const noexcept { return facts_.compute_levels; }

    /**  @brief  The level of compute domain `d`: the rank of its capacity class, 0 = slowest. */
    std::size_t compute_level_in(std::size_t d) const noexcept { return compute_(d) ? compute_(d)->level : 0; }

    /**  @brief  Cores in all compute domains: the online cores this harvest may use (the allowed ones). */
    std::size_t logical_cores_count() const noexcept { return facts_.cores.empty() ? 1 : facts_.cores.size(); }

    /**  @brief  Cores of compute domain `d`; 0 if `d` is out of range. */
    std::size_t logical_cores_count_in(std::size_t d) const noexcept {
        if (compute_(d)) return compute_(d)->cores_count;
        return d < compute_domains_count() ? 1 : 0; // the core-less stand-in after a failed allocation
    }

    /**
     *  @brief  The OS CPU ids of compute domain `d`, ascending; empty if `d` is out of range. Valid until the
     *          next harvest of this object or its destruction. Convertible to `std::span<std::uint32_t const>`.
     */
    core_ids_t cores_in(std::size_t d) const noexcept {
        compute_domain_facts_t const *domain = compute_(d);
        if (!domain || domain->first_core + domain->cores_count > facts_.cores.size()) return {};
        return {facts_.cores.data() + domain->first_core, domain->cores_count};
    }

    /**
     *  @brief  The kernel's rating of domain `d`'s cores (`cpu_capacity`): 1024 for the fastest core of the
     *          machine, the class's largest value; 0 where the kernel publishes none (x86 before hybrid support).
     */
    std::size_t compute_capacity_in(std::size_t d) const noexcept { return compute_(d) ? compute_(d)->capacity : 0; }

    /**
     *  @brief  The largest data or unified cache of domain `d` that no online core outside `d` shares, in bytes
     *          (often the L3 of a node, the L2 of a core cluster); 0 if unknown.
     */
    std::uint64_t compute_cache_bytes_in(std::size_t d) const noexcept {
        return compute_(d) ? compute_(d)->cache_bytes : 0;
    }

    /**
     *  @brief  Where `compute_cache_bytes_in(d)` came from: `os_k` (sysfs, or Windows' processor information),
     *          `cpuid_k` (the processor's own description, where the OS lists no cache), or `unknown_k` (also for
     *          an out-of-range `d`). A comparison with another tool should compare only figures both sides know.
     */
    fact_source_t compute_cache_source_in(std::size_t d) const noexcept {
        return compute_(d) ? compute_(d)->cache_source : fact_source_t::unknown_k;
    }

    /**  @brief  The memory domain local to compute domain `d` (its NUMA node's index); 0 if out of range. */
    std::size_t local_memory_of(std::size_t d) const noexcept { return compute_(d) ? compute_(d)->memory_domain : 0; }

    /**
     *  @brief  The cores this harvest may use: the allowed online cores, every one of which sits in exactly one
     *          compute domain, so this equals `logical_cores_count()`. Mirrors the free `allowed_cores_count()`.
     */
    std::size_t allowed_cores_count() const noexcept { return logical_cores_count(); }

    /**  @brief  Online cores of the machine, including those this harvest may not use; >= 1. */
    std::size_t online_cores_count() const noexcept {
        return facts_.online_cores ? facts_.online_cores : logical_cores_count();
    }

    // Memory axis.

    /**
     *  @brief  Memory domains: every online NUMA node, CPU-less ones included, by node id; >= 1. A node may also be
     *          memory-less (`volume_ram_in` 0): binding pages there fails, so allocators should check.
     */
    std::size_t memory_domains_count() const noexcept { return facts_.memory.empty() ? 1 : facts_.memory.size(); }

    /**  @brief  The OS node id of memory domain `m` (ids can be sparse: 0, 1, 4, 5, …); 0 if out of range. */
    std::size_t memory_node_id(std::size_t m) const noexcept { return memory_(m) ? memory_(m)->node_id : 0; }

    /**  @brief  Installed RAM of the machine in bytes (the sum over memory domains); 0 if unknown. */
    std::uint64_t volume_ram() const noexcept {
        std::uint64_t total = 0;
        for (memory_domain_facts_t const &domain : facts_.memory) total += domain.ram_bytes;
        return total;
    }

    /**  @brief  Installed RAM of memory domain `m` in bytes (`MemTotal`); 0 if unknown or out of range. */
    std::uint64_t volume_ram_in(std::size_t m) const noexcept { return memory_(m) ? memory_(m)->ram_bytes : 0; }

    /**
     *  @brief  Free huge pages of the machine, summed over page sizes: the kernel's global pools
     *          (`/sys/kernel/mm/hugepages`), or the sum over domains where those are not published.
     */
    std::size_t huge_pages_count() const noexcept {
        return static_cast<std::size_t>(
            facts_.global_huge_pages.empty()
                ? sum_over_domains_(false)
                : sum_pages_(facts_.global_huge_pages.data(), facts_.global_huge_pages.size(), false));
    }

    /**  @brief  Free huge pages of memory domain `m`, summed over page sizes; 0 if out of range. */
    std::size_t huge_pages_count_in(std::size_t m) const noexcept {
        return memory_(m) ? static_cast<std::size_t>(sum_pages_(facts_.huge_pages.data() + memory_(m)->first_huge_pages,
                                                                memory_(m)->huge_page_sizes, false))
                          : 0;
    }

    /**  @brief  Free huge pages of exactly `page_bytes` (e.g. `2 << 20`) in memory domain `m`; 0 if none. */
    std::size_t huge_pages_count_in(std::size_t m, std::uint64_t page_bytes) const noexcept {
        for (std::size_t i = 0; i != huge_page_sizes_count_in(m); ++i)
            if (huge_page_size_in(m, i) == page_bytes)
                return static_cast<std::size_t>(facts_.huge_pages[memory_(m)->first_huge_pages + i].free_pages);
        return 0;
    }

    /**  @brief  Bytes of free huge pages of the machine (Σ free pages × page size); see `huge_pages_count`. */
    std::uint64_t volume_huge_pages() const noexcept {
        return facts_.global_huge_pages.empty()
                   ? sum_over_domains_(true)
                   : sum_pages_(facts_.global_huge_pages.data(), facts_.global_huge_pages.size(), true);
    }

    /**  @brief  Bytes of free huge pages of memory domain `m`, over all page sizes; 0 if out of range. */
    std::uint64_t volume_huge_pages_in(std::size_t m) const noexcept {
        return memory_(m) ? sum_pages_(facts_.huge_pages.data() + memory_(m)->first_huge_pages,
                                       memory_(m)->huge_page_sizes, true)
                          : 0;
    }

    /**  @brief  How many huge-page sizes memory domain `m` publishes (0 if none or out of range). */
    std::size_t huge_page_sizes_count_in(std::size_t m) const noexcept {
        return memory_(m) ? memory_(m)->huge_page_sizes : 0;
    }

    /**  @brief  The `i`-th huge-page size of memory domain `m` in bytes, ascending; 0 if out of range. */
    std::uint64_t huge_page_size_in(std::size_t m, std::size_t i) const noexcept {
        return i < huge_page_sizes_count_in(m) ? facts_.huge_pages[memory_(m)->first_huge_pages + i].page_bytes : 0;
    }

    /**
     *  @brief  The distance the firmware declares from memory domain `a` to `b` (`nodeN/distance`, ACPI SLIT
     *          scale: 10 = local, 20 ≈ twice the cost). 10 on the diagonal; 0 where undeclared or out of range.
     *          Declared, not measured: the Fabric measures.
     */
    std::size_t declared_distance(std::size_t a, std::size_t b) const noexcept {
        std::size_t const count = memory_domains_count();
        if (a >= count || b >= count) return 0;
        if (facts_.distances.size() != count * count) return a == b ? facts_t::local_distance_k : 0;
        return facts_.distances[a * count + b];
    }

private:
    std::uint64_t sum_over_domains_(bool bytes) const noexcept {
        return sum_pages_(facts_.huge_pages.data(), facts_.huge_pages.size(), bytes);
    }
};

/**  @brief  The topology of this OS's back end (`topology_source_t`). */
using machine_topology_t = basic_machine_topology_t<>;

} // namespace forkunion
