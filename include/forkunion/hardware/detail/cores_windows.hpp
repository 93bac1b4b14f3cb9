/**
 *  @file   forkunion/hardware/detail/cores_windows.hpp
 *  @brief  Windows backend of `allowed_cores_count()`, and the live processor groups the other Windows backends
 *          share: `windows_cores_t`.
 *
 *  Windows splits machines of more than 64 logical processors into processor groups of at most 64. The cores a
 *  process may use span every active group, unless its affinity was narrowed (`start /affinity`, a job object):
 *  `GetProcessAffinityMask` then answers a mask in the process's one group. A process whose threads already run
 *  in several groups gets zero masks from it, and keeps every group. Ids follow
 *  `processor_information_windows.hpp`: dense across groups, the kernel's processor index.
 *
 *  Every member is a blocking system call (one `GetLogicalProcessorInformationEx(RelationGroup)` into a 3 KiB
 *  stack buffer, plus `GetProcessAffinityMask`), allocation-free and callable from any thread: pools call it at
 *  `spawn`, never per dispatch. Declared only on Windows.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/hardware/detail/processor_information_windows.hpp>
#include <forkunion/hardware/detail/system_windows.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WINDOWS
namespace forkunion::detail {

struct windows_cores_t {
    /**  Bytes of a group record with every group a `cpu_mask_t` can name: 32 + 48 per group. */
    static constexpr std::size_t group_record_bytes_k = 32 + 48 * windows_max_groups_k;

    /**  The machine's processor groups; false (and `groups` empty) if Windows refused to describe them. */
    static bool try_read_groups(windows_groups_t &groups) noexcept {
        alignas(8) unsigned char buffer[group_record_bytes_k + 64];
        std::size_t needed = 0;
        std::size_t const length = windows_processor_information(RelationGroup, buffer, sizeof(buffer), needed);
        groups = windows_groups_t{};
        return length != 0 && groups.try_read_buffer(buffer, length);
    }

    /**
     *  @brief  Narrows `mask` (every active processor) to this process's affinity, when Windows reports one: a
     *          process confined to one group with a mask smaller than the system's.
     */
    static void narrow_to_process(windows_groups_t const &groups, cpu_mask_t &mask) noexcept {
        DWORD_PTR process = 0, system = 0;
        if (!::GetProcessAffinityMask(::GetCurrentProcess(), &process, &system) || process == 0) return;
        USHORT group = 0, count = 1;
        if (!::GetProcessGroupAffinity(::GetCurrentProcess(), &count, &group) || count != 1) return;
        cpu_mask_t narrowed;
        groups.add_group_bits(group, static_cast<std::uint64_t>(process), narrowed);
        if (!narrowed.empty()) mask = narrowed;
    }

    /**  The cores this process may run on, across every group; `{0}` if Windows describes none. */
    static void allowed_cores(cpu_mask_t &mask) noexcept {
        mask.clear();
        windows_groups_t groups;
        if (try_read_groups(groups)) {
            groups.add_active(mask);
            narrow_to_process(groups, mask);
        }
        if (mask.empty()) mask.set(0);
    }

    /**  Logical cores this process may run on, across every processor group; at least 1. */
    static std::size_t allowed_count() noexcept {
        cpu_mask_t mask;
        allowed_cores(mask);
        return mask.count();
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_WINDOWS
