// clang-format off
/**
 *  @file   forkunion/hardware/features.hpp
 *  @brief  What this build may use: the `FORKUNION_WITH_*` switches, the capability bits, and the compile-time
 *          capability masks. No OS code and no inline assembly: run-time detection is `capabilities.hpp`.
 *
 *  @section switches Build switches (0/1 macros, read with `#if`, mirrored below as `constexpr bool`)
 *  | macro                       | instructions it lets the library emit              | target                |
 *  | --------------------------- | -------------------------------------------------- | --------------------- |
 *  | `FORKUNION_WITH_WAITPKG`    | `UMONITOR`, `UMWAIT`, `TPAUSE`                     | x86 (32 and 64)       |
 *  | `FORKUNION_WITH_CMPCCXADD`  | `CMPccXADD`                                        | x86-64 only           |
 *  | `FORKUNION_WITH_RAOINT`     | `AADD`, `AAND`, `AOR`, `AXOR`                      | x86-64 only           |
 *  | `FORKUNION_WITH_LSE`        | `LDADD`, `LDSMAX`, `STADD`, `SWP`, `CAS` and kin    | AArch64               |
 *  | `FORKUNION_WITH_WFXT`       | `WFET`                                             | AArch64               |
 *  | `FORKUNION_WITH_ZAWRS`      | `WRS.STO`, `WRS.NTO`                               | RISC-V                |
 *  | `FORKUNION_WITH_ZACAS`      | `AMOCAS.W`, `AMOCAS.D`                             | RISC-V                |
 *  | `FORKUNION_PORTABLE`        | none of the above, nor the baseline-ISA paths      | any                   |
 *  |                             | (armed AArch64 `WFE`, RISC-V `AMO*`): only         |                       |
 *  |                             | `std::atomic` and the pause hint                   |                       |
 *
 *  Each switch defaults to 1 where the target architecture can encode the instruction and the compiler speaks GNU
 *  inline assembly, else 0; CMake's `FORKUNION_WITH_<FEATURE>=AUTO|ON|OFF` sets them from compile probes
 *  (`cmake/forkunion_features.cmake`). A switch only lets the library *emit* an instruction: it is *executed* only
 *  when the CPU also reports the feature at run time (`capabilities_usable`), except where the target guarantees
 *  it (`target_capabilities()`, from `-march` macros). Contradictions stop the build with `#error`.
 *
 *  @section bits Capability bits
 *  One 64-bit mask (`capabilities_t`) names every instruction family and OS facility the library can use. ISA bits
 *  (0-31) are reported here and by `runtime_capabilities()`. The OS bits (32+) are defined here so that one mask
 *  and one name table serve the whole library; the layers that own them report them: `os_threads` is reported by
 *  this layer, `topology`, `thread_pinning`, `memory_placement` and `huge_pages` by the topology and allocator
 *  layers and the C API, which OR them into the masks they return.
 */
// clang-format on
#pragma once
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/types.hpp> // `FORKUNION_ARCH_*`

/*  GNU-style inline assembly: GCC and Clang (and compilers that claim to be GCC). */
#if defined(__GNUC__) || defined(__clang__)
#define FORKUNION_INLINE_ASM 1
#else
#define FORKUNION_INLINE_ASM 0
#endif

#if defined(__x86_64__)
#define FORKUNION_ARCH_X86_64 1
#else
#define FORKUNION_ARCH_X86_64 0
#endif

/*  ThreadSanitizer cannot see memory accesses made by inline assembly, so sanitized builds keep atomics in
 *  `std::atomic_ref`, which it instruments (see `atomics.hpp`). */
#if defined(__SANITIZE_THREAD__)
#define FORKUNION_SANITIZE_THREAD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FORKUNION_SANITIZE_THREAD 1
#endif
#endif
#if !defined(FORKUNION_SANITIZE_THREAD)
#define FORKUNION_SANITIZE_THREAD 0
#endif

#if !defined(FORKUNION_PORTABLE)
#define FORKUNION_PORTABLE 0
#endif

/*  Defaults when the build system says nothing: 1 where the target can encode the instruction. */
#if !defined(FORKUNION_WITH_WAITPKG)
#if FORKUNION_ARCH_X86 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
#define FORKUNION_WITH_WAITPKG 1
#else
#define FORKUNION_WITH_WAITPKG 0
#endif
#endif
#if !defined(FORKUNION_WITH_CMPCCXADD)
#if FORKUNION_ARCH_X86_64 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
#define FORKUNION_WITH_CMPCCXADD 1
#else
#define FORKUNION_WITH_CMPCCXADD 0
#endif
#endif
#if !defined(FORKUNION_WITH_RAOINT)
#if FORKUNION_ARCH_X86_64 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
#define FORKUNION_WITH_RAOINT 1
#else
#define FORKUNION_WITH_RAOINT 0
#endif
#endif
#if !defined(FORKUNION_WITH_LSE)
#if FORKUNION_ARCH_ARM64 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
#define FORKUNION_WITH_LSE 1
#else
#define FORKUNION_WITH_LSE 0
#endif
#endif
#if !defined(FORKUNION_WITH_WFXT)
#if FORKUNION_ARCH_ARM64 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
#define FORKUNION_WITH_WFXT 1
#else
#define FORKUNION_WITH_WFXT 0
#endif
#endif
#if !defined(FORKUNION_WITH_ZAWRS)
#if FORKUNION_ARCH_RISCV && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
#define FORKUNION_WITH_ZAWRS 1
#else
#define FORKUNION_WITH_ZAWRS 0
#endif
#endif
#if !defined(FORKUNION_WITH_ZACAS)
#if FORKUNION_ARCH_RISCV && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
#define FORKUNION_WITH_ZACAS 1
#else
#define FORKUNION_WITH_ZACAS 0
#endif
#endif

/*  Contradictions: a switch forced on for a target that cannot encode it, or next to `FORKUNION_PORTABLE`. */
#if FORKUNION_PORTABLE && (FORKUNION_WITH_WAITPKG || FORKUNION_WITH_CMPCCXADD || FORKUNION_WITH_RAOINT ||              \
                           FORKUNION_WITH_LSE || FORKUNION_WITH_WFXT || FORKUNION_WITH_ZAWRS || FORKUNION_WITH_ZACAS)
#error "forkunion: FORKUNION_PORTABLE=1 compiles every optional instruction out, but a FORKUNION_WITH_* switch is 1"
#endif
#if (FORKUNION_WITH_WAITPKG || FORKUNION_WITH_CMPCCXADD || FORKUNION_WITH_RAOINT || FORKUNION_WITH_LSE ||              \
     FORKUNION_WITH_WFXT || FORKUNION_WITH_ZAWRS || FORKUNION_WITH_ZACAS) &&                                           \
    !FORKUNION_INLINE_ASM
#error "forkunion: a FORKUNION_WITH_* switch is 1, but this compiler has no GNU-style inline assembly"
#endif
#if FORKUNION_WITH_WAITPKG && !FORKUNION_ARCH_X86
#error "forkunion: FORKUNION_WITH_WAITPKG=1 needs an x86 target (UMONITOR/UMWAIT/TPAUSE)"
#endif
#if FORKUNION_WITH_CMPCCXADD && !FORKUNION_ARCH_X86_64
#error "forkunion: FORKUNION_WITH_CMPCCXADD=1 needs an x86-64 target (CMPccXADD is 64-bit mode only)"
#endif
#if FORKUNION_WITH_RAOINT && !FORKUNION_ARCH_X86_64
#error "forkunion: FORKUNION_WITH_RAOINT=1 needs an x86-64 target (RAO-INT is 64-bit mode only)"
#endif
#if FORKUNION_WITH_LSE && !FORKUNION_ARCH_ARM64
#error "forkunion: FORKUNION_WITH_LSE=1 needs an AArch64 target"
#endif
#if FORKUNION_WITH_WFXT && !FORKUNION_ARCH_ARM64
#error "forkunion: FORKUNION_WITH_WFXT=1 needs an AArch64 target"
#endif
#if FORKUNION_WITH_ZAWRS && !FORKUNION_ARCH_RISCV
#error "forkunion: FORKUNION_WITH_ZAWRS=1 needs a RISC-V target"
#endif
#if FORKUNION_WITH_ZACAS && !FORKUNION_ARCH_RISCV
#error "forkunion: FORKUNION_WITH_ZACAS=1 needs a RISC-V target"
#endif

namespace forkunion {

inline constexpr bool portable_k = FORKUNION_PORTABLE;
inline constexpr bool with_waitpkg_k = FORKUNION_WITH_WAITPKG;
inline constexpr bool with_cmpccxadd_k = FORKUNION_WITH_CMPCCXADD;
inline constexpr bool with_raoint_k = FORKUNION_WITH_RAOINT;
inline constexpr bool with_lse_k = FORKUNION_WITH_LSE;
inline constexpr bool with_wfxt_k = FORKUNION_WITH_WFXT;
inline constexpr bool with_zawrs_k = FORKUNION_WITH_ZAWRS;
inline constexpr bool with_zacas_k = FORKUNION_WITH_ZACAS;
/**  Baseline-ISA paths (armed AArch64 `WFE`, RISC-V A `AMO*`): everywhere but portable builds. */
inline constexpr bool with_baseline_asm_k = FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE;
inline constexpr bool sanitize_thread_k = FORKUNION_SANITIZE_THREAD;

/**  @brief  A set of `capability_t` bits. */
using capabilities_t = std::uint64_t;

/**
 *  @brief  One bit per instruction family or OS facility. Names (`capability_name`) are the enumerator without
 *          the `capability_` prefix and `_k` suffix, e.g. `"arm64_lse"`.
 */
enum capability_t : capabilities_t {
    // x86: CPUID leaf 7 (Intel SDM Vol. 2A, "CPUID").
    capability_x86_waitpkg_k = 1ull << 0,   ///< `UMONITOR`/`UMWAIT`/`TPAUSE`: CPUID.(7,0):ECX[5].
    capability_x86_cmpccxadd_k = 1ull << 1, ///< `CMPccXADD`: CPUID.(7,1):EAX[7].
    capability_x86_raoint_k = 1ull << 2,    ///< `AADD`/`AAND`/`AOR`/`AXOR`: CPUID.(7,1):EAX[3].
    capability_x86_cldemote_k = 1ull << 3,  ///< `CLDEMOTE` cache-line hint: CPUID.(7,0):ECX[25].
    // AArch64: Linux `AT_HWCAP`/`AT_HWCAP2` (arch/arm64/include/uapi/asm/hwcap.h).
    capability_arm64_lse_k = 1ull << 8,      ///< FEAT_LSE atomics: `HWCAP_ATOMICS` (bit 8).
    capability_arm64_wfxt_k = 1ull << 9,     ///< FEAT_WFxT, `WFET`: `HWCAP2_WFXT` (bit 31).
    capability_arm64_evtstrm_k = 1ull << 10, ///< The kernel's timer event stream, bounding a plain `WFE`: bit 2.
    // RISC-V: `AT_HWCAP` letters, `riscv_hwprobe`, or the `isa` line of /proc/cpuinfo.
    capability_riscv_amo_k = 1ull << 16,    ///< A extension AMOs (`AMOMAX`, `AMOADD` into `x0`, ...).
    capability_riscv_zawrs_k = 1ull << 17,  ///< `WRS.NTO`/`WRS.STO`.
    capability_riscv_zacas_k = 1ull << 18,  ///< `AMOCAS.W`/`AMOCAS.D`.
    capability_riscv_zicbom_k = 1ull << 19, ///< `CBO.CLEAN` and kin (cache-line hints).
    // The `risc5` spellings of the four bits above, kept for one release.
    capability_risc5_amo_k [[deprecated("use capability_riscv_amo_k")]] = capability_riscv_amo_k,
    capability_risc5_zawrs_k [[deprecated("use capability_riscv_zawrs_k")]] = capability_riscv_zawrs_k,
    capability_risc5_zacas_k [[deprecated("use capability_riscv_zacas_k")]] = capability_riscv_zacas_k,
    capability_risc5_zicbom_k [[deprecated("use capability_riscv_zicbom_k")]] = capability_riscv_zicbom_k,
    // OS facilities: reported by the layers that own them (see the file comment).
    capability_os_threads_k = 1ull << 32,       ///< `std::thread` works: reported here.
    capability_topology_k = 1ull << 33,         ///< Compute/memory domains were harvested: the topology layer.
    capability_thread_pinning_k = 1ull << 34,   ///< Threads can be bound to cores: the topology layer.
    capability_memory_placement_k = 1ull << 35, ///< Memory can be bound to a memory domain: the allocators.
    capability_huge_pages_k = 1ull << 36,       ///< Huge pages can be mapped: the allocators.
};

inline constexpr capabilities_t capabilities_none_k = 0;
inline constexpr capabilities_t capabilities_all_k = ~capabilities_t(0);
/**  @brief  The instruction-set bits, as opposed to the OS facilities. */
inline constexpr capabilities_t capabilities_isa_k = 0xFFFFFFFFull;

/**
 *  @brief  What this build may emit: the bits whose `FORKUNION_WITH_*` switch is 1 (plus the baseline-ISA paths
 *          of non-portable builds) and `os_threads`. Usable = compiled in (this) and present (run time).
 */
constexpr capabilities_t comptime_capabilities() noexcept {
    capabilities_t mask = capability_os_threads_k;
    if (with_waitpkg_k) mask |= capability_x86_waitpkg_k;
    if (with_cmpccxadd_k) mask |= capability_x86_cmpccxadd_k;
    if (with_raoint_k) mask |= capability_x86_raoint_k;
    if (with_lse_k) mask |= capability_arm64_lse_k;
    if (with_wfxt_k) mask |= capability_arm64_wfxt_k;
    if (with_zawrs_k) mask |= capability_riscv_zawrs_k;
    if (with_zacas_k) mask |= capability_riscv_zacas_k;
    // Baseline-ISA paths: the armed `WFE` (bounded by the event stream) and the A extension's AMOs.
    if (with_baseline_asm_k && arch_arm64_k) mask |= capability_arm64_evtstrm_k;
    if (with_baseline_asm_k && arch_riscv_k) mask |= capability_riscv_amo_k;
    return mask;
}

/**
 *  @brief  What the compile target guarantees (`-march`/`-m` feature macros), so no run-time check is needed.
 *          Building with `-march=armv8.1-a` makes LSE atomics branch-free, for example.
 */
constexpr capabilities_t target_capabilities() noexcept {
    capabilities_t mask = capabilities_none_k;
#if defined(__WAITPKG__)
    mask |= capability_x86_waitpkg_k;
#endif
#if defined(__CMPCCXADD__)
    mask |= capability_x86_cmpccxadd_k;
#endif
#if defined(__RAOINT__)
    mask |= capability_x86_raoint_k;
#endif
#if defined(__ARM_FEATURE_ATOMICS)
    mask |= capability_arm64_lse_k;
#endif
#if defined(__riscv_atomic) || defined(__riscv_a)
    mask |= capability_riscv_amo_k;
#endif
#if defined(__riscv_zawrs)
    mask |= capability_riscv_zawrs_k;
#endif
#if defined(__riscv_zacas)
    mask |= capability_riscv_zacas_k;
#endif
    return mask;
}

} // namespace forkunion
