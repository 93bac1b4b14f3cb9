/**
 *  @file   forkunion/hardware/detail/capabilities_riscv.hpp
 *  @brief  Run-time detection on RISC-V Linux: `riscv_detector_t`, the `AT_HWCAP` + `riscv_hwprobe` +
 *          `/proc/cpuinfo` backend of `runtime_capabilities()`.
 *
 *  Defined only for RISC-V Linux; elsewhere this header declares nothing. Multi-letter extensions have no
 *  `AT_HWCAP` bit, so they come from, in order:
 *
 *  1. the `riscv_hwprobe` system call (Linux 6.4+, number 258 = `__NR_arch_specific_syscall + 14`), key
 *     `RISCV_HWPROBE_KEY_IMA_EXT_0` (4), with the CPU set left empty, meaning "every online hart", so a bit is set
 *     only if all harts have it. Bits, Linux `arch/riscv/include/uapi/asm/hwprobe.h`: `ZACAS` 34, `ZAWRS` 48,
 *     `ZICBOM` 55. A kernel too old for a bit reports it clear;
 *  2. where the call is missing (`ENOSYS`: older kernels and `qemu-user` 7.2), the first `isa` line of
 *     `/proc/cpuinfo`, e.g. `rv64imafdc_zicbom_zawrs`, whose names are the ISA manual's.
 *
 *  `AT_HWCAP` bit `'A' - 'A'` = 0 reports the A extension (AMOs). Detection makes system calls (`riscv_hwprobe`, or
 *  `open`/`read` of a small file) once per process: `runtime_capabilities()` caches it.
 *
 *  `riscv_isa_decoder_t`, the pure decoding of those sources, is declared on every target so that tests run it
 *  anywhere; `riscv_detector_t`, which reads them, only on RISC-V Linux.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::int64_t`

#include <forkunion/hardware/features.hpp>

namespace forkunion::detail {

/**  @brief  Decodes the RISC-V capability bits from `AT_HWCAP`, `riscv_hwprobe` and ISA strings. Pure; any target. */
struct riscv_isa_decoder_t {
    static constexpr long hwprobe_syscall_k = 258;
    static constexpr std::int64_t hwprobe_key_ima_ext_0_k = 4;
    static constexpr std::uint64_t hwprobe_zacas_k = 1ull << 34;
    static constexpr std::uint64_t hwprobe_zawrs_k = 1ull << 48;
    static constexpr std::uint64_t hwprobe_zicbom_k = 1ull << 55;

    /**  @brief  The capability bits of an `AT_HWCAP` word (one bit per single-letter extension). */
    static constexpr capabilities_t from_hwcap(unsigned long hwcap) noexcept {
        return (hwcap & 1ul) ? capabilities_t(capability_riscv_amo_k) : capabilities_none_k;
    }

    /**  @brief  The capability bits of the `RISCV_HWPROBE_KEY_IMA_EXT_0` value. */
    static constexpr capabilities_t from_hwprobe(std::uint64_t ima_ext_0) noexcept {
        capabilities_t mask = capabilities_none_k;
        if (ima_ext_0 & hwprobe_zacas_k) mask |= capability_riscv_zacas_k;
        if (ima_ext_0 & hwprobe_zawrs_k) mask |= capability_riscv_zawrs_k;
        if (ima_ext_0 & hwprobe_zicbom_k) mask |= capability_riscv_zicbom_k;
        return mask;
    }

    /**
     *  @brief  The capability bits of an ISA string such as `rv64imafdc_zicsr_zawrs`: `rv32`/`rv64`, the single
     *          letters up to the first `_` (`g` stands for `imafd`), then `_`-separated names, matched exactly and
     *          case-insensitively. Anything that does not start with `rv` yields nothing.
     */
    static constexpr capabilities_t from_isa_string(char const *text, std::size_t length) noexcept {
        auto lower = [](char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
        if (length < 2 || lower(text[0]) != 'r' || lower(text[1]) != 'v') return capabilities_none_k;
        std::size_t i = 2;
        while (i < length && text[i] >= '0' && text[i] <= '9') ++i;
        capabilities_t mask = capabilities_none_k;
        for (; i < length && text[i] != '_'; ++i)
            if (lower(text[i]) == 'a' || lower(text[i]) == 'g') mask |= capability_riscv_amo_k;
        auto equals = [&](std::size_t first, std::size_t count, char const *name) noexcept {
            std::size_t j = 0;
            for (; j != count && name[j]; ++j)
                if (lower(text[first + j]) != name[j]) return false;
            return j == count && !name[j];
        };
        while (i < length) {
            std::size_t const first = ++i; // skip the `_`
            while (i < length && text[i] != '_') ++i;
            std::size_t const count = i - first;
            if (equals(first, count, "zawrs"))
                mask |= capability_riscv_zawrs_k;
            else if (equals(first, count, "zacas"))
                mask |= capability_riscv_zacas_k;
            else if (equals(first, count, "zicbom"))
                mask |= capability_riscv_zicbom_k;
        }
        return mask;
    }

    /**
     *  @brief  The capability bits of the first `isa` line of a `/proc/cpuinfo` text, or none. `text` need not be
     *          whole: a line cut at the end is ignored.
     */
    static constexpr capabilities_t from_cpuinfo(char const *text, std::size_t length) noexcept {
        for (std::size_t line = 0; line < length;) {
            std::size_t end = line;
            while (end < length && text[end] != '\n') ++end;
            if (end == length) return capabilities_none_k; // an unfinished line may be cut short
            if (end - line > 3 && text[line] == 'i' && text[line + 1] == 's' && text[line + 2] == 'a' &&
                (text[line + 3] == ' ' || text[line + 3] == '\t' || text[line + 3] == ':')) {
                std::size_t value = line + 3;
                while (value < end && (text[value] == ' ' || text[value] == '\t' || text[value] == ':')) ++value;
                std::size_t value_end = end;
                while (value_end > value && (text[value_end - 1] == ' ' || text[value_end - 1] == '\r')) --value_end;
                return from_isa_string(text + value, value_end - value);
            }
            line = end + 1;
        }
        return capabilities_none_k;
    }
};

} // namespace forkunion::detail

#if FORKUNION_ARCH_RISCV && FORKUNION_OS_LINUX
#include <fcntl.h>       // `open`
#include <sys/auxv.h>    // `getauxval`, `AT_HWCAP`
#include <sys/syscall.h> // `SYS_*`
#include <unistd.h>      // `read`, `close`, `syscall`

namespace forkunion::detail {

/**  @brief  Reads the RISC-V capability bits. Any thread; system calls on every call (cache it). */
struct riscv_detector_t : riscv_isa_decoder_t {
    static capabilities_t detect() noexcept {
        capabilities_t mask = from_hwcap(::getauxval(AT_HWCAP));
        struct {
            std::int64_t key;
            std::uint64_t value;
        } pair{hwprobe_key_ima_ext_0_k, 0};
        // Arguments: pairs, pair count, CPU-set size 0 and a null set ("all online harts"), flags.
        if (::syscall(hwprobe_syscall_k, &pair, 1, 0, nullptr, 0) == 0 && pair.key == hwprobe_key_ima_ext_0_k)
            return mask | from_hwprobe(pair.value);
        return mask | from_cpuinfo_file();
    }

private:
    /**  The head of /proc/cpuinfo: the first hart's `isa` line comes within its first few hundred bytes. */
    static capabilities_t from_cpuinfo_file() noexcept {
        constexpr std::size_t head_k = 4096; // the whole first-hart block, a long `isa` line included
        char head[head_k];
        int const file = ::open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
        if (file < 0) return capabilities_none_k;
        std::size_t filled = 0;
        for (long got; filled < head_k && (got = ::read(file, head + filled, head_k - filled)) > 0;)
            filled += static_cast<std::size_t>(got);
        ::close(file);
        return from_cpuinfo(head, filled);
    }
};

} // namespace forkunion::detail
#endif
