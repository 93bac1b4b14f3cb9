/**
 *  @file   forkunion/hardware/capabilities.hpp
 *  @brief  What this build may use and what this machine offers: capability bits, their detection at run time,
 *          and their names.
 *
 *  - `comptime_capabilities()` (from `features.hpp`): what survived the build, the `FORKUNION_WITH_*` switches.
 *  - `runtime_capabilities()`: what the machine underneath offers, whatever the build. The first call detects
 *    (`CPUID` on x86, `getauxval` on AArch64 Linux, `riscv_hwprobe` or `/proc/cpuinfo` on RISC-V Linux; see the
 *    `capabilities_<arch>.hpp` backends) and caches the answer in one word; later calls are one relaxed load.
 *  - `capabilities_usable(mask)`: whether every bit of `mask` is compiled in *and* present, the check every
 *    optional path makes before executing an optional instruction. Bits the target guarantees
 *    (`target_capabilities()`) and bits compiled out fold to a constant, so such checks cost nothing.
 *  - `name_capabilities(mask, buffer, capacity)` renders a mask as `arm64_lse,arm64_wfxt` (or `none`);
 *    `try_parse_capabilities(text, mask)` reads it back.
 *
 *  Which threads may call: any, at any time; detection is idempotent, so racing first calls agree.
 *  Memory ordering: the cache is a self-contained value read and written relaxed; it publishes nothing else.
 */
#pragma once
#include <atomic>  // `std::atomic`
#include <cstddef> // `std::size_t`

#include <forkunion/hardware/features.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/hardware/detail/capabilities_arm64.hpp>
#include <forkunion/hardware/detail/capabilities_riscv.hpp>
#include <forkunion/hardware/detail/capabilities_x86.hpp>

namespace forkunion {

/**  @brief  The detector of targets with no run-time source: it finds nothing. */
struct portable_detector_t {
    static capabilities_t detect() noexcept { return capabilities_none_k; }
};

#if FORKUNION_ARCH_X86 && (FORKUNION_INLINE_ASM || defined(_MSC_VER))
using cpu_detector_t = detail::x86_detector_t;
#elif FORKUNION_ARCH_ARM64 && FORKUNION_OS_LINUX
using cpu_detector_t = detail::arm64_detector_t;
#elif FORKUNION_ARCH_RISCV && FORKUNION_OS_LINUX
using cpu_detector_t = detail::riscv_detector_t;
#else
using cpu_detector_t = portable_detector_t;
#endif

namespace detail {

/**  Set in the cache once it holds a detection; never a capability (bit 63 is no `capability_t`). */
inline constexpr capabilities_t capabilities_cached_k = 1ull << 63;

/**  0 until the first detection, then the detected mask with `capabilities_cached_k`. */
inline std::atomic<capabilities_t> runtime_capabilities_cache{0};

[[gnu::cold, gnu::noinline]] inline capabilities_t detect_runtime_capabilities() noexcept {
    capabilities_t const detected = (cpu_detector_t::detect() & capabilities_isa_k) | capability_os_threads_k;
    // Relaxed: the word is the whole message; racing detectors store the same value.
    runtime_capabilities_cache.store(detected | capabilities_cached_k, std::memory_order_relaxed);
    return detected;
}

} // namespace detail

/**
 *  @brief  The capabilities this machine offers (ISA bits and `os_threads`), whatever this build compiled in.
 *          The first call detects and may make system calls (RISC-V); later calls are one relaxed load.
 */
inline capabilities_t runtime_capabilities() noexcept {
    capabilities_t const cached = detail::runtime_capabilities_cache.load(std::memory_order_relaxed);
    if (cached & detail::capabilities_cached_k) [[likely]]
        return cached & ~detail::capabilities_cached_k;
    return detail::detect_runtime_capabilities();
}

/**
 *  @brief  Whether every bit of `needs` is compiled in and present: guaranteed by the target, or detected at run
 *          time. Folds to a constant when the answer is known at compile time; otherwise one relaxed load and a test.
 */
inline bool capabilities_usable(capabilities_t needs) noexcept {
    if ((comptime_capabilities() & needs) != needs) return false;
    if ((target_capabilities() & needs) == needs) return true;
    return ((target_capabilities() | runtime_capabilities()) & needs) == needs;
}

/**  @brief  One entry of the name table. */
struct capability_name_t {
    capability_t bit;
    char const *name;
};

/**  @brief  Every named bit, in bit order. A bit missing here is rendered `bit<N>`. */
inline constexpr capability_name_t capability_names_k[] = {
    {capability_x86_waitpkg_k, "x86_waitpkg"},
    {capability_x86_cmpccxadd_k, "x86_cmpccxadd"},
    {capability_x86_raoint_k, "x86_raoint"},
    {capability_x86_cldemote_k, "x86_cldemote"},
    {capability_arm64_lse_k, "arm64_lse"},
    {capability_arm64_wfxt_k, "arm64_wfxt"},
    {capability_arm64_evtstrm_k, "arm64_evtstrm"},
    {capability_riscv_amo_k, "riscv_amo"},
    {capability_riscv_zawrs_k, "riscv_zawrs"},
    {capability_riscv_zacas_k, "riscv_zacas"},
    {capability_riscv_zicbom_k, "riscv_zicbom"},
    {capability_os_threads_k, "os_threads"},
    {capability_topology_k, "topology"},
    {capability_thread_pinning_k, "thread_pinning"},
    {capability_memory_placement_k, "memory_placement"},
    {capability_huge_pages_k, "huge_pages"},
};

/**  @brief  Names `try_parse_capabilities` still reads but `name_capabilities` no longer writes (deprecated). */
inline constexpr capability_name_t capability_deprecated_names_k[] = {
    {capability_riscv_amo_k, "risc5_amo"},
    {capability_riscv_zawrs_k, "risc5_zawrs"},
    {capability_riscv_zacas_k, "risc5_zacas"},
    {capability_riscv_zicbom_k, "risc5_zicbom"},
};

/**  @brief  The name of one bit (`"arm64_lse"`), or null for a mask that is not exactly one named bit. */
constexpr char const *capability_name(capabilities_t bit) noexcept {
    for (capability_name_t const &entry : capability_names_k)
        if (entry.bit == bit) return entry.name;
    return nullptr;
}

/**
 *  @brief  Renders `mask` as comma-separated names in bit order (`x86_waitpkg,os_threads`), `bit<N>` for a bit
 *          with no name, and `none` for an empty mask. Like `snprintf`: writes at most `capacity - 1` characters
 *          and a terminating zero (nothing if `capacity == 0`), and returns the length of the whole text.
 */
inline std::size_t name_capabilities(capabilities_t mask, char *buffer, std::size_t capacity) noexcept {
    std::size_t length = 0;
    auto put = [&](char c) noexcept {
        if (length + 1 < capacity) buffer[length] = c;
        ++length;
    };
    auto put_text = [&](char const *text) noexcept {
        while (*text) put(*text++);
    };
    if (mask == capabilities_none_k) put_text("none");
    for (unsigned bit = 0; bit != 64; ++bit) {
        capabilities_t const single = capabilities_t(1) << bit;
        if (!(mask & single)) continue;
        if (mask & (single - 1)) put(',');
        if (char const *name = capability_name(single))
            put_text(name);
        else {
            put_text("bit");
            if (bit >= 10) put(static_cast<char>('0' + bit / 10));
            put(static_cast<char>('0' + bit % 10));
        }
    }
    if (capacity) buffer[length < capacity ? length : capacity - 1] = '\0';
    return length;
}

namespace detail {

/**  One token of `try_parse_capabilities`: a name, `bit<N>` (0-63, no leading zero) or `none`. */
constexpr bool parse_capability_token(char const *first, std::size_t length, capabilities_t &bits) noexcept {
    auto matches = [&](char const *name) noexcept {
        std::size_t i = 0;
        for (; i != length && name[i]; ++i)
            if (first[i] != name[i]) return false;
        return i == length && !name[i];
    };
    if (matches("none")) return bits = capabilities_none_k, true;
    for (capability_name_t const &entry : capability_names_k)
        if (matches(entry.name)) return bits = entry.bit, true;
    // Deprecated spellings, read for one release: `risc5_*` names the same bits as `riscv_*`.
    for (capability_name_t const &entry : capability_deprecated_names_k)
        if (matches(entry.name)) return bits = entry.bit, true;
    if (length < 4 || length > 5 || first[0] != 'b' || first[1] != 'i' || first[2] != 't') return false;
    if (length == 5 && first[3] == '0') return false;
    unsigned bit = 0;
    for (std::size_t i = 3; i != length; ++i) {
        if (first[i] < '0' || first[i] > '9') return false;
        bit = bit * 10 + static_cast<unsigned>(first[i] - '0');
    }
    if (bit >= 64) return false;
    return bits = capabilities_t(1) << bit, true;
}

} // namespace detail

/**
 *  @brief  Parses what `name_capabilities` writes: names and `bit<N>` separated by commas, blanks allowed around
 *          each; `none`, an empty or an all-blank text is the empty mask.
 *  @retval invalid_argument  `text` is null, or a token is empty or no name; `mask` is left unchanged.
 */
[[nodiscard]] inline status_t try_parse_capabilities(char const *text, capabilities_t &mask) noexcept {
    if (!text) return detail::refuse("try_parse_capabilities: text is null");
    auto is_blank = [](char c) noexcept { return c == ' ' || c == '\t'; };
    char const *cursor = text;
    while (is_blank(*cursor)) ++cursor;
    capabilities_t parsed = capabilities_none_k;
    while (*cursor) {
        while (is_blank(*cursor)) ++cursor;
        char const *const first = cursor;
        while (*cursor && *cursor != ',' && !is_blank(*cursor)) ++cursor;
        std::size_t const length = static_cast<std::size_t>(cursor - first);
        while (is_blank(*cursor)) ++cursor;
        capabilities_t bits = capabilities_none_k;
        if ((*cursor && *cursor != ',') || !detail::parse_capability_token(first, length, bits))
            return detail::refuse("try_parse_capabilities: text holds a token that is no capability name");
        parsed |= bits;
        if (*cursor == ',' && !*++cursor)
            return detail::refuse("try_parse_capabilities: text ends in a comma"); // a trailing comma
    }
    mask = parsed;
    return status_code_t::success_k;
}

} // namespace forkunion
