/**
 *  @file   runtime_openmp.hpp
 *  @brief  OpenMP peer: `#pragma omp parallel` + `omp for schedule(static)` / `schedule(dynamic, 1)`.
 *
 *  The same object code runs on GCC's libgomp, on LLVM's libomp, or on ForkUnion's OpenMP drop-in, whichever the
 *  binary was linked against (libomp and the drop-in implement the GOMP ABI that g++ emits); `library()` names the
 *  one actually loaded, found with `dl_iterate_phdr`, and the backend names follow it (`libgomp_static`,
 *  `libomp_dynamic`, `forkunion_gomp_static`, ...), so a row can never claim a runtime it did not run.
 *
 *  Pinning: each thread of the first team pins itself as `omp_get_thread_num()`. OpenMP keeps its threads
 *  across regions, so the pins hold; setting `OMP_PLACES='{0},{1}'` and `OMP_PROC_BIND=close` (as
 *  `bench/compare.sh` does) makes the runtime's own binding agree. `OMP_PLACES=cores` would pin nothing on a
 *  guest whose two vCPUs libomp reads as 1 core x 2 threads (as on a 2-vCPU KVM guest of a Xeon).
 */
#pragma once
#include <algorithm> // `std::sort`, `std::unique`
#include <string>    // `std::string`
#include <vector>    // `std::vector`

#include <omp.h>

#include "harness.hpp"
#include "runtime_forkunion.hpp" // `schedule_t`

namespace forkunion::bench {

/**  "forkunion_gomp", "libgomp", "libomp" or "openmp" (unknown runtime), from the shared object this process
 *   loaded. */
inline std::string openmp_runtime_name() {
    if (!loaded_library("libforkunion_gomp").empty()) return "forkunion_gomp";
    if (!loaded_library("libgomp").empty()) return "libgomp";
    if (!loaded_library("libomp").empty() || !loaded_library("libiomp").empty()) return "libomp";
    return "openmp";
}

/**
 *  @brief  The CPUs of the OpenMP places when libgomp is loaded and binding, else nothing.
 *
 *  With OMP_PLACES or OMP_PROC_BIND set, libgomp binds the initial thread to the first place in its library
 *  constructor, before `main`, so that thread's mask shows one place. libgomp has already dropped the CPUs the
 *  process may not use from the places, so their union is the set the run was given.
 */
inline std::vector<int> openmp_place_cpus() {
    std::vector<int> cpus;
    if (loaded_library("libgomp").empty()) return cpus;
    for (int place = 0; place < ::omp_get_num_places(); ++place) {
        std::vector<int> ids(static_cast<std::size_t>(::omp_get_place_num_procs(place)));
        ::omp_get_place_proc_ids(place, ids.data());
        cpus.insert(cpus.end(), ids.begin(), ids.end());
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

class openmp_runtime_t {
public:
    static constexpr bool replicated_k = false;

    explicit openmp_runtime_t(pin_plan_t &plan) : threads_(static_cast<int>(plan.threads_count())) {
        ::omp_set_dynamic(0); // the team must have exactly `threads_` threads
        int team = 0;
        for_threads([&](std::size_t thread) noexcept {
            plan.pin_current_thread(thread);
            if (thread == 0) team = ::omp_get_num_threads();
        });
        if (team != threads_) error_ = "OpenMP formed a team of " + std::to_string(team) + " threads";
    }

    std::string const &error() const noexcept { return error_; }
    std::string library() const {
        std::string path = loaded_library("libforkunion_gomp");
        if (path.empty()) path = loaded_library("libgomp");
        if (path.empty()) path = loaded_library("libomp");
        return path.empty() ? "unknown" : path;
    }
    std::size_t threads_count() const noexcept { return static_cast<std::size_t>(threads_); }
    std::size_t replicas_count() const noexcept { return 1; }
    std::size_t replica_of(std::size_t) const noexcept { return 0; }

    template <typename fn_type_>
    void enter(fn_type_ &&fn) {
        fn();
    }

    template <typename fn_type_>
    void on_each_thread(fn_type_ const &fn) noexcept {
        for_threads(fn);
    }

    /**  `#pragma omp parallel`: the OpenMP counterpart of `for_threads`. */
    template <typename fn_type_>
    void for_threads(fn_type_ const &fn) noexcept {
#pragma omp parallel num_threads(threads_)
        fn(static_cast<std::size_t>(::omp_get_thread_num()));
    }

    template <schedule_t schedule_k, typename fn_type_>
    void for_n(std::size_t n, fn_type_ const &fn) noexcept {
        // `nowait` leaves only the region's closing barrier, as in a combined `parallel for`.
        if constexpr (schedule_k == schedule_t::static_k) {
#pragma omp parallel num_threads(threads_)
            {
                std::size_t const thread = static_cast<std::size_t>(::omp_get_thread_num());
#pragma omp for schedule(static) nowait
                for (std::size_t task = 0; task < n; ++task) fn(task, thread);
            }
        } else {
#pragma omp parallel num_threads(threads_)
            {
                std::size_t const thread = static_cast<std::size_t>(::omp_get_thread_num());
#pragma omp for schedule(dynamic, 1) nowait
                for (std::size_t task = 0; task < n; ++task) fn(task, thread);
            }
        }
    }

private:
    int threads_;
    std::string error_;
};

} // namespace forkunion::bench
