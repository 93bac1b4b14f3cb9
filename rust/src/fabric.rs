//! The memory fabric as measured through a pool: latency, bandwidth and distance of every compute-to-memory edge,
//! and the memory levels derived from them.

use std::ptr::NonNull;

use crate::error::Error;
use crate::ffi;
use crate::pool::ThreadPool;
use crate::topology::{ComputeDomain, MemoryDomain, Topology};

/// What the C library observes of the machine (the C API's `fu_fabric_t`), as opposed to what the platform
/// declares ([`Topology`]). Every query reads 0 before a successful [`harvest`](Self::harvest) and for edges no
/// pinned worker could reach.
pub struct Fabric {
    raw: NonNull<ffi::fu_fabric>,
}

// SAFETY: a harvested fabric is read-only; `harvest` takes `&mut self`.
unsafe impl Send for Fabric {}
// SAFETY: as above.
unsafe impl Sync for Fabric {}

impl Fabric {
    /// An empty fabric. [`Error::BadAlloc`] if memory ran out.
    pub fn new() -> Result<Fabric, Error> {
        // SAFETY: no preconditions.
        NonNull::new(unsafe { ffi::fu_fabric_new() }).map(|raw| Fabric { raw }).ok_or(Error::BadAlloc)
    }

    /// Measures every edge through `pool`'s workers, pinned to each compute domain of `topology` in turn, with
    /// buffers of `buffer_bytes` per memory domain (0: four times the largest cache, 64 MiB to 1 GiB). Seconds of
    /// work. The pool is taken `&mut` because its threads are re-pinned meanwhile. A failed harvest leaves the
    /// fabric as it was. [`Error::Unsupported`] when the pool may not pin threads or place memory.
    pub fn harvest(&mut self, topology: &Topology, pool: &mut ThreadPool, buffer_bytes: usize) -> Result<(), Error> {
        // SAFETY: live handles; `&mut` on both: nothing else uses them meanwhile.
        Error::check(unsafe { ffi::fu_fabric_harvest(self.raw.as_ptr(), topology.raw(), pool.raw(), buffer_bytes) })
    }

    /// Whether a harvest succeeded.
    pub fn harvested(&self) -> bool {
        // SAFETY: a live handle (here and below).
        unsafe { ffi::fu_fabric_harvested(self.raw.as_ptr()) != 0 }
    }
    /// Dense memory levels of the media measured (0 is the fastest).
    pub fn memory_levels_count(&self) -> usize {
        unsafe { ffi::fu_fabric_memory_levels_count(self.raw.as_ptr()) }
    }
    /// The level of a memory domain; `memory_levels_count()` for an unreached one.
    pub fn memory_level_in(&self, domain: MemoryDomain) -> usize {
        unsafe { ffi::fu_fabric_memory_level_in(self.raw.as_ptr(), domain.0) }
    }
    /// The measured distance of an edge on the ACPI SLIT scale (10 is local).
    pub fn memory_distance(&self, from: ComputeDomain, to: MemoryDomain) -> usize {
        unsafe { ffi::fu_fabric_memory_distance(self.raw.as_ptr(), from.0, to.0) }
    }
    /// The dependent-load latency of an edge, in nanoseconds.
    pub fn memory_latency_ns(&self, from: ComputeDomain, to: MemoryDomain) -> f64 {
        unsafe { ffi::fu_fabric_memory_latency_ns(self.raw.as_ptr(), from.0, to.0) }
    }
    /// The saturated read bandwidth of an edge, in bytes per second.
    pub fn memory_bandwidth(&self, from: ComputeDomain, to: MemoryDomain) -> f64 {
        unsafe { ffi::fu_fabric_memory_bandwidth(self.raw.as_ptr(), from.0, to.0) }
    }
}

impl Drop for Fabric {
    fn drop(&mut self) {
        // SAFETY: owned, live handle.
        unsafe { ffi::fu_fabric_delete(self.raw.as_ptr()) }
    }
}
