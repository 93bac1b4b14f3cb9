//! Hand-written declarations of the C API (`include/forkunion.h`), one to one, in the header's order.
//!
//! Every type has the C layout: `size_t` is `usize`, the C enums are `int` (the C library asserts
//! `sizeof(fu_status_t) == sizeof(int)`), handles are pointers to opaque structs. Nothing here is public: the
//! safe wrappers in the other modules are the crate's API. The tests at the end check these declarations against
//! the header itself: every function it exports is declared here, and every status code has the header's value.
#![allow(non_camel_case_types, non_upper_case_globals, dead_code)]

use std::os::raw::{c_char, c_int, c_void};

pub type fu_status_t = c_int;
pub const fu_success_k: fu_status_t = 0;
pub const fu_bad_alloc_k: fu_status_t = -1;
pub const fu_invalid_argument_k: fu_status_t = -2;
pub const fu_already_spawned_k: fu_status_t = -3;
pub const fu_not_spawned_k: fu_status_t = -4;
pub const fu_thread_refused_k: fu_status_t = -5;
pub const fu_contended_k: fu_status_t = -6;
pub const fu_unsupported_k: fu_status_t = -7;
pub const fu_placement_refused_k: fu_status_t = -8;
pub const fu_stale_generation_k: fu_status_t = -9;
/// Reserved for pools inherited by a `fork()` child (the C API answers `fu_not_spawned_k` there today).
pub const fu_forked_k: fu_status_t = -10;

pub type fu_capabilities_t = u64;

pub type fu_caller_exclusivity_t = c_int;
pub const fu_caller_inclusive_k: fu_caller_exclusivity_t = 0;
pub const fu_caller_exclusive_k: fu_caller_exclusivity_t = 1;

#[repr(C)]
pub struct fu_topology {
    _opaque: [u8; 0],
}
pub type fu_topology_t = *mut fu_topology;

#[repr(C)]
pub struct fu_pool {
    _opaque: [u8; 0],
}
pub type fu_pool_t = *mut fu_pool;

#[repr(C)]
pub struct fu_fabric {
    _opaque: [u8; 0],
}
pub type fu_fabric_t = *mut fu_fabric;

pub type fu_for_threads_t = Option<unsafe extern "C" fn(context: *mut c_void, thread: usize, compute_domain: usize)>;
pub type fu_for_n_t =
    Option<unsafe extern "C" fn(context: *mut c_void, task: usize, thread: usize, compute_domain: usize)>;
pub type fu_for_slices_t = Option<
    unsafe extern "C" fn(context: *mut c_void, first: usize, count: usize, thread: usize, compute_domain: usize),
>;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fu_allocation_t {
    pub address: *mut c_void,
    pub bytes: usize,
    pub slice_bytes: usize,
    pub slices_count: usize,
    pub page_bytes: usize,
    pub placed: c_int,
}

impl fu_allocation_t {
    pub const fn empty() -> Self {
        fu_allocation_t {
            address: std::ptr::null_mut(),
            bytes: 0,
            slice_bytes: 0,
            slices_count: 0,
            page_bytes: 0,
            placed: 0,
        }
    }
}

extern "C" {
    // ---- Status codes, versions, capabilities ----
    pub fn fu_status_to_string(status: fu_status_t) -> *const c_char;
    pub fn fu_version_major() -> c_int;
    pub fn fu_version_minor() -> c_int;
    pub fn fu_version_patch() -> c_int;
    pub fn fu_comptime_capabilities() -> fu_capabilities_t;
    pub fn fu_runtime_capabilities() -> fu_capabilities_t;
    pub fn fu_name_capabilities(mask: fu_capabilities_t, buffer: *mut c_char, capacity: usize) -> usize;
    pub fn fu_parse_capabilities(text: *const c_char, mask: *mut fu_capabilities_t) -> fu_status_t;

    // ---- Topology ----
    pub fn fu_topology_new() -> fu_topology_t;
    pub fn fu_topology_new_from_sysfs(root: *const c_char) -> fu_topology_t;
    pub fn fu_topology_delete(topology: fu_topology_t);
    pub fn fu_topology_harvested(topology: fu_topology_t) -> c_int;
    pub fn fu_compute_domains_count(topology: fu_topology_t) -> usize;
    pub fn fu_compute_levels_count(topology: fu_topology_t) -> usize;
    pub fn fu_compute_level_in(topology: fu_topology_t, domain: usize) -> usize;
    pub fn fu_logical_cores_count(topology: fu_topology_t) -> usize;
    pub fn fu_logical_cores_count_in(topology: fu_topology_t, domain: usize) -> usize;
    pub fn fu_compute_capacity_in(topology: fu_topology_t, domain: usize) -> usize;
    pub fn fu_compute_cache_bytes_in(topology: fu_topology_t, domain: usize) -> u64;
    pub fn fu_local_memory_of(topology: fu_topology_t, domain: usize) -> usize;
    pub fn fu_cores_in(topology: fu_topology_t, domain: usize, cores: *mut u32, capacity: usize) -> usize;
    pub fn fu_allowed_cores_count(topology: fu_topology_t) -> usize;
    pub fn fu_online_cores_count(topology: fu_topology_t) -> usize;
    pub fn fu_memory_domains_count(topology: fu_topology_t) -> usize;
    pub fn fu_memory_node_id(topology: fu_topology_t, memory_domain: usize) -> usize;
    pub fn fu_volume_ram(topology: fu_topology_t) -> u64;
    pub fn fu_volume_ram_in(topology: fu_topology_t, memory_domain: usize) -> u64;
    pub fn fu_huge_pages_count(topology: fu_topology_t) -> usize;
    pub fn fu_huge_pages_count_in(topology: fu_topology_t, memory_domain: usize) -> usize;
    pub fn fu_volume_huge_pages(topology: fu_topology_t) -> u64;
    pub fn fu_volume_huge_pages_in(topology: fu_topology_t, memory_domain: usize) -> u64;
    pub fn fu_huge_page_sizes_count_in(topology: fu_topology_t, memory_domain: usize) -> usize;
    pub fn fu_huge_page_size_in(topology: fu_topology_t, memory_domain: usize, index: usize) -> u64;
    pub fn fu_declared_distance(topology: fu_topology_t, from_memory_domain: usize, to_memory_domain: usize) -> usize;

    // ---- Pools ----
    pub fn fu_pool_new(name: *const c_char, allowed: fu_capabilities_t) -> fu_pool_t;
    pub fn fu_pool_delete(pool: fu_pool_t);
    pub fn fu_pool_spawn(
        topology: fu_topology_t,
        pool: fu_pool_t,
        threads: usize,
        exclusivity: fu_caller_exclusivity_t,
    ) -> fu_status_t;
    pub fn fu_pool_spawn_on(
        topology: fu_topology_t,
        pool: fu_pool_t,
        compute_domain: usize,
        threads: usize,
        exclusivity: fu_caller_exclusivity_t,
    ) -> fu_status_t;
    pub fn fu_pool_terminate(pool: fu_pool_t) -> fu_status_t;
    pub fn fu_pool_threads_count(pool: fu_pool_t) -> usize;
    pub fn fu_pool_caller_exclusivity(pool: fu_pool_t) -> fu_caller_exclusivity_t;
    pub fn fu_pool_capabilities(pool: fu_pool_t) -> fu_capabilities_t;
    pub fn fu_pool_compute_domains_count(pool: fu_pool_t) -> usize;
    pub fn fu_pool_threads_count_in(pool: fu_pool_t, compute_domain: usize) -> usize;
    pub fn fu_pool_unpinned_threads_count(pool: fu_pool_t) -> usize;
    pub fn fu_pool_memory_placed(pool: fu_pool_t) -> c_int;
    pub fn fu_pool_memory_usage(pool: fu_pool_t) -> usize;
    pub fn fu_pool_for_threads(pool: fu_pool_t, callback: fu_for_threads_t, context: *mut c_void) -> fu_status_t;
    pub fn fu_pool_for_n(pool: fu_pool_t, n: usize, callback: fu_for_n_t, context: *mut c_void) -> fu_status_t;
    pub fn fu_pool_for_n_dynamic(pool: fu_pool_t, n: usize, callback: fu_for_n_t, context: *mut c_void) -> fu_status_t;
    pub fn fu_pool_for_slices(
        pool: fu_pool_t,
        n: usize,
        callback: fu_for_slices_t,
        context: *mut c_void,
    ) -> fu_status_t;
    pub fn fu_pool_unsafe_for_threads(
        pool: fu_pool_t,
        callback: fu_for_threads_t,
        context: *mut c_void,
        generation: *mut usize,
    ) -> fu_status_t;
    pub fn fu_pool_is_complete(pool: fu_pool_t, generation: usize) -> c_int;
    pub fn fu_pool_unsafe_join(pool: fu_pool_t, generation: usize) -> fu_status_t;
    pub fn fu_pool_nap(pool: fu_pool_t) -> fu_status_t;
    pub fn fu_pool_sleep(pool: fu_pool_t, microseconds: usize) -> fu_status_t;

    // ---- Memory ----
    pub fn fu_allocate_on(
        topology: fu_topology_t,
        memory_domain: usize,
        bytes: usize,
        huge_page_bytes: usize,
        allowed: fu_capabilities_t,
        allocation: *mut fu_allocation_t,
    ) -> fu_status_t;
    pub fn fu_allocate_symmetric(
        topology: fu_topology_t,
        slice_bytes: usize,
        huge_page_bytes: usize,
        allowed: fu_capabilities_t,
        allocation: *mut fu_allocation_t,
    ) -> fu_status_t;
    pub fn fu_deallocate(allocation: *mut fu_allocation_t) -> fu_status_t;

    // ---- Fabric ----
    pub fn fu_fabric_new() -> fu_fabric_t;
    pub fn fu_fabric_delete(fabric: fu_fabric_t);
    pub fn fu_fabric_harvest(
        fabric: fu_fabric_t,
        topology: fu_topology_t,
        pool: fu_pool_t,
        buffer_bytes: usize,
    ) -> fu_status_t;
    pub fn fu_fabric_harvested(fabric: fu_fabric_t) -> c_int;
    pub fn fu_fabric_memory_levels_count(fabric: fu_fabric_t) -> usize;
    pub fn fu_fabric_memory_level_in(fabric: fu_fabric_t, memory_domain: usize) -> usize;
    pub fn fu_fabric_memory_distance(fabric: fu_fabric_t, compute_domain: usize, memory_domain: usize) -> usize;
    pub fn fu_fabric_memory_latency_ns(fabric: fu_fabric_t, compute_domain: usize, memory_domain: usize) -> f64;
    pub fn fu_fabric_memory_bandwidth(fabric: fu_fabric_t, compute_domain: usize, memory_domain: usize) -> f64;
}
