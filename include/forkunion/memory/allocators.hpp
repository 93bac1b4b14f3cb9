/**
 *  @file   forkunion/memory/allocators.hpp
 *  @brief  Memory placed on NUMA nodes: an STL allocator per node, symmetric ranges striped one slice per memory
 *          domain, and the sharded and replicated arrays built on them.
 *
 *  @section use When to use it, and when not
 *  Use it for the large, long-lived arrays that parallel loops stream through: a shard per memory domain that the
 *  threads of that domain scan, or a read-mostly table replicated next to every domain. Every allocation is an
 *  `mmap` plus one `mbind` per slice, and every page then faults in on first touch: on a 2-vCPU KVM guest of a
 *  Xeon (a one-off loop of 2000 allocations) an allocate-and-free took 2.5-6 us unbound and 10-22 us bound, and first
 *  touch 2-7 us per 4 KiB page (64 MiB: ~70 ms on 4 KiB pages, ~18 ms on 2 MiB pages). Do not use it for small or
 *  short-lived objects (each allocation takes at least a whole page); allocate up front, and let dispatches run
 *  allocation-free.
 *
 *  @section api API
 *  - `basic_domain_allocator_t<T, backend>`: an STL allocator bound to one node (or `any_numa_node_k`), on base
 *    pages or on huge pages with fallback. `allocate_at_least(n)` returns the pointer, the element count the
 *    rounded length really holds, and the page size really used. Aliases: `domain_allocator_t<T>` (this
 *    platform's backend), `linux_numa_allocator_t<T>` (Linux), `portable_allocator_t<T>` (aligned `operator new`).
 *  - `basic_symmetric_memory_allocator_t<backend>` (`symmetric_memory_allocator_t`): one virtual range of
 *    `slices * slice_bytes`, slice d bound to memory domain d's node (`fu_allocate_symmetric` in C).
 *  - `sharded_array_t<T>`: `count` elements split over the memory domains with `for_n`'s static split.
 *  - `replicated_array_t<T>`: `count` elements, one full copy per memory domain.
 *  Everything that places memory takes a `memory_topology`: `machine_topology_t`, or `numa_nodes_t` over a list of
 *  OS node ids, or any type with `memory_domains_count()` and `memory_node_id(domain)`.
 *
 *  @section layout Layout of a symmetric range
 *
 *      address ─┬─ slice 0: slice_bytes, bound to memory_node_id(0)
 *               ├─ slice 1: slice_bytes, bound to memory_node_id(1)
 *               └─ …         slice d starts at address + d * slice_bytes
 *
 *  `slice_bytes` is the request rounded up to the granule (the requested huge page, else the base page), so every
 *  slice starts on a page boundary and no page straddles two nodes. A sharded array stores shard d, the d-th block
 *  of `static_slice(count, domains, d)`, at the start of slice d; a replicated array stores replica d there.
 *
 *  @section failure Failure
 *  Nothing here is silently ignored: memory is never returned unplaced because `mbind` failed.
 *  - a node the OS refuses (absent, memory-less, outside the cpuset, `mbind` denied): `placement_refused_k`;
 *  - a node id outside `[0, 1024)` other than `any_numa_node_k`, a topology domain out of range, zero domains,
 *    a page size that is not a power of two: `invalid_argument_k`, before any system call;
 *  - no memory or address space, a length that overflows: `bad_alloc_k`.
 *  `try_*` calls return these with a null pointer and leave nothing mapped; the STL `allocate` and
 *  `allocate_at_least` throw `std::bad_alloc` (`std::bad_array_new_length` past `max_size()`), or call
 *  `std::abort()` where exceptions are off (`FORKUNION_EXCEPTIONS` is 0): use `try_*` there. Whether a node
 *  exists is decided at allocation, by the kernel, not at construction: cpusets and hot-plug change it at run time.
 *  A huge-page request the kernel cannot serve is not a failure: it falls back to base pages and `page_bytes`
 *  says so (check it, and deallocate, if only huge pages will do).
 *
 *  @section threads Which threads may call what
 *  Allocators are immutable values: any thread may allocate and deallocate at any time, concurrently; memory may
 *  be freed by another thread than the one that allocated it. Arrays are like `std::vector`: `const` members from
 *  any number of threads; distinct elements written from any threads; `try_allocate`, `reset`, assignment and
 *  destruction by one thread with no concurrent access. None of them synchronizes memory: publish the arrays to a
 *  pool the usual way (a dispatch happens-after everything its dispatcher did before it).
 *
 *  @section backends Backends (one per OS, each in its own header, behind one interface)
 *  The backend interface is in `allocators_common.hpp`; `memory_backend_t` picks one:
 *  | backend                      | header                    | places memory with                       |
 *  | ---------------------------- | ------------------------- | ---------------------------------------- |
 *  | `detail::linux_memory_backend_t`     | `allocators_linux.hpp`    | `mmap` + `mbind(MPOL_BIND)` + huge pages |
 *  | `detail::windows_memory_backend_t`   | `allocators_windows.hpp`  | `VirtualAllocExNuma` (preferred node) + large pages |
 *  | `detail::portable_memory_backend_t`  | `allocators_portable.hpp` | aligned `operator new`, node 0 only      |
 */
#pragma once
#include <cstddef>     // `std::size_t`, `std::byte`
#include <cstdint>     // `PTRDIFF_MAX`
#include <cstring>     // `std::memcpy`
#include <new>         // `std::bad_alloc`, `std::bad_array_new_length`
#include <type_traits> // `std::true_type`, `std::is_trivially_copyable_v`
#include <utility>     // `std::declval`
#if defined(__GLIBCXX__) && __has_include(<bits/stl_iterator_base_types.h>)
#include <bits/stl_iterator_base_types.h> // `std::random_access_iterator_tag`
#else
#include <iterator> // `std::random_access_iterator_tag`
#endif

#include <forkunion/memory/allocators_common.hpp>
#include <forkunion/memory/detail/allocators_linux.hpp>
#include <forkunion/memory/detail/allocators_portable.hpp>
#include <forkunion/memory/detail/allocators_windows.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/memory/deprecated.hpp>

namespace forkunion {

#if FORKUNION_OS_LINUX
using memory_backend_t = detail::linux_memory_backend_t;
#elif FORKUNION_OS_WINDOWS
using memory_backend_t = detail::windows_memory_backend_t;
#else
using memory_backend_t = detail::portable_memory_backend_t;
#endif

/**  @brief  True where this build can place memory on NUMA nodes (Linux binds, Windows prefers); elsewhere only
 *          node 0 is served. */
inline constexpr bool memory_placement_k = memory_backend_t::binds_nodes_k;

/**
 *  @brief  A range striped one slice per memory domain, as returned by `try_allocate`. A plain value: it owns
 *          nothing by itself; hand it back to the allocator's `deallocate` (or own it with the arrays below).
 */
struct symmetric_region_t {
    std::byte *address = nullptr; ///< Slice 0; null on failure or when `slice_bytes == 0`.
    std::size_t slice_bytes = 0;  ///< The real length of each slice: the request rounded up to the granule.
    std::size_t slices_count = 0; ///< One per memory domain of the topology it was allocated over.
    std::size_t page_bytes = 0;   ///< The page size that really backs it (the huge page, or the base page).
    status_t status{};            ///< Success, or why `address` is null.

    /**  @brief  The first byte of slice `slice`. @pre `slice_t < slices_count`. */
    std::byte *slice(std::size_t slice) const noexcept { return address + slice * slice_bytes; }
    std::size_t total_bytes() const noexcept { return slice_bytes * slices_count; }
};

/**
 *  @brief  Allocates symmetric ranges: `slices * slice_bytes`, slice d bound to the node of memory domain d.
 *
 *  Holds only the requested huge page size (0 = base pages), so it is a cheap immutable value; every member is
 *  `noexcept` and may be called from any thread concurrently.
 */
template <typename backend_type_ = memory_backend_t>
class basic_symmetric_memory_allocator_t {
    std::size_t huge_page_bytes_ = base_pages_k;

public:
    using backend_t = backend_type_;

    constexpr basic_symmetric_memory_allocator_t() noexcept = default;
    /**  @param huge_page_bytes  0 for base pages, or a huge page size such as `huge_page_2mib_k`. */
    constexpr explicit basic_symmetric_memory_allocator_t(std::size_t huge_page_bytes) noexcept
        : huge_page_bytes_(huge_page_bytes) {}

    constexpr std::size_t huge_page_bytes() const noexcept { return huge_page_bytes_; }
    /**  @brief  The unit slices are rounded up to (and aligned on). */
    std::size_t granule_bytes() const noexcept { return backend_t::granule_bytes(huge_page_bytes_); }

    /**
     *  @brief  Maps one slice of at least `slice_bytes` zeroed bytes per memory domain of `topology`, each bound
     *          to its domain's node. All slices are placed, or none: a refused slice unmaps the whole range.
     *  @return The region (its `slice_bytes` and `page_bytes` are what was really granted), or a null region
     *          whose `status` says why. `slice_bytes == 0` succeeds with a null address.
     */
    template <memory_topology topology_t>
    [[nodiscard]] symmetric_region_t try_allocate(topology_t const &topology, std::size_t slice_bytes) const noexcept {
        symmetric_region_t region;
        region.slices_count = static_cast<std::size_t>(topology.memory_domains_count());
        auto const node_of = [&topology](std::size_t domain) noexcept {
            return to_numa_node_id(topology.memory_node_id(domain));
        };
        if (region.slices_count == 0)
            return failed_(region, detail::refuse("symmetric try_allocate: the topology has no memory domain"));
        if (!is_valid_huge_page_request(huge_page_bytes_))
            return failed_(region, detail::refuse("symmetric try_allocate: huge_page_bytes is not a power of two"));
        for (std::size_t domain = 0; domain != region.slices_count; ++domain)
            if (!is_valid_numa_node(node_of(domain)))
                return failed_(region, detail::refuse("symmetric try_allocate: a memory domain's node id is invalid"));
        if (slice_bytes == 0) return region;

        std::size_t rounded = 0;
        if (!round_up_bytes(slice_bytes, granule_bytes(), rounded) ||
            rounded > static_cast<std::size_t>(PTRDIFF_MAX) / region.slices_count)
            return failed_(region, status_code_t::bad_alloc_k);
        memory_mapping_t const mapping = backend_t::try_map(rounded, region.slices_count, node_of, huge_page_bytes_);
        if (!mapping.status) return failed_(region, mapping.status);
        region.address = static_cast<std::byte *>(mapping.address);
        region.slice_bytes = rounded;
        region.page_bytes = mapping.page_bytes;
        return region;
    }

    /**  @brief  The same over a plain list of node ids (a `std::vector`, an array, …): slice d on `nodes[d]`. */
    [[nodiscard]] symmetric_region_t try_allocate(numa_nodes_t nodes, std::size_t slice_bytes) const noexcept {
        return try_allocate<numa_nodes_t>(nodes, slice_bytes);
    }

    /**  @brief  Unmaps a region this allocator (or an equal one, of the same backend) returned. A null region is
     *          a no-op. Any thread; no access to the region may follow or run concurrently. */
    void deallocate(symmetric_region_t const &region) const noexcept {
        backend_t::unmap(region.address, region.total_bytes());
    }

private:
    static symmetric_region_t failed_(symmetric_region_t region, status_t status) noexcept {
        region.status = status;
        return region;
    }
};

using symmetric_memory_allocator_t = basic_symmetric_memory_allocator_t<>;

/**
 *  @brief  What `allocate_at_least` returns: C++23's `std::allocation_result` (`ptr`, `count`) plus the page size
 *          that really backs the memory and, from `try_allocate_at_least`, why `ptr` is null.
 */
template <typename pointer_type_>
struct allocation_result_t {
    pointer_type_ ptr = nullptr;
    std::size_t count = 0;      ///< Elements the rounded length holds: at least the number requested.
    std::size_t page_bytes = 0; ///< The huge page, or the base page after a fallback; 0 when nothing was mapped.
    status_t status{};
};

/**
 *  @brief  An STL allocator whose memory lives on one NUMA node, optionally on huge pages.
 *
 *  Works with every standard container (`std::vector<float, domain_allocator_t<float>> v(n, 0.f, alloc)`).
 *  Each allocation is its own mapping of `round_up(n * sizeof(T), granule)` bytes, zeroed, page-aligned, bound to
 *  `node()` (none for `any_numa_node_k`, the default). Two allocators compare equal, and can free each other's
 *  memory, when they name the same node and the same requested page size, whatever their value types. They
 *  propagate on container copy, move and swap, so moving a container never copies its elements.
 *
 *  An immutable value of 16 bytes: any thread may allocate and deallocate concurrently; memory may be freed by
 *  a thread other than the one that allocated it.
 */
template <typename value_type_, typename backend_type_ = memory_backend_t>
class basic_domain_allocator_t {
    numa_node_id_t node_ = any_numa_node_k;
    std::size_t huge_page_bytes_ = base_pages_k;

    using symmetric_t = basic_symmetric_memory_allocator_t<backend_type_>;

public:
    using value_type = value_type_;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using backend_t = backend_type_;
    using propagate_on_container_copy_assignment = std::true_type;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;
    using is_always_equal = std::false_type;

    template <typename other_type_>
    struct rebind {
        using other = basic_domain_allocator_t<other_type_, backend_type_>;
    };

    /**  @brief  No binding (`any_numa_node_k`), base pages: the OS places each page at first touch. */
    constexpr basic_domain_allocator_t() noexcept = default;

    /**  @brief  Binds to OS node `node`; a node that does not exist is refused at allocation, not here.
     *  @param huge_page_bytes  0 for base pages, or a huge page size such as `huge_page_2mib_k`. */
    constexpr explicit basic_domain_allocator_t(numa_node_id_t node,
                                                std::size_t huge_page_bytes = base_pages_k) noexcept
        : node_(node), huge_page_bytes_(huge_page_bytes) {}

    /**  @brief  Binds to the node of memory domain `memory_domain` of `topology`; an out-of-range domain makes
     *          every allocation fail with `invalid_argument_k`. */
    template <memory_topology topology_t>
    basic_domain_allocator_t(topology_t const &topology, std::size_t memory_domain,
                             std::size_t huge_page_bytes = base_pages_k) noexcept
        : node_(memory_domain < static_cast<std::size_t>(topology.memory_domains_count())
                    ? to_numa_node_id(topology.memory_node_id(memory_domain))
                    : invalid_numa_node_k),
          huge_page_bytes_(huge_page_bytes) {}

    template <typename other_type_>
    constexpr basic_domain_allocator_t(basic_domain_allocator_t<other_type_, backend_type_> const &other) noexcept
        : node_(other.node()), huge_page_bytes_(other.huge_page_bytes()) {}

    constexpr numa_node_id_t node() const noexcept { return node_; }
    /**  @brief  The page size asked for (0 = base pages); what was granted is in each `allocation_result_t`. */
    constexpr std::size_t huge_page_bytes() const noexcept { return huge_page_bytes_; }
    /**  @brief  The unit every length is rounded up to. */
    std::size_t granule_bytes() const noexcept { return backend_t::granule_bytes(huge_page_bytes_); }
    constexpr size_type max_size() const noexcept { return static_cast<size_type>(PTRDIFF_MAX) / sizeof(value_type); }

    /**
     *  @brief  Allocates at least `n` elements without throwing.
     *  @return `{ptr, count, page_bytes, status}`: `count >= n` is what the rounded length holds, `page_bytes` what
     *          backs it. `n == 0` succeeds with a null pointer. On failure `ptr` is null, `status` says why, and
     *          nothing stays mapped.
     */
    [[nodiscard]] allocation_result_t<value_type *> try_allocate_at_least(size_type n) const noexcept {
        if (n > max_size()) return {nullptr, 0, 0, status_code_t::bad_alloc_k};
        symmetric_region_t const region =
            symmetric_t(huge_page_bytes_).try_allocate(numa_nodes_t(node_), n * sizeof(value_type));
        return {static_cast<value_type *>(static_cast<void *>(region.address)), region.slice_bytes / sizeof(value_type),
                region.page_bytes, region.status};
    }

    /**  @brief  `try_allocate_at_least` that throws: `std::bad_array_new_length` past `max_size()`, else
     *          `std::bad_alloc` on any failure, placement included. */
    [[nodiscard]] allocation_result_t<value_type *> allocate_at_least(size_type n) const {
        if (n > max_size()) FORKUNION_THROW(std::bad_array_new_length());
        allocation_result_t<value_type *> result = try_allocate_at_least(n);
        if (!result.status) FORKUNION_THROW(std::bad_alloc());
        return result;
    }

    /**  @brief  The STL allocation: throws like `allocate_at_least`; `n == 0` returns null. */
    [[nodiscard]] value_type *allocate(size_type n) const { return allocate_at_least(n).ptr; }

    /**  @brief  Frees what an equal allocator returned; `n` is the count requested or the `count` granted, or
     *          anything between. A null pointer is a no-op. */
    void deallocate(value_type *pointer, size_type n) const noexcept {
        if (!pointer) return;
        std::size_t bytes = 0;
        if (!round_up_bytes(n * sizeof(value_type), granule_bytes(), bytes)) return; // cannot have been allocated
        backend_t::unmap(pointer, bytes);
    }

    template <typename other_type_>
    constexpr bool operator==(basic_domain_allocator_t<other_type_, backend_type_> const &other) const noexcept {
        return node_ == other.node() && huge_page_bytes_ == other.huge_page_bytes();
    }
};

/**  @brief  The STL allocator on this platform's backend: NUMA placement on Linux and Windows, node 0 only elsewhere. */
template <typename value_type_>
using domain_allocator_t = basic_domain_allocator_t<value_type_, memory_backend_t>;

/**  @brief  The aligned `operator new` fallback, available (and tested) on every platform. */
template <typename value_type_>
using portable_allocator_t = basic_domain_allocator_t<value_type_, detail::portable_memory_backend_t>;

#if FORKUNION_OS_LINUX
/**  @brief  `mmap` + `mbind` + huge pages, without libnuma. */
template <typename value_type_>
using linux_numa_allocator_t = basic_domain_allocator_t<value_type_, detail::linux_memory_backend_t>;
#endif
#if FORKUNION_OS_WINDOWS
/**  @brief  `VirtualAllocExNuma` on a preferred node, large pages where the privilege is held. */
template <typename value_type_>
using windows_numa_allocator_t = basic_domain_allocator_t<value_type_, detail::windows_memory_backend_t>;
#endif

/**
 *  @brief  A contiguous run of elements (a shard or a replica): `data()`, `size()`, `size_bytes()`, `begin()`,
 *          `end()`, `operator[]`. What `std::span<T>` is, without the ~30 ms that `<span>` adds to every
 *          translation unit including the umbrella (measured: 5% of a pool hello world); `std::span(view.data(),
 *          view.size())` makes one. Views the array's memory: valid until the array is reallocated or destroyed.
 */
template <typename element_type_>
class array_view_t {
    element_type_ *data_ = nullptr;
    std::size_t size_ = 0;

public:
    using element_type = element_type_;
    using value_type = std::remove_cv_t<element_type_>;
    using iterator = element_type_ *;

    constexpr array_view_t() noexcept = default;
    constexpr array_view_t(element_type_ *data, std::size_t size) noexcept : data_(data), size_(size) {}
    constexpr element_type_ *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr std::size_t size_bytes() const noexcept { return size_ * sizeof(element_type_); }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr iterator begin() const noexcept { return data_; }
    constexpr iterator end() const noexcept { return data_ + size_; }
    /**  @pre `index < size()`. */
    constexpr element_type_ &operator[](std::size_t index) const noexcept { return data_[index]; }
};

/**  @brief  Where element `index` of a `sharded_array_t` lives. */
struct shard_location_t {
    std::size_t shard = 0;
    std::size_t offset = 0;
    constexpr bool operator==(shard_location_t const &) const noexcept = default;
};

/**
 *  @brief  A random-access iterator over a sharded array's elements in global index order (element i of shard d is
 *          global index `shard_first(d) + i`): what makes the array a `std::ranges::random_access_range`, so the
 *          parallel algorithms and `std::` ones take it. Each dereference maps its index with `locate` (two
 *          divisions); inner loops that care run per shard, over `shard(d)`. Valid while the array keeps its
 *          storage (`try_allocate`, `reset`, assignment and destruction invalidate it).
 */
template <typename array_type_, typename element_type_>
class sharded_iterator_t {
public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::remove_cv_t<element_type_>;
    using difference_type = std::ptrdiff_t;
    using reference = element_type_ &;
    using pointer = element_type_ *;

    constexpr sharded_iterator_t() noexcept = default;
    constexpr sharded_iterator_t(array_type_ *array, difference_type index) noexcept : array_(array), index_(index) {}

    /**  @pre the iterator is in `[begin, end)`. */
    reference operator*() const noexcept { return (*array_)[static_cast<std::size_t>(index_)]; }
    pointer operator->() const noexcept { return &**this; }
    reference operator[](difference_type n) const noexcept { return (*array_)[static_cast<std::size_t>(index_ + n)]; }

    constexpr sharded_iterator_t &operator++() noexcept { return ++index_, *this; }
    constexpr sharded_iterator_t &operator--() noexcept { return --index_, *this; }
    constexpr sharded_iterator_t operator++(int) noexcept { return {array_, index_++}; }
    constexpr sharded_iterator_t operator--(int) noexcept { return {array_, index_--}; }
    constexpr sharded_iterator_t &operator+=(difference_type n) noexcept { return index_ += n, *this; }
    constexpr sharded_iterator_t &operator-=(difference_type n) noexcept { return index_ -= n, *this; }
    constexpr sharded_iterator_t operator+(difference_type n) const noexcept { return {array_, index_ + n}; }
    constexpr sharded_iterator_t operator-(difference_type n) const noexcept { return {array_, index_ - n}; }
    friend constexpr sharded_iterator_t operator+(difference_type n, sharded_iterator_t it) noexcept { return it + n; }
    constexpr difference_type operator-(sharded_iterator_t const &other) const noexcept {
        return index_ - other.index_;
    }
    constexpr bool operator==(sharded_iterator_t const &other) const noexcept { return index_ == other.index_; }
    constexpr auto operator<=>(sharded_iterator_t const &other) const noexcept { return index_ <=> other.index_; }

private:
    array_type_ *array_ = nullptr;
    difference_type index_ = 0;
};

namespace detail {

/**  The storage shared by `sharded_array_t` and `replicated_array_t`: one owned symmetric region. Move-only. */
template <typename value_type_, typename backend_type_>
class owned_region_t {
    static_assert(std::is_trivially_copyable_v<value_type_> && std::is_trivially_destructible_v<value_type_>,
                  "elements start as zero bytes and are never constructed or destroyed one by one");
    static_assert(alignof(value_type_) <= 4096, "slices are aligned on 4 KiB at least, never more is promised");

protected:
    symmetric_region_t region_{};
    std::size_t size_ = 0;

    owned_region_t() noexcept = default;
    owned_region_t(owned_region_t &&other) noexcept : region_(other.region_), size_(other.size_) {
        other.region_ = {};
        other.size_ = 0;
    }
    owned_region_t &operator=(owned_region_t &&other) noexcept {
        if (this != &other) {
            release_();
            region_ = other.region_, size_ = other.size_;
            other.region_ = {}, other.size_ = 0;
        }
        return *this;
    }
    ~owned_region_t() noexcept { release_(); }

    /**  Allocates first, frees the old region only on success (the strong guarantee). */
    template <typename topology_t>
    status_t try_replace_(topology_t const &topology, std::size_t slice_elements, std::size_t size,
                          std::size_t huge_page_bytes) noexcept {
        if (slice_elements > static_cast<std::size_t>(PTRDIFF_MAX) / sizeof(value_type_))
            return status_code_t::bad_alloc_k;
        symmetric_region_t const region = basic_symmetric_memory_allocator_t<backend_type_>(huge_page_bytes)
                                              .try_allocate(topology, slice_elements * sizeof(value_type_));
        if (!region.status) return region.status;
        release_();
        region_ = region, size_ = size;
        return {};
    }

    value_type_ *slice_data_(std::size_t slice) const noexcept {
        return static_cast<value_type_ *>(static_cast<void *>(region_.slice(slice)));
    }

    void release_() noexcept {
        backend_type_::unmap(region_.address, region_.total_bytes());
        region_ = {}, size_ = 0;
    }

public:
    /**  @brief  The symmetric region underneath: its `slice_bytes`, `slices_count` and `page_bytes`. */
    symmetric_region_t const &region() const noexcept { return region_; }
    /**  @brief  The page size that really backs the elements (0 while nothing is mapped). */
    std::size_t page_bytes() const noexcept { return region_.page_bytes; }
    /**  @brief  Frees the storage; the array becomes empty, with no domains. */
    void reset() noexcept { release_(); }
};

} // namespace detail

/**
 *  @brief  `count` elements of `T`, sharded over the memory domains: shard d is bound to domain d's node and
 *          holds the block `static_slice(count, domains, d)`, the same split as `for_n` over `domains` threads.
 *
 *  Elements start as zero bytes (so `T` must be trivially copyable and destructible); pages are placed on their
 *  shard's node at first touch, whichever thread touches them. The natural loop is per shard:
 *
 *      for (std::size_t d = 0; d != array.shards_count(); ++d)
 *          for (T &value : array.shard(d)) …   // global index: array.shard_first(d) + offset
 *
 *  `operator[]` and `locate` map a global index in two divisions: fine for random access, not for inner loops.
 *  Move-only. Thread rules: as `std::vector` (see the file comment).
 */
template <typename value_type_, typename backend_type_ = memory_backend_t>
class sharded_array_t : public detail::owned_region_t<value_type_, backend_type_> {
    using base_t = detail::owned_region_t<value_type_, backend_type_>;
    using base_t::region_;
    using base_t::size_;

public:
    using value_type = value_type_;

    sharded_array_t() noexcept = default;
    sharded_array_t(sharded_array_t &&) noexcept = default;
    sharded_array_t &operator=(sharded_array_t &&) noexcept = default;

    /**
     *  @brief  Replaces the storage with `count` zeroed elements sharded over `topology`'s memory domains.
     *  @return Success; or the allocator's status, with the previous storage and contents left untouched.
     */
    template <memory_topology topology_t>
    status_t try_allocate(topology_t const &topology, std::size_t count,
                          std::size_t huge_page_bytes = base_pages_k) noexcept {
        std::size_t const shards = static_cast<std::size_t>(topology.memory_domains_count());
        std::size_t const widest = shards ? count / shards + (count % shards != 0) : 0;
        return this->try_replace_(topology, widest, count, huge_page_bytes);
    }
    /**  @brief  The same over a plain list of node ids: shard d on `nodes[d]`. */
    status_t try_allocate(numa_nodes_t nodes, std::size_t count, std::size_t huge_page_bytes = base_pages_k) noexcept {
        return try_allocate<numa_nodes_t>(nodes, count, huge_page_bytes);
    }

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    std::size_t shards_count() const noexcept { return region_.slices_count; }

    /**  @brief  The global index of shard `shard`'s first element. @pre `shard < shards_count()`. */
    std::size_t shard_first(std::size_t shard) const noexcept {
        return static_slice<std::size_t>(size_, shards_count(), shard).first;
    }
    /**  @brief  Shard `shard`'s elements, contiguous, on its node. @pre `shard < shards_count()`. */
    array_view_t<value_type> shard(std::size_t shard) noexcept {
        return {this->slice_data_(shard), static_slice<std::size_t>(size_, shards_count(), shard).count};
    }
    array_view_t<value_type const> shard(std::size_t shard) const noexcept {
        return {this->slice_data_(shard), static_slice<std::size_t>(size_, shards_count(), shard).count};
    }

    /**  @brief  The shard and offset of global element `index`: the inverse of `static_slice`. @pre
     *          `index < size()`. The first `size % shards` shards hold one element more than the rest. */
    shard_location_t locate(std::size_t index) const noexcept {
        std::size_t const shards = shards_count();
        std::size_t const narrow = size_ / shards, wide = narrow + 1;
        std::size_t const wide_elements = (size_ % shards) * wide; // held by the wide shards, which come first
        if (index < wide_elements) return {index / wide, index % wide};
        std::size_t const rest = index - wide_elements; // `narrow > 0` here, as `index < size_`
        return {size_ % shards + rest / narrow, rest % narrow};
    }

    /**  @brief  Global element `index`. @pre `index < size()`. */
    value_type &operator[](std::size_t index) noexcept {
        shard_location_t const location = locate(index);
        return this->slice_data_(location.shard)[location.offset];
    }
    value_type const &operator[](std::size_t index) const noexcept {
        shard_location_t const location = locate(index);
        return this->slice_data_(location.shard)[location.offset];
    }

    using iterator = sharded_iterator_t<sharded_array_t, value_type>;
    using const_iterator = sharded_iterator_t<sharded_array_t const, value_type const>;
    /**  @brief  Every element in global index order, through `sharded_iterator_t` (a lookup per access). */
    iterator begin() noexcept { return {this, 0}; }
    iterator end() noexcept { return {this, static_cast<std::ptrdiff_t>(size_)}; }
    const_iterator begin() const noexcept { return {this, 0}; }
    const_iterator end() const noexcept { return {this, static_cast<std::ptrdiff_t>(size_)}; }
};

/**
 *  @brief  `count` elements of `T`, one full copy (replica) per memory domain, replica d bound to domain d's
 *          node: read-mostly tables every domain scans at local latency.
 *
 *  Elements start as zero bytes (so `T` must be trivially copyable and destructible). Write one replica and
 *  `broadcast` it, or write each replica from its own domain's threads. Move-only. Thread rules: as
 *  `std::vector` (see the file comment); `broadcast` writes every other replica.
 */
template <typename value_type_, typename backend_type_ = memory_backend_t>
class replicated_array_t : public detail::owned_region_t<value_type_, backend_type_> {
    using base_t = detail::owned_region_t<value_type_, backend_type_>;
    using base_t::region_;
    using base_t::size_;

public:
    using value_type = value_type_;

    replicated_array_t() noexcept = default;
    replicated_array_t(replicated_array_t &&) noexcept = default;
    replicated_array_t &operator=(replicated_array_t &&) noexcept = default;

    /**
     *  @brief  Replaces the storage with `count` zeroed elements per memory domain of `topology`.
     *  @return Success; or the allocator's status, with the previous storage and contents left untouched.
     */
    template <memory_topology topology_t>
    status_t try_allocate(topology_t const &topology, std::size_t count,
                          std::size_t huge_page_bytes = base_pages_k) noexcept {
        return this->try_replace_(topology, count, count, huge_page_bytes);
    }
    /**  @brief  The same over a plain list of node ids: replica d on `nodes[d]`. */
    status_t try_allocate(numa_nodes_t nodes, std::size_t count, std::size_t huge_page_bytes = base_pages_k) noexcept {
        return try_allocate<numa_nodes_t>(nodes, count, huge_page_bytes);
    }

    /**  @brief  Elements per replica. */
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    std::size_t replicas_count() const noexcept { return region_.slices_count; }

    /**  @brief  The replica on memory domain `memory_domain`. @pre `memory_domain < replicas_count()`. */
    array_view_t<value_type> replica(std::size_t memory_domain) noexcept {
        return {this->slice_data_(memory_domain), size_};
    }
    array_view_t<value_type const> replica(std::size_t memory_domain) const noexcept {
        return {this->slice_data_(memory_domain), size_};
    }

    /**  @brief  The replica a compute domain should read: the one on `topology.local_memory_of(compute_domain)`.
     *  @pre    `topology` is the one the array was allocated over. */
    template <typename topology_t>
    requires std::is_convertible_v<decltype(std::declval<topology_t const &>().local_memory_of(std::size_t())),
                                   std::size_t>
        array_view_t<value_type const> local_replica(topology_t const &topology, std::size_t compute_domain)
    const noexcept { return replica(static_cast<std::size_t>(topology.local_memory_of(compute_domain))); }

    /**  @brief  Copies replica `from` over every other replica, on the calling thread; each copy lands on its
     *          replica's node. @pre `from < replicas_count()`, and no other thread touches the array meanwhile. */
    void broadcast(std::size_t from = 0) noexcept {
        if (size_ == 0) return;
        for (std::size_t domain = 0; domain != replicas_count(); ++domain)
            if (domain != from)
                std::memcpy(this->slice_data_(domain), this->slice_data_(from), size_ * sizeof(value_type));
    }
};

} // namespace forkunion
