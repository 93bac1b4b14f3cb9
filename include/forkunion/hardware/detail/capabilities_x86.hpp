/**
 *  @file   forkunion/hardware/detail/capabilities_x86.hpp
 *  @brief  Run-time detection on x86: `x86_detector_t`, the `CPUID` backend of `runtime_capabilities()`.
 *
 *  Defined only for x86 targets with GNU inline assembly; elsewhere this header declares nothing. Sources, Intel
 *  SDM Vol. 2A, "CPUID—CPU Identification", table "Structured Extended Feature Flags Enumeration Leaf":
 *
 *  | bit                          | leaf.subleaf | register and bit | present only if            |
 *  | ---------------------------- | ------------ | ---------------- | -------------------------- |
 *  | `capability_x86_waitpkg_k`   | 7.0          | ECX[5]           | leaf 0 EAX (max leaf) >= 7 |
 *  | `capability_x86_cldemote_k`  | 7.0          | ECX[25]          | leaf 0 EAX >= 7            |
 *  | `capability_x86_raoint_k`    | 7.1          | EAX[3]           | leaf 7.0 EAX (max sub) >= 1 |
 *  | `capability_x86_cmpccxadd_k` | 7.1          | EAX[7]           | leaf 7.0 EAX >= 1          |
 *
 *  A leaf above the maximum returns the data of the highest basic leaf on Intel parts, not zeros, so each leaf's
 *  presence is checked before its bits are trusted. `CPUID` never traps in user mode (unless the OS enables CPUID
 *  faulting, which Linux only does for processes that ask for it with `arch_prctl`).
 *
 *  `x86_cpuid_decoder_t`, the pure decoding, is declared on every target so that tests run it anywhere;
 *  `x86_detector_t`, which executes `CPUID`, only on x86: with GNU inline assembly, or with MSVC's `__cpuidex`.
 */
#pragma once
#include <cstdint> // `std::uint32_t`

#include <forkunion/hardware/features.hpp>

namespace forkunion::detail {

/**  @brief  Decodes the x86 capability bits from `CPUID` registers. Pure; any target. */
struct x86_cpuid_decoder_t {
    struct cpuid_t {
        std::uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
    };

    /**  @brief  The bits of leaves 7.0 and 7.1, given leaf 0's EAX (the maximal basic leaf); absent leaves count as
     *          zeros whatever their registers hold. */
    static constexpr capabilities_t from_leaves(std::uint32_t max_leaf, cpuid_t leaf_7_0, cpuid_t leaf_7_1) noexcept {
        capabilities_t mask = capabilities_none_k;
        if (max_leaf < 7) return mask;
        if ((leaf_7_0.ecx >> 5) & 1u) mask |= capability_x86_waitpkg_k;
        if ((leaf_7_0.ecx >> 25) & 1u) mask |= capability_x86_cldemote_k;
        if (leaf_7_0.eax < 1) return mask; // leaf 7.0 EAX is the highest valid subleaf
        if ((leaf_7_1.eax >> 3) & 1u) mask |= capability_x86_raoint_k;
        if ((leaf_7_1.eax >> 7) & 1u) mask |= capability_x86_cmpccxadd_k;
        return mask;
    }
};

} // namespace forkunion::detail

#if FORKUNION_ARCH_X86 && FORKUNION_INLINE_ASM
namespace forkunion::detail {

/**  @brief  Reads the x86 capability bits from `CPUID`. Any thread; costs ~100 ns (under a hypervisor, a VM exit). */
struct x86_detector_t : x86_cpuid_decoder_t {
    static cpuid_t cpuid(std::uint32_t leaf, std::uint32_t subleaf) noexcept {
        cpuid_t out;
        __asm__ __volatile__("cpuid"
                             : "=a"(out.eax), "=b"(out.ebx), "=c"(out.ecx), "=d"(out.edx)
                             : "a"(leaf), "c"(subleaf));
        return out;
    }

    static capabilities_t detect() noexcept {
        std::uint32_t const max_leaf = cpuid(0, 0).eax;
        if (max_leaf < 7) return capabilities_none_k;
        cpuid_t const leaf_7_0 = cpuid(7, 0);
        cpuid_t const leaf_7_1 = leaf_7_0.eax >= 1 ? cpuid(7, 1) : cpuid_t{};
        return from_leaves(max_leaf, leaf_7_0, leaf_7_1);
    }
};

} // namespace forkunion::detail
#endif

#if FORKUNION_ARCH_X86 && !FORKUNION_INLINE_ASM && defined(_MSC_VER)
#include <intrin.h> // `__cpuidex`

namespace forkunion::detail {

/**  @brief  Reads the x86 capability bits with MSVC's `__cpuidex` intrinsic (no inline assembly there). */
struct x86_detector_t : x86_cpuid_decoder_t {
    static cpuid_t cpuid(std::uint32_t leaf, std::uint32_t subleaf) noexcept {
        int registers[4] = {};
        __cpuidex(registers, static_cast<int>(leaf), static_cast<int>(subleaf));
        return {static_cast<std::uint32_t>(registers[0]), static_cast<std::uint32_t>(registers[1]),
                static_cast<std::uint32_t>(registers[2]), static_cast<std::uint32_t>(registers[3])};
    }

    static capabilities_t detect() noexcept {
        std::uint32_t const max_leaf = cpuid(0, 0).eax;
        if (max_leaf < 7) return capabilities_none_k;
        cpuid_t const leaf_7_0 = cpuid(7, 0);
        cpuid_t const leaf_7_1 = leaf_7_0.eax >= 1 ? cpuid(7, 1) : cpuid_t{};
        return from_leaves(max_leaf, leaf_7_0, leaf_7_1);
    }
};

} // namespace forkunion::detail
#endif
