/**
 *  @file   forkunion/memory/allocators_common.hpp
 *  @brief  Vocabulary of memory placement, shared by every backend of `forkunion/memory/allocators.hpp`.
 *
 *  - `numa_node_id_t`: an OS NUMA node id (Linux: the N of `/sys/devices/system/node/nodeN`), and
 *    `any_numa_node_k`, which asks for no binding (the OS default policy: first touch).
 *  - `huge_page_2mib_k`, `huge_page_1gib_k`: page sizes a caller may ask for; 0 asks for base pages.
 *  - `memory_topology`: the duck type every placement call accepts, so the allocators need no topology header:
 *    anything with `memory_domains_count()` and `memory_node_id(domain)` (`machine_topology_t` has both), or
 *    `numa_nodes_t`, a view of a plain list of node ids.
 *  - `memory_mapping_t`: what a backend returns, and the contract every backend keeps (below).
 *
 *  @section backend The backend interface (every OS backend implements it; a selector picks one with `using`)
 *  A backend is a stateless type with static members only:
 *
 *      binds_nodes_k                    true if it places memory on nodes (Linux), false if it can only accept
 *                                       the single memory domain of a machine it cannot see into (portable).
 *      base_page_bytes()                the page size memory is backed with when no huge page is used.
 *      granule_bytes(huge_page_bytes)   the unit every length is rounded up to, and the alignment of every
 *                                       mapping; it depends only on the *requested* page size, never on what
 *                                       the kernel granted, so `deallocate(p, n)` recomputes the length alone.
 *      try_map(slice_bytes, slices, node_of, huge_page_bytes)
 *                                       maps `slices * slice_bytes` zeroed bytes, slice i bound to `node_of(i)`.
 *                                       Preconditions (checked by the caller, `allocators.hpp`): `slices > 0`,
 *                                       `slice_bytes > 0` and a multiple of the granule, the product does not
 *                                       overflow, every node passed `is_valid_numa_node`, the page size passed
 *                                       `is_valid_huge_page_request`. On failure nothing stays mapped.
 *      unmap(address, bytes)           releases what `try_map` returned, with the same total length.
 *
 *  Every function is `noexcept`, thread-safe and reentrant: backends keep no state.
 */
#pragma once
#include <cstddef>     // `std::size_t`
#include <cstdint>     // `SIZE_MAX`, `PTRDIFF_MAX`
#include <type_traits> // `std::is_signed_v`, `std::is_integral_v`
#include <utility>     // `std::declval`

#include <forkunion/base/types.hpp>

namespace forkunion {

/**  @brief  An OS NUMA node id: the N of Linux's `/sys/devices/system/node/nodeN`. */
using numa_node_id_t = int;

/**  @brief  "No binding": the memory follows the OS default policy, which on Linux places a page on the node of
 *          the thread that first touches it. */
inline constexpr numa_node_id_t any_numa_node_k = -1;

/**  @brief  What a topology's out-of-range domain or a malformed id turns into: refused at allocation with
 *          `invalid_argument_k`, before any system call. */
inline constexpr numa_node_id_t invalid_numa_node_k = -2;

/**  @brief  `max_numa_nodes_k` (see `types.hpp`) as a node id, for comparisons with signed ids. */
inline constexpr numa_node_id_t numa_node_id_limit_k = static_cast<numa_node_id_t>(max_numa_nodes_k);

/**  @brief  Page sizes a caller may ask for. Any power of two above the base page is accepted and passed to the
 *          kernel, which refuses the sizes the CPU lacks; these two are what x86-64 offers. 0 = base pages. */
inline constexpr std::size_t base_pages_k = 0;
inline constexpr std::size_t huge_page_2mib_k = std::size_t(2) << 20;
inline constexpr std::size_t huge_page_1gib_k = std::size_t(1) << 30;

/**  @brief  True for `any_numa_node_k` and for ids in `[0, max_numa_nodes_k)`. Existence is the kernel's call. */
constexpr bool is_valid_numa_node(numa_node_id_t node) noexcept {
    return node == any_numa_node_k || (node >= 0 && node < numa_node_id_limit_k);
}

/**  @brief  True for 0 (base pages) and for powers of two. */
constexpr bool is_valid_huge_page_request(std::size_t huge_page_bytes) noexcept {
    return (huge_page_bytes & (huge_page_bytes - 1)) == 0;
}

/**
 *  @brief  Converts whatever integer a topology returns for a node id, without letting a large unsigned
 *          "unknown" (such as `SIZE_MAX`) alias `any_numa_node_k` through a narrowing cast.
 *  @return The id when it is in `[0, max_numa_nodes_k)`, `any_numa_node_k` for a signed -1 only, and
 *          `invalid_numa_node_k` for anything else.
 */
template <typename integer_t>
constexpr numa_node_id_t to_numa_node_id(integer_t value) noexcept {
    if constexpr (std::is_signed_v<integer_t>) {
        if (value == -1) return any_numa_node_k;
        if (value < 0) return invalid_numa_node_k;
    }
    // Compared in the widest unsigned type: casting the bound down instead would wrap for narrow ids.
    return static_cast<unsigned long long>(value) < static_cast<unsigned long long>(max_numa_nodes_k)
               ? static_cast<numa_node_id_t>(value)
               : invalid_numa_node_k;
}

/**  @brief  `bytes` rounded up to a multiple of `granule` (a power of two) into `rounded`; false on overflow or
 *          past `PTRDIFF_MAX`, the largest object C++ can index. */
constexpr bool round_up_bytes(std::size_t bytes, std::size_t granule, std::size_t &rounded) noexcept {
    if (bytes > SIZE_MAX - (granule - 1)) return false;
    rounded = (bytes + (granule - 1)) & ~(granule - 1);
    return rounded <= static_cast<std::size_t>(PTRDIFF_MAX);
}

/**
 *  @brief  Anything that names the OS node of each of its memory domains: `machine_topology_t`, `numa_nodes_t`,
 *          or a test's fake. Memory domain `d` of an allocation striped over it is bound to `memory_node_id(d)`.
 */
template <typename topology_type_>
concept memory_topology = requires(topology_type_ const &topology, std::size_t domain) {
    requires std::is_convertible_v<decltype(topology.memory_domains_count()), std::size_t>;
    requires std::is_integral_v<std::remove_cvref_t<decltype(topology.memory_node_id(domain))>>;
};

/**
 *  @brief  A `memory_topology` over a caller's list of node ids (memory domain d = `nodes[d]`): from a pointer and
 *          a count, a C array, or any contiguous container of `numa_node_id_t` (`std::vector`, `std::array`,
 *          `std::span`), implicitly. A view: the list must outlive the call it is passed to, not the allocation.
 */
class numa_nodes_t {
    numa_node_id_t const *nodes_ = nullptr;
    std::size_t count_ = 0;

public:
    constexpr numa_nodes_t(numa_node_id_t const *nodes, std::size_t count) noexcept : nodes_(nodes), count_(count) {}
    /**  One domain on `node`. Binding to a temporary (`numa_nodes_t(0)`) is fine within one full expression. */
    constexpr explicit numa_nodes_t(numa_node_id_t const &node) noexcept : nodes_(&node), count_(1) {}
    template <std::size_t count_k>
    constexpr numa_nodes_t(numa_node_id_t const (&nodes)[count_k]) noexcept : nodes_(nodes), count_(count_k) {}
    template <typename container_t>
    requires std::is_convertible_v<decltype(std::declval<container_t const &>().data()), numa_node_id_t const *> &&
        std::is_convertible_v<decltype(std::declval<container_t const &>().size()), std::size_t>
    constexpr numa_nodes_t(container_t const &nodes) noexcept // NOLINT(google-explicit-constructor)
        : nodes_(nodes.data()), count_(static_cast<std::size_t>(nodes.size())) {}

    constexpr std::size_t memory_domains_count() const noexcept { return count_; }
    constexpr numa_node_id_t memory_node_id(std::size_t domain) const noexcept { return nodes_[domain]; }
};

/**  @brief  What a backend's `try_map` returns: the mapping, the page size that really backs it, and a status
 *          (`bad_alloc_k` when the memory is not there, `placement_refused_k` when the OS refused a binding). */
struct memory_mapping_t {
    void *address = nullptr;
    std::size_t page_bytes = 0;
    status_t status{};
};

} // namespace forkunion
