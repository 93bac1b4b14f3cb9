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
pub const fu_forked_k: fu_status_t = -10;

pub type fu_capabilities_t = u64;

pub type fu_idle_mode_t = c_int;
pub const fu_idle_spin_k: fu_idle_mode_t = 0;
pub const fu_idle_adaptive_k: fu_idle_mode_t = 1;
pub const fu_idle_nap_k: fu_idle_mode_t = 2;
pub const fu_idle_sleep_k: fu_idle_mode_t = 3;
pub const FU_DEFAULT_IDLE_WINDOW_US: u64 = 100;

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

pub type fu_warning_handler_t = Option<unsafe extern "C" fn(context: *mut c_void, line: *const c_char)>;
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
    pub fn fu_last_refusal_reason() -> *const c_char;
    pub fn fu_set_warning_handler(handler: fu_warning_handler_t, context: *mut c_void) -> fu_status_t;
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
    pub fn fu_pool_for_threads_or_run_on_caller(
        pool: fu_pool_t,
        callback: fu_for_threads_t,
        context: *mut c_void,
    ) -> fu_status_t;
    pub fn fu_pool_for_n_or_run_on_caller(
        pool: fu_pool_t,
        n: usize,
        callback: fu_for_n_t,
        context: *mut c_void,
    ) -> fu_status_t;
    pub fn fu_pool_for_n_dynamic_or_run_on_caller(
        pool: fu_pool_t,
        n: usize,
        callback: fu_for_n_t,
        context: *mut c_void,
    ) -> fu_status_t;
    pub fn fu_pool_for_slices_or_run_on_caller(
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
    pub fn fu_pool_set_idle_policy(pool: fu_pool_t, mode: fu_idle_mode_t, microseconds: u64) -> fu_status_t;
    pub fn fu_pool_idle_policy(pool: fu_pool_t, mode: *mut fu_idle_mode_t, microseconds: *mut u64) -> fu_status_t;
    pub fn fu_pool_parked_threads_count(pool: fu_pool_t) -> usize;
    pub fn fu_pool_set_stack_size(pool: fu_pool_t, bytes: usize) -> fu_status_t;
    pub fn fu_pool_stack_size(pool: fu_pool_t) -> usize;
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

#[cfg(test)]
mod tests {
    //! These declarations against the header they transcribe, so that either changing alone fails a test.

    const HEADER: &str = include_str!(concat!(env!("FORKUNION_SOURCE_ROOT"), "/include/forkunion.h"));
    const DECLARATIONS: &str = include_str!("ffi.rs");

    /// The names of the functions the header exports: the last word before `(` on each line that starts with
    /// `FORKUNION_API`, or with `FORKUNION_NODISCARD FORKUNION_API`.
    fn exported() -> Vec<&'static str> {
        HEADER
            .lines()
            .map(|line| line.strip_prefix("FORKUNION_NODISCARD ").unwrap_or(line))
            .filter(|line| line.starts_with("FORKUNION_API "))
            .filter_map(|line| line[..line.find('(')?].split_whitespace().last())
            .map(|name| name.trim_start_matches('*'))
            .collect()
    }

    #[test]
    fn every_exported_function_is_declared_and_nothing_else() {
        let exported = exported();
        assert!(exported.len() > 60, "the header parsed: {:?}", exported);
        for name in &exported {
            assert!(DECLARATIONS.contains(&format!("pub fn {}(", name)), "{} is not declared in ffi.rs", name);
        }
        for line in DECLARATIONS.lines().map(str::trim).filter(|line| line.starts_with("pub fn fu_")) {
            let name = &line["pub fn ".len()..line.find('(').unwrap()];
            assert!(exported.contains(&name), "{} is declared here but not exported by the header", name);
        }
    }

    /// The header marks the dispatches whose status must be read (`FORKUNION_NODISCARD`): the safe method that
    /// calls each one is `#[must_use]` too, so that a refusal is never dropped in Rust either.
    #[test]
    fn statuses_the_header_makes_callers_read_are_must_use_here() {
        const POOL: &str = include_str!("pool.rs");
        let marked: Vec<&str> = HEADER
            .lines()
            .filter_map(|line| line.strip_prefix("FORKUNION_NODISCARD FORKUNION_API "))
            .filter_map(|line| line[..line.find('(')?].split_whitespace().last())
            .collect();
        assert!(marked.len() >= 4, "the header marks the four blocking dispatches: {:?}", marked);
        for name in marked {
            let call = POOL.find(&format!("ffi::{}(", name)).unwrap_or_else(|| panic!("pool.rs never calls {}", name));
            let method = POOL[..call].rfind("pub fn ").expect("inside a method");
            let attributes = &POOL[POOL[..method].rfind("    }\n").unwrap_or(0)..method];
            assert!(attributes.contains("#[must_use"), "the method calling {} is not #[must_use]", name);
        }
    }

    /// `name = value` of the header's enumerators, wherever they stand in a line.
    fn enumerator(name: &str) -> i32 {
        let pattern = format!(" {} = ", name);
        let start = HEADER.find(&pattern).unwrap_or_else(|| panic!("the header has no enumerator {}", name));
        let value = &HEADER[start + pattern.len()..];
        let end = value.find(|c: char| c != '-' && !c.is_ascii_digit()).unwrap();
        value[..end].parse().unwrap_or_else(|_| panic!("{}: {}", name, &value[..end]))
    }

    #[test]
    fn status_codes_and_exclusivity_have_the_headers_values() {
        use super::*;
        let codes = [
            ("fu_success_k", fu_success_k),
            ("fu_bad_alloc_k", fu_bad_alloc_k),
            ("fu_invalid_argument_k", fu_invalid_argument_k),
            ("fu_already_spawned_k", fu_already_spawned_k),
            ("fu_not_spawned_k", fu_not_spawned_k),
            ("fu_thread_refused_k", fu_thread_refused_k),
            ("fu_contended_k", fu_contended_k),
            ("fu_unsupported_k", fu_unsupported_k),
            ("fu_placement_refused_k", fu_placement_refused_k),
            ("fu_stale_generation_k", fu_stale_generation_k),
            ("fu_forked_k", fu_forked_k),
            ("fu_caller_inclusive_k", fu_caller_inclusive_k),
            ("fu_caller_exclusive_k", fu_caller_exclusive_k),
            ("fu_idle_spin_k", fu_idle_spin_k),
            ("fu_idle_adaptive_k", fu_idle_adaptive_k),
            ("fu_idle_nap_k", fu_idle_nap_k),
            ("fu_idle_sleep_k", fu_idle_sleep_k),
        ];
        for (name, value) in codes {
            assert_eq!(enumerator(name), value, "{}", name);
        }
        let window = "#define FU_DEFAULT_IDLE_WINDOW_US ";
        let line = HEADER.lines().find(|line| line.starts_with(window)).expect("the header defines the idle window");
        assert_eq!(line[window.len()..].trim().parse::<u64>(), Ok(FU_DEFAULT_IDLE_WINDOW_US));
        // The C library agrees at run time too: every code's name round-trips through the Rust error.
        for (_, code) in &codes[1..11] {
            let error = crate::Error::from_code(*code);
            assert_eq!(error.code(), *code);
            assert_ne!(error.name(), "unknown");
        }
    }

    #[test]
    fn capability_bits_have_the_headers_values() {
        use crate::Capabilities as C;
        let bits = [
            ("x86_waitpkg", C::X86_WAITPKG),
            ("x86_cmpccxadd", C::X86_CMPCCXADD),
            ("x86_raoint", C::X86_RAOINT),
            ("x86_cldemote", C::X86_CLDEMOTE),
            ("arm64_lse", C::ARM64_LSE),
            ("arm64_wfxt", C::ARM64_WFXT),
            ("arm64_evtstrm", C::ARM64_EVTSTRM),
            ("riscv_amo", C::RISCV_AMO),
            ("riscv_zawrs", C::RISCV_ZAWRS),
            ("riscv_zacas", C::RISCV_ZACAS),
            ("riscv_zicbom", C::RISCV_ZICBOM),
            ("os_threads", C::OS_THREADS),
            ("topology", C::TOPOLOGY),
            ("thread_pinning", C::THREAD_PINNING),
            ("memory_placement", C::MEMORY_PLACEMENT),
            ("huge_pages", C::HUGE_PAGES),
        ];
        for (name, bit) in bits {
            let prefix = format!("#define fu_capability_{}_k (UINT64_C(1) << ", name);
            let line = HEADER
                .lines()
                .find(|line| line.starts_with(&prefix))
                .unwrap_or_else(|| panic!("the header defines no bit {}", name));
            let shift: u32 = line[prefix.len()..].split(')').next().unwrap().trim().parse().unwrap();
            assert_eq!(bit.bits(), 1u64 << shift, "{}", name);
        }
    }

    #[test]
    fn the_allocation_record_has_the_c_layout() {
        use std::mem::{align_of, size_of};
        let words = size_of::<usize>();
        // Five pointer-sized fields and an int, padded to the pointer alignment, as a C compiler lays it out.
        assert_eq!(size_of::<super::fu_allocation_t>(), 6 * words);
        assert_eq!(align_of::<super::fu_allocation_t>(), words);
    }
}
