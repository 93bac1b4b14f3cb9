/**
 *  @file   forkunion/memory/detail/allocators_linux.hpp
 *  @brief  `linux_memory_backend_t`: anonymous `mmap` bound to NUMA nodes with the raw `mbind` system call.
 *
 *  The Linux backend of `forkunion/memory/allocators.hpp` (the interface is in `allocators_common.hpp`). No libnuma, no
 *  libhugetlbfs: three system calls.
 *
 *  1. `mmap(MAP_PRIVATE | MAP_ANONYMOUS)` reserves the range, with `MAP_HUGETLB | log2(size) << MAP_HUGE_SHIFT`
 *     when a huge page size was asked for. Anonymous memory reads as zero.
 *  2. `mbind(MPOL_BIND, {node})` binds each slice. `MPOL_BIND`, not `MPOL_PREFERRED`: a page of a bound range
 *     is only ever allocated on its node, so placement cannot silently degrade; the price is that a node that
 *     runs out of memory fails the fault (the OOM killer for base pages) instead of spilling to a neighbour.
 *     No `MPOL_MF_STRICT`/`MPOL_MF_MOVE`: the range is fresh and nothing in it is faulted yet, so there is
 *     nothing to check or move. Any refusal (a node that does not exist, has no memory, or is outside the
 *     process's cpuset; `EPERM` in containers whose seccomp profile denies `mbind`) unmaps the whole range and
 *     returns `placement_refused_k`, with `errno` as `mbind` left it. A kernel built without NUMA answers
 *     `ENOSYS`; there all memory is node 0, so a binding to node 0 holds by construction and succeeds, and any
 *     other node is refused.
 *  3. Huge-page ranges only: `madvise(MADV_POPULATE_WRITE)` (Linux 5.14+) faults every page in at allocation.
 *     The huge-page reservation `mmap` makes is machine-wide, not per node, so a bound node without free huge
 *     pages would otherwise raise `SIGBUS` at first touch. Populating turns that into an error here, and the
 *     range falls back to base pages. So huge pages are placed (and zeroed) by the allocating thread, on the
 *     bound node; base pages stay lazy and are placed at first touch, on the bound node whoever touches them.
 *
 *  Fallback: a huge-page request that the kernel refuses (no free pages reserved, a size the CPU lacks, a kernel
 *  older than 5.14) is served with base pages, and `page_bytes` says so. The length stays rounded to the requested
 *  huge page (the granule), so a fallback range is deallocated exactly like a huge one; the unused tail costs
 *  address space only, never memory, since base pages are faulted lazily.
 *
 *  Transparent huge pages are not requested: their size is not guaranteed, so `page_bytes` could not say what
 *  backs the range. Under THP `always`, the kernel may still collapse bound base pages into huge ones.
 */
#pragma once
#include <forkunion/memory/allocators_common.hpp>

#if FORKUNION_OS_LINUX
#include <cerrno>            // `errno`, `ENOSYS`
#include <linux/mempolicy.h> // `MPOL_BIND`
#include <sys/mman.h>        // `mmap`, `munmap`, `madvise`, `MAP_HUGETLB`
#include <sys/syscall.h>     // `SYS_mbind`
#include <unistd.h>          // `syscall`, `sysconf`

namespace forkunion::detail {

/**  @brief  `MAP_HUGE_SHIFT`: the kernel reads log2(page size) from bits 26..31 of the `mmap` flags
 *          (`include/uapi/asm-generic/hugetlb_encode.h`, the same on every architecture). */
inline constexpr int linux_map_huge_shift_k = 26;

#if defined(MADV_POPULATE_WRITE)
inline constexpr int linux_madv_populate_write_k = MADV_POPULATE_WRITE;
#else
inline constexpr int linux_madv_populate_write_k = 23; // Linux 5.14 ABI, `include/uapi/asm-generic/mman-common.h`
#endif

/**
 *  @brief  Places memory on NUMA nodes with `mmap` + `mbind`, optionally on huge pages. See the file comment.
 *  Stateless; every member is static, `noexcept`, and safe to call from any thread at any time.
 */
struct linux_memory_backend_t {
    static constexpr bool binds_nodes_k = true;

    /**  @brief  The kernel's base page size (`sysconf(_SC_PAGESIZE)`: 4 KiB on x86, 4/16/64 KiB on Arm). */
    static std::size_t base_page_bytes() noexcept {
        long const bytes = ::sysconf(_SC_PAGESIZE);
        return bytes > 0 ? static_cast<std::size_t>(bytes) : std::size_t(4096);
    }

    /**  @brief  Lengths round up to the requested huge page, or to the base page when none (or a smaller one) is
     *          requested. Depends on the request only, so a fallback range has the same length. */
    static std::size_t granule_bytes(std::size_t huge_page_bytes) noexcept {
        std::size_t const base = base_page_bytes();
        return huge_page_bytes > base ? huge_page_bytes : base;
    }

    /**
     *  @brief  Maps `slices * slice_bytes` zeroed bytes; slice i is bound to `node_of(i)` (none for
     *          `any_numa_node_k`). Tries huge pages first when `huge_page_bytes` exceeds the base page.
     *  @return The range and its real page size; or null with `bad_alloc_k` (no address space or memory) or
     *          `placement_refused_k` (an `mbind` failed), and nothing left mapped.
     */
    template <typename node_of_t>
    static memory_mapping_t try_map(std::size_t slice_bytes, std::size_t slices, node_of_t const &node_of,
                                    std::size_t huge_page_bytes) noexcept {
        std::size_t const bytes = slice_bytes * slices;
        std::size_t const base = base_page_bytes();
        if (huge_page_bytes > base) {
            // log2 of the size in 6 bits; unsigned, because a 4 GiB+ page (log2 >= 32) reaches the sign bit.
            auto const log2_size = static_cast<unsigned>(__builtin_ctzll(huge_page_bytes));
            int const size_flags = static_cast<int>(log2_size << linux_map_huge_shift_k);
            if (void *address = map_anonymous_(bytes, MAP_HUGETLB | size_flags)) {
                if (status_t const bound = bind_slices_(address, slice_bytes, slices, node_of); !bound)
                    return release_(address, bytes, bound);
                if (::madvise(address, bytes, linux_madv_populate_write_k) == 0) return {address, huge_page_bytes};
                unmap(address, bytes); // the bound node lacks free huge pages: base pages below
            }
        }
        void *address = map_anonymous_(bytes, 0);
        if (!address) return {nullptr, 0, status_code_t::bad_alloc_k};
        if (status_t const bound = bind_slices_(address, slice_bytes, slices, node_of); !bound)
            return release_(address, bytes, bound);
        return {address, base};
    }

    /**  @brief  Unmaps a range `try_map` returned, given its total length. Null is a no-op. */
    static void unmap(void *address, std::size_t bytes) noexcept {
        if (address) ::munmap(address, bytes);
    }

    /**
     *  @brief  Binds `[address, address + bytes)` (page-aligned, mapped) to `node` with `MPOL_BIND`.
     *  @return Success, or `placement_refused_k` with `errno` from `mbind`. `any_numa_node_k` binds nothing.
     */
    static status_t try_bind(void *address, std::size_t bytes, numa_node_id_t node) noexcept {
        if (node == any_numa_node_k) return {};
        constexpr std::size_t word_bits_k = sizeof(unsigned long) * 8;
        unsigned long mask[max_numa_nodes_k / word_bits_k] = {};
        std::size_t const word = static_cast<std::size_t>(node) / word_bits_k;
        mask[word] = 1ul << (static_cast<std::size_t>(node) % word_bits_k);
        // The kernel reads `maxnode - 1` bits (`get_nodes` in mm/mempolicy.c): pass the words up to the node's.
        unsigned long const maxnode = (word + 1) * word_bits_k + 1;
        if (::syscall(SYS_mbind, address, bytes, MPOL_BIND, mask, maxnode, 0u) == 0) return {};
        if (errno == ENOSYS && node == 0) return {}; // no NUMA in this kernel: all memory is node 0
        return status_code_t::placement_refused_k;
    }

private:
    static void *map_anonymous_(std::size_t bytes, int extra_flags) noexcept {
        void *address =
            ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra_flags, -1, 0);
        return address == MAP_FAILED ? nullptr : address;
    }

    template <typename node_of_t>
    static status_t bind_slices_(void *address, std::size_t slice_bytes, std::size_t slices,
                                 node_of_t const &node_of) noexcept {
        for (std::size_t slice = 0; slice != slices; ++slice)
            if (status_t const bound =
                    try_bind(static_cast<char *>(address) + slice * slice_bytes, slice_bytes, node_of(slice));
                !bound)
                return bound;
        return {};
    }

    /**  Unmaps after a refusal, keeping the refusal's `errno` for the caller. */
    static memory_mapping_t release_(void *address, std::size_t bytes, status_t status) noexcept {
        int const error = errno;
        unmap(address, bytes);
        errno = error;
        return {nullptr, 0, status};
    }
};

} // namespace forkunion::detail

#endif // FORKUNION_OS_LINUX
