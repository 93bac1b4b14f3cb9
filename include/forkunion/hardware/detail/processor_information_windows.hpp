/**
 *  @file   forkunion/hardware/detail/processor_information_windows.hpp
 *  @brief  Reading the buffer Windows' `GetLogicalProcessorInformationEx(RelationAll, ...)` fills: its records,
 *          its processor groups, and the mapping of (group, bit) to the dense CPU ids the library uses.
 *
 *  Pure decoding of bytes, declared on every OS, so recorded buffers are parsed (and tested) on Linux too; the
 *  live calls live in `cores_windows.hpp`, `affinity_windows.hpp` and `topology_windows.hpp`.
 *
 *  @section layout The layout read (64-bit Windows; every field little-endian, offsets from a record's start)
 *  A buffer is a run of variable-size records `SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX`:
 *
 *  | offset | field                                                                                  |
 *  | ------ | -------------------------------------------------------------------------------------- |
 *  | 0      | `Relationship`, 4 bytes: 0 core, 1 NUMA node, 2 cache, 3 package, 4 group, 5 die, 7 module |
 *  | 4      | `Size`, 4 bytes: the whole record, header included                                      |
 *  | 8      | the relationship's payload                                                              |
 *
 *  - Processor core or package (`PROCESSOR_RELATIONSHIP`): `Flags` at 8 (bit 0: SMT), `EfficiencyClass` at 9,
 *    `GroupCount` at 30 (2 bytes), then `GroupCount` group affinities from 32.
 *  - NUMA node (`NUMA_NODE_RELATIONSHIP`): `NodeNumber` at 8 (4 bytes), `GroupCount` at 30, affinities from 32.
 *  - Cache (`CACHE_RELATIONSHIP`): `Level` at 8, `LineSize` at 10, `CacheSize` at 12 (4 bytes), `Type` at 16
 *    (4 bytes: 0 unified, 1 instruction, 2 data, 3 trace), `GroupCount` at 38, affinities from 40.
 *  - Group (`GROUP_RELATIONSHIP`): `MaximumGroupCount` at 8, `ActiveGroupCount` at 10 (2 bytes each), then
 *    `ActiveGroupCount` entries of 48 bytes from 32: `MaximumProcessorCount` at +0, `ActiveProcessorCount` at
 *    +1, `ActiveProcessorMask` at +40 (8 bytes).
 *  - A group affinity (`GROUP_AFFINITY`) is 16 bytes: `Mask` at +0 (8 bytes), `Group` at +8 (2 bytes).
 *  Systems before Windows 10 build 20348 leave `GroupCount` 0 (a reserved field then) and write exactly one
 *  affinity: 0 reads as 1. `EfficiencyClass` was reserved (0) before Windows 10 as well: one class.
 *  The SDK's own structs are not used: MinGW-w64's `winnt.h` predates `EfficiencyClass` and `GroupCount`.
 *
 *  @section ids CPU ids
 *  A logical processor is named by its group and its bit in that group's mask. The library names it by one dense
 *  id, the processor index of the kernel: `id = Σ MaximumProcessorCount(g) over groups g before its group + bit`.
 *  So a 2-group machine of 40 + 40 processors has ids 0-39 and 40-79, and `cpu_mask_t` holds any of them.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/base/types.hpp>

namespace forkunion::detail {

/**  @brief  The `Relationship` codes of the records (`LOGICAL_PROCESSOR_RELATIONSHIP`). */
enum class windows_relation_t : std::uint32_t {
    processor_core_k = 0,
    numa_node_k = 1,
    cache_k = 2,
    processor_package_k = 3,
    group_k = 4,
    processor_die_k = 5,
    numa_node_ex_k = 6, ///< A request code only; read like `numa_node_k` if a system ever writes it.
    processor_module_k = 7,
};

/**  @brief  Reads `bytes` little-endian bytes at `data + offset`. @pre `offset + bytes` is inside the record. */
constexpr std::uint64_t read_little_endian(unsigned char const *data, std::size_t offset, std::size_t bytes) noexcept {
    std::uint64_t value = 0;
    for (std::size_t i = bytes; i != 0; --i) value = (value << 8) | data[offset + i - 1];
    return value;
}

/**  @brief  One record of the buffer: its relationship and its bytes (header included). */
struct windows_record_t {
    windows_relation_t relation = windows_relation_t::processor_core_k;
    unsigned char const *data = nullptr;
    std::size_t size = 0;

    constexpr std::uint64_t read(std::size_t offset, std::size_t bytes) const noexcept {
        return offset + bytes <= size ? read_little_endian(data, offset, bytes) : 0;
    }
};

/**
 *  @brief  Calls `visit(record)` for every record of `buffer[0, length)`.
 *  @return False, after visiting the records before it, at the first record whose `Size` is below the 8-byte
 *          header or runs past the end: the framing is broken and nothing after it can be trusted.
 */
template <typename visitor_t>
constexpr bool for_each_windows_record(void const *buffer, std::size_t length, visitor_t &&visit) noexcept {
    unsigned char const *const bytes = static_cast<unsigned char const *>(buffer);
    std::size_t offset = 0;
    while (offset != length) {
        if (!bytes || length - offset < 8) return false;
        std::size_t const size = static_cast<std::size_t>(read_little_endian(bytes, offset + 4, 4));
        if (size < 8 || size > length - offset) return false;
        windows_record_t record;
        record.relation = static_cast<windows_relation_t>(read_little_endian(bytes, offset, 4));
        record.data = bytes + offset;
        record.size = size;
        visit(record);
        offset += size;
    }
    return true;
}

/**  @brief  Processor groups a `cpu_mask_t` can name: `max_cpus_k / 64`. */
inline constexpr std::size_t windows_max_groups_k = max_cpus_k / 64;

/**
 *  @brief  The processor groups of a machine, from its group record: where each group's ids start, and which of
 *          its processors are active. 3 KiB, no allocation.
 */
struct windows_groups_t {
    std::size_t count = 0;                             ///< Active groups read (at most `windows_max_groups_k`).
    std::uint32_t first_id[windows_max_groups_k] = {}; ///< Σ `MaximumProcessorCount` of the groups before.
    std::uint32_t maximum[windows_max_groups_k] = {};  ///< `MaximumProcessorCount`, at most 64.
    std::uint64_t active[windows_max_groups_k] = {};   ///< `ActiveProcessorMask`, cut to `maximum` bits.

    /**  The dense id of bit `bit` of group `group`; false if the group is unknown or the bit past its maximum,
     *   or the id would not fit a `cpu_mask_t`. */
    constexpr bool try_id(std::size_t group, std::size_t bit, std::size_t &id) const noexcept {
        if (group >= count || bit >= maximum[group]) return false;
        id = first_id[group] + bit;
        return id < max_cpus_k;
    }

    /**  The group and bit of dense id `id`; false if no group holds it. */
    constexpr bool try_locate(std::size_t id, std::size_t &group, std::size_t &bit) const noexcept {
        for (std::size_t g = 0; g != count; ++g)
            if (id >= first_id[g] && id < first_id[g] + maximum[g]) return group = g, bit = id - first_id[g], true;
        return false;
    }

    /**  Adds the active processors of every group to `mask`. */
    constexpr void add_active(cpu_mask_t &mask) const noexcept {
        for (std::size_t g = 0; g != count; ++g) add_group_bits(g, active[g], mask);
    }

    /**  Adds the processors of `bits` in group `group` (bits past its maximum are dropped) to `mask`. */
    constexpr void add_group_bits(std::size_t group, std::uint64_t bits, cpu_mask_t &mask) const noexcept {
        std::size_t id = 0;
        for (std::size_t bit = 0; bit != 64; ++bit)
            if (((bits >> bit) & 1u) && try_id(group, bit, id)) mask.set(id);
    }

    /**
     *  @brief  Reads a group record. False if the record is not one or is too short for the groups it declares;
     *          groups past `windows_max_groups_k` are dropped.
     */
    constexpr bool try_read(windows_record_t const &record) noexcept {
        if (record.relation != windows_relation_t::group_k || record.size < 32) return false;
        std::size_t const declared = static_cast<std::size_t>(record.read(10, 2));
        if (record.size < 32 + declared * 48) return false;
        count = declared < windows_max_groups_k ? declared : windows_max_groups_k;
        std::uint32_t next = 0;
        for (std::size_t g = 0; g != count; ++g) {
            std::size_t const entry = 32 + g * 48;
            std::uint32_t const most = static_cast<std::uint32_t>(record.read(entry, 1));
            maximum[g] = most > 64 ? 64 : most;
            active[g] = record.read(entry + 40, 8) &
                        (maximum[g] == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << maximum[g]) - 1);
            first_id[g] = next;
            next += maximum[g];
        }
        return true;
    }

    /**  Reads the first group record of a buffer; false if it has none (before any broken framing) or it
     *   declares no group. */
    constexpr bool try_read_buffer(void const *buffer, std::size_t length) noexcept {
        bool found = false;
        (void)for_each_windows_record(buffer, length, [&](windows_record_t const &record) noexcept {
            if (!found && record.relation == windows_relation_t::group_k) found = try_read(record);
        });
        return found && count != 0;
    }
};

/**
 *  @brief  Adds the processors of the `GroupCount` group affinities at `first_affinity` of a record to `mask`.
 *          A `GroupCount` of 0 (systems before it existed) reads as 1; affinities past the record's end are not
 *          read. Returns false if not even one affinity fits the record.
 */
constexpr bool read_windows_affinities(windows_record_t const &record, std::size_t count_offset,
                                       std::size_t first_affinity, windows_groups_t const &groups,
                                       cpu_mask_t &mask) noexcept {
    std::size_t count = static_cast<std::size_t>(record.read(count_offset, 2));
    if (count == 0) count = 1;
    if (record.size < first_affinity + 16) return false;
    for (std::size_t i = 0; i != count && first_affinity + (i + 1) * 16 <= record.size; ++i) {
        std::size_t const at = first_affinity + i * 16;
        groups.add_group_bits(static_cast<std::size_t>(record.read(at + 8, 2)), record.read(at, 8), mask);
    }
    return true;
}

} // namespace forkunion::detail
