/**
 *  @file   forkunion/memory/detail/allocators_portable.hpp
 *  @brief  `portable_memory_backend_t`: aligned `operator new`, for platforms where forkunion cannot place memory.
 *
 *  The fallback backend of `forkunion/memory/allocators.hpp` (the interface is in `allocators_common.hpp`). It compiles
 *  everywhere and is tested on Linux too. It sees the machine as one memory domain, node 0:
 *  - a range for `any_numa_node_k` or node 0 is served; any other node is refused with `placement_refused_k`,
 *    never silently served from wherever the heap happens to be;
 *  - huge pages are never used: `page_bytes` reports the 4 KiB granule, the honest answer to "what backs it";
 *  - memory is zeroed, like the anonymous pages of the Linux backend, so containers over either start equal.
 */
#pragma once
#include <cstring> // `std::memset`
#include <new>     // `std::align_val_t`, `std::nothrow`

#include <forkunion/memory/allocators_common.hpp>

namespace forkunion::detail {

/**
 *  @brief  Aligned `operator new` behind the backend interface. Stateless; every member is static, `noexcept`,
 *          and safe to call from any thread (it inherits the thread safety of the global `operator new`).
 */
struct portable_memory_backend_t {
    static constexpr bool binds_nodes_k = false;

    /**  @brief  Rounding unit and alignment: 4 KiB, the smallest base page of mainstream CPUs, so two slices
     *          never share a page (or a cache line) where pages are 4 KiB, whatever the allocator underneath. */
    static constexpr std::size_t granule_k = 4096;

    static constexpr std::size_t base_page_bytes() noexcept { return granule_k; }
    static constexpr std::size_t granule_bytes(std::size_t) noexcept { return granule_k; }

    /**  @brief  Allocates `slices * slice_bytes` zeroed bytes if every slice asks for node 0 or any node.
     *  @return The block with `page_bytes == granule_k`; or null with `placement_refused_k` (another node) or
     *          `bad_alloc_k` (the heap is out of memory). */
    template <typename node_of_t>
    static memory_mapping_t try_map(std::size_t slice_bytes, std::size_t slices, node_of_t const &node_of,
                                    std::size_t) noexcept {
        for (std::size_t slice = 0; slice != slices; ++slice)
            if (numa_node_id_t const node = node_of(slice); node != any_numa_node_k && node != 0)
                return {nullptr, 0, status_code_t::placement_refused_k};
        std::size_t const bytes = slice_bytes * slices;
        void *address = ::operator new(bytes, std::align_val_t(granule_k), std::nothrow);
        if (!address) return {nullptr, 0, status_code_t::bad_alloc_k};
        std::memset(address, 0, bytes);
        return {address, granule_k};
    }

    /**  @brief  Frees a block `try_map` returned, given its total length. Null is a no-op. */
    static void unmap(void *address, std::size_t bytes) noexcept {
        (void)bytes; // unsized: Clang declares the sized aligned form only under `-fsized-deallocation`
        if (address) ::operator delete(address, std::align_val_t(granule_k));
    }
};

} // namespace forkunion::detail
