/**
 *  @file   c/gomp/omp_api.hpp
 *  @brief  The C `omp_*` entry points as this library defines them, for the translation units that call them.
 *
 *  The ABI is that of GCC's `omp.h`: enumerations are `int`, handles `uintptr_t`, lock arguments point to the
 *  caller's `omp_lock_t` (4 bytes) or `omp_nest_lock_t` (16 bytes). Declared here once, so that the definitions
 *  (`api.cpp`, `tasks.cpp`) and the Fortran forwarders (`fortran.cpp`) cannot disagree.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uintptr_t`

extern "C" {
void omp_set_num_threads(int);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
int omp_get_thread_num(void);
int omp_get_num_procs(void);
int omp_in_parallel(void);
void omp_set_dynamic(int);
int omp_get_dynamic(void);
void omp_set_nested(int);
int omp_get_nested(void);
int omp_get_thread_limit(void);
void omp_set_max_active_levels(int);
int omp_get_max_active_levels(void);
int omp_get_supported_active_levels(void);
int omp_get_level(void);
int omp_get_ancestor_thread_num(int);
int omp_get_team_size(int);
int omp_get_active_level(void);
int omp_in_final(void);
int omp_get_cancellation(void);
int omp_get_proc_bind(void);
int omp_get_num_places(void);
int omp_get_place_num_procs(int);
void omp_get_place_proc_ids(int, int *);
int omp_get_place_num(void);
int omp_get_partition_num_places(void);
void omp_get_partition_place_nums(int *);
void omp_set_default_device(int);
int omp_get_default_device(void);
int omp_get_num_devices(void);
int omp_get_device_num(void);
int omp_get_num_teams(void);
int omp_get_team_num(void);
int omp_is_initial_device(void);
int omp_get_initial_device(void);
int omp_get_max_task_priority(void);
void omp_set_num_teams(int);
int omp_get_max_teams(void);
void omp_set_teams_thread_limit(int);
int omp_get_teams_thread_limit(void);
void omp_set_schedule(int, int);
void omp_get_schedule(int *, int *);
double omp_get_wtime(void);
double omp_get_wtick(void);
void omp_init_lock(void *);
void omp_destroy_lock(void *);
void omp_set_lock(void *);
void omp_unset_lock(void *);
int omp_test_lock(void *);
void omp_init_nest_lock(void *);
void omp_destroy_nest_lock(void *);
void omp_set_nest_lock(void *);
void omp_unset_nest_lock(void *);
int omp_test_nest_lock(void *);
void omp_set_affinity_format(char const *);
std::size_t omp_get_affinity_format(char *, std::size_t);
void omp_display_affinity(char const *);
std::size_t omp_capture_affinity(char *, std::size_t, char const *);
void omp_display_env(int);
int omp_pause_resource(int, int);
int omp_pause_resource_all(int);
void omp_fulfill_event(std::uintptr_t); // `omp_event_handle_t`, an enumeration of `uintptr_t` range
std::uintptr_t omp_init_allocator(std::uintptr_t, int, void const *);
void omp_destroy_allocator(std::uintptr_t);
void omp_set_default_allocator(std::uintptr_t);
std::uintptr_t omp_get_default_allocator(void);
}
