//! The machine as the C library harvests it: compute domains (what pools spawn onto) and memory domains (what
//! allocations target), with the levels, counts and sizes that describe them.

use std::ffi::CString;
use std::fmt;
use std::path::Path;
use std::ptr::NonNull;

use crate::error::Error;
use crate::ffi;

/// A compute domain: a bindable group of cores of one quality-of-service class and locality, counted from 0.
/// Pools spawn onto compute domains, and every callback learns the compute domain of the thread running it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ComputeDomain(pub usize);

impl ComputeDomain {
    /// The index.
    pub const fn get(self) -> usize {
        self.0
    }
}

impl fmt::Display for ComputeDomain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A memory domain: a bank of memory with its own capacity and access cost, counted from 0. Allocations target
/// memory domains; one may serve several compute domains, or none (a CPU-less expander).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct MemoryDomain(pub usize);

impl MemoryDomain {
    /// The index.
    pub const fn get(self) -> usize {
        self.0
    }
}

impl fmt::Display for MemoryDomain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// An immutable description of the machine's compute and memory domains (the C API's `fu_topology_t`).
///
/// Harvested once, then read from any thread (`Send + Sync`). Queries with a domain out of range answer 0, as
/// the C API does, so loops over the counts need no checks. Where nothing could be harvested the topology
/// describes one compute domain and one memory domain over the allowed cores ([`harvested`](Self::harvested)
/// says which). Pools spawned on a topology do not need it afterwards.
///
/// ```
/// use forkunion as fu;
/// let topology = fu::Topology::new().unwrap();
/// assert!(topology.compute_domains_count() >= 1 && topology.memory_domains_count() >= 1);
/// let cores: usize = topology.compute_domains().map(|d| topology.logical_cores_count_in(d)).sum();
/// assert_eq!(cores, topology.logical_cores_count());
/// for domain in topology.compute_domains() {
///     assert!(topology.local_memory_of(domain).get() < topology.memory_domains_count());
///     assert_eq!(topology.cores_in(domain).len(), topology.logical_cores_count_in(domain));
/// }
/// ```
pub struct Topology {
    raw: NonNull<ffi::fu_topology>,
}

// SAFETY: the C topology is immutable after construction and may be queried from any thread.
unsafe impl Send for Topology {}
// SAFETY: as above; no query writes to it.
unsafe impl Sync for Topology {}

impl Topology {
    /// Harvests the running machine (sysfs on Linux, narrowed to this thread's affinity). Blocking: reads files.
    /// [`Error::BadAlloc`] only if memory ran out; a machine that cannot be harvested is described as one domain.
    pub fn new() -> Result<Topology, Error> {
        // SAFETY: no preconditions; NULL means memory ran out.
        let raw = unsafe { ffi::fu_topology_new() };
        NonNull::new(raw).map(|raw| Topology { raw }).ok_or(Error::BadAlloc)
    }

    /// Harvests a recorded Linux sysfs tree in which `root` stands for `/` (its `sys/devices/system/...`),
    /// whatever this process's affinity: to test placement logic against machines one does not have.
    /// [`Error::InvalidArgument`] if no online CPU can be found there or the path holds a NUL byte.
    pub fn from_sysfs<P: AsRef<Path>>(root: P) -> Result<Topology, Error> {
        let root = path_to_c(root.as_ref()).ok_or(Error::InvalidArgument)?;
        // SAFETY: a NUL-terminated path; NULL means nothing usable was found (or memory ran out).
        let raw = unsafe { ffi::fu_topology_new_from_sysfs(root.as_ptr()) };
        NonNull::new(raw).map(|raw| Topology { raw }).ok_or(Error::InvalidArgument)
    }

    pub(crate) fn raw(&self) -> ffi::fu_topology_t {
        self.raw.as_ptr()
    }

    /// Whether a harvest described the machine (`false` for the single-domain stand-in).
    pub fn harvested(&self) -> bool {
        // SAFETY: a live handle (here and in every query below).
        unsafe { ffi::fu_topology_harvested(self.raw()) != 0 }
    }

    // ---- The compute axis ----

    /// Compute domains, at least 1.
    pub fn compute_domains_count(&self) -> usize {
        unsafe { ffi::fu_compute_domains_count(self.raw()) }
    }
    /// `ComputeDomain(0)..ComputeDomain(compute_domains_count())`.
    pub fn compute_domains(&self) -> impl Iterator<Item = ComputeDomain> {
        (0..self.compute_domains_count()).map(ComputeDomain)
    }
    /// Distinct compute levels (capacity classes).
    pub fn compute_levels_count(&self) -> usize {
        unsafe { ffi::fu_compute_levels_count(self.raw()) }
    }
    /// The dense rank of the domain's capacity class: higher is faster.
    pub fn compute_level_in(&self, domain: ComputeDomain) -> usize {
        unsafe { ffi::fu_compute_level_in(self.raw(), domain.0) }
    }
    /// Allowed online cores in all compute domains.
    pub fn logical_cores_count(&self) -> usize {
        unsafe { ffi::fu_logical_cores_count(self.raw()) }
    }
    /// Allowed online cores of one compute domain.
    pub fn logical_cores_count_in(&self, domain: ComputeDomain) -> usize {
        unsafe { ffi::fu_logical_cores_count_in(self.raw(), domain.0) }
    }
    /// The kernel's `cpu_capacity` of the domain's cores (1024 = the fastest core); 0 where unpublished (x86).
    pub fn compute_capacity_in(&self, domain: ComputeDomain) -> usize {
        unsafe { ffi::fu_compute_capacity_in(self.raw(), domain.0) }
    }
    /// Bytes of the largest cache that no core outside the domain shares; 0 if unknown.
    pub fn compute_cache_bytes_in(&self, domain: ComputeDomain) -> u64 {
        unsafe { ffi::fu_compute_cache_bytes_in(self.raw(), domain.0) }
    }
    /// The memory domain the compute domain should allocate from.
    pub fn local_memory_of(&self, domain: ComputeDomain) -> MemoryDomain {
        MemoryDomain(unsafe { ffi::fu_local_memory_of(self.raw(), domain.0) })
    }
    /// The OS CPU ids of the domain, ascending (empty out of range).
    pub fn cores_in(&self, domain: ComputeDomain) -> Vec<u32> {
        // SAFETY: a NULL buffer asks for the count; the second call writes at most `count` ids into `cores`.
        let count = unsafe { ffi::fu_cores_in(self.raw(), domain.0, std::ptr::null_mut(), 0) };
        let mut cores = vec![0u32; count];
        let written = unsafe { ffi::fu_cores_in(self.raw(), domain.0, cores.as_mut_ptr(), cores.len()) };
        cores.truncate(written.min(count));
        cores
    }
    /// The cores this process may use (equals [`logical_cores_count`](Self::logical_cores_count)).
    pub fn allowed_cores_count(&self) -> usize {
        unsafe { ffi::fu_allowed_cores_count(self.raw()) }
    }
    /// All online cores of the machine.
    pub fn online_cores_count(&self) -> usize {
        unsafe { ffi::fu_online_cores_count(self.raw()) }
    }

    // ---- The memory axis ----

    /// Memory domains, at least 1.
    pub fn memory_domains_count(&self) -> usize {
        unsafe { ffi::fu_memory_domains_count(self.raw()) }
    }
    /// `MemoryDomain(0)..MemoryDomain(memory_domains_count())`.
    pub fn memory_domains(&self) -> impl Iterator<Item = MemoryDomain> {
        (0..self.memory_domains_count()).map(MemoryDomain)
    }
    /// The OS NUMA node id of a memory domain.
    pub fn memory_node_id(&self, domain: MemoryDomain) -> usize {
        unsafe { ffi::fu_memory_node_id(self.raw(), domain.0) }
    }
    /// Installed RAM in bytes, of the machine.
    pub fn volume_ram(&self) -> u64 {
        unsafe { ffi::fu_volume_ram(self.raw()) }
    }
    /// Installed RAM in bytes, of one memory domain.
    pub fn volume_ram_in(&self, domain: MemoryDomain) -> u64 {
        unsafe { ffi::fu_volume_ram_in(self.raw(), domain.0) }
    }
    /// Free huge pages of every size, of the machine.
    pub fn huge_pages_count(&self) -> usize {
        unsafe { ffi::fu_huge_pages_count(self.raw()) }
    }
    /// Free huge pages of every size, of one memory domain.
    pub fn huge_pages_count_in(&self, domain: MemoryDomain) -> usize {
        unsafe { ffi::fu_huge_pages_count_in(self.raw(), domain.0) }
    }
    /// Bytes of free huge pages, of the machine.
    pub fn volume_huge_pages(&self) -> u64 {
        unsafe { ffi::fu_volume_huge_pages(self.raw()) }
    }
    /// Bytes of free huge pages, of one memory domain.
    pub fn volume_huge_pages_in(&self, domain: MemoryDomain) -> u64 {
        unsafe { ffi::fu_volume_huge_pages_in(self.raw(), domain.0) }
    }
    /// The huge-page sizes a memory domain publishes, in bytes, ascending.
    pub fn huge_page_sizes_in(&self, domain: MemoryDomain) -> Vec<u64> {
        let count = unsafe { ffi::fu_huge_page_sizes_count_in(self.raw(), domain.0) };
        (0..count).map(|index| unsafe { ffi::fu_huge_page_size_in(self.raw(), domain.0, index) }).collect()
    }
    /// The firmware's declared (ACPI SLIT) distance between two memory domains: 10 is local, 0 unknown.
    pub fn declared_distance(&self, from: MemoryDomain, to: MemoryDomain) -> usize {
        unsafe { ffi::fu_declared_distance(self.raw(), from.0, to.0) }
    }
}

/// The path's bytes as a C string: any bytes on Unix, valid Unicode elsewhere; `None` with a NUL byte.
fn path_to_c(path: &Path) -> Option<CString> {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = path.to_str()?.as_bytes().to_vec();
    CString::new(bytes).ok()
}

impl Drop for Topology {
    fn drop(&mut self) {
        // SAFETY: owned, live handle; pools spawned on it do not refer to it.
        unsafe { ffi::fu_topology_delete(self.raw()) }
    }
}

impl fmt::Debug for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Topology")
            .field("harvested", &self.harvested())
            .field("compute_domains", &self.compute_domains_count())
            .field("memory_domains", &self.memory_domains_count())
            .field("logical_cores", &self.logical_cores_count())
            .finish()
    }
}
