/**
 *  @file   forkunion/topology/detail/affinity_portable.hpp
 *  @brief  The portable back end of `forkunion/topology/affinity.hpp`: `portable_affinity_t`, which places nothing.
 *
 *  Every call answers `unsupported` and changes nothing; reads leave an empty mask or name. It compiles on every
 *  OS (so Linux tests exercise it too) and is what `affinity_backend_t` names where no real back end exists.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <thread>  // `std::thread::native_handle_type`

#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/base/types.hpp>

namespace forkunion::detail {

/**  @brief  Thread placement and naming where the OS offers neither: every call is `unsupported`. */
struct portable_affinity_t {
    using thread_handle_t = std::thread::native_handle_type;
    static constexpr bool supported_k = false;

    static thread_handle_t current_thread() noexcept { return thread_handle_t{}; }
    static status_t try_set_thread(thread_handle_t, cpu_mask_t const &) noexcept {
        return status_code_t::unsupported_k;
    }
    static status_t try_get_thread(thread_handle_t, cpu_mask_t &mask) noexcept {
        mask.clear();
        return status_code_t::unsupported_k;
    }
    static status_t try_set_name(thread_handle_t, char const *) noexcept { return status_code_t::unsupported_k; }
    static status_t try_get_name(thread_handle_t, char *name, std::size_t capacity) noexcept {
        if (capacity) name[0] = '\0';
        return status_code_t::unsupported_k;
    }
};

} // namespace forkunion::detail
