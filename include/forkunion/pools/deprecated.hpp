/**
 *  @file   forkunion/pools/deprecated.hpp
 *  @brief  The pools layer's deprecated spellings, kept for the 0.1 series (CHANGELOG.md lists each with its
 *          replacement); every use warns through `[[deprecated]]`. The rule of every layer's `deprecated.hpp` is
 *          in `forkunion/base/deprecated.hpp`.
 *
 *  Besides the old type names, the pools keep three idle calls that set or read the idle policy, written once in
 *  `detail::deprecated_idle_calls_t` and inherited by every pool.
 */
#pragma once
#include <atomic>  // `std::atomic`
#include <cstddef> // `std::size_t`
#include <thread>  // `std::thread`
// Compile cost: `<memory>` also declares `shared_ptr` and the ranges algorithms (see flat.hpp); libstdc++
// declares `std::allocator` alone.
#if defined(__GLIBCXX__) && __has_include(<bits/allocator.h>)
#include <bits/allocator.h> // `std::allocator`
#else
#include <memory> // `std::allocator`
#endif

#include <forkunion/base/types.hpp>
#include <forkunion/hardware/wait.hpp>
#include <forkunion/pools/retirement.hpp>

namespace forkunion {
namespace detail {

/**
 *  @brief  The idle calls the pools had before the idle policy lasted until changed: a pool `pool_type_` derives
 *          from `deprecated_idle_calls_t<pool_type_>`, which calls its public `threads_count()`,
 *          `set_idle_policy` and `idle_policy()`. Same threads and ordering as those calls.
 */
template <typename pool_type_>
class deprecated_idle_calls_t {
public:
    /**  @brief  Deprecated: `set_idle_policy(idle_policy_t::nap())`, which now lasts until changed. */
    [[deprecated("use set_idle_policy(fu::idle_policy_t::nap()); the policy now persists")]] status_t nap() noexcept {
        return set_if_spawned_(idle_policy_t::nap());
    }
    /**  @brief  Deprecated: `set_idle_policy(idle_policy_t::sleep(microseconds))`, which now lasts until changed. */
    [[deprecated("use set_idle_policy(fu::idle_policy_t::sleep(us)); the policy now persists")]] status_t
    sleep(std::size_t microseconds) noexcept {
        return set_if_spawned_(idle_policy_t::sleep(microseconds));
    }
    /**  @brief  Deprecated: `idle_policy().mode`. */
    [[deprecated("use idle_policy().mode")]] [[nodiscard]] idle_mode_t mood() const noexcept {
        return static_cast<pool_type_ const &>(*this).idle_policy().mode;
    }

private:
    status_t set_if_spawned_(idle_policy_t policy) noexcept {
        auto &pool = static_cast<pool_type_ &>(*this);
        return pool.threads_count() ? pool.set_idle_policy(policy) : status_t(status_code_t::not_spawned_k);
    }
};

} // namespace detail

template <typename allocator_type_, typename micro_yield_type_, typename index_type_, std::size_t alignment_,
          template <typename> class atomic_template_, typename retirement_type_>
class basic_pool_t;
template <typename micro_yield_type_, typename index_type_, std::size_t alignment_>
class basic_colocated_pool_t;
template <typename micro_yield_type_, typename index_type_, std::size_t alignment_>
class basic_distributed_pool_t;

// NOLINTBEGIN(readability-identifier-naming): the old names, spelled as they were.

template <typename allocator_type_ = std::allocator<std::thread>, typename micro_yield_type_ = default_micro_yield_t,
          typename index_type_ = std::size_t, std::size_t alignment_ = default_alignment_k>
using basic_pool [[deprecated("use basic_pool_t")]] =
    basic_pool_t<allocator_type_, micro_yield_type_, index_type_, alignment_, std::atomic, retirement_tree_t<>>;
template <typename micro_yield_type_ = default_micro_yield_t, typename index_type_ = std::size_t,
          std::size_t alignment_ = default_alignment_k>
using basic_colocated_pool [[deprecated("use basic_colocated_pool_t")]] =
    basic_colocated_pool_t<micro_yield_type_, index_type_, alignment_>;
template <typename micro_yield_type_ = default_micro_yield_t, typename index_type_ = std::size_t,
          std::size_t alignment_ = default_alignment_k>
using basic_distributed_pool [[deprecated("use basic_distributed_pool_t")]] =
    basic_distributed_pool_t<micro_yield_type_, index_type_, alignment_>;
using mood_t [[deprecated("use idle_mode_t")]] = idle_mode_t;

// NOLINTEND(readability-identifier-naming)

} // namespace forkunion
