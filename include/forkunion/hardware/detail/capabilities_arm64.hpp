/**
 *  @file   forkunion/hardware/detail/capabilities_arm64.hpp
 *  @brief  Run-time detection on AArch64 Linux: `arm64_detector_t`, the `getauxval` backend of
 *          `runtime_capabilities()`.
 *
 *  Defined only for AArch64 Linux; elsewhere this header declares nothing (Apple targets guarantee LSE at compile
 *  time, see `target_capabilities()`). The kernel derives these bits from the ID registers and also hides what it
 *  does not support at EL0, which is why they are read from the auxiliary vector and not from `MRS` on `ID_*`
 * registers. Sources, Linux `arch/arm64/include/uapi/asm/hwcap.h`:
 *
 *  | bit                          | vector      | bit  | name            |
 *  | ---------------------------- | ----------- | ---- | --------------- |
 *  | `capability_arm64_evtstrm_k` | `AT_HWCAP`  | 2    | `HWCAP_EVTSTRM` |
 *  | `capability_arm64_lse_k`     | `AT_HWCAP`  | 8    | `HWCAP_ATOMICS` |
 *  | `capability_arm64_wfxt_k`    | `AT_HWCAP2` | 31   | `HWCAP2_WFXT`   |
 *
 *  `getauxval` reads the process's auxiliary vector: no system call.
 */
#pragma once
#include <forkunion/hardware/features.hpp>

#if FORKUNION_ARCH_ARM64 && FORKUNION_OS_LINUX
#include <sys/auxv.h> // `getauxval`, `AT_HWCAP`, `AT_HWCAP2`

namespace forkunion::detail {

/**  @brief  Reads the AArch64 capability bits from the auxiliary vector. Any thread; no system call. */
struct arm64_detector_t {
    /**  @brief  The capability bits of the `AT_HWCAP` and `AT_HWCAP2` words. */
    static constexpr capabilities_t from_hwcaps(unsigned long hwcap, unsigned long hwcap2) noexcept {
        capabilities_t mask = capabilities_none_k;
        if ((hwcap >> 2) & 1ul) mask |= capability_arm64_evtstrm_k;
        if ((hwcap >> 8) & 1ul) mask |= capability_arm64_lse_k;
        if ((hwcap2 >> 31) & 1ul) mask |= capability_arm64_wfxt_k;
        return mask;
    }

    static capabilities_t detect() noexcept { return from_hwcaps(::getauxval(AT_HWCAP), ::getauxval(AT_HWCAP2)); }
};

} // namespace forkunion::detail
#endif
