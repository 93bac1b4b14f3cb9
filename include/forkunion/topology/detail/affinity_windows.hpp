/**
 *  @file   forkunion/topology/detail/affinity_windows.hpp
 *  @brief  The Windows back end of `forkunion/topology/affinity.hpp`: `windows_affinity_t`.
 *
 *  - A thread is named by its thread id (`GetCurrentThreadId()`), not by a `HANDLE`: an id stays meaningful when
 *    another thread restores a saved affinity, and needs no handle to be closed. Each call opens the thread
 *    (`OpenThread`), or uses `GetCurrentThread()` when the id is the caller's, and closes what it opened.
 *    (`std::thread::native_handle()` is no help: under MinGW-w64's posix threads it is a winpthreads handle,
 *    not a Windows one. Pools pin each worker from inside the worker.)
 *  - Pinning is `SetThreadGroupAffinity`; reading is `GetThreadGroupAffinity`. A Windows thread runs in one
 *    processor group at a time, so a mask whose cores lie in two groups is refused with `placement_refused`
 *    (the topology never builds such a compute domain: it splits domains at group boundaries). Cores of the
 *    mask that are not active are dropped first, as Linux drops offline CPUs; none left is `placement_refused`.
 *  - Names are `SetThreadDescription`/`GetThreadDescription` (Windows 10 1607 and later), found at run time in
 *    `kernel32.dll`: where they are absent, naming answers `unsupported`. Names travel as UTF-8 and are stored as
 *    UTF-16; a name that is not valid UTF-8 is `invalid_argument`.
 *
 *  Every member is a blocking system call, `noexcept`, allocation-free (`GetThreadDescription` allocates inside
 *  Windows, freed here) and callable from any thread. Declared only on Windows.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/hardware/detail/cores_windows.hpp>
#include <forkunion/hardware/detail/processor_information_windows.hpp>
#include <forkunion/hardware/detail/system_windows.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WINDOWS
namespace forkunion::detail {

/**  @brief  Thread placement and naming on Windows. A static-only interface type. */
struct windows_affinity_t {
    using thread_handle_t = DWORD;
    static constexpr bool supported_k = true;

    static thread_handle_t current_thread() noexcept { return ::GetCurrentThreadId(); }

    static status_t try_set_thread(thread_handle_t thread, cpu_mask_t const &mask) noexcept {
        windows_groups_t groups;
        if (!windows_cores_t::try_read_groups(groups)) return status_code_t::placement_refused_k;
        GROUP_AFFINITY affinity{};
        std::size_t group = windows_max_groups_k;
        for (std::size_t id = mask.first(); id != cpu_mask_t::npos_k; id = mask.next_from(id + 1)) {
            std::size_t id_group = 0, bit = 0;
            if (!groups.try_locate(id, id_group, bit)) continue; // no such processor: dropped, like an offline CPU
            if (group != windows_max_groups_k && id_group != group) return status_code_t::placement_refused_k;
            group = id_group;
            affinity.Mask |= static_cast<KAFFINITY>(std::uint64_t(1) << bit);
        }
        if (group == windows_max_groups_k) return status_code_t::placement_refused_k;
        affinity.Mask &= static_cast<KAFFINITY>(groups.active[group]);
        affinity.Group = static_cast<WORD>(group);
        if (affinity.Mask == 0) return status_code_t::placement_refused_k;
        opened_thread_t const opened(thread);
        if (!opened.handle) return status_code_t::invalid_argument_k;
        return ::SetThreadGroupAffinity(opened.handle, &affinity, nullptr) ? status_code_t::success_k
                                                                           : status_code_t::placement_refused_k;
    }

    static status_t try_get_thread(thread_handle_t thread, cpu_mask_t &mask) noexcept {
        mask.clear();
        windows_groups_t groups;
        opened_thread_t const opened(thread);
        if (!opened.handle) return status_code_t::invalid_argument_k;
        GROUP_AFFINITY affinity{};
        if (!windows_cores_t::try_read_groups(groups) || !::GetThreadGroupAffinity(opened.handle, &affinity))
            return status_code_t::placement_refused_k;
        groups.add_group_bits(affinity.Group, static_cast<std::uint64_t>(affinity.Mask), mask);
        return mask.empty() ? status_code_t::placement_refused_k : status_code_t::success_k;
    }

    /**  @pre `name` is at most 15 bytes and NUL-terminated (the interface truncates before calling). */
    static status_t try_set_name(thread_handle_t thread, char const *name) noexcept {
        set_description_t const set = set_description_();
        if (!set) return status_code_t::unsupported_k;
        wchar_t wide[32] = {};
        if (name[0] && ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, name, -1, wide, 32) == 0)
            return status_code_t::invalid_argument_k;
        opened_thread_t const opened(thread);
        if (!opened.handle) return status_code_t::invalid_argument_k;
        return SUCCEEDED(set(opened.handle, wide)) ? status_code_t::success_k : status_code_t::placement_refused_k;
    }

    /**  @pre `capacity >= 16`. A longer description (set by other code) is cut at a UTF-8 character boundary. */
    static status_t try_get_name(thread_handle_t thread, char *name, std::size_t capacity) noexcept {
        if (capacity) name[0] = '\0';
        get_description_t const get = get_description_();
        if (!get) return status_code_t::unsupported_k;
        opened_thread_t const opened(thread);
        if (!opened.handle) return status_code_t::invalid_argument_k;
        PWSTR wide = nullptr;
        if (!SUCCEEDED(get(opened.handle, &wide)) || !wide) return status_code_t::placement_refused_k;
        char whole[256] = {};
        int const written = ::WideCharToMultiByte(CP_UTF8, 0, wide, -1, whole, sizeof(whole), nullptr, nullptr);
        ::LocalFree(wide);
        if (written <= 0) return status_code_t::placement_refused_k;
        std::size_t length = 0;
        while (whole[length] && length + 1 < capacity) ++length;
        if (whole[length]) // cut: back off to the start of the character the cut fell in
            while (length && (static_cast<unsigned char>(whole[length]) & 0xC0u) == 0x80u) --length;
        for (std::size_t i = 0; i != length; ++i) name[i] = whole[i];
        if (capacity) name[length] = '\0';
        return status_code_t::success_k;
    }

private:
    using set_description_t = HRESULT(WINAPI *)(HANDLE, PCWSTR);
    using get_description_t = HRESULT(WINAPI *)(HANDLE, PWSTR *);

    /**  `void (*)()` in between: the one function-pointer cast compilers do not warn about. */
    static set_description_t set_description_() noexcept {
        return reinterpret_cast<set_description_t>(
            reinterpret_cast<void (*)()>(windows_kernel32_function("SetThreadDescription")));
    }
    static get_description_t get_description_() noexcept {
        return reinterpret_cast<get_description_t>(
            reinterpret_cast<void (*)()>(windows_kernel32_function("GetThreadDescription")));
    }

    /**  A handle to thread `id`: the caller's pseudo-handle, or one opened here and closed on destruction. */
    struct opened_thread_t {
        HANDLE handle = nullptr;
        bool owned = false;
        explicit opened_thread_t(DWORD id) noexcept {
            if (id == ::GetCurrentThreadId()) {
                handle = ::GetCurrentThread();
                return;
            }
            handle = ::OpenThread(THREAD_SET_INFORMATION | THREAD_QUERY_INFORMATION, FALSE, id);
            owned = handle != nullptr;
        }
        ~opened_thread_t() noexcept {
            if (owned) ::CloseHandle(handle);
        }
        opened_thread_t(opened_thread_t const &) = delete;
        opened_thread_t &operator=(opened_thread_t const &) = delete;
    };
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_WINDOWS
