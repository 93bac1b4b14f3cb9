/**
 *  @file   forkunion/topology/detail/affinity_linux.hpp
 *  @brief  The Linux back end of `forkunion/topology/affinity.hpp`: `linux_affinity_t`.
 *
 *  Thread affinity through `pthread_setaffinity_np`/`pthread_getaffinity_np` (the `sched_setaffinity` system call
 *  on a thread id) and names through `pthread_setname_np`/`pthread_getname_np` (`/proc/self/task/<tid>/comm`).
 *  A `cpu_mask_t` is passed as is: it has `cpu_set_t`'s layout, and its 1 KiB covers any `NR_CPUS`, so the kernel
 *  never refuses the buffer's size. Declared only on Linux; elsewhere this header declares nothing.
 *
 *  Every member is a thin, `noexcept`, blocking system call, callable from any thread; the refusal counting and
 *  argument checks live once, in `forkunion/topology/affinity.hpp`.
 */
#pragma once
#include <cstddef> // `std::size_t`

#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_LINUX
#include <errno.h>   // `EINVAL`
#include <pthread.h> // `pthread_setaffinity_np`, `pthread_setname_np`
#include <sched.h>   // `cpu_set_t`

namespace forkunion::detail {

/**  @brief  Thread placement and naming on Linux: static members only, the interface `affinity.hpp` documents. */
struct linux_affinity_t {
    using thread_handle_t = pthread_t;
    static constexpr bool supported_k = true;

    static thread_handle_t current_thread() noexcept { return ::pthread_self(); }

    /**  `EINVAL`: no CPU of the mask is online or allowed (cgroup cpuset): refused. `ESRCH`: no such thread. */
    static status_t try_set_thread(thread_handle_t thread, cpu_mask_t const &mask) noexcept {
        int const error =
            ::pthread_setaffinity_np(thread, cpu_mask_t::bytes_k, reinterpret_cast<cpu_set_t const *>(mask.words()));
        return error == 0 ? status_code_t::success_k : status_of_(error);
    }

    static status_t try_get_thread(thread_handle_t thread, cpu_mask_t &mask) noexcept {
        int const error =
            ::pthread_getaffinity_np(thread, cpu_mask_t::bytes_k, reinterpret_cast<cpu_set_t *>(mask.words()));
        if (error != 0) mask.clear();
        return error == 0 ? status_code_t::success_k : status_of_(error);
    }

    /**  @pre `name` is at most 15 bytes and NUL-terminated (the interface truncates before calling). */
    static status_t try_set_name(thread_handle_t thread, char const *name) noexcept {
        int const error = ::pthread_setname_np(thread, name);
        return error == 0 ? status_code_t::success_k : status_of_(error);
    }

    /**  @pre `capacity >= 16`. */
    static status_t try_get_name(thread_handle_t thread, char *name, std::size_t capacity) noexcept {
        int const error = ::pthread_getname_np(thread, name, capacity);
        if (error != 0 && capacity) name[0] = '\0';
        return error == 0 ? status_code_t::success_k : status_of_(error);
    }

private:
    static status_code_t status_of_(int error) noexcept {
        return error == ESRCH || error == EFAULT || error == ERANGE ? status_code_t::invalid_argument_k
                                                                    : status_code_t::placement_refused_k;
    }
};

} // namespace forkunion::detail
#endif
