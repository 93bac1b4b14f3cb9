/**
 *  @file   forkunion/hardware/deprecated.hpp
 *  @brief  The hardware layer's deprecated spellings, kept for the 0.1 series (CHANGELOG.md lists each with its
 *          replacement); every use warns through `[[deprecated]]`.
 *
 *  The rule of every layer's `deprecated.hpp` is in `forkunion/base/deprecated.hpp`. One group cannot live here:
 *  the `capability_risc5_*_k` enumerators of `capability_t` (`features.hpp`), because an enumerator is declared
 *  only inside its enumeration; they carry the same `[[deprecated]]` there.
 */
#pragma once
#include <forkunion/hardware/detail/wait_riscv.hpp>

namespace forkunion {

template <typename value_type_, typename native_type_>
class basic_atomic_ref_t;
template <typename micro_yield_type_>
class basic_spin_mutex_t;

// NOLINTBEGIN(readability-identifier-naming): the old names, spelled as they were.

template <typename... arguments_>
using basic_atomic_ref [[deprecated("use basic_atomic_ref_t")]] = basic_atomic_ref_t<arguments_...>;
template <typename... arguments_>
using basic_spin_mutex [[deprecated("use basic_spin_mutex_t")]] = basic_spin_mutex_t<arguments_...>;
#if FORKUNION_ARCH_RISCV
using risc5_pause_t [[deprecated("use riscv_pause_t")]] = detail::riscv_pause_t;
#endif
#if FORKUNION_ARCH_RISCV && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
using risc5_wrs_t [[deprecated("use riscv_wrs_t")]] = detail::riscv_wrs_t;
#endif

// NOLINTEND(readability-identifier-naming)

} // namespace forkunion
