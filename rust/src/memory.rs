//! Memory on chosen memory domains: raw mappings ([`Allocation`]), and typed arrays with one slice per domain,
//! either shards of one array ([`ShardedArray`]) or full copies of it ([`ReplicatedArray`]).
//!
//! The memory comes from the C allocator (`fu_allocate_on`, `fu_allocate_symmetric`): zeroed pages mapped
//! straight from the OS and bound to the domain's NUMA node before they are touched, rounded up to whole pages
//! (huge pages where asked and available). Where the kernel has no NUMA policies, or the capabilities do not allow
//! placement, the pages are left to the OS (first touch) and [`placed`](Allocation::placed) says so, unless the
//! crate is built with the `place-memory-on-domain` feature, which refuses such allocations with
//! [`Error::Unsupported`].

use std::fmt;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::ops::{Index, IndexMut};

use crate::capabilities::Capabilities;
use crate::error::Error;
use crate::ffi;
use crate::sync::CacheAligned;
use crate::topology::{ComputeDomain, MemoryDomain, Topology};

/// How an allocation is mapped: the huge-page size to try (0 for base pages) and the capabilities it may use
/// (without `MEMORY_PLACEMENT` nothing is bound; without `HUGE_PAGES` base pages are used).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocationOptions {
    /// A huge-page size to map with, a power of two, with fallback to base pages; 0 for base pages.
    pub huge_page_bytes: usize,
    /// What the allocation may use: `MEMORY_PLACEMENT` to bind, `HUGE_PAGES` for huge pages.
    pub allowed: Capabilities,
}

impl Default for AllocationOptions {
    fn default() -> Self {
        AllocationOptions { huge_page_bytes: 0, allowed: Capabilities::ALL }
    }
}

/// Zeroed, page-granular memory bound to one or several memory domains; unmapped on drop.
///
/// ```
/// use forkunion as fu;
/// let topology = fu::Topology::new().unwrap();
/// let mut memory = fu::Allocation::try_on(&topology, fu::MemoryDomain(0), 10_000).unwrap();
/// assert!(memory.bytes() >= 10_000 && memory.bytes() % memory.page_bytes() == 0);
/// assert!(memory.as_slice().iter().all(|&byte| byte == 0));
/// memory.as_mut_slice()[9_999] = 1;
/// ```
pub struct Allocation {
    raw: ffi::fu_allocation_t,
}

// SAFETY: plain memory, owned: moving or sharing it between threads is as safe as for a `Box<[u8]>`.
unsafe impl Send for Allocation {}
// SAFETY: as above; `&self` gives only `&[u8]`.
unsafe impl Sync for Allocation {}

impl Allocation {
    /// At least `bytes` zeroed bytes on memory domain `domain`, on base pages.
    pub fn try_on(topology: &Topology, domain: MemoryDomain, bytes: usize) -> Result<Allocation, Error> {
        Allocation::try_on_with(topology, domain, bytes, AllocationOptions::default())
    }

    /// At least `bytes` zeroed bytes on memory domain `domain`. [`Error::InvalidArgument`] for a domain out of
    /// range or a huge-page size that is not a power of two; [`Error::BadAlloc`] when too large to map;
    /// [`Error::PlacementRefused`] when the OS refused to bind there (nothing stays mapped).
    pub fn try_on_with(
        topology: &Topology,
        domain: MemoryDomain,
        bytes: usize,
        options: AllocationOptions,
    ) -> Result<Allocation, Error> {
        let mut raw = ffi::fu_allocation_t::empty();
        // SAFETY: a live topology and a valid output.
        Error::check(unsafe {
            ffi::fu_allocate_on(
                topology.raw(),
                domain.0,
                bytes,
                options.huge_page_bytes,
                options.allowed.bits(),
                &mut raw,
            )
        })?;
        Allocation { raw }.strict(options)
    }

    /// One virtual range of one slice per memory domain, slice `d` (at `as_ptr() + d * slice_bytes()`) of at
    /// least `slice_bytes` bytes on memory domain `d`: all placed, or none. Otherwise as [`try_on`](Self::try_on).
    pub fn try_symmetric(topology: &Topology, slice_bytes: usize) -> Result<Allocation, Error> {
        Allocation::try_symmetric_with(topology, slice_bytes, AllocationOptions::default())
    }

    /// [`try_symmetric`](Self::try_symmetric) with options.
    pub fn try_symmetric_with(
        topology: &Topology,
        slice_bytes: usize,
        options: AllocationOptions,
    ) -> Result<Allocation, Error> {
        let mut raw = ffi::fu_allocation_t::empty();
        // SAFETY: a live topology and a valid output.
        Error::check(unsafe {
            ffi::fu_allocate_symmetric(
                topology.raw(),
                slice_bytes,
                options.huge_page_bytes,
                options.allowed.bits(),
                &mut raw,
            )
        })?;
        Allocation { raw }.strict(options)
    }

    /// With `place-memory-on-domain`, refuses (and unmaps) memory left unplaced although placement was allowed.
    fn strict(self, options: AllocationOptions) -> Result<Allocation, Error> {
        let required =
            cfg!(feature = "place-memory-on-domain") && options.allowed.contains(Capabilities::MEMORY_PLACEMENT);
        if required && !self.raw.address.is_null() && !self.placed() {
            return Err(Error::Unsupported);
        }
        Ok(self)
    }

    /// The first byte (slice 0); dangling but aligned for a 0-byte allocation.
    pub fn as_ptr(&self) -> *mut u8 {
        if self.raw.address.is_null() {
            std::ptr::NonNull::<CacheAligned<u8>>::dangling().as_ptr() as *mut u8
        } else {
            self.raw.address as *mut u8
        }
    }
    /// Bytes mapped in all: `slices_count() * slice_bytes()`.
    pub fn bytes(&self) -> usize {
        self.raw.bytes
    }
    /// Bytes of each slice: the request rounded up to whole pages.
    pub fn slice_bytes(&self) -> usize {
        self.raw.slice_bytes
    }
    /// 1 for [`try_on`](Self::try_on), the memory domains for [`try_symmetric`](Self::try_symmetric).
    pub fn slices_count(&self) -> usize {
        self.raw.slices_count
    }
    /// The page size really backing the memory: the huge page, or the base page.
    pub fn page_bytes(&self) -> usize {
        self.raw.page_bytes
    }
    /// Whether the pages are bound to the domain(s) asked for (otherwise the OS places them on first touch).
    pub fn placed(&self) -> bool {
        self.raw.placed != 0
    }
    /// All the bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `bytes()` mapped, zeroed (so initialized) bytes owned by `self`.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.raw.bytes) }
    }
    /// All the bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.as_ptr(), self.raw.bytes) }
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        // SAFETY: what the C allocator returned, unmapped once; NULL addresses are a no-op.
        unsafe { ffi::fu_deallocate(&mut self.raw) };
    }
}

impl fmt::Debug for Allocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Allocation")
            .field("bytes", &self.raw.bytes)
            .field("slices", &self.raw.slices_count)
            .field("page_bytes", &self.raw.page_bytes)
            .field("placed", &self.placed())
            .finish()
    }
}

/// Types for which all-zero bytes are a valid value, so fresh mappings need no initialization.
///
/// # Safety
/// An implementation promises that the all-zero bit pattern of `size_of::<Self>()` bytes is a valid `Self`.
pub unsafe trait Zeroable {}

macro_rules! zeroable {
    ($($type:ty),*) => {$(
        // SAFETY: zero is a valid value of every integer, float, `bool` (false), `char` ('\0') and atomic.
        unsafe impl Zeroable for $type {}
    )*};
}
zeroable!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64, bool, char, ());
zeroable!(
    std::sync::atomic::AtomicBool,
    std::sync::atomic::AtomicU8,
    std::sync::atomic::AtomicU16,
    std::sync::atomic::AtomicU32,
    std::sync::atomic::AtomicU64,
    std::sync::atomic::AtomicUsize,
    std::sync::atomic::AtomicI8,
    std::sync::atomic::AtomicI16,
    std::sync::atomic::AtomicI32,
    std::sync::atomic::AtomicI64,
    std::sync::atomic::AtomicIsize
);
// SAFETY: an array of zeroable elements is zeroable.
unsafe impl<T: Zeroable, const N: usize> Zeroable for [T; N] {}
// SAFETY: a zeroable value plus padding.
unsafe impl<T: Zeroable> Zeroable for CacheAligned<T> {}

/// `slices_count` slices of `len` values each, slice `d` on memory domain `d`, in one symmetric allocation.
struct DomainSlices<T> {
    memory: Allocation,
    /// The topology's memory domains: one slice each (all empty when nothing was mapped).
    domains: usize,
    len: usize,
    _values: PhantomData<T>,
}

impl<T> DomainSlices<T> {
    /// Room for `len` values per memory domain, uninitialized unless `T: Zeroable`.
    fn try_allocate(topology: &Topology, len: usize) -> Result<DomainSlices<T>, Error> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or(Error::BadAlloc)?;
        let memory = Allocation::try_symmetric(topology, bytes)?;
        // Slices start on page boundaries: aligned for any `T` whose alignment is at most a page.
        assert!(
            memory.raw.address.is_null() || (memory.page_bytes() % align_of::<T>() == 0),
            "forkunion: a type aligned beyond the page size"
        );
        let domains = topology.memory_domains_count();
        assert!(memory.raw.address.is_null() || memory.slices_count() == domains, "one slice per memory domain");
        Ok(DomainSlices { memory, domains, len, _values: PhantomData })
    }

    /// Writes `value(domain, index)` everywhere; `filled` tells `drop` how many slices hold values.
    fn try_from_fn(
        topology: &Topology,
        len: usize,
        mut value: impl FnMut(MemoryDomain, usize) -> T,
    ) -> Result<DomainSlices<T>, Error> {
        let slices = DomainSlices::<T>::try_allocate(topology, len)?;
        let mut filled = Filled { slices, values: 0 };
        for domain in 0..filled.slices.count() {
            let start = filled.slices.start(domain);
            for index in 0..len {
                // SAFETY: inside slice `domain`, written once; `filled.values` counts what drop must drop.
                unsafe { start.add(index).write(value(MemoryDomain(domain), index)) };
                filled.values += 1;
            }
        }
        let slices = std::mem::replace(&mut filled.slices, DomainSlices::empty());
        std::mem::forget(filled);
        Ok(slices)
    }

    fn empty() -> DomainSlices<T> {
        DomainSlices {
            memory: Allocation { raw: ffi::fu_allocation_t::empty() },
            domains: 0,
            len: 0,
            _values: PhantomData,
        }
    }

    fn count(&self) -> usize {
        self.domains
    }

    fn start(&self, domain: usize) -> *mut T {
        slice_start(self.memory.raw.address as *mut u8, self.memory.raw.slice_bytes, domain)
    }

    fn slice(&self, domain: usize) -> &[T] {
        assert!(domain < self.count(), "forkunion: memory domain {} of {}", domain, self.count());
        // SAFETY: `len` initialized values at an aligned start, owned by `self`.
        unsafe { std::slice::from_raw_parts(self.start(domain), self.len) }
    }

    fn slice_mut(&mut self, domain: usize) -> &mut [T] {
        assert!(domain < self.count(), "forkunion: memory domain {} of {}", domain, self.count());
        // SAFETY: as above, and `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.start(domain), self.len) }
    }

    /// Every slice, writable at once (they never overlap).
    fn slices_mut(&mut self) -> impl Iterator<Item = &mut [T]> + '_ {
        let (base, stride, len) = (self.memory.raw.address as *mut u8, self.memory.raw.slice_bytes, self.len);
        // SAFETY: distinct slices of `len` initialized values each, borrowed for as long as `&mut self`.
        (0..self.domains)
            .map(move |domain| unsafe { std::slice::from_raw_parts_mut(slice_start(base, stride, domain), len) })
    }
}

/// Slice `domain` of a symmetric mapping at `base` (dangling, for zero-sized or empty slices, when `base` is NULL).
fn slice_start<T>(base: *mut u8, stride: usize, domain: usize) -> *mut T {
    if base.is_null() {
        return std::ptr::NonNull::dangling().as_ptr();
    }
    // SAFETY: callers pass `domain < slices_count`, so the offset stays inside the mapping.
    unsafe { base.add(domain * stride) as *mut T }
}

/// Drops the values written so far if filling panics.
struct Filled<T> {
    slices: DomainSlices<T>,
    values: usize,
}

impl<T> Drop for Filled<T> {
    fn drop(&mut self) {
        let len = self.slices.len.max(1);
        for written in 0..self.values {
            // SAFETY: the first `values` writes, in fill order, hold values.
            unsafe { std::ptr::drop_in_place(self.slices.start(written / len).add(written % len)) };
        }
        self.slices.len = 0; // the slices' own drop must not drop them again
    }
}

impl<T> Drop for DomainSlices<T> {
    fn drop(&mut self) {
        if std::mem::needs_drop::<T>() && self.len != 0 {
            for domain in 0..self.count() {
                // SAFETY: every slice holds `len` values, dropped once here.
                unsafe { std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.start(domain), self.len)) };
            }
        }
    }
}

/// One array in shards, one shard per memory domain: shard `d` holds `shard_len` values on memory domain `d`.
///
/// Threads of compute domain `c` should work on shard `topology.local_memory_of(c)`. `Send`/`Sync` as `T` is.
///
/// ```
/// use forkunion as fu;
/// let topology = fu::Topology::new().unwrap();
/// let pool = fu::spawn(&topology, 2);
/// let mut counts = fu::ShardedArray::<u64>::try_zeroed(&topology, 1000).unwrap();
/// for shard in counts.shards_mut() {
///     shard.iter_mut().enumerate().for_each(|(i, v)| *v = i as u64);
/// }
/// let counts = &counts;
/// pool.for_threads(|_thread, compute_domain| {
///     let shard = counts.shard(topology.local_memory_of(fu::ComputeDomain(compute_domain)));
///     assert_eq!(shard.iter().sum::<u64>(), 499500);
/// })
/// .unwrap();
/// assert_eq!(counts.len(), 1000 * topology.memory_domains_count());
/// ```
pub struct ShardedArray<T> {
    slices: DomainSlices<T>,
}

impl<T> ShardedArray<T> {
    /// `shard_len` zeros per memory domain.
    pub fn try_zeroed(topology: &Topology, shard_len: usize) -> Result<ShardedArray<T>, Error>
    where
        T: Zeroable,
    {
        Ok(ShardedArray { slices: DomainSlices::try_allocate(topology, shard_len)? })
    }

    /// `shard_len` values per memory domain, `value(domain, index)` each, written by the calling thread (the
    /// binding, not the writer, decides where the pages sit).
    pub fn try_from_fn(
        topology: &Topology,
        shard_len: usize,
        value: impl FnMut(MemoryDomain, usize) -> T,
    ) -> Result<ShardedArray<T>, Error> {
        Ok(ShardedArray { slices: DomainSlices::try_from_fn(topology, shard_len, value)? })
    }

    /// Shards: the topology's memory domains.
    pub fn shards_count(&self) -> usize {
        self.slices.count()
    }
    /// Values per shard.
    pub fn shard_len(&self) -> usize {
        self.slices.len
    }
    /// Values in all shards.
    pub fn len(&self) -> usize {
        self.shards_count() * self.shard_len()
    }
    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Shard `domain` (panics out of range).
    pub fn shard(&self, domain: MemoryDomain) -> &[T] {
        self.slices.slice(domain.0)
    }
    /// Shard `domain`, writable (panics out of range).
    pub fn shard_mut(&mut self, domain: MemoryDomain) -> &mut [T] {
        self.slices.slice_mut(domain.0)
    }
    /// Every shard, writable, in domain order.
    pub fn shards_mut(&mut self) -> impl Iterator<Item = &mut [T]> + '_ {
        self.slices.slices_mut()
    }
    /// Whether every shard is bound to its memory domain.
    pub fn placed(&self) -> bool {
        self.slices.memory.placed()
    }
    /// The page size backing the shards.
    pub fn page_bytes(&self) -> usize {
        self.slices.memory.page_bytes()
    }
}

/// Global indices: value `i` is `shard(i / shard_len)[i % shard_len]`.
impl<T> Index<usize> for ShardedArray<T> {
    type Output = T;
    fn index(&self, index: usize) -> &T {
        let len = self.shard_len();
        assert!(index < self.len(), "forkunion: index {} of {} values", index, self.len());
        &self.slices.slice(index / len)[index % len]
    }
}
impl<T> IndexMut<usize> for ShardedArray<T> {
    fn index_mut(&mut self, index: usize) -> &mut T {
        let len = self.shard_len();
        assert!(index < self.len(), "forkunion: index {} of {} values", index, self.len());
        &mut self.slices.slice_mut(index / len)[index % len]
    }
}

impl<T> fmt::Debug for ShardedArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardedArray")
            .field("shards", &self.shards_count())
            .field("shard_len", &self.shard_len())
            .field("placed", &self.placed())
            .finish()
    }
}

/// A read-mostly array copied once per memory domain: replica `d` on memory domain `d`, so every thread reads
/// a copy on its own node. Writes go to every replica ([`set`](Self::set)) or to one ([`replica_mut`]).
///
/// ```
/// use forkunion as fu;
/// let topology = fu::Topology::new().unwrap();
/// let pool = fu::spawn(&topology, 2);
/// let weights = fu::ReplicatedArray::try_from_slice(&topology, &[0.5f32, 0.25, 0.25]).unwrap();
/// pool.for_threads(|_thread, compute_domain| {
///     let local = weights.local(&topology, fu::ComputeDomain(compute_domain));
///     assert_eq!(local.iter().sum::<f32>(), 1.0);
/// })
/// .unwrap();
/// ```
///
/// [`replica_mut`]: Self::replica_mut
pub struct ReplicatedArray<T> {
    slices: DomainSlices<T>,
}

impl<T> ReplicatedArray<T> {
    /// A copy of `values` on every memory domain.
    pub fn try_from_slice(topology: &Topology, values: &[T]) -> Result<ReplicatedArray<T>, Error>
    where
        T: Clone,
    {
        Ok(ReplicatedArray { slices: DomainSlices::try_from_fn(topology, values.len(), |_, i| values[i].clone())? })
    }

    /// Replicas: the topology's memory domains.
    pub fn replicas_count(&self) -> usize {
        self.slices.count()
    }
    /// Values per replica.
    pub fn len(&self) -> usize {
        self.slices.len
    }
    /// Whether the array is empty.
    pub fn is_empty(&self) -> bool {
        self.slices.len == 0
    }
    /// Replica `domain` (panics out of range).
    pub fn replica(&self, domain: MemoryDomain) -> &[T] {
        self.slices.slice(domain.0)
    }
    /// The replica local to compute domain `domain`: `replica(topology.local_memory_of(domain))`.
    pub fn local(&self, topology: &Topology, domain: ComputeDomain) -> &[T] {
        self.slices.slice(topology.local_memory_of(domain).0)
    }
    /// Replica `domain`, writable: the other replicas keep their values.
    pub fn replica_mut(&mut self, domain: MemoryDomain) -> &mut [T] {
        self.slices.slice_mut(domain.0)
    }
    /// Writes `value` at `index` of every replica.
    pub fn set(&mut self, index: usize, value: T)
    where
        T: Clone,
    {
        for replica in self.slices.slices_mut() {
            replica[index] = value.clone();
        }
    }
    /// Whether every replica is bound to its memory domain.
    pub fn placed(&self) -> bool {
        self.slices.memory.placed()
    }
}

impl<T> fmt::Debug for ReplicatedArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplicatedArray")
            .field("replicas", &self.replicas_count())
            .field("len", &self.len())
            .field("placed", &self.placed())
            .finish()
    }
}
