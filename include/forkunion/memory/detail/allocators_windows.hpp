/**
 *  @file   forkunion/memory/detail/allocators_windows.hpp
 *  @brief  `windows_memory_backend_t`: virtual memory committed on a preferred NUMA node with
 *          `VirtualAllocExNuma`, and large pages where the process holds the privilege.
 *
 *  The Windows backend of `forkunion/memory/allocators.hpp` (the interface is in `allocators_common.hpp`).
 *
 *  1. Nodes are checked first: a node above `GetNumaHighestNodeNumber()` is refused with `placement_refused_k`
 *     before anything is mapped (Windows itself would accept it and place the pages anywhere).
 *  2. Base pages: one `VirtualAlloc(MEM_RESERVE)` of the whole range, then one `VirtualAllocExNuma(MEM_COMMIT)`
 *     per slice naming its node (`NUMA_NO_PREFERRED_NODE` for `any_numa_node_k`). Committed memory reads as zero
 *     and is faulted in at first touch. Windows treats the node as *preferred*, not bound: when the node has no
 *     free page at fault time, the page comes from another node. This is weaker than Linux's `MPOL_BIND`, and
 *     it is all Windows offers user code; a refused commit unmaps the whole range (`bad_alloc_k` when the
 *     commit limit is reached, `placement_refused_k` for any other refusal).
 *  3. Large pages (`MEM_LARGE_PAGES`): only for a request of exactly `GetLargePageMinimum()` bytes (2 MiB on x86-64),
 *     only when the process can enable `SeLockMemoryPrivilege` ("Lock pages in memory", which an administrator
 *     grants to the account), and only when every slice names the same node: Windows reserves and commits large
 *     pages in one call, for one preferred node, and they are resident (locked) from the start. Otherwise the
 *     range falls back to base pages and `page_bytes` says so. `try_enable_large_pages()` answers why, without
 *     allocating: `success`, `unsupported_k` (no large-page size), or `placement_refused_k` (the privilege is not
 *     held).
 *  The length stays rounded to the requested page size (the granule) on fallback too, so a fallback range is
 *  released like a large one; the unused tail is reserved address space, never committed memory.
 *
 *  Stateless; every member is static, `noexcept`, and callable from any thread. Declared only on Windows.
 */
#pragma once
#include <forkunion/memory/allocators_common.hpp>
#include <forkunion/hardware/detail/system_windows.hpp>

#if FORKUNION_OS_WINDOWS
namespace forkunion::detail {

struct windows_memory_backend_t {
    static constexpr bool binds_nodes_k = true;

    /**  @brief  The page size (`GetSystemInfo`: 4 KiB on x86-64 and Arm64 Windows). */
    static std::size_t base_page_bytes() noexcept {
        SYSTEM_INFO info{};
        ::GetSystemInfo(&info);
        return info.dwPageSize ? static_cast<std::size_t>(info.dwPageSize) : std::size_t(4096);
    }

    /**  @brief  The requested large page, or the base page when none (or a smaller one) is requested. */
    static std::size_t granule_bytes(std::size_t huge_page_bytes) noexcept {
        std::size_t const base = base_page_bytes();
        return huge_page_bytes > base ? huge_page_bytes : base;
    }

    /**
     *  @brief  Enables `SeLockMemoryPrivilege` in this process's token, which large pages need. Idempotent; a few
     *          system calls. `unsupported_k` where the CPU or Windows has no large pages, `placement_refused_k`
     *          where the account does not hold the privilege (the usual case outside administrators' services).
     */
    static status_t try_enable_large_pages() noexcept {
        if (::GetLargePageMinimum() == 0) return status_code_t::unsupported_k;
        HANDLE token = nullptr;
        if (!::OpenProcessToken(::GetCurrentProcess(), TOKEN_ADJUST_PRIVILEGES | TOKEN_QUERY, &token))
            return status_code_t::placement_refused_k;
        TOKEN_PRIVILEGES privileges{};
        privileges.PrivilegeCount = 1;
        privileges.Privileges[0].Attributes = SE_PRIVILEGE_ENABLED;
        // `AdjustTokenPrivileges` succeeds with `ERROR_NOT_ALL_ASSIGNED` when the token lacks the privilege.
        bool const enabled =
            ::LookupPrivilegeValueW(nullptr, L"SeLockMemoryPrivilege", &privileges.Privileges[0].Luid) &&
            ::AdjustTokenPrivileges(token, FALSE, &privileges, 0, nullptr, nullptr) &&
            ::GetLastError() == ERROR_SUCCESS;
        ::CloseHandle(token);
        return enabled ? status_code_t::success_k : status_code_t::placement_refused_k;
    }

    /**
     *  @brief  Maps `slices * slice_bytes` zeroed bytes; slice i committed with `node_of(i)` preferred (none for
     *          `any_numa_node_k`). Tries large pages first when the request allows them (see the file comment).
     *  @return The range and its real page size; or null with `bad_alloc_k` or `placement_refused_k`, and
     *          nothing left mapped.
     */
    template <typename node_of_t>
    static memory_mapping_t try_map(std::size_t slice_bytes, std::size_t slices, node_of_t const &node_of,
                                    std::size_t huge_page_bytes) noexcept {
        ULONG highest = 0;
        if (!::GetNumaHighestNodeNumber(&highest)) highest = 0;
        bool one_node = true;
        for (std::size_t slice = 0; slice != slices; ++slice) {
            numa_node_id_t const node = node_of(slice);
            if (node != any_numa_node_k && static_cast<std::size_t>(node) > highest)
                return {nullptr, 0, status_code_t::placement_refused_k};
            one_node = one_node && node == node_of(0);
        }
        std::size_t const bytes = slice_bytes * slices;
        HANDLE const process = ::GetCurrentProcess();
        std::size_t const large = ::GetLargePageMinimum();
        if (huge_page_bytes > base_page_bytes() && huge_page_bytes == large && one_node && try_enable_large_pages())
            if (void *address =
                    ::VirtualAllocExNuma(process, nullptr, bytes, MEM_RESERVE | MEM_COMMIT | MEM_LARGE_PAGES,
                                         PAGE_READWRITE, preferred_(node_of(0))))
                return {address, large};
        void *address = ::VirtualAlloc(nullptr, bytes, MEM_RESERVE, PAGE_READWRITE);
        if (!address) return {nullptr, 0, status_code_t::bad_alloc_k};
        for (std::size_t slice = 0; slice != slices; ++slice) {
            void *const first = static_cast<char *>(address) + slice * slice_bytes;
            if (::VirtualAllocExNuma(process, first, slice_bytes, MEM_COMMIT, PAGE_READWRITE,
                                     preferred_(node_of(slice))))
                continue;
            DWORD const error = ::GetLastError();
            unmap(address, bytes);
            bool const out_of_memory =
                error == ERROR_NOT_ENOUGH_MEMORY || error == ERROR_COMMITMENT_LIMIT || error == ERROR_OUTOFMEMORY;
            return {nullptr, 0, out_of_memory ? status_code_t::bad_alloc_k : status_code_t::placement_refused_k};
        }
        return {address, base_page_bytes()};
    }

    /**  @brief  Releases a range `try_map` returned (the whole reservation). Null is a no-op. */
    static void unmap(void *address, std::size_t) noexcept {
        if (address) ::VirtualFree(address, 0, MEM_RELEASE);
    }

private:
    static DWORD preferred_(numa_node_id_t node) noexcept {
        return node == any_numa_node_k ? NUMA_NO_PREFERRED_NODE : static_cast<DWORD>(node);
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_WINDOWS
