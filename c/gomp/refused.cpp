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
    forkunion::gomp::refuse(name, "target offload and device memory: the host is the only device");
}
[[noreturn]] void refuse_reduction(char const *name) noexcept {
    forkunion::gomp::refuse(name,
                            "task reductions: the reduction(task, ...) modifier, task_reduction and in_reduction");
}
[[noreturn]] void refuse_detach(char const *name) noexcept {
    forkunion::gomp::refuse(name, "detachable tasks: the detach clause and its events");
}
[[noreturn]] void refuse_old_lock(char const *name) noexcept {
    forkunion::gomp::refuse(name,
                            "the lock ABI of programs linked against libgomp before GCC 4.4 (symbol version OMP_1.0)");
}

} // namespace

#define FU_GOMP_REFUSED(name, refuser)                                                                                 \
    FU_GOMP_EXPORT void name(void) {                                                                                   \
        refuser(#name);                                                                                                \
    }
#define FU_GOMP_OPENACC(name) FU_GOMP_REFUSED(name, refuse_openacc)
#define FU_GOMP_PLUGIN(name) FU_GOMP_REFUSED(name, refuse_plugin)
#define FU_GOMP_TARGET(name) FU_GOMP_REFUSED(name, refuse_target)
#define FU_GOMP_REDUCTION(name) FU_GOMP_REFUSED(name, refuse_reduction)
#define FU_GOMP_DETACH(name) FU_GOMP_REFUSED(name, refuse_detach)

// OpenACC: the `acc_*` API and the `GOACC_*` entry points of `#pragma acc`.
FU_GOMP_OPENACC(GOACC_data_end)
FU_GOMP_OPENACC(GOACC_data_start)
FU_GOMP_OPENACC(GOACC_declare)
FU_GOMP_OPENACC(GOACC_enter_data)
FU_GOMP_OPENACC(GOACC_enter_exit_data)
FU_GOMP_OPENACC(GOACC_exit_data)
FU_GOMP_OPENACC(GOACC_get_num_threads)
FU_GOMP_OPENACC(GOACC_get_thread_num)
FU_GOMP_OPENACC(GOACC_parallel)
FU_GOMP_OPENACC(GOACC_parallel_keyed)
FU_GOMP_OPENACC(GOACC_update)
FU_GOMP_OPENACC(GOACC_wait)
FU_GOMP_OPENACC(acc_async_test)
FU_GOMP_OPENACC(acc_async_test_all)
FU_GOMP_OPENACC(acc_async_test_all_h_)
FU_GOMP_OPENACC(acc_async_test_h_)
FU_GOMP_OPENACC(acc_async_wait)
FU_GOMP_OPENACC(acc_async_wait_all)
FU_GOMP_OPENACC(acc_attach)
FU_GOMP_OPENACC(acc_attach_async)
FU_GOMP_OPENACC(acc_copyin)
FU_GOMP_OPENACC(acc_copyin_32_h_)
FU_GOMP_OPENACC(acc_copyin_64_h_)
FU_GOMP_OPENACC(acc_copyin_array_h_)
FU_GOMP_OPENACC(acc_copyin_async)
FU_GOMP_OPENACC(acc_copyin_async_32_h_)
FU_GOMP_OPENACC(acc_copyin_async_64_h_)
FU_GOMP_OPENACC(acc_copyin_async_array_h_)
FU_GOMP_OPENACC(acc_copyout)
FU_GOMP_OPENACC(acc_copyout_32_h_)
FU_GOMP_OPENACC(acc_copyout_64_h_)
FU_GOMP_OPENACC(acc_copyout_array_h_)
FU_GOMP_OPENACC(acc_copyout_async)
FU_GOMP_OPENACC(acc_copyout_async_32_h_)
FU_GOMP_OPENACC(acc_copyout_async_64_h_)
FU_GOMP_OPENACC(acc_copyout_async_array_h_)
FU_GOMP_OPENACC(acc_copyout_finalize)
FU_GOMP_OPENACC(acc_copyout_finalize_32_h_)
FU_GOMP_OPENACC(acc_copyout_finalize_64_h_)
FU_GOMP_OPENACC(acc_copyout_finalize_array_h_)
FU_GOMP_OPENACC(acc_copyout_finalize_async)
FU_GOMP_OPENACC(acc_create)
FU_GOMP_OPENACC(acc_create_32_h_)
FU_GOMP_OPENACC(acc_create_64_h_)
FU_GOMP_OPENACC(acc_create_array_h_)
FU_GOMP_OPENACC(acc_create_async)
FU_GOMP_OPENACC(acc_create_async_32_h_)
FU_GOMP_OPENACC(acc_create_async_64_h_)
FU_GOMP_OPENACC(acc_create_async_array_h_)
FU_GOMP_OPENACC(acc_delete)
FU_GOMP_OPENACC(acc_delete_32_h_)
FU_GOMP_OPENACC(acc_delete_64_h_)
FU_GOMP_OPENACC(acc_delete_array_h_)
FU_GOMP_OPENACC(acc_delete_async)
FU_GOMP_OPENACC(acc_delete_async_32_h_)
FU_GOMP_OPENACC(acc_delete_async_64_h_)
FU_GOMP_OPENACC(acc_delete_async_array_h_)
FU_GOMP_OPENACC(acc_delete_finalize)
FU_GOMP_OPENACC(acc_delete_finalize_32_h_)
FU_GOMP_OPENACC(acc_delete_finalize_64_h_)
FU_GOMP_OPENACC(acc_delete_finalize_array_h_)
FU_GOMP_OPENACC(acc_delete_finalize_async)
FU_GOMP_OPENACC(acc_detach)
FU_GOMP_OPENACC(acc_detach_async)
FU_GOMP_OPENACC(acc_detach_finalize)
FU_GOMP_OPENACC(acc_detach_finalize_async)
FU_GOMP_OPENACC(acc_deviceptr)
FU_GOMP_OPENACC(acc_free)
FU_GOMP_OPENACC(acc_get_cuda_stream)
FU_GOMP_OPENACC(acc_get_current_cuda_context)
FU_GOMP_OPENACC(acc_get_current_cuda_device)
FU_GOMP_OPENACC(acc_get_device_num)
FU_GOMP_OPENACC(acc_get_device_num_h_)
FU_GOMP_OPENACC(acc_get_device_type)
FU_GOMP_OPENACC(acc_get_device_type_h_)
FU_GOMP_OPENACC(acc_get_num_devices)
FU_GOMP_OPENACC(acc_get_num_devices_h_)
FU_GOMP_OPENACC(acc_get_property)
FU_GOMP_OPENACC(acc_get_property_h_)
FU_GOMP_OPENACC(acc_get_property_string)
FU_GOMP_OPENACC(acc_get_property_string_h_)
FU_GOMP_OPENACC(acc_hostptr)
FU_GOMP_OPENACC(acc_init)
FU_GOMP_OPENACC(acc_init_h_)
FU_GOMP_OPENACC(acc_is_present)
FU_GOMP_OPENACC(acc_is_present_32_h_)
FU_GOMP_OPENACC(acc_is_present_64_h_)
FU_GOMP_OPENACC(acc_is_present_array_h_)
FU_GOMP_OPENACC(acc_malloc)
FU_GOMP_OPENACC(acc_map_data)
FU_GOMP_OPENACC(acc_memcpy_from_device)
FU_GOMP_OPENACC(acc_memcpy_from_device_async)
FU_GOMP_OPENACC(acc_memcpy_to_device)
FU_GOMP_OPENACC(acc_memcpy_to_device_async)
FU_GOMP_OPENACC(acc_on_device)
FU_GOMP_OPENACC(acc_on_device_h_)
FU_GOMP_OPENACC(acc_pcopyin)
FU_GOMP_OPENACC(acc_pcreate)
FU_GOMP_OPENACC(acc_present_or_copyin)
FU_GOMP_OPENACC(acc_present_or_copyin_32_h_)
FU_GOMP_OPENACC(acc_present_or_copyin_64_h_)
FU_GOMP_OPENACC(acc_present_or_copyin_array_h_)
FU_GOMP_OPENACC(acc_present_or_create)
FU_GOMP_OPENACC(acc_present_or_create_32_h_)
FU_GOMP_OPENACC(acc_present_or_create_64_h_)
FU_GOMP_OPENACC(acc_present_or_create_array_h_)
FU_GOMP_OPENACC(acc_prof_lookup)
FU_GOMP_OPENACC(acc_prof_register)
FU_GOMP_OPENACC(acc_prof_unregister)
FU_GOMP_OPENACC(acc_register_library)
FU_GOMP_OPENACC(acc_set_cuda_stream)
FU_GOMP_OPENACC(acc_set_device_num)
FU_GOMP_OPENACC(acc_set_device_num_h_)
FU_GOMP_OPENACC(acc_set_device_type)
FU_GOMP_OPENACC(acc_set_device_type_h_)
FU_GOMP_OPENACC(acc_shutdown)
FU_GOMP_OPENACC(acc_shutdown_h_)
FU_GOMP_OPENACC(acc_unmap_data)
FU_GOMP_OPENACC(acc_update_device)
FU_GOMP_OPENACC(acc_update_device_32_h_)
FU_GOMP_OPENACC(acc_update_device_64_h_)
FU_GOMP_OPENACC(acc_update_device_array_h_)
FU_GOMP_OPENACC(acc_update_device_async)
FU_GOMP_OPENACC(acc_update_device_async_32_h_)
FU_GOMP_OPENACC(acc_update_device_async_64_h_)
FU_GOMP_OPENACC(acc_update_device_async_array_h_)
FU_GOMP_OPENACC(acc_update_self)
FU_GOMP_OPENACC(acc_update_self_32_h_)
FU_GOMP_OPENACC(acc_update_self_64_h_)
FU_GOMP_OPENACC(acc_update_self_array_h_)
FU_GOMP_OPENACC(acc_update_self_async)
FU_GOMP_OPENACC(acc_update_self_async_32_h_)
FU_GOMP_OPENACC(acc_update_self_async_64_h_)
FU_GOMP_OPENACC(acc_update_self_async_array_h_)
FU_GOMP_OPENACC(acc_wait)
FU_GOMP_OPENACC(acc_wait_all)
FU_GOMP_OPENACC(acc_wait_all_async)
FU_GOMP_OPENACC(acc_wait_all_async_h_)
FU_GOMP_OPENACC(acc_wait_all_h_)
FU_GOMP_OPENACC(acc_wait_async)
FU_GOMP_OPENACC(acc_wait_async_h_)
FU_GOMP_OPENACC(acc_wait_h_)

// The interface libgomp offers its offload plugins.
FU_GOMP_PLUGIN(GOMP_PLUGIN_acc_default_dim)
FU_GOMP_PLUGIN(GOMP_PLUGIN_acc_thread)
FU_GOMP_PLUGIN(GOMP_PLUGIN_async_unmap_vars)
FU_GOMP_PLUGIN(GOMP_PLUGIN_debug)
FU_GOMP_PLUGIN(GOMP_PLUGIN_error)
FU_GOMP_PLUGIN(GOMP_PLUGIN_fatal)
FU_GOMP_PLUGIN(GOMP_PLUGIN_goacc_profiling_dispatch)
FU_GOMP_PLUGIN(GOMP_PLUGIN_goacc_thread)
FU_GOMP_PLUGIN(GOMP_PLUGIN_malloc)
FU_GOMP_PLUGIN(GOMP_PLUGIN_malloc_cleared)
FU_GOMP_PLUGIN(GOMP_PLUGIN_realloc)
FU_GOMP_PLUGIN(GOMP_PLUGIN_target_task_completion)

// `target` constructs, offload image registration, and the device memory API.
FU_GOMP_TARGET(GOMP_offload_register)
FU_GOMP_TARGET(GOMP_offload_register_ver)
FU_GOMP_TARGET(GOMP_offload_unregister)
FU_GOMP_TARGET(GOMP_offload_unregister_ver)
FU_GOMP_TARGET(GOMP_target)
FU_GOMP_TARGET(GOMP_target_data)
FU_GOMP_TARGET(GOMP_target_data_ext)
FU_GOMP_TARGET(GOMP_target_end_data)
FU_GOMP_TARGET(GOMP_target_enter_exit_data)
FU_GOMP_TARGET(GOMP_target_ext)
FU_GOMP_TARGET(GOMP_target_update)
FU_GOMP_TARGET(GOMP_target_update_ext)
FU_GOMP_TARGET(GOMP_teams)
FU_GOMP_TARGET(omp_target_alloc)
FU_GOMP_TARGET(omp_target_associate_ptr)
FU_GOMP_TARGET(omp_target_disassociate_ptr)
FU_GOMP_TARGET(omp_target_free)
FU_GOMP_TARGET(omp_target_is_present)
FU_GOMP_TARGET(omp_target_memcpy)
FU_GOMP_TARGET(omp_target_memcpy_rect)

// Task reductions.
FU_GOMP_REDUCTION(GOMP_parallel_reductions)
FU_GOMP_REDUCTION(GOMP_task_reduction_remap)
FU_GOMP_REDUCTION(GOMP_taskgroup_reduction_register)
FU_GOMP_REDUCTION(GOMP_taskgroup_reduction_unregister)
FU_GOMP_REDUCTION(GOMP_workshare_task_reduction_unregister)

// Events of detachable tasks.
FU_GOMP_DETACH(omp_fulfill_event)
FU_GOMP_DETACH(omp_fulfill_event_)

// The pre-GCC-4.4 lock entry points, kept by libgomp under version OMP_1.0 (the current ones are OMP_3.0): each
// local definition gets the old version with `.symver`; only binaries linked against that old ABI bind to them.
#define FU_GOMP_OLD_LOCK(name)                                                                                         \
    extern "C" __attribute__((visibility("default"), used)) void fu_gomp_old_##name(void) {                            \
        refuse_old_lock(#name "@OMP_1.0");                                                                             \
    }                                                                                                                  \
    __asm__(".symver fu_gomp_old_" #name ", " #name "@OMP_1.0, remove");
FU_GOMP_OLD_LOCK(omp_destroy_lock)
FU_GOMP_OLD_LOCK(omp_destroy_lock_)
FU_GOMP_OLD_LOCK(omp_destroy_nest_lock)
FU_GOMP_OLD_LOCK(omp_destroy_nest_lock_)
FU_GOMP_OLD_LOCK(omp_init_lock)
FU_GOMP_OLD_LOCK(omp_init_lock_)
FU_GOMP_OLD_LOCK(omp_init_nest_lock)
FU_GOMP_OLD_LOCK(omp_init_nest_lock_)
FU_GOMP_OLD_LOCK(omp_set_lock)
FU_GOMP_OLD_LOCK(omp_set_lock_)
FU_GOMP_OLD_LOCK(omp_set_nest_lock)
FU_GOMP_OLD_LOCK(omp_set_nest_lock_)
FU_GOMP_OLD_LOCK(omp_test_lock)
FU_GOMP_OLD_LOCK(omp_test_lock_)
FU_GOMP_OLD_LOCK(omp_test_nest_lock)
FU_GOMP_OLD_LOCK(omp_test_nest_lock_)
FU_GOMP_OLD_LOCK(omp_unset_lock)
FU_GOMP_OLD_LOCK(omp_unset_lock_)
FU_GOMP_OLD_LOCK(omp_unset_nest_lock)
FU_GOMP_OLD_LOCK(omp_unset_nest_lock_)
