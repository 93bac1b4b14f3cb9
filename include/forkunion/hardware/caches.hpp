/**
 *  @file   forkunion/hardware/caches.hpp
 *  @brief  The caches a processor describes about itself: `calling_cpu_caches()`, from `CPUID` on x86.
 *
 *  The operating system's description (sysfs on Linux, the processor-information call on Windows) is the one the
 *  topology layer trusts first; this query is its fallback where the kernel publishes no caches (some hypervisors
 *  hide the `cpuN/cache/` directories of sysfs). It answers for the CPU the calling thread runs on when it executes
 *  `CPUID` (the thread is not pinned: a thread that migrates between asymmetric cores may see either core's
 *  caches), and it says how many logical processors share each cache, not which ones.
 *
 *  Sources, tried in this order, the first that describes any cache wins:
 *  | leaf          | when                                   | gives                                            |
 *  | ------------- | -------------------------------------- | ------------------------------------------------ |
 *  | 4.n           | leaf 0 EAX >= 4 (Intel; zeros on AMD)  | type, level, size, sharing of each cache         |
 *  | 0x8000001D.n  | 0x80000001 ECX[22] (AMD TopologyExt.)  | the same layout as leaf 4                        |
 *  | 0x80000005/6  | 0x80000000 EAX >= 0x80000006 (AMD)     | L1d (5.ECX[31:24] KiB), L2 (6.ECX[31:16] KiB),   |
 *  |               |                                        | L3 (6.EDX[31:18] x 512 KiB); sharing unknown     |
 *  Leaf-4 size = ways x partitions x line x sets (EBX[31:22]+1, EBX[21:12]+1, EBX[11:0]+1, ECX+1); sharing =
 *  EAX[25:14]+1; the subleaves end at type 0. Intel SDM Vol. 2A "CPUID"; AMD APM Vol. 3 appendix E.
 *
 *  Arm (`CLIDR_EL1`/`CCSIDR_EL1` are privileged; Linux publishes them only through sysfs), RISC-V (no
 *  architectural cache description) and every other target have no user-mode source: the query answers no caches
 *  there, and callers keep the figure unknown.
 *
 *  Which threads may call: any. Cost: a few `CPUID`s, ~100 ns each (under a hypervisor, a VM exit each). Pure
 *  decoding (`x86_cache_decoder_t`) is declared on every target so that tests run it anywhere.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/hardware/features.hpp>
#include <forkunion/hardware/detail/capabilities_x86.hpp>

namespace forkunion {

/**  @brief  What a cache holds. */
enum class cpu_cache_kind_t : std::uint8_t { data_k = 1, instruction_k = 2, unified_k = 3 };

/**  @brief  One cache as the processor describes it. */
struct cpu_cache_t {
    std::uint64_t bytes = 0;           ///< Capacity; never 0 in an answer.
    std::uint32_t sharing_threads = 0; ///< Logical processors that may share it (an upper bound); 0 unknown.
    std::uint8_t level = 0;            ///< 1 for L1, 2 for L2...
    cpu_cache_kind_t kind = cpu_cache_kind_t::unified_k;
};

/**  @brief  A processor's caches, in the order its source lists them. */
struct cpu_caches_t {
    static constexpr std::size_t capacity_k = 16; ///< More than any processor lists (6 on recent server parts).
    cpu_cache_t caches[capacity_k] = {};
    std::size_t count = 0;

    /**  The largest data or unified cache, in bytes; 0 if none. */
    constexpr std::uint64_t largest_data_bytes() const noexcept {
        std::uint64_t largest = 0;
        for (std::size_t i = 0; i != count; ++i)
            if (caches[i].kind != cpu_cache_kind_t::instruction_k && caches[i].bytes > largest)
                largest = caches[i].bytes;
        return largest;
    }
};

namespace detail {

/**  @brief  Decodes cache descriptions from `CPUID` registers. Pure; any target. */
struct x86_cache_decoder_t {
    using cpuid_t = x86_cpuid_decoder_t::cpuid_t;

    /**  @brief  Appends the cache that one subleaf of leaf 4 or 0x8000001D describes. False at the end of the
     *          list (type 0) or when `caches` is full; a subleaf of an unknown type or size 0 is skipped (true). */
    static constexpr bool add_deterministic_leaf(cpuid_t leaf, cpu_caches_t &caches) noexcept {
        std::uint32_t const type = leaf.eax & 0x1Fu;
        if (type == 0 || caches.count == cpu_caches_t::capacity_k) return false;
        if (type > 3) return true;
        cpu_cache_t cache;
        cache.kind = static_cast<cpu_cache_kind_t>(type);
        cache.level = static_cast<std::uint8_t>((leaf.eax >> 5) & 0x7u);
        cache.sharing_threads = ((leaf.eax >> 14) & 0xFFFu) + 1;
        // At most 2^32 (ways x partitions x line) times at most 2^32 sets: only the all-ones leaf reaches 2^64.
        std::uint64_t const per_set =
            std::uint64_t((leaf.ebx >> 22) + 1) * (((leaf.ebx >> 12) & 0x3FFu) + 1) * ((leaf.ebx & 0xFFFu) + 1);
        std::uint64_t const sets = std::uint64_t(leaf.ecx) + 1;
        if (per_set > ~std::uint64_t(0) / sets) return true; // malformed: skipped, never a wrapped size
        cache.bytes = per_set * sets;
        if (cache.level) caches.caches[caches.count++] = cache;
        return true;
    }

    /**  @brief  Appends the L1 data, L2 and L3 caches of AMD's legacy leaves 0x80000005 and 0x80000006; a size
     *          of 0 (or an associativity field of 0, "disabled") means no such cache. Sharing stays unknown. */
    static constexpr void add_amd_legacy_leaves(cpuid_t leaf_5, cpuid_t leaf_6, cpu_caches_t &caches) noexcept {
        auto add = [&](std::uint64_t bytes, std::uint8_t level, cpu_cache_kind_t kind) noexcept {
            if (!bytes || caches.count == cpu_caches_t::capacity_k) return;
            cpu_cache_t cache;
            cache.bytes = bytes, cache.level = level, cache.kind = kind;
            caches.caches[caches.count++] = cache;
        };
        add(std::uint64_t(leaf_5.ecx >> 24) << 10, 1, cpu_cache_kind_t::data_k);
        add(std::uint64_t(leaf_5.edx >> 24) << 10, 1, cpu_cache_kind_t::instruction_k);
        if ((leaf_6.ecx >> 12) & 0xFu) add(std::uint64_t(leaf_6.ecx >> 16) << 10, 2, cpu_cache_kind_t::unified_k);
        if ((leaf_6.edx >> 12) & 0xFu) add(std::uint64_t(leaf_6.edx >> 18) << 19, 3, cpu_cache_kind_t::unified_k);
    }
};

#if FORKUNION_ARCH_X86 && (FORKUNION_INLINE_ASM || defined(_MSC_VER))
/**  @brief  The caches backend of x86: `CPUID` leaf 4, then AMD's 0x8000001D, then AMD's legacy 0x80000005/6. */
struct x86_caches_t {
    static cpu_caches_t calling_cpu() noexcept {
        using cpu_t = x86_detector_t;
        using decoder_t = x86_cache_decoder_t;
        cpu_caches_t caches;
        constexpr std::uint32_t subleaves_limit_k = 64; // bounds a hypervisor that never ends the list
        if (cpu_t::cpuid(0, 0).eax >= 4)
            for (std::uint32_t subleaf = 0; subleaf != subleaves_limit_k; ++subleaf)
                if (!decoder_t::add_deterministic_leaf(cpu_t::cpuid(4, subleaf), caches)) break;
        if (caches.count) return caches;
        std::uint32_t const max_extended = cpu_t::cpuid(0x80000000u, 0).eax;
        if (max_extended >= 0x8000001Du && ((cpu_t::cpuid(0x80000001u, 0).ecx >> 22) & 1u))
            for (std::uint32_t subleaf = 0; subleaf != subleaves_limit_k; ++subleaf)
                if (!decoder_t::add_deterministic_leaf(cpu_t::cpuid(0x8000001Du, subleaf), caches)) break;
        if (caches.count) return caches;
        if (max_extended >= 0x80000006u && max_extended < 0x90000000u)
            decoder_t::add_amd_legacy_leaves(cpu_t::cpuid(0x80000005u, 0), cpu_t::cpuid(0x80000006u, 0), caches);
        return caches;
    }
};
#endif // FORKUNION_ARCH_X86 && (FORKUNION_INLINE_ASM || defined(_MSC_VER))

/**  @brief  The caches backend of every other target: no source answers, so no caches. */
struct portable_caches_t {
    static cpu_caches_t calling_cpu() noexcept { return cpu_caches_t(); }
};

} // namespace detail

// The backend: one `using` per target, as every concern picks its backend (docs/design.md, "Layers").
#if FORKUNION_ARCH_X86 && (FORKUNION_INLINE_ASM || defined(_MSC_VER))
using caches_backend_t = detail::x86_caches_t;
#else
using caches_backend_t = detail::portable_caches_t;
#endif

/**
 *  @brief  The caches of the CPU the calling thread runs on, as `CPUID` describes them; none (`count == 0`) where
 *          no source answers (see the file comment). Any thread; never allocates or makes a system call.
 */
inline cpu_caches_t calling_cpu_caches() noexcept {
    return caches_backend_t::calling_cpu();
}

} // namespace forkunion
