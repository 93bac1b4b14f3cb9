/**
 *  @file   c/gomp/refused.cpp
 *  @brief  The libgomp entry points this drop-in does not implement: each aborts at the call, naming itself and
 *          the construct, so a program never mixes two runtimes silently under `LD_PRELOAD` (a symbol we did not
 *          define would bind to the real libgomp, which is still loaded there).
 *
 *  The lists are those of GCC 12's `libgomp.so.1` (`objdump -T`), grouped by what they serve; `libgomp.map` gives
 *  every one its libgomp version. The argument lists do not matter to a function that never returns, so each is
 *  defined without parameters.
 */
#include "runtime.hpp"

namespace {

[[noreturn]] void refuse_openacc(char const *name) noexcept {
    forkunion::gomp::refuse(name, "OpenACC");
}
[[noreturn]] void refuse_plugin(char const *name) noexcept {
    forkunion::gomp::refuse(name, "the offload plugin interface: no offload devices");
}
[[noreturn]] void refuse_target(char const *name) noexcept {
    forkunion::gomp::refuse(name, "target offload: the host is the only device");
}
[[noreturn]] void refuse_old_lock(char const *name) noexcept {
    forkunion::gomp::refuse(name,
                            "the lock ABI of programs linked against libgomp before GCC 4.4 (symbol version OMP_1.0)");
}

} // namespace

#define FORKUNION_GOMP_REFUSED(name, refuser)                                                                          \
    FORKUNION_GOMP_EXPORT void name(void) {                                                                            \
        refuser(#name);                                                                                                \
    }
#define FORKUNION_GOMP_OPENACC(name) FORKUNION_GOMP_REFUSED(name, refuse_openacc)
#define FORKUNION_GOMP_PLUGIN(name) FORKUNION_GOMP_REFUSED(name, refuse_plugin)
#define FORKUNION_GOMP_TARGET(name) FORKUNION_GOMP_REFUSED(name, refuse_target)

// OpenACC: the `acc_*` API and the `GOACC_*` entry points of `#pragma acc`.
FORKUNION_GOMP_OPENACC(GOACC_data_end)
FORKUNION_GOMP_OPENACC(GOACC_data_start)
FORKUNION_GOMP_OPENACC(GOACC_declare)
FORKUNION_GOMP_OPENACC(GOACC_enter_data)
FORKUNION_GOMP_OPENACC(GOACC_enter_exit_data)
FORKUNION_GOMP_OPENACC(GOACC_exit_data)
FORKUNION_GOMP_OPENACC(GOACC_get_num_threads)
FORKUNION_GOMP_OPENACC(GOACC_get_thread_num)
FORKUNION_GOMP_OPENACC(GOACC_parallel)
FORKUNION_GOMP_OPENACC(GOACC_parallel_keyed)
FORKUNION_GOMP_OPENACC(GOACC_update)
FORKUNION_GOMP_OPENACC(GOACC_wait)
FORKUNION_GOMP_OPENACC(acc_async_test)
FORKUNION_GOMP_OPENACC(acc_async_test_all)
FORKUNION_GOMP_OPENACC(acc_async_test_all_h_)
FORKUNION_GOMP_OPENACC(acc_async_test_h_)
FORKUNION_GOMP_OPENACC(acc_async_wait)
FORKUNION_GOMP_OPENACC(acc_async_wait_all)
FORKUNION_GOMP_OPENACC(acc_attach)
FORKUNION_GOMP_OPENACC(acc_attach_async)
FORKUNION_GOMP_OPENACC(acc_copyin)
FORKUNION_GOMP_OPENACC(acc_copyin_32_h_)
FORKUNION_GOMP_OPENACC(acc_copyin_64_h_)
FORKUNION_GOMP_OPENACC(acc_copyin_array_h_)
FORKUNION_GOMP_OPENACC(acc_copyin_async)
FORKUNION_GOMP_OPENACC(acc_copyin_async_32_h_)
FORKUNION_GOMP_OPENACC(acc_copyin_async_64_h_)
FORKUNION_GOMP_OPENACC(acc_copyin_async_array_h_)
FORKUNION_GOMP_OPENACC(acc_copyout)
FORKUNION_GOMP_OPENACC(acc_copyout_32_h_)
FORKUNION_GOMP_OPENACC(acc_copyout_64_h_)
FORKUNION_GOMP_OPENACC(acc_copyout_array_h_)
FORKUNION_GOMP_OPENACC(acc_copyout_async)
FORKUNION_GOMP_OPENACC(acc_copyout_async_32_h_)
FORKUNION_GOMP_OPENACC(acc_copyout_async_64_h_)
FORKUNION_GOMP_OPENACC(acc_copyout_async_array_h_)
FORKUNION_GOMP_OPENACC(acc_copyout_finalize)
FORKUNION_GOMP_OPENACC(acc_copyout_finalize_32_h_)
FORKUNION_GOMP_OPENACC(acc_copyout_finalize_64_h_)
FORKUNION_GOMP_OPENACC(acc_copyout_finalize_array_h_)
FORKUNION_GOMP_OPENACC(acc_copyout_finalize_async)
FORKUNION_GOMP_OPENACC(acc_create)
FORKUNION_GOMP_OPENACC(acc_create_32_h_)
FORKUNION_GOMP_OPENACC(acc_create_64_h_)
FORKUNION_GOMP_OPENACC(acc_create_array_h_)
FORKUNION_GOMP_OPENACC(acc_create_async)
FORKUNION_GOMP_OPENACC(acc_create_async_32_h_)
FORKUNION_GOMP_OPENACC(acc_create_async_64_h_)
FORKUNION_GOMP_OPENACC(acc_create_async_array_h_)
FORKUNION_GOMP_OPENACC(acc_delete)
FORKUNION_GOMP_OPENACC(acc_delete_32_h_)
FORKUNION_GOMP_OPENACC(acc_delete_64_h_)
FORKUNION_GOMP_OPENACC(acc_delete_array_h_)
FORKUNION_GOMP_OPENACC(acc_delete_async)
FORKUNION_GOMP_OPENACC(acc_delete_async_32_h_)
FORKUNION_GOMP_OPENACC(acc_delete_async_64_h_)
FORKUNION_GOMP_OPENACC(acc_delete_async_array_h_)
FORKUNION_GOMP_OPENACC(acc_delete_finalize)
FORKUNION_GOMP_OPENACC(acc_delete_finalize_32_h_)
FORKUNION_GOMP_OPENACC(acc_delete_finalize_64_h_)
FORKUNION_GOMP_OPENACC(acc_delete_finalize_array_h_)
FORKUNION_GOMP_OPENACC(acc_delete_finalize_async)
FORKUNION_GOMP_OPENACC(acc_detach)
FORKUNION_GOMP_OPENACC(acc_detach_async)
FORKUNION_GOMP_OPENACC(acc_detach_finalize)
FORKUNION_GOMP_OPENACC(acc_detach_finalize_async)
FORKUNION_GOMP_OPENACC(acc_deviceptr)
FORKUNION_GOMP_OPENACC(acc_free)
FORKUNION_GOMP_OPENACC(acc_get_cuda_stream)
FORKUNION_GOMP_OPENACC(acc_get_current_cuda_context)
FORKUNION_GOMP_OPENACC(acc_get_current_cuda_device)
FORKUNION_GOMP_OPENACC(acc_get_device_num)
FORKUNION_GOMP_OPENACC(acc_get_device_num_h_)
FORKUNION_GOMP_OPENACC(acc_get_device_type)
FORKUNION_GOMP_OPENACC(acc_get_device_type_h_)
FORKUNION_GOMP_OPENACC(acc_get_num_devices)
FORKUNION_GOMP_OPENACC(acc_get_num_devices_h_)
FORKUNION_GOMP_OPENACC(acc_get_property)
FORKUNION_GOMP_OPENACC(acc_get_property_h_)
FORKUNION_GOMP_OPENACC(acc_get_property_string)
FORKUNION_GOMP_OPENACC(acc_get_property_string_h_)
FORKUNION_GOMP_OPENACC(acc_hostptr)
FORKUNION_GOMP_OPENACC(acc_init)
FORKUNION_GOMP_OPENACC(acc_init_h_)
FORKUNION_GOMP_OPENACC(acc_is_present)
FORKUNION_GOMP_OPENACC(acc_is_present_32_h_)
FORKUNION_GOMP_OPENACC(acc_is_present_64_h_)
FORKUNION_GOMP_OPENACC(acc_is_present_array_h_)
FORKUNION_GOMP_OPENACC(acc_malloc)
FORKUNION_GOMP_OPENACC(acc_map_data)
FORKUNION_GOMP_OPENACC(acc_memcpy_from_device)
FORKUNION_GOMP_OPENACC(acc_memcpy_from_device_async)
FORKUNION_GOMP_OPENACC(acc_memcpy_to_device)
FORKUNION_GOMP_OPENACC(acc_memcpy_to_device_async)
FORKUNION_GOMP_OPENACC(acc_on_device)
FORKUNION_GOMP_OPENACC(acc_on_device_h_)
FORKUNION_GOMP_OPENACC(acc_pcopyin)
FORKUNION_GOMP_OPENACC(acc_pcreate)
FORKUNION_GOMP_OPENACC(acc_present_or_copyin)
FORKUNION_GOMP_OPENACC(acc_present_or_copyin_32_h_)
FORKUNION_GOMP_OPENACC(acc_present_or_copyin_64_h_)
FORKUNION_GOMP_OPENACC(acc_present_or_copyin_array_h_)
FORKUNION_GOMP_OPENACC(acc_present_or_create)
FORKUNION_GOMP_OPENACC(acc_present_or_create_32_h_)
FORKUNION_GOMP_OPENACC(acc_present_or_create_64_h_)
FORKUNION_GOMP_OPENACC(acc_present_or_create_array_h_)
FORKUNION_GOMP_OPENACC(acc_prof_lookup)
FORKUNION_GOMP_OPENACC(acc_prof_register)
FORKUNION_GOMP_OPENACC(acc_prof_unregister)
FORKUNION_GOMP_OPENACC(acc_register_library)
FORKUNION_GOMP_OPENACC(acc_set_cuda_stream)
FORKUNION_GOMP_OPENACC(acc_set_device_num)
FORKUNION_GOMP_OPENACC(acc_set_device_num_h_)
FORKUNION_GOMP_OPENACC(acc_set_device_type)
FORKUNION_GOMP_OPENACC(acc_set_device_type_h_)
FORKUNION_GOMP_OPENACC(acc_shutdown)
FORKUNION_GOMP_OPENACC(acc_shutdown_h_)
FORKUNION_GOMP_OPENACC(acc_unmap_data)
FORKUNION_GOMP_OPENACC(acc_update_device)
FORKUNION_GOMP_OPENACC(acc_update_device_32_h_)
FORKUNION_GOMP_OPENACC(acc_update_device_64_h_)
FORKUNION_GOMP_OPENACC(acc_update_device_array_h_)
FORKUNION_GOMP_OPENACC(acc_update_device_async)
FORKUNION_GOMP_OPENACC(acc_update_device_async_32_h_)
FORKUNION_GOMP_OPENACC(acc_update_device_async_64_h_)
FORKUNION_GOMP_OPENACC(acc_update_device_async_array_h_)
FORKUNION_GOMP_OPENACC(acc_update_self)
FORKUNION_GOMP_OPENACC(acc_update_self_32_h_)
FORKUNION_GOMP_OPENACC(acc_update_self_64_h_)
FORKUNION_GOMP_OPENACC(acc_update_self_array_h_)
FORKUNION_GOMP_OPENACC(acc_update_self_async)
FORKUNION_GOMP_OPENACC(acc_update_self_async_32_h_)
FORKUNION_GOMP_OPENACC(acc_update_self_async_64_h_)
FORKUNION_GOMP_OPENACC(acc_update_self_async_array_h_)
FORKUNION_GOMP_OPENACC(acc_wait)
FORKUNION_GOMP_OPENACC(acc_wait_all)
FORKUNION_GOMP_OPENACC(acc_wait_all_async)
FORKUNION_GOMP_OPENACC(acc_wait_all_async_h_)
FORKUNION_GOMP_OPENACC(acc_wait_all_h_)
FORKUNION_GOMP_OPENACC(acc_wait_async)
FORKUNION_GOMP_OPENACC(acc_wait_async_h_)
FORKUNION_GOMP_OPENACC(acc_wait_h_)

// The interface libgomp offers its offload plugins.
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_acc_default_dim)
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_acc_thread)
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_async_unmap_vars)
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_debug)
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_error)
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_fatal)
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_goacc_profiling_dispatch)
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_goacc_thread)
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_malloc)
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_malloc_cleared)
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_realloc)
FORKUNION_GOMP_PLUGIN(GOMP_PLUGIN_target_task_completion)

// The offload teams entry point of GCC 4.9-era device code.
FORKUNION_GOMP_TARGET(GOMP_teams)

// The pre-GCC-4.4 lock entry points, kept by libgomp under version OMP_1.0 (the current ones are OMP_3.0): each
// local definition gets the old version with `.symver`; only binaries linked against that old ABI bind to them.
#define FORKUNION_GOMP_OLD_LOCK(name)                                                                                  \
    extern "C" __attribute__((visibility("default"), used)) void fu_gomp_old_##name(void) {                            \
        refuse_old_lock(#name "@OMP_1.0");                                                                             \
    }                                                                                                                  \
    __asm__(".symver fu_gomp_old_" #name ", " #name "@OMP_1.0, remove");
FORKUNION_GOMP_OLD_LOCK(omp_destroy_lock)
FORKUNION_GOMP_OLD_LOCK(omp_destroy_lock_)
FORKUNION_GOMP_OLD_LOCK(omp_destroy_nest_lock)
FORKUNION_GOMP_OLD_LOCK(omp_destroy_nest_lock_)
FORKUNION_GOMP_OLD_LOCK(omp_init_lock)
FORKUNION_GOMP_OLD_LOCK(omp_init_lock_)
FORKUNION_GOMP_OLD_LOCK(omp_init_nest_lock)
FORKUNION_GOMP_OLD_LOCK(omp_init_nest_lock_)
FORKUNION_GOMP_OLD_LOCK(omp_set_lock)
FORKUNION_GOMP_OLD_LOCK(omp_set_lock_)
FORKUNION_GOMP_OLD_LOCK(omp_set_nest_lock)
FORKUNION_GOMP_OLD_LOCK(omp_set_nest_lock_)
FORKUNION_GOMP_OLD_LOCK(omp_test_lock)
FORKUNION_GOMP_OLD_LOCK(omp_test_lock_)
FORKUNION_GOMP_OLD_LOCK(omp_test_nest_lock)
FORKUNION_GOMP_OLD_LOCK(omp_test_nest_lock_)
FORKUNION_GOMP_OLD_LOCK(omp_unset_lock)
FORKUNION_GOMP_OLD_LOCK(omp_unset_lock_)
FORKUNION_GOMP_OLD_LOCK(omp_unset_nest_lock)
FORKUNION_GOMP_OLD_LOCK(omp_unset_nest_lock_)
