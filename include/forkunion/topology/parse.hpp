/**
 *  @file   forkunion/topology/parse.hpp
 *  @brief  Total parsers for the text files the Linux kernel publishes about CPUs and NUMA nodes.
 *
 *  Each parser reads exactly `length` bytes (never a terminator), is `constexpr` and `noexcept`, allocates nothing
 *  and runs in time linear in `length` (a range such as `0-8191` costs one word store per 32 or 64 ids). It
 *  returns `true` only for a whole, well-formed value; on `false` its output is reset (empty mask, zero), so a
 *  caller can never act on half a parse. Every one of them is fuzzed (`test/fuzz/`).
 *
 *  Shapes accepted, after leading and trailing blanks (space, tab, `\r`, `\n` and NUL) are stripped. NUL is a
 *  blank because some kernels end list and mask files with `"\n\0"` (Kunpeng 920 on 5.15-rc1):
 *
 *  | parser                     | accepts                                   | files                                 |
 *  | -------------------------- | ----------------------------------------- | ------------------------------------- |
 *  | `parse_unsigned`           | `1024`                                    | `cpu_capacity`, `online`, `level`     |
 *  | `parse_cpulist`            | `0-3,8,10-11`; empty = empty set          | `online`, `nodeN/cpulist`, `*_list`   |
 *  | `parse_cpumask`            | `ff,00000001` (32-bit hex words, MSW first)| `nodeN/cpumap`, `shared_cpu_map`     |
 *  | `parse_size_bytes`         | `32K`, `1024K`, `32M`, `1G`, `512`        | `cache/indexK/size`                   |
 *  | `parse_hugepages_dir_name` | `hugepages-2048kB`                        | `hugepages/` directory entries        |
 *  | `parse_meminfo_field`      | `Node 0 MemTotal:  49 kB` lines, by key   | `nodeN/meminfo`, `/proc/meminfo`      |
 *  | `parse_distance_row`       | `10 21 21` (each 1..255)                  | `nodeN/distance`                      |
 *  | `parse_cache_type`         | `Data`, `Instruction`, `Unified`          | `cache/indexK/type`                   |
 *
 *  Ids must be below `max_cpus_k`; list ranges must ascend (`3-1` is refused). `format_cpulist` writes the list
 *  syntax back, and `parse_cpulist(format_cpulist(s)) == s` for every set (the fuzzers check it).
 *
 *  These are pure functions of their arguments: any thread may call them, concurrently, in constant expressions
 *  too. They know nothing of files; `forkunion/topology/detail/topology_linux.hpp` reads the files and decides what to trust.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/cpu_mask.hpp>

namespace forkunion {

/**  Whether `c` may pad a sysfs value: space, tab, carriage return, newline or NUL. */
constexpr bool is_blank(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\0';
}
constexpr bool is_decimal_digit(char c) noexcept {
    return c >= '0' && c <= '9';
}

/**  The value of a hexadecimal digit, or -1. */
constexpr int hex_digit_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/**  Strips blanks from both ends of `[text, text + length)`, in place. */
constexpr void trim_blanks(char const *&text, std::size_t &length) noexcept {
    while (length && is_blank(text[0])) ++text, --length;
    while (length && is_blank(text[length - 1])) --length;
}

/**
 *  @brief  Reads decimal digits at `text[position]`, advancing `position`; false if there are none or the value
 *          exceeds `limit`. The building block of every parser here; stops at the first non-digit.
 */
constexpr bool scan_decimal(char const *text, std::size_t length, std::size_t &position, std::uint64_t &value,
                            std::uint64_t limit) noexcept {
    std::size_t const start = position;
    std::uint64_t result = 0;
    for (; position < length && is_decimal_digit(text[position]); ++position) {
        std::uint64_t const digit = static_cast<std::uint64_t>(text[position] - '0');
        if (result > (limit - digit) / 10) return false; // `result * 10 + digit > limit`, without overflow
        result = result * 10 + digit;
    }
    value = result;
    return position != start;
}

/**  @brief  A whole decimal number `<= limit`, e.g. `"1024\n"`. On failure `value = 0`. */
constexpr bool parse_unsigned(char const *text, std::size_t length, std::uint64_t &value,
                              std::uint64_t limit = ~std::uint64_t(0)) noexcept {
    value = 0;
    trim_blanks(text, length);
    std::size_t position = 0;
    std::uint64_t result = 0;
    if (!scan_decimal(text, length, position, result, limit) || position != length) return false;
    value = result;
    return true;
}

/**
 *  @brief  The kernel's list syntax: comma-separated ids and ascending inclusive ranges, e.g. `"0-3,8,10-11\n"`.
 *          An empty (or all-blank) text is the empty set. On failure `mask` is empty.
 */
constexpr bool parse_cpulist(char const *text, std::size_t length, cpu_mask_t &mask) noexcept {
    mask.clear();
    trim_blanks(text, length);
    if (!length) return true;
    std::size_t position = 0;
    std::uint64_t const limit = max_cpus_k - 1;
    for (;;) {
        std::uint64_t first = 0, last = 0;
        if (!scan_decimal(text, length, position, first, limit)) break;
        last = first;
        if (position < length && text[position] == '-') {
            ++position;
            if (!scan_decimal(text, length, position, last, limit) || last < first) break;
        }
        mask.set_range(static_cast<std::size_t>(first), static_cast<std::size_t>(last));
        if (position == length) return true;
        if (text[position] != ',') break;
        ++position; // a trailing comma leaves no digits for the next `scan_decimal`, which fails
    }
    mask.clear();
    return false;
}

/**
 *  @brief  The kernel's bitmap syntax: comma-separated groups of 1 to 8 hex digits, each a 32-bit word, the most
 *          significant first, e.g. `"00000000,000000ff\n"` = ids 0-7. On failure `mask` is empty.
 *
 *  Leading groups beyond `max_cpus_k` bits are accepted only when zero (a kernel with a larger `NR_CPUS` pads).
 */
constexpr bool parse_cpumask(char const *text, std::size_t length, cpu_mask_t &mask) noexcept {
    mask.clear();
    trim_blanks(text, length);
    if (!length) return false;
    std::size_t groups = 1;
    for (std::size_t i = 0; i != length; ++i) groups += text[i] == ',';
    std::size_t position = 0;
    for (std::size_t group = 0; group != groups; ++group) {
        std::uint32_t word = 0;
        std::size_t digits = 0;
        for (; position < length && text[position] != ','; ++position, ++digits) {
            int const digit = hex_digit_value(text[position]);
            if (digit < 0 || digits == 8) {
                mask.clear();
                return false;
            }
            word = (word << 4) | static_cast<std::uint32_t>(digit);
        }
        if (!digits) {
            mask.clear();
            return false;
        }
        ++position; // past the comma, or past the end after the last group
        std::size_t const base = (groups - 1 - group) * 32;
        for (; word; word &= word - 1) {
            std::size_t bit = 0;
            while (!((word >> bit) & 1u)) ++bit;
            if (!mask.set(base + bit)) {
                mask.clear();
                return false;
            }
        }
    }
    return true;
}

/**
 *  @brief  A size with an optional binary suffix, as in `cache/indexK/size`: `"32K"`, `"1024K"`, `"32M"`, `"1G"`,
 *          or plain bytes. Suffixes are case-insensitive; the result must fit 64 bits. On failure `bytes = 0`.
 */
constexpr bool parse_size_bytes(char const *text, std::size_t length, std::uint64_t &bytes) noexcept {
    bytes = 0;
    trim_blanks(text, length);
    std::size_t position = 0;
    std::uint64_t value = 0;
    if (!scan_decimal(text, length, position, value, ~std::uint64_t(0))) return false;
    unsigned shift = 0;
    if (position < length) {
        switch (text[position]) {
        case 'K':
        case 'k':
            shift = 10;
            break;
        case 'M':
        case 'm':
            shift = 20;
            break;
        case 'G':
        case 'g':
            shift = 30;
            break;
        default:
            return false;
        }
        ++position;
    }
    if (position != length || value > (~std::uint64_t(0) >> shift)) return false;
    bytes = value << shift;
    return true;
}

/**  @brief  A huge-page directory name, `"hugepages-2048kB"`, to its page size in bytes (> 0). Else `bytes = 0`. */
constexpr bool parse_hugepages_dir_name(char const *name, std::size_t length, std::uint64_t &page_bytes) noexcept {
    page_bytes = 0;
    constexpr char prefix_k[] = "hugepages-";
    constexpr std::size_t prefix_length_k = sizeof(prefix_k) - 1;
    if (length < prefix_length_k + 3) return false;
    for (std::size_t i = 0; i != prefix_length_k; ++i)
        if (name[i] != prefix_k[i]) return false;
    std::size_t position = prefix_length_k;
    std::uint64_t kib = 0;
    if (!scan_decimal(name, length, position, kib, ~std::uint64_t(0) >> 10) || kib == 0) return false;
    if (length - position != 2 || name[position] != 'k' || name[position + 1] != 'B') return false;
    page_bytes = kib << 10;
    return true;
}

/**
 *  @brief  One field of a `meminfo` file by name: `key` is e.g. `"MemTotal"`, and a line reads
 *          `"[Node <id> ]<key>:<blanks><digits>[ kB]"`. Values in kB come back in bytes; unitless values as is.
 *
 *  Only the first line that names `key` counts; if it is malformed, or the bytes overflow 64 bits, the answer is
 *  `false` and `value = 0`. Other lines may hold anything.
 */
constexpr bool parse_meminfo_field(char const *text, std::size_t length, char const *key,
                                   std::uint64_t &value) noexcept {
    value = 0;
    std::size_t key_length = 0;
    while (key[key_length]) ++key_length;
    if (!key_length) return false;
    std::size_t line_start = 0;
    while (line_start < length) {
        std::size_t line_end = line_start;
        while (line_end < length && text[line_end] != '\n') ++line_end;
        char const *line = text + line_start;
        std::size_t line_length = line_end - line_start;
        line_start = line_end + 1;
        trim_blanks(line, line_length);
        std::size_t position = 0;
        // An optional "Node <id> " prefix.
        if (line_length > 5 && line[0] == 'N' && line[1] == 'o' && line[2] == 'd' && line[3] == 'e' && line[4] == ' ') {
            position = 5;
            while (position < line_length && line[position] == ' ') ++position;
            std::uint64_t node = 0;
            if (!scan_decimal(line, line_length, position, node, ~std::uint64_t(0))) continue;
            if (position == line_length || line[position] != ' ') continue;
            while (position < line_length && line[position] == ' ') ++position;
        }
        if (line_length - position <= key_length) continue;
        bool matches = true;
        for (std::size_t i = 0; i != key_length && matches; ++i) matches = line[position + i] == key[i];
        if (!matches || line[position + key_length] != ':') continue;
        // This is the key's line: it must be well-formed.
        position += key_length + 1;
        while (position < line_length && (line[position] == ' ' || line[position] == '\t')) ++position;
        std::uint64_t number = 0;
        if (!scan_decimal(line, line_length, position, number, ~std::uint64_t(0))) return false;
        if (position == line_length) return value = number, true;
        while (position < line_length && (line[position] == ' ' || line[position] == '\t')) ++position;
        if (line_length - position != 2 || line[position] != 'k' || line[position + 1] != 'B') return false;
        if (number > (~std::uint64_t(0) >> 10)) return false;
        value = number << 10;
        return true;
    }
    return false;
}

/**
 *  @brief  A `nodeN/distance` row: blank-separated distances, each in `[1, 255]` (ACPI SLIT's range), into
 *          `distances[0 .. count)`. False (and `count = 0`) if it is empty, malformed, or longer than `capacity`.
 */
constexpr bool parse_distance_row(char const *text, std::size_t length, std::uint8_t *distances, std::size_t capacity,
                                  std::size_t &count) noexcept {
    count = 0;
    trim_blanks(text, length);
    std::size_t position = 0, found = 0;
    while (position < length) {
        std::uint64_t distance = 0;
        if (found == capacity || !scan_decimal(text, length, position, distance, 255) || distance == 0) return false;
        distances[found++] = static_cast<std::uint8_t>(distance);
        if (position == length) break;
        if (text[position] != ' ' && text[position] != '\t') return false;
        while (position < length && (text[position] == ' ' || text[position] == '\t')) ++position;
    }
    count = found;
    return found != 0;
}

/**  @brief  What a cache level holds, from `cache/indexK/type`. */
enum class cache_type_t : std::uint8_t {
    data_k,
    instruction_k,
    unified_k,
};

/**  @brief  `"Data"`, `"Instruction"` or `"Unified"` (exactly, blanks aside); anything else is false. */
constexpr bool parse_cache_type(char const *text, std::size_t length, cache_type_t &type) noexcept {
    trim_blanks(text, length);
    auto const equals = [&](char const *word) noexcept {
        std::size_t i = 0;
        for (; word[i]; ++i)
            if (i == length || text[i] != word[i]) return false;
        return i == length;
    };
    if (equals("Data")) return type = cache_type_t::data_k, true;
    if (equals("Instruction")) return type = cache_type_t::instruction_k, true;
    if (equals("Unified")) return type = cache_type_t::unified_k, true;
    return false;
}

/**
 *  @brief  Writes ids in the kernel's list syntax (`0-3,8`), folding runs of consecutive ids into ranges.
 *
 *  Like `snprintf`: writes at most `capacity - 1` characters and a terminating NUL (nothing if `capacity == 0`),
 *  and returns the length the whole list needs, so `capacity <= return value` means it was cut short. The ids
 *  should ascend; any that do not start a new item, so the output always parses.
 */
constexpr std::size_t format_cpulist(std::uint32_t const *ids, std::size_t count, char *out,
                                     std::size_t capacity) noexcept {
    std::size_t written = 0;
    auto const put = [&](char c) noexcept {
        if (written + 1 < capacity) out[written] = c;
        ++written;
    };
    auto const put_number = [&](std::uint32_t number) noexcept {
        char digits[10] = {};
        std::size_t length = 0;
        do digits[length++] = static_cast<char>('0' + number % 10), number /= 10;
        while (number);
        while (length) put(digits[--length]);
    };
    for (std::size_t i = 0; i != count;) {
        std::size_t run_end = i + 1;
        while (run_end != count && ids[run_end - 1] != ~std::uint32_t(0) && ids[run_end] == ids[run_end - 1] + 1)
            ++run_end;
        if (i) put(',');
        put_number(ids[i]);
        if (run_end - i > 1) put('-'), put_number(ids[run_end - 1]);
        i = run_end;
    }
    if (capacity) out[written < capacity ? written : capacity - 1] = '\0';
    return written;
}

} // namespace forkunion
