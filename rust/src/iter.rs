//! Rayon-style parallel iterators over an explicit pool: sources, adaptors, schedules and terminal operations.
//!
//! A chain starts from a source ([`IntoParallelIterator::into_par_iter`] on a slice, a mutable slice or an
//! integer range; `par_iter()` / `par_iter_mut()` on slices and vectors; [`ParallelSlice`]'s `par_chunks`,
//! `par_chunks_exact`, `par_windows` and [`ParallelSliceMut`]'s `par_chunks_mut`, `par_chunks_exact_mut`), takes
//! adaptors ([`map`], [`filter`], `filter_map`, `inspect`, `copied`, `cloned`; on indexed chains [`zip`],
//! `zip_eq`, [`enumerate`], `take`, `skip`, `rev`, `step_by`), is bound to a pool with [`with_pool`] (static
//! schedule) or [`with_schedule`] (`StaticScheduler` or `DynamicScheduler`), and ends in a terminal operation on
//! [`Scheduled`]: `for_each`, `try_for_each`, `sum`, `product`, `count`, `reduce`, `reduce_with_scratch`, `min`,
//! `max`, `min_by`, `max_by`, `min_by_key`, `max_by_key`, `find_any`, `find_first`, `find_last`,
//! `find_map_any`, `find_map_first`, `find_map_last`, `any`, `all`, `collect`; on indexed chains also
//! `position_any`, `position_first`, `position_last`, `collect_vec`. `docs/rust.md` compares them with Rayon's.
//!
//! # Positions
//! Every chain addresses its items by position, `0..n` for a source of `n` items; `filter` drops positions but
//! never renumbers them. Each terminal produces every position at most once, so `&mut` items are handed to one
//! thread each. Nothing is allocated per item; nothing is boxed.
//!
//! # Terminals always run
//! A terminal never fails and never loses an item: when the pool refuses (it runs another dispatch, it is called
//! from inside one of the pool's own callbacks, it is not spawned, it was inherited through `fork()`), the whole
//! terminal runs on the calling thread as a team of one (every prong says thread 0 and compute domain 0),
//! through the pool's `*_or_run_on_caller` verbs, and returns the same value.
//!
//! # Reproducible reductions
//! `sum`, `product`, `count`, `reduce`, `min`/`max` and their `_by_key` forms compute one rule, the reduction
//! rule of the C++ algorithms (`forkunion/algorithms.hpp`), with `⊕` the terminal's operation, `g` the grain
//! ([`DEFAULT_GRAIN`] unless [`Scheduled::with_grain`] says otherwise) and `W` = [`reduction_lanes`] of the
//! accumulator type `T` (16 for values of 8 bytes or less such as `f64`, 4 for an `(f64, f64)`):
//! 1. Blocks: block `b` holds positions `b*g .. min(n, (b+1)*g)`.
//! 2. Lanes: in a block of `L` positions, lane `j < min(W, L)` starts from the block's `j`-th item and folds the
//!    items `j + W`, `j + 2W`, ... from the left, the lane first: `a = a ⊕ y[j + W]`, then `a = a ⊕ y[j + 2W]`, ...
//! 3. The tree of values `v[0..m)`: split at the largest power of two below `m`, left part ⊕ right part,
//!    recursively (the same as: for `s = 1, 2, 4, ...` below `m`, `v[i] = v[i] ⊕ v[i + s]` for `i = 0, 2s, 4s, ...`
//!    while `i + s < m`; the value is `v[0]`).
//! 4. A block's value is the tree of its lanes; the result is the tree of the blocks' values.
//!
//! What each terminal starts from, and what stands for C++'s `init` (which C++ adds as `init ⊕ tree`):
//! - `sum`: a lane starts as the `Sum` of its one first item, takes an item `x` as `T::sum([a, T::sum([x])])`, and
//!   two partials join as `T::sum([a, b])`; nothing is added to the tree, and no items give the empty sum. For
//!   `f64`, whose empty sum is −0.0 (0.0 before Rust 1.82), an exact identity of `+`, these are plain additions:
//!   a `f64` sum has the bits of C++'s `fu::reduce(pool, first, last, init, std::plus<>{})` over the same values
//!   and grain with `init = -0.0`, and with `init = 0.0` too unless every item is −0.0 or there are none (then
//!   it is the empty sum, as the serial `iter.sum()` is). Integers' sums are exact, whatever the grouping.
//! - `product`: the same with `Product` (the empty product of floats, 1.0, is exact too).
//! - `reduce(identity, fold, combine)`: every lane starts at `identity()` and folds its items with `fold`; lanes
//!   and blocks join with `combine`; no items give `identity()`. So when folding an item into `identity()` gives
//!   exactly what C++ loads for it, this is C++'s rule with `init = identity()`. For `f64`, `reduce(|| 0.0,
//!   |a, &x, _| *a += x, |a, b| a + b)` has the bits of C++'s `reduce` with `init = 0.0` (a zero's sign never
//!   reaches a sum that is not zero), and `|| -0.0` those of `init = -0.0`.
//! - `count`: an exact integer sum over the same blocks.
//! - `min`, `max` and the `_by_key` forms: a lane holds its best item with the item's position, and two candidates
//!   always compare with the earlier position first, so ties go to the first (`min`) or last (`max`) of equals,
//!   as in `std`, whatever the grouping.
//!
//! Past a `filter`, a dropped position leaves its lane as it was; a lane whose first position is dropped starts
//! from the empty sum, the empty product, `identity()`, or no candidate.
//!
//! Threads compute whole subtrees of blocks (at most [`MAX_REDUCTION_TASKS`] of them, each a run of blocks aligned
//! to a power of two, so each is a node of the whole tree) and the caller combines their results with the same
//! rule. So the result depends on the input, the operations and the grain only: a `f64` sum is bit-for-bit the
//! same at every thread count, on either schedule, and in the serial fallback. The price against a thread-count
//! split (one serial fold per thread, `T - 1` combines): `W - 1` lane combines per block of `g` items (15 per
//! 4096 by default), one partial result per subtree (one small allocation per call), a tree of combines over the
//! subtrees instead of `T - 1`, and `reduce` calls `identity()` once per lane (up to `W` times per block). A
//! reduction of one block (at most `g` positions) runs on the caller alone. In exchange, the lanes are `W`
//! independent chains, so a `f64` sum vectorizes without reassociating anything (no fast-math), where one chain
//! per block waits for every addition.
//!
//! # Early exit
//! `find_*`, `any`, `all` and `try_for_each` hand out blocks of `grain` positions from one shared cursor, in
//! position order (backwards for `find_last`), whatever the schedule: a thread stops claiming once every block
//! left lies past the best match found so far (any match, for `find_any`, `any`, `all` and errors of
//! `try_for_each`). Predicate calls beyond the answer's position are bounded by the blocks other threads were
//! already scanning, about `(T - 1) * grain`, when no thread is preempted.
//!
//! # Bounds, checked at compile time
//! Items of a shared slice are shared between threads, so they must be `Sync`:
//!
//! ```compile_fail,E0599
//! use forkunion::prelude::*;
//! use std::cell::Cell;
//! let topology = forkunion::Topology::new().unwrap();
//! let pool = forkunion::spawn(&topology, 2);
//! let cells = vec![Cell::new(0); 4];
//! cells.par_iter().with_pool(&pool).for_each(|cell| cell.set(1)); // `Cell` is not `Sync`
//! ```
//!
//! Items of a mutable slice go to other threads, so they must be `Send`:
//!
//! ```compile_fail,E0599
//! use forkunion::prelude::*;
//! use std::rc::Rc;
//! let topology = forkunion::Topology::new().unwrap();
//! let pool = forkunion::spawn(&topology, 2);
//! let mut shared = vec![Rc::new(0); 4];
//! shared.par_iter_mut().with_pool(&pool).for_each(|rc| *rc = Rc::new(1)); // `Rc` is not `Send`
//! ```
//!
//! What travels back to the caller must be `Send`:
//!
//! ```compile_fail,E0277
//! use forkunion::prelude::*;
//! use std::rc::Rc;
//! let topology = forkunion::Topology::new().unwrap();
//! let pool = forkunion::spawn(&topology, 2);
//! let total = (0..100u32).into_par_iter().with_pool(&pool).reduce(
//!     || Rc::new(0u32), // partial results are built on the workers
//!     |acc, x, _| *acc = Rc::new(**acc + x),
//!     |a, b| Rc::new(*a + *b),
//! );
//! ```
//!
//! And every closure runs on several threads at once, so it must be `Fn`:
//!
//! ```compile_fail,E0594
//! use forkunion::prelude::*;
//! let topology = forkunion::Topology::new().unwrap();
//! let pool = forkunion::spawn(&topology, 2);
//! let mut seen = 0;
//! (0..100u32).into_par_iter().with_pool(&pool).for_each(|_| seen += 1);
//! ```
//!
//! [`map`]: ParallelIterator::map
//! [`filter`]: ParallelIterator::filter
//! [`zip`]: IndexedParallelIterator::zip
//! [`enumerate`]: IndexedParallelIterator::enumerate
//! [`with_pool`]: ParallelIterator::with_pool
//! [`with_schedule`]: ParallelIterator::with_schedule

use std::iter::{Product, Sum};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::pool::{no_unwind, Prong, ThreadPool};
use crate::sync::{CacheAligned, SpinMutex};

/// The block size of reductions and searches, in positions, unless [`Scheduled::with_grain`] sets another.
///
/// A constant, never derived from the thread count or the machine: the block boundaries, and so the result of a
/// floating-point reduction, depend on it. It equals the C++ algorithms' `default_grain_k`, so that a reduction
/// with the default grain gives the same bits in both languages. 4096 positions keep a block's lanes long enough
/// to hide the per-block bookkeeping (15 lane combines, one block combine, one search claim) and short enough
/// that a search stops within `(T - 1) * 4096` positions past the match.
pub const DEFAULT_GRAIN: usize = 4096;

/// The most lanes of the reduction rule (module docs), those of values of 8 bytes or less: [`reduction_lanes`]
/// gives every type's. It equals the C++ algorithms' `reduction_lanes_k`.
pub const REDUCTION_LANES: usize = 16;

/// `W`, the lanes of the reduction rule (module docs) for accumulators of type `T`: position `j` of a block goes to
/// lane `j mod W`. [`REDUCTION_LANES`] (16) for values of 8 bytes or less (zero-sized ones included), else
/// `max(1, 64 / size_of::<T>())`: 4 for an `(f64, f64)`, 2 for 32 bytes, 1 above. Either way the lanes fit in 8
/// of x86-64's 16 SSE registers (scalar lanes two to a register, an aggregate's fields one each); 16 lanes of a
/// 16-byte sum-and-max spilled to the stack on every item. It equals the C++ algorithms' `reduction_lanes_for_k<T>`;
/// changing it changes every floating-point result of that type.
pub const fn reduction_lanes<T>() -> usize {
    let size = std::mem::size_of::<T>();
    if size <= 8 {
        REDUCTION_LANES
    } else if size > 64 {
        1
    } else {
        64 / size
    }
}

/// [`reduction_lanes`] as an associated constant: evaluated at compile time for every `T`, in every build.
struct Lanes<T>(std::marker::PhantomData<T>);
impl<T> Lanes<T> {
    const W: usize = reduction_lanes::<T>();
}

/// The most subtrees a reduction dispatches: enough to spread over 512 threads, and small enough that the
/// caller's final combines take a few microseconds at most.
pub const MAX_REDUCTION_TASKS: usize = 512;

// ---- Sources ----

/// A value that becomes a parallel iterator: slices (items `&T`), mutable slices (items `&mut T`), vectors by
/// reference, integer ranges (items the integers), and every parallel iterator itself.
pub trait IntoParallelIterator {
    /// What each position yields.
    type Item;
    /// The parallel iterator it becomes.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The parallel iterator.
    fn into_par_iter(self) -> Self::Iter;
}

/// `par_iter()`: the parallel iterator over `&T` of a slice or vector.
pub trait IntoParallelRefIterator<'a> {
    /// The parallel iterator over `&'a T`.
    type Iter: ParallelIterator;
    /// The parallel iterator over shared references.
    fn par_iter(&'a self) -> Self::Iter;
}

/// `par_iter_mut()`: the parallel iterator over `&mut T` of a slice or vector.
pub trait IntoParallelRefMutIterator<'a> {
    /// The parallel iterator over `&'a mut T`.
    type Iter: ParallelIterator;
    /// The parallel iterator over exclusive references.
    fn par_iter_mut(&'a mut self) -> Self::Iter;
}

impl<I: ParallelIterator> IntoParallelIterator for I {
    type Item = I::Item;
    type Iter = I;
    fn into_par_iter(self) -> I {
        self
    }
}

/// The items `&T` of a slice.
#[derive(Clone, Copy, Debug)]
pub struct SliceIter<'a, T> {
    slice: &'a [T],
}

impl<'a, T: Sync> IntoParallelIterator for &'a [T] {
    type Item = &'a T;
    type Iter = SliceIter<'a, T>;
    fn into_par_iter(self) -> SliceIter<'a, T> {
        SliceIter { slice: self }
    }
}
impl<'a, T: Sync> IntoParallelIterator for &'a Vec<T> {
    type Item = &'a T;
    type Iter = SliceIter<'a, T>;
    fn into_par_iter(self) -> SliceIter<'a, T> {
        SliceIter { slice: self.as_slice() }
    }
}
impl<'a, T: Sync + 'a> IntoParallelRefIterator<'a> for [T] {
    type Iter = SliceIter<'a, T>;
    fn par_iter(&'a self) -> SliceIter<'a, T> {
        SliceIter { slice: self }
    }
}
impl<'a, T: Sync + 'a> IntoParallelRefIterator<'a> for Vec<T> {
    type Iter = SliceIter<'a, T>;
    fn par_iter(&'a self) -> SliceIter<'a, T> {
        SliceIter { slice: self.as_slice() }
    }
}

impl<'a, T> ParallelIterator for SliceIter<'a, T> {
    type Item = &'a T;
    fn positions(&self) -> usize {
        self.slice.len()
    }
    unsafe fn produce(&self, position: usize) -> Option<&'a T> {
        // SAFETY: the caller keeps `get`'s contract, which is `produce`'s.
        Some(unsafe { self.get(position) })
    }
}
impl<'a, T> IndexedParallelIterator for SliceIter<'a, T> {
    unsafe fn get(&self, position: usize) -> &'a T {
        // SAFETY: the caller passes `position < positions()`.
        unsafe { self.slice.get_unchecked(position) }
    }
}

/// The items `&mut T` of a mutable slice, each handed to one thread.
#[derive(Debug)]
pub struct SliceIterMut<'a, T> {
    start: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: the iterator stands for `&'a mut [T]`, which may move to another thread when `T: Send`.
unsafe impl<T: Send> Send for SliceIterMut<'_, T> {}
// SAFETY: threads sharing the iterator get `&mut T` to distinct elements only (each position is produced at most
// once per terminal), which is sound exactly when `T: Send`, as for handing out `chunks_mut` to threads.
unsafe impl<T: Send> Sync for SliceIterMut<'_, T> {}

impl<'a, T: Send> IntoParallelIterator for &'a mut [T] {
    type Item = &'a mut T;
    type Iter = SliceIterMut<'a, T>;
    fn into_par_iter(self) -> SliceIterMut<'a, T> {
        SliceIterMut { start: self.as_mut_ptr(), len: self.len(), _borrow: PhantomData }
    }
}
impl<'a, T: Send> IntoParallelIterator for &'a mut Vec<T> {
    type Item = &'a mut T;
    type Iter = SliceIterMut<'a, T>;
    fn into_par_iter(self) -> SliceIterMut<'a, T> {
        self.as_mut_slice().into_par_iter()
    }
}
impl<'a, T: Send + 'a> IntoParallelRefMutIterator<'a> for [T] {
    type Iter = SliceIterMut<'a, T>;
    fn par_iter_mut(&'a mut self) -> SliceIterMut<'a, T> {
        self.into_par_iter()
    }
}
impl<'a, T: Send + 'a> IntoParallelRefMutIterator<'a> for Vec<T> {
    type Iter = SliceIterMut<'a, T>;
    fn par_iter_mut(&'a mut self) -> SliceIterMut<'a, T> {
        self.as_mut_slice().into_par_iter()
    }
}

impl<'a, T> ParallelIterator for SliceIterMut<'a, T> {
    type Item = &'a mut T;
    fn positions(&self) -> usize {
        self.len
    }
    unsafe fn produce(&self, position: usize) -> Option<&'a mut T> {
        // SAFETY: the caller keeps `get`'s contract, which is `produce`'s.
        Some(unsafe { self.get(position) })
    }
}
impl<'a, T> IndexedParallelIterator for SliceIterMut<'a, T> {
    unsafe fn get(&self, position: usize) -> &'a mut T {
        // SAFETY: `position < len` and produced at most once: no other reference to this element exists.
        unsafe { &mut *self.start.add(position) }
    }
}

/// The integers of a range.
#[derive(Clone, Debug)]
pub struct RangeIter<T> {
    start: T,
    len: usize,
}

macro_rules! range_sources {
    ($($int:ty),*) => {$(
        impl IntoParallelIterator for Range<$int> {
            type Item = $int;
            type Iter = RangeIter<$int>;
            fn into_par_iter(self) -> RangeIter<$int> {
                let span = (self.end as i128 - self.start as i128).max(0);
                let len = usize::try_from(span).expect("forkunion: a range longer than usize::MAX positions");
                RangeIter { start: self.start, len }
            }
        }
        impl ParallelIterator for RangeIter<$int> {
            type Item = $int;
            fn positions(&self) -> usize {
                self.len
            }
            unsafe fn produce(&self, position: usize) -> Option<$int> {
                // SAFETY: the caller keeps `get`'s contract, which is `produce`'s.
                Some(unsafe { self.get(position) })
            }
        }
        impl IndexedParallelIterator for RangeIter<$int> {
            unsafe fn get(&self, position: usize) -> $int {
                // `position < len`, so the sum stays inside the range: no overflow.
                (self.start as i128 + position as i128) as $int
            }
        }
    )*};
}
range_sources!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

// ---- Slice sources: chunks and windows ----

/// The chunk size of a `par_chunks*` or `par_windows` call: refuses 0, as `std`'s `chunks` and Rayon do, with the
/// method's name, before anything runs.
fn chunk_size(method: &str, size: usize) -> usize {
    assert!(size > 0, "forkunion: {} with a chunk size of 0", method);
    size
}

/// `par_chunks`, `par_chunks_exact` and `par_windows` on a slice (and, through `Deref`, a vector): indexed
/// parallel iterators over sub-slices, the parallel forms of `std`'s `chunks`, `chunks_exact` and `windows`.
///
/// ```
/// use forkunion::prelude::*;
/// let topology = forkunion::Topology::new().unwrap();
/// let pool = forkunion::spawn(&topology, 2);
/// let data: Vec<u32> = (0..10).collect();
/// let sums = data.par_chunks(4).map(|chunk| chunk.iter().sum::<u32>()).with_pool(&pool).collect_vec();
/// assert_eq!(sums, vec![6, 22, 17]); // [0..4], [4..8], and the shorter tail [8, 9]
/// ```
pub trait ParallelSlice<T: Sync> {
    /// Chunks of `size` items in order, the last one shorter when `size` does not divide the length; none for an
    /// empty slice. Serial equivalent: `slice.chunks(size)`. Panics if `size` is 0.
    fn par_chunks(&self, size: usize) -> Chunks<'_, T>;

    /// Chunks of exactly `size` items; the `len % size` items left over are [`ChunksExact::remainder`]. Serial
    /// equivalent: `slice.chunks_exact(size)`. Panics if `size` is 0.
    fn par_chunks_exact(&self, size: usize) -> ChunksExact<'_, T>;

    /// Every window of `size` consecutive items, overlapping, in order; none when the slice is shorter than
    /// `size`. Serial equivalent: `slice.windows(size)`. Panics if `size` is 0.
    fn par_windows(&self, size: usize) -> Windows<'_, T>;
}

impl<T: Sync> ParallelSlice<T> for [T] {
    fn par_chunks(&self, size: usize) -> Chunks<'_, T> {
        Chunks { slice: self, size: chunk_size("par_chunks", size) }
    }
    fn par_chunks_exact(&self, size: usize) -> ChunksExact<'_, T> {
        let size = chunk_size("par_chunks_exact", size);
        let whole = self.len() - self.len() % size;
        ChunksExact { slice: &self[..whole], remainder: &self[whole..], size }
    }
    fn par_windows(&self, size: usize) -> Windows<'_, T> {
        Windows { slice: self, size: chunk_size("par_windows", size) }
    }
}

/// `par_chunks_mut` and `par_chunks_exact_mut` on a mutable slice (and a vector): each chunk goes to one thread as
/// `&mut [T]`, so a loop writes rows of an output in place.
///
/// ```
/// use forkunion::prelude::*;
/// let topology = forkunion::Topology::new().unwrap();
/// let pool = forkunion::spawn(&topology, 2);
/// let (rows, columns) = (3, 4);
/// let mut table = vec![0usize; rows * columns];
/// table.par_chunks_mut(columns).enumerate().with_pool(&pool).for_each(|(row, cells)| {
///     for (column, cell) in cells.iter_mut().enumerate() {
///         *cell = row * 10 + column;
///     }
/// });
/// assert_eq!(table[2 * columns + 3], 23);
/// ```
pub trait ParallelSliceMut<T: Send> {
    /// Chunks of `size` items in order as `&mut [T]`, the last one shorter when `size` does not divide the length.
    /// Serial equivalent: `slice.chunks_mut(size)`. Panics if `size` is 0.
    fn par_chunks_mut(&mut self, size: usize) -> ChunksMut<'_, T>;

    /// Chunks of exactly `size` items as `&mut [T]`; the items left over are
    /// [`ChunksExactMut::into_remainder`]. Serial equivalent: `slice.chunks_exact_mut(size)`. Panics if `size` is 0.
    fn par_chunks_exact_mut(&mut self, size: usize) -> ChunksExactMut<'_, T>;
}

impl<T: Send> ParallelSliceMut<T> for [T] {
    fn par_chunks_mut(&mut self, size: usize) -> ChunksMut<'_, T> {
        let size = chunk_size("par_chunks_mut", size);
        ChunksMut { start: self.as_mut_ptr(), len: self.len(), size, _borrow: PhantomData }
    }
    fn par_chunks_exact_mut(&mut self, size: usize) -> ChunksExactMut<'_, T> {
        let size = chunk_size("par_chunks_exact_mut", size);
        let whole = self.len() - self.len() % size;
        let (chunks, remainder) = self.split_at_mut(whole);
        ChunksExactMut {
            chunks: ChunksMut { start: chunks.as_mut_ptr(), len: whole, size, _borrow: PhantomData },
            remainder,
        }
    }
}

/// [`ParallelSlice::par_chunks`].
#[derive(Clone, Copy, Debug)]
pub struct Chunks<'a, T> {
    slice: &'a [T],
    size: usize,
}

impl<'a, T> ParallelIterator for Chunks<'a, T> {
    type Item = &'a [T];
    fn positions(&self) -> usize {
        div_ceil(self.slice.len(), self.size)
    }
    unsafe fn produce(&self, position: usize) -> Option<&'a [T]> {
        // SAFETY: the caller keeps `get`'s contract, which is `produce`'s.
        Some(unsafe { self.get(position) })
    }
}
impl<'a, T> IndexedParallelIterator for Chunks<'a, T> {
    unsafe fn get(&self, position: usize) -> &'a [T] {
        let first = position * self.size;
        // `size.min(len - first)`, not `min(len, first + size)`: a slice of zero-sized items may be `usize::MAX` long.
        &self.slice[first..first + self.size.min(self.slice.len() - first)]
    }
}

/// [`ParallelSlice::par_chunks_exact`].
#[derive(Clone, Copy, Debug)]
pub struct ChunksExact<'a, T> {
    slice: &'a [T],
    remainder: &'a [T],
    size: usize,
}

impl<'a, T> ChunksExact<'a, T> {
    /// The last `len % size` items, which no chunk holds.
    pub fn remainder(&self) -> &'a [T] {
        self.remainder
    }
}

impl<'a, T> ParallelIterator for ChunksExact<'a, T> {
    type Item = &'a [T];
    fn positions(&self) -> usize {
        self.slice.len() / self.size
    }
    unsafe fn produce(&self, position: usize) -> Option<&'a [T]> {
        // SAFETY: the caller keeps `get`'s contract, which is `produce`'s.
        Some(unsafe { self.get(position) })
    }
}
impl<'a, T> IndexedParallelIterator for ChunksExact<'a, T> {
    unsafe fn get(&self, position: usize) -> &'a [T] {
        let first = position * self.size;
        &self.slice[first..first + self.size]
    }
}

/// [`ParallelSlice::par_windows`].
#[derive(Clone, Copy, Debug)]
pub struct Windows<'a, T> {
    slice: &'a [T],
    size: usize,
}

impl<'a, T> ParallelIterator for Windows<'a, T> {
    type Item = &'a [T];
    fn positions(&self) -> usize {
        // No `len + 1`: a slice of zero-sized items may be `usize::MAX` long.
        self.slice.len().checked_sub(self.size - 1).unwrap_or(0)
    }
    unsafe fn produce(&self, position: usize) -> Option<&'a [T]> {
        // SAFETY: the caller keeps `get`'s contract, which is `produce`'s.
        Some(unsafe { self.get(position) })
    }
}
impl<'a, T> IndexedParallelIterator for Windows<'a, T> {
    unsafe fn get(&self, position: usize) -> &'a [T] {
        &self.slice[position..position + self.size]
    }
}

/// [`ParallelSliceMut::par_chunks_mut`]: each chunk handed to one thread.
#[derive(Debug)]
pub struct ChunksMut<'a, T> {
    start: *mut T,
    len: usize,
    size: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: the iterator stands for `&'a mut [T]`, which may move to another thread when `T: Send`.
unsafe impl<T: Send> Send for ChunksMut<'_, T> {}
// SAFETY: threads sharing the iterator get `&mut [T]` to disjoint chunks only (each position is produced at most
// once per terminal, and chunks of distinct positions do not overlap), sound exactly when `T: Send`.
unsafe impl<T: Send> Sync for ChunksMut<'_, T> {}

impl<'a, T> ParallelIterator for ChunksMut<'a, T> {
    type Item = &'a mut [T];
    fn positions(&self) -> usize {
        div_ceil(self.len, self.size)
    }
    unsafe fn produce(&self, position: usize) -> Option<&'a mut [T]> {
        // SAFETY: the caller keeps `get`'s contract, which is `produce`'s.
        Some(unsafe { self.get(position) })
    }
}
impl<'a, T> IndexedParallelIterator for ChunksMut<'a, T> {
    unsafe fn get(&self, position: usize) -> &'a mut [T] {
        let first = position * self.size;
        let count = self.size.min(self.len - first);
        // SAFETY: `position < positions()`, so `first < len` and `first + count <= len`; the chunk is produced at most
        // once, and no other position's chunk overlaps it, so no other reference to these elements exists.
        unsafe { std::slice::from_raw_parts_mut(self.start.add(first), count) }
    }
}

/// [`ParallelSliceMut::par_chunks_exact_mut`].
#[derive(Debug)]
pub struct ChunksExactMut<'a, T> {
    chunks: ChunksMut<'a, T>,
    remainder: &'a mut [T],
}

// SAFETY: a shared `ChunksExactMut` gives access to its chunks only (the remainder needs `&mut self` or `self`), and
// those are `ChunksMut`'s: `Sync` when `T: Send`.
unsafe impl<T: Send> Sync for ChunksExactMut<'_, T> {}

impl<'a, T> ChunksExactMut<'a, T> {
    /// The last `len % size` items, which no chunk holds; the chunks are given up.
    pub fn into_remainder(self) -> &'a mut [T] {
        self.remainder
    }
    /// The last `len % size` items, once: later calls, and [`into_remainder`](Self::into_remainder), see an empty
    /// slice. The chunks stay usable, since the remainder is disjoint from them.
    pub fn take_remainder(&mut self) -> &'a mut [T] {
        std::mem::take(&mut self.remainder)
    }
}

impl<'a, T> ParallelIterator for ChunksExactMut<'a, T> {
    type Item = &'a mut [T];
    fn positions(&self) -> usize {
        self.chunks.positions()
    }
    unsafe fn produce(&self, position: usize) -> Option<&'a mut [T]> {
        // SAFETY: the caller's contract, passed on (every chunk is whole: `len` is a multiple of `size`).
        unsafe { self.chunks.produce(position) }
    }
}
impl<'a, T> IndexedParallelIterator for ChunksExactMut<'a, T> {
    unsafe fn get(&self, position: usize) -> &'a mut [T] {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.chunks.get(position) }
    }
}

// ---- The iterator traits and adaptors ----

/// A parallel iterator: positions `0..n`, each yielding an item or, past a `filter`, nothing.
///
/// Adaptors build the chain; [`with_pool`](Self::with_pool) or [`with_schedule`](Self::with_schedule) bind it
/// to a pool, and the terminal operations live on the bound [`Scheduled`].
pub trait ParallelIterator: Sized {
    /// What each position yields.
    type Item;

    /// The source's position count (items before any filter).
    #[doc(hidden)]
    fn positions(&self) -> usize;

    /// The item at `position`, or `None` where a filter dropped it.
    ///
    /// # Safety
    /// `position < self.positions()`, and each position is produced at most once per terminal operation.
    #[doc(hidden)]
    unsafe fn produce(&self, position: usize) -> Option<Self::Item>;

    /// Each item passed through `f`.
    fn map<R, F>(self, f: F) -> Map<Self, F>
    where
        F: Fn(Self::Item) -> R,
    {
        Map { base: self, f }
    }

    /// The items for which `predicate` holds; positions are kept, not renumbered.
    fn filter<F>(self, predicate: F) -> Filter<Self, F>
    where
        F: Fn(&Self::Item) -> bool,
    {
        Filter { base: self, predicate }
    }

    /// The items passed through `f`, those that give `Some`; positions are kept, not renumbered.
    fn filter_map<R, F>(self, f: F) -> FilterMap<Self, F>
    where
        F: Fn(Self::Item) -> Option<R>,
    {
        FilterMap { base: self, f }
    }

    /// Each item, after `f` saw it.
    fn inspect<F>(self, f: F) -> Inspect<Self, F>
    where
        F: Fn(&Self::Item),
    {
        Inspect { base: self, f }
    }

    /// Copies of the items `&T`.
    fn copied<'a, T>(self) -> Copied<Self>
    where
        T: 'a + Copy,
        Self: ParallelIterator<Item = &'a T>,
    {
        Copied { base: self }
    }

    /// Clones of the items `&T`.
    fn cloned<'a, T>(self) -> Cloned<Self>
    where
        T: 'a + Clone,
        Self: ParallelIterator<Item = &'a T>,
    {
        Cloned { base: self }
    }

    /// Binds the chain to `pool` (`&pool` or `&mut pool`) with the static schedule: one contiguous share of
    /// the positions per thread.
    fn with_pool<'p, P: AsPool<'p>>(self, pool: P) -> Scheduled<'p, Self, StaticScheduler> {
        self.with_schedule(pool, StaticScheduler)
    }

    /// Binds the chain to `pool` with `schedule`: [`StaticScheduler`] or [`DynamicScheduler`].
    fn with_schedule<'p, P: AsPool<'p>, S: Scheduler>(self, pool: P, schedule: S) -> Scheduled<'p, Self, S> {
        Scheduled { iter: self, pool: pool.into_pool(), schedule, grain: None }
    }
}

/// A parallel iterator with an item at every position: no `filter` in the chain. Only these zip and enumerate.
pub trait IndexedParallelIterator: ParallelIterator {
    /// The item at `position`.
    ///
    /// # Safety
    /// As for [`ParallelIterator::produce`].
    #[doc(hidden)]
    unsafe fn get(&self, position: usize) -> Self::Item;

    /// Pairs of items at equal positions; as long as the shorter one.
    fn zip<B>(self, other: B) -> Zip<Self, B::Iter>
    where
        B: IntoParallelIterator,
        B::Iter: IndexedParallelIterator,
    {
        Zip { a: self, b: other.into_par_iter() }
    }

    /// [`zip`](Self::zip) for iterators of equal length: panics, before anything runs, when the lengths differ.
    fn zip_eq<B>(self, other: B) -> Zip<Self, B::Iter>
    where
        B: IntoParallelIterator,
        B::Iter: IndexedParallelIterator,
    {
        let other = other.into_par_iter();
        let (left, right) = (self.positions(), other.positions());
        assert!(left == right, "forkunion: zip_eq of iterators of {} and {} items", left, right);
        Zip { a: self, b: other }
    }

    /// `(position, item)` pairs.
    fn enumerate(self) -> Enumerate<Self> {
        Enumerate { base: self }
    }

    /// The first `n` items (all of them when there are fewer).
    fn take(self, n: usize) -> Take<Self> {
        Take { base: self, n }
    }

    /// The items after the first `n` (none when there are fewer).
    fn skip(self, n: usize) -> Skip<Self> {
        Skip { base: self, n }
    }

    /// The items in reverse order: position `p` yields the item at `len - 1 - p`.
    fn rev(self) -> Rev<Self> {
        Rev { base: self }
    }

    /// Every `step`-th item, starting with the first. Panics, before anything runs, if `step` is 0.
    fn step_by(self, step: usize) -> StepBy<Self> {
        assert!(step > 0, "forkunion: step_by with a step of 0");
        StepBy { base: self, step }
    }

    /// The number of items.
    fn len(&self) -> usize {
        self.positions()
    }

    /// Whether there are no items.
    fn is_empty(&self) -> bool {
        self.positions() == 0
    }
}

/// [`ParallelIterator::map`].
#[derive(Clone, Debug)]
pub struct Map<I, F> {
    base: I,
    f: F,
}

impl<I: ParallelIterator, R, F: Fn(I::Item) -> R> ParallelIterator for Map<I, F> {
    type Item = R;
    fn positions(&self) -> usize {
        self.base.positions()
    }
    unsafe fn produce(&self, position: usize) -> Option<R> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.base.produce(position) }.map(&self.f)
    }
}
impl<I: IndexedParallelIterator, R, F: Fn(I::Item) -> R> IndexedParallelIterator for Map<I, F> {
    unsafe fn get(&self, position: usize) -> R {
        // SAFETY: the caller's contract, passed on.
        (self.f)(unsafe { self.base.get(position) })
    }
}

/// [`ParallelIterator::filter`].
#[derive(Clone, Debug)]
pub struct Filter<I, F> {
    base: I,
    predicate: F,
}

impl<I: ParallelIterator, F: Fn(&I::Item) -> bool> ParallelIterator for Filter<I, F> {
    type Item = I::Item;
    fn positions(&self) -> usize {
        self.base.positions()
    }
    unsafe fn produce(&self, position: usize) -> Option<I::Item> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.base.produce(position) }.filter(|item| (self.predicate)(item))
    }
}

/// [`IndexedParallelIterator::zip`].
#[derive(Clone, Debug)]
pub struct Zip<A, B> {
    a: A,
    b: B,
}

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> ParallelIterator for Zip<A, B> {
    type Item = (A::Item, B::Item);
    fn positions(&self) -> usize {
        self.a.positions().min(self.b.positions())
    }
    unsafe fn produce(&self, position: usize) -> Option<Self::Item> {
        // SAFETY: the caller keeps `get`'s contract, which is `produce`'s.
        Some(unsafe { self.get(position) })
    }
}
impl<A: IndexedParallelIterator, B: IndexedParallelIterator> IndexedParallelIterator for Zip<A, B> {
    unsafe fn get(&self, position: usize) -> Self::Item {
        // SAFETY: the caller's contract, passed on to both (`position` is below both lengths).
        unsafe { (self.a.get(position), self.b.get(position)) }
    }
}

/// [`IndexedParallelIterator::enumerate`].
#[derive(Clone, Debug)]
pub struct Enumerate<I> {
    base: I,
}

impl<I: IndexedParallelIterator> ParallelIterator for Enumerate<I> {
    type Item = (usize, I::Item);
    fn positions(&self) -> usize {
        self.base.positions()
    }
    unsafe fn produce(&self, position: usize) -> Option<Self::Item> {
        // SAFETY: the caller keeps `get`'s contract, which is `produce`'s.
        Some(unsafe { self.get(position) })
    }
}
impl<I: IndexedParallelIterator> IndexedParallelIterator for Enumerate<I> {
    unsafe fn get(&self, position: usize) -> Self::Item {
        // SAFETY: the caller's contract, passed on.
        (position, unsafe { self.base.get(position) })
    }
}

/// [`ParallelIterator::filter_map`].
#[derive(Clone, Debug)]
pub struct FilterMap<I, F> {
    base: I,
    f: F,
}

impl<I: ParallelIterator, R, F: Fn(I::Item) -> Option<R>> ParallelIterator for FilterMap<I, F> {
    type Item = R;
    fn positions(&self) -> usize {
        self.base.positions()
    }
    unsafe fn produce(&self, position: usize) -> Option<R> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.base.produce(position) }.and_then(&self.f)
    }
}

/// [`ParallelIterator::inspect`].
#[derive(Clone, Debug)]
pub struct Inspect<I, F> {
    base: I,
    f: F,
}

impl<I: ParallelIterator, F: Fn(&I::Item)> ParallelIterator for Inspect<I, F> {
    type Item = I::Item;
    fn positions(&self) -> usize {
        self.base.positions()
    }
    unsafe fn produce(&self, position: usize) -> Option<I::Item> {
        // SAFETY: the caller's contract, passed on.
        let item = unsafe { self.base.produce(position) };
        if let Some(item) = &item {
            (self.f)(item);
        }
        item
    }
}
impl<I: IndexedParallelIterator, F: Fn(&I::Item)> IndexedParallelIterator for Inspect<I, F> {
    unsafe fn get(&self, position: usize) -> I::Item {
        // SAFETY: the caller's contract, passed on.
        let item = unsafe { self.base.get(position) };
        (self.f)(&item);
        item
    }
}

/// [`ParallelIterator::copied`].
#[derive(Clone, Debug)]
pub struct Copied<I> {
    base: I,
}

impl<'a, T: 'a + Copy, I: ParallelIterator<Item = &'a T>> ParallelIterator for Copied<I> {
    type Item = T;
    fn positions(&self) -> usize {
        self.base.positions()
    }
    unsafe fn produce(&self, position: usize) -> Option<T> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.base.produce(position) }.copied()
    }
}
impl<'a, T: 'a + Copy, I: IndexedParallelIterator<Item = &'a T>> IndexedParallelIterator for Copied<I> {
    unsafe fn get(&self, position: usize) -> T {
        // SAFETY: the caller's contract, passed on.
        *unsafe { self.base.get(position) }
    }
}

/// [`ParallelIterator::cloned`].
#[derive(Clone, Debug)]
pub struct Cloned<I> {
    base: I,
}

impl<'a, T: 'a + Clone, I: ParallelIterator<Item = &'a T>> ParallelIterator for Cloned<I> {
    type Item = T;
    fn positions(&self) -> usize {
        self.base.positions()
    }
    unsafe fn produce(&self, position: usize) -> Option<T> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.base.produce(position) }.cloned()
    }
}
impl<'a, T: 'a + Clone, I: IndexedParallelIterator<Item = &'a T>> IndexedParallelIterator for Cloned<I> {
    unsafe fn get(&self, position: usize) -> T {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.base.get(position) }.clone()
    }
}

/// Index-remapping adaptors: position `p` of the adaptor is position `map(p)` of the base, a one-to-one map
/// into `0..base.positions()`, so each base position is still produced at most once.
macro_rules! remapped {
    ($name:ident, $doc:literal, { $($field:ident: $type:ty),* }, |$this:ident| $positions:expr, |$this2:ident, $p:ident| $map:expr) => {
        #[doc = $doc]
        #[derive(Clone, Debug)]
        pub struct $name<I> {
            base: I,
            $($field: $type,)*
        }
        impl<I: IndexedParallelIterator> ParallelIterator for $name<I> {
            type Item = I::Item;
            fn positions(&self) -> usize {
                let $this = self;
                $positions
            }
            unsafe fn produce(&self, position: usize) -> Option<I::Item> {
                // SAFETY: the caller keeps `get`'s contract, which is `produce`'s.
                Some(unsafe { self.get(position) })
            }
        }
        impl<I: IndexedParallelIterator> IndexedParallelIterator for $name<I> {
            unsafe fn get(&self, position: usize) -> I::Item {
                let ($this2, $p) = (self, position);
                // SAFETY: `position < positions()` maps to a distinct base position below the base's count.
                unsafe { self.base.get($map) }
            }
        }
    };
}
remapped!(Take, "[`IndexedParallelIterator::take`].", { n: usize }, |it| it.base.positions().min(it.n), |_it, p| p);
remapped!(
    Skip,
    "[`IndexedParallelIterator::skip`].",
    { n: usize },
    |it| it.base.positions().saturating_sub(it.n),
    |it, p| p + it.n
);
remapped!(Rev, "[`IndexedParallelIterator::rev`].", {}, |it| it.base.positions(), |it, p| it.base.positions() - 1 - p);
remapped!(
    StepBy,
    "[`IndexedParallelIterator::step_by`].",
    { step: usize },
    |it| div_ceil(it.base.positions(), it.step),
    |it, p| p * it.step
);

// ---- Binding to a pool ----

/// What [`ParallelIterator::with_pool`] accepts: `&ThreadPool` or `&mut ThreadPool`.
pub trait AsPool<'p> {
    /// The pool, shared.
    fn into_pool(self) -> &'p ThreadPool;
}
impl<'p> AsPool<'p> for &'p ThreadPool {
    fn into_pool(self) -> &'p ThreadPool {
        self
    }
}
impl<'p> AsPool<'p> for &'p mut ThreadPool {
    fn into_pool(self) -> &'p ThreadPool {
        self
    }
}

mod sealed {
    pub trait Sealed {}
}

/// How [`Scheduled::for_each`], [`Scheduled::reduce_with_scratch`] and the reductions' subtrees are split over
/// the threads: [`StaticScheduler`] or [`DynamicScheduler`]. Results of reductions do not depend on it.
pub trait Scheduler: Copy + sealed::Sealed {
    #[doc(hidden)]
    const DYNAMIC: bool;
}

/// Each thread takes one contiguous share (the pool's `for_slices` / `for_n` split): for work of even cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StaticScheduler;

/// Each thread drains its own share, then steals from the others, one position at a time unless
/// [`Scheduled::with_grain`] sets the claim size (the pool's `for_n_dynamic`): for work of uneven cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DynamicScheduler;

impl sealed::Sealed for StaticScheduler {}
impl sealed::Sealed for DynamicScheduler {}
impl Scheduler for StaticScheduler {
    const DYNAMIC: bool = false;
}
impl Scheduler for DynamicScheduler {
    const DYNAMIC: bool = true;
}

/// A parallel iterator bound to a pool and a schedule: adaptors continue the chain, terminals run it.
///
/// Every terminal joins before it returns, so the chain's closures may borrow the caller's data. They run on
/// several threads at once: they must be `Fn + Sync`, and what crosses back to the caller (sums, found items,
/// errors) must be `Send`. A panic in any of them aborts the process with a message (see the crate docs).
#[derive(Debug)]
#[must_use = "a bound iterator does nothing until a terminal operation such as for_each or sum"]
pub struct Scheduled<'p, I, S> {
    iter: I,
    pool: &'p ThreadPool,
    schedule: S,
    grain: Option<usize>,
}

impl<'p, I: ParallelIterator, S: Scheduler> Scheduled<'p, I, S> {
    /// Positions per block in reductions, searches and dynamic claims; must be at least 1.
    /// Reductions' results depend on it (see the module docs); the default is [`DEFAULT_GRAIN`] for
    /// reductions and searches, and 1 for the dynamic schedule's claims.
    pub fn with_grain(mut self, grain: usize) -> Self {
        assert!(grain > 0, "forkunion: a grain of 0 positions");
        self.grain = Some(grain);
        self
    }

    /// [`ParallelIterator::map`], keeping the binding.
    pub fn map<R, F: Fn(I::Item) -> R>(self, f: F) -> Scheduled<'p, Map<I, F>, S> {
        self.rebind(|iter| iter.map(f))
    }
    /// [`ParallelIterator::filter`], keeping the binding.
    pub fn filter<F: Fn(&I::Item) -> bool>(self, predicate: F) -> Scheduled<'p, Filter<I, F>, S> {
        self.rebind(|iter| iter.filter(predicate))
    }

    /// [`ParallelIterator::filter_map`], keeping the binding.
    pub fn filter_map<R, F: Fn(I::Item) -> Option<R>>(self, f: F) -> Scheduled<'p, FilterMap<I, F>, S> {
        self.rebind(|iter| iter.filter_map(f))
    }
    /// [`ParallelIterator::inspect`], keeping the binding.
    pub fn inspect<F: Fn(&I::Item)>(self, f: F) -> Scheduled<'p, Inspect<I, F>, S> {
        self.rebind(|iter| iter.inspect(f))
    }
    /// [`ParallelIterator::copied`], keeping the binding.
    pub fn copied<'a, T: 'a + Copy>(self) -> Scheduled<'p, Copied<I>, S>
    where
        I: ParallelIterator<Item = &'a T>,
    {
        self.rebind(|iter| iter.copied())
    }
    /// [`ParallelIterator::cloned`], keeping the binding.
    pub fn cloned<'a, T: 'a + Clone>(self) -> Scheduled<'p, Cloned<I>, S>
    where
        I: ParallelIterator<Item = &'a T>,
    {
        self.rebind(|iter| iter.cloned())
    }

    fn rebind<J>(self, adapt: impl FnOnce(I) -> J) -> Scheduled<'p, J, S> {
        Scheduled { iter: adapt(self.iter), pool: self.pool, schedule: self.schedule, grain: self.grain }
    }

    fn reduction_grain(&self) -> usize {
        self.grain.unwrap_or(DEFAULT_GRAIN)
    }
}

impl<'p, I: IndexedParallelIterator, S: Scheduler> Scheduled<'p, I, S> {
    /// [`IndexedParallelIterator::zip`], keeping the binding.
    pub fn zip<B>(self, other: B) -> Scheduled<'p, Zip<I, B::Iter>, S>
    where
        B: IntoParallelIterator,
        B::Iter: IndexedParallelIterator,
    {
        self.rebind(|iter| iter.zip(other))
    }
    /// [`IndexedParallelIterator::enumerate`], keeping the binding.
    pub fn enumerate(self) -> Scheduled<'p, Enumerate<I>, S> {
        self.rebind(|iter| iter.enumerate())
    }
    /// [`IndexedParallelIterator::zip_eq`], keeping the binding.
    pub fn zip_eq<B>(self, other: B) -> Scheduled<'p, Zip<I, B::Iter>, S>
    where
        B: IntoParallelIterator,
        B::Iter: IndexedParallelIterator,
    {
        self.rebind(|iter| iter.zip_eq(other))
    }
    /// [`IndexedParallelIterator::take`], keeping the binding.
    pub fn take(self, n: usize) -> Scheduled<'p, Take<I>, S> {
        self.rebind(|iter| iter.take(n))
    }
    /// [`IndexedParallelIterator::skip`], keeping the binding.
    pub fn skip(self, n: usize) -> Scheduled<'p, Skip<I>, S> {
        self.rebind(|iter| iter.skip(n))
    }
    /// [`IndexedParallelIterator::rev`], keeping the binding.
    pub fn rev(self) -> Scheduled<'p, Rev<I>, S> {
        self.rebind(|iter| iter.rev())
    }
    /// [`IndexedParallelIterator::step_by`], keeping the binding.
    pub fn step_by(self, step: usize) -> Scheduled<'p, StepBy<I>, S> {
        self.rebind(|iter| iter.step_by(step))
    }

    /// The items in position order, in a new vector. Serial equivalent: `iter.collect::<Vec<_>>()`.
    pub fn collect_vec(self) -> Vec<I::Item>
    where
        I: Sync,
        I::Item: Send,
    {
        let n = self.iter.positions();
        let mut items: Vec<I::Item> = Vec::with_capacity(n);
        let out = SyncPtr(items.as_mut_ptr());
        let iter = &self.iter;
        self.run_spans(n, |span, _| {
            for position in span {
                // SAFETY: each position is produced and written once, inside the reserved capacity.
                unsafe { out.get().add(position).write(iter.get(position)) };
            }
        });
        // SAFETY: every position in `0..n` was written (a panic would have aborted the process).
        unsafe { items.set_len(n) };
        items
    }
}

impl<'p, I, S> Scheduled<'p, I, S>
where
    I: ParallelIterator + Sync,
    S: Scheduler,
{
    /// Calls `f` on every item. Serial equivalent: `iter.for_each(f)`.
    pub fn for_each<F>(self, f: F)
    where
        F: Fn(I::Item) + Sync,
    {
        let iter = &self.iter;
        self.run_spans(iter.positions(), |span, _| {
            for position in span {
                // SAFETY: the spans partition `0..positions()`.
                if let Some(item) = unsafe { iter.produce(position) } {
                    f(item);
                }
            }
        });
    }

    /// Calls `f` on items until one returns an error, which is returned (another thread's error may win the race);
    /// the others stop claiming blocks once they see it. Serial equivalent: `iter.try_for_each(f)`, except that
    /// items past the error may still run.
    pub fn try_for_each<E, F>(self, f: F) -> Result<(), E>
    where
        E: Send,
        F: Fn(I::Item) -> Result<(), E> + Sync,
    {
        let iter = &self.iter;
        let probe = |position: usize| {
            // SAFETY: each position is probed at most once.
            unsafe { iter.produce(position) }.and_then(|item| f(item).err())
        };
        match search(self.pool, iter.positions(), self.reduction_grain(), Search::Any, &probe) {
            Some((_, error)) => Err(error),
            None => Ok(()),
        }
    }

    /// The number of items. Serial equivalent: `iter.count()`.
    pub fn count(self) -> usize {
        let iter = &self.iter;
        // SAFETY: the rule produces each position once.
        let start = |at: Prong| unsafe { iter.produce(at.task_index) }.is_some() as usize;
        self.reduce_blocks(&start, &|lane, at| lane + start(at), &|a, b| a + b).unwrap_or(0)
    }

    /// The sum of the items, reproducible (see the module docs). Serial equivalent: `iter.sum()`.
    pub fn sum<T>(self) -> T
    where
        T: Send + Sum<I::Item> + Sum<T>,
    {
        let iter = &self.iter;
        // SAFETY (both): the rule produces each position once.
        let start = |at: Prong| -> T { unsafe { iter.produce(at.task_index) }.into_iter().sum() };
        let step = |lane: T, at: Prong| -> T {
            match unsafe { iter.produce(at.task_index) } {
                Some(item) => [lane, std::iter::once(item).sum()].into_iter().sum(),
                None => lane,
            }
        };
        let combine = |a: T, b: T| -> T { [a, b].into_iter().sum() };
        self.reduce_blocks(&start, &step, &combine).unwrap_or_else(|| std::iter::empty::<T>().sum())
    }

    /// The product of the items, reproducible (see the module docs). Serial equivalent: `iter.product()`.
    pub fn product<T>(self) -> T
    where
        T: Send + Product<I::Item> + Product<T>,
    {
        let iter = &self.iter;
        // SAFETY (both): the rule produces each position once.
        let start = |at: Prong| -> T { unsafe { iter.produce(at.task_index) }.into_iter().product() };
        let step = |lane: T, at: Prong| -> T {
            match unsafe { iter.produce(at.task_index) } {
                Some(item) => [lane, std::iter::once(item).product()].into_iter().product(),
                None => lane,
            }
        };
        let combine = |a: T, b: T| -> T { [a, b].into_iter().product() };
        self.reduce_blocks(&start, &step, &combine).unwrap_or_else(|| std::iter::empty::<T>().product())
    }

    /// Folds every lane's items into its own `identity()` with `fold(&mut accumulator, item, prong)` and combines
    /// the lanes' and blocks' accumulators with `combine`, by the reproducible rule of the module docs;
    /// `identity()` for no items. `prong.task_index` is the item's position. Serial equivalent, for an associative
    /// and commutative `combine` whose identity is `identity()`: `iter.fold(identity(), |mut a, x| { fold(&mut a,
    /// x, ..); a })`.
    pub fn reduce<T, ID, FO, CO>(self, identity: ID, fold: FO, combine: CO) -> T
    where
        T: Send,
        ID: Fn() -> T + Sync,
        FO: Fn(&mut T, I::Item, Prong) + Sync,
        CO: Fn(T, T) -> T + Sync,
    {
        let iter = &self.iter;
        let step = |mut lane: T, at: Prong| {
            // SAFETY: the rule produces each position once.
            if let Some(item) = unsafe { iter.produce(at.task_index) } {
                fold(&mut lane, item, at);
            }
            lane
        };
        let start = |at: Prong| step(identity(), at);
        self.reduce_blocks(&start, &step, &combine).unwrap_or_else(|| no_unwind(&identity))
    }

    /// Folds each thread's items into its own slot, `scratch[prong.thread_index]`, with `fold`, then combines
    /// slots `1..threads_count()` into slot 0 in thread order with `combine(&mut scratch[0], &scratch[t])`, on
    /// the calling thread, and returns slot 0. Every slot should start as the identity; wrap slots in
    /// [`CacheAligned`] so that threads do not share lines. Which items a slot sees depends on the schedule and
    /// the thread count (this is not the reproducible tree). No allocation.
    ///
    /// Panics (before running anything) if `scratch` has fewer slots than the pool has threads.
    #[allow(clippy::needless_lifetimes)] // the slot returned lives as long as the scratch, not the pool
    pub fn reduce_with_scratch<'s, T, FO, CO>(self, scratch: &'s mut [T], fold: FO, combine: CO) -> &'s mut T
    where
        T: Send,
        FO: Fn(&mut T, I::Item, Prong) + Sync,
        CO: Fn(&mut T, &T),
    {
        let threads = self.pool.threads_count().max(1);
        assert!(
            scratch.len() >= threads,
            "forkunion: reduce_with_scratch needs a slot per thread: {} slots for {} threads",
            scratch.len(),
            threads
        );
        let slots = SyncPtr(scratch.as_mut_ptr());
        let iter = &self.iter;
        self.run_spans(iter.positions(), |span, prong| {
            // SAFETY: one thread per thread index runs at a time, so this slot is this thread's alone.
            let slot = unsafe { &mut *slots.get().add(prong.thread_index) };
            for position in span {
                // SAFETY: the spans partition `0..positions()`.
                if let Some(item) = unsafe { iter.produce(position) } {
                    fold(slot, item, Prong { task_index: position, ..prong });
                }
            }
        });
        let (first, rest) = scratch.split_first_mut().expect("at least one slot");
        no_unwind(|| rest[..threads - 1].iter().for_each(|other| combine(first, other)));
        first
    }

    /// The least item, the first of equals. Serial equivalent: `iter.min()`.
    pub fn min(self) -> Option<I::Item>
    where
        I::Item: Ord + Send,
    {
        self.best_by(|a, b| b < a)
    }

    /// The greatest item, the last of equals. Serial equivalent: `iter.max()`.
    pub fn max(self) -> Option<I::Item>
    where
        I::Item: Ord + Send,
    {
        self.best_by(|a, b| b >= a)
    }

    /// The item with the least key, the first of equals. Serial equivalent: `iter.min_by_key(key)`.
    pub fn min_by_key<K, F>(self, key: F) -> Option<I::Item>
    where
        I::Item: Send,
        K: Ord + Send,
        F: Fn(&I::Item) -> K + Sync,
    {
        self.map(|item| (key(&item), item)).best_by(|a, b| b.0 < a.0).map(|(_, item)| item)
    }

    /// The item with the greatest key, the last of equals. Serial equivalent: `iter.max_by_key(key)`.
    pub fn max_by_key<K, F>(self, key: F) -> Option<I::Item>
    where
        I::Item: Send,
        K: Ord + Send,
        F: Fn(&I::Item) -> K + Sync,
    {
        self.map(|item| (key(&item), item)).best_by(|a, b| b.0 >= a.0).map(|(_, item)| item)
    }

    /// Some item for which `predicate` holds, found by whichever thread got there first; every thread stops
    /// claiming blocks once one is found.
    pub fn find_any<P>(self, predicate: P) -> Option<I::Item>
    where
        I::Item: Send,
        P: Fn(&I::Item) -> bool + Sync,
    {
        self.find(Search::Any, predicate)
    }

    /// The item at the lowest position for which `predicate` holds. Serial equivalent: `iter.find(predicate)`.
    pub fn find_first<P>(self, predicate: P) -> Option<I::Item>
    where
        I::Item: Send,
        P: Fn(&I::Item) -> bool + Sync,
    {
        self.find(Search::First, predicate)
    }

    /// The item at the highest position for which `predicate` holds. Serial equivalent:
    /// `iter.filter(predicate).last()`.
    pub fn find_last<P>(self, predicate: P) -> Option<I::Item>
    where
        I::Item: Send,
        P: Fn(&I::Item) -> bool + Sync,
    {
        self.find(Search::Last, predicate)
    }

    /// Whether `predicate` holds for some item; stops at the first one found. Serial equivalent:
    /// `iter.any(predicate)`.
    pub fn any<P>(self, predicate: P) -> bool
    where
        P: Fn(I::Item) -> bool + Sync,
    {
        let iter = &self.iter;
        // SAFETY: each position is probed at most once.
        let probe = |position: usize| match unsafe { iter.produce(position) } {
            Some(item) => Some(()).filter(|_| predicate(item)),
            None => None,
        };
        search(self.pool, iter.positions(), self.reduction_grain(), Search::Any, &probe).is_some()
    }

    /// Whether `predicate` holds for every item; stops at the first counterexample found. Serial equivalent:
    /// `iter.all(predicate)`.
    pub fn all<P>(self, predicate: P) -> bool
    where
        P: Fn(I::Item) -> bool + Sync,
    {
        !self.any(|item| !predicate(item))
    }

    /// The least item by `compare`, the first of equals. Serial equivalent: `iter.min_by(compare)`.
    pub fn min_by<F>(self, compare: F) -> Option<I::Item>
    where
        I::Item: Send,
        F: Fn(&I::Item, &I::Item) -> std::cmp::Ordering + Sync,
    {
        self.best_by(|a, b| compare(b, a) == std::cmp::Ordering::Less)
    }

    /// The greatest item by `compare`, the last of equals. Serial equivalent: `iter.max_by(compare)`.
    pub fn max_by<F>(self, compare: F) -> Option<I::Item>
    where
        I::Item: Send,
        F: Fn(&I::Item, &I::Item) -> std::cmp::Ordering + Sync,
    {
        self.best_by(|a, b| compare(b, a) != std::cmp::Ordering::Less)
    }

    /// Some `Some` value of `f`, from whichever item a thread reached first; every thread stops claiming blocks
    /// once one is found.
    pub fn find_map_any<R, F>(self, f: F) -> Option<R>
    where
        R: Send,
        F: Fn(I::Item) -> Option<R> + Sync,
    {
        self.find_map(Search::Any, f)
    }

    /// The `Some` value of `f` at the lowest position. Serial equivalent: `iter.find_map(f)`.
    pub fn find_map_first<R, F>(self, f: F) -> Option<R>
    where
        R: Send,
        F: Fn(I::Item) -> Option<R> + Sync,
    {
        self.find_map(Search::First, f)
    }

    /// The `Some` value of `f` at the highest position. Serial equivalent: `iter.filter_map(f).last()`.
    pub fn find_map_last<R, F>(self, f: F) -> Option<R>
    where
        R: Send,
        F: Fn(I::Item) -> Option<R> + Sync,
    {
        self.find_map(Search::Last, f)
    }

    /// The items in position order, gathered into any collection. Serial equivalent: `iter.collect()`.
    ///
    /// Threads gather up to [`MAX_REDUCTION_TASKS`] runs of whole blocks (of [`with_grain`](Self::with_grain)
    /// positions, [`DEFAULT_GRAIN`] by default) into a vector each, which the caller then feeds to
    /// `C::from_iter` in order; so this allocates those vectors besides the collection. An indexed chain that
    /// wants a `Vec` gets one allocation, and no copy, from [`collect_vec`](Self::collect_vec).
    pub fn collect<C>(self) -> C
    where
        C: FromIterator<I::Item>,
        I::Item: Send,
    {
        let iter = &self.iter;
        let n = iter.positions();
        let grain = self.reduction_grain();
        let plan = TreePlan::new(n, grain);
        let gather = |task: usize| -> Vec<I::Item> {
            let (first, last) = plan.subtree(task);
            // SAFETY: subtrees partition the blocks, and blocks the positions: each position is produced once.
            (first * grain..n.min(last.saturating_mul(grain)))
                .filter_map(|position| unsafe { iter.produce(position) })
                .collect()
        };
        if plan.tasks <= 1 {
            return no_unwind(|| (0..plan.tasks).flat_map(gather).collect());
        }
        let mut parts: Vec<Option<Vec<I::Item>>> = (0..plan.tasks).map(|_| None).collect();
        let out = SyncPtr(parts.as_mut_ptr());
        let task = |prong: Prong| {
            let part = gather(prong.task_index);
            // SAFETY: each task index runs once and writes only its own slot.
            unsafe { *out.get().add(prong.task_index) = Some(part) };
        };
        if S::DYNAMIC {
            self.pool.for_n_dynamic_or_run_on_caller(plan.tasks, task);
        } else {
            self.pool.for_n_or_run_on_caller(plan.tasks, task);
        }
        no_unwind(|| parts.into_iter().flat_map(|part| part.expect("every part was gathered")).collect())
    }

    fn find_map<R, F>(self, kind: Search, f: F) -> Option<R>
    where
        R: Send,
        F: Fn(I::Item) -> Option<R> + Sync,
    {
        let iter = &self.iter;
        // SAFETY: each position is probed at most once.
        let probe = |position: usize| unsafe { iter.produce(position) }.and_then(&f);
        search(self.pool, iter.positions(), self.reduction_grain(), kind, &probe).map(|(_, value)| value)
    }

    fn find<P>(self, kind: Search, predicate: P) -> Option<I::Item>
    where
        I::Item: Send,
        P: Fn(&I::Item) -> bool + Sync,
    {
        let iter = &self.iter;
        // SAFETY: each position is probed at most once.
        let probe = |position: usize| unsafe { iter.produce(position) }.filter(|item| predicate(item));
        search(self.pool, iter.positions(), self.reduction_grain(), kind, &probe).map(|(_, item)| item)
    }

    /// The reproducible reduction of the items with `keep_second(a, b)`: whether `b`, later in position order,
    /// replaces `a`. Candidates carry their positions, since lanes interleave them.
    fn best_by(self, keep_second: impl Fn(&I::Item, &I::Item) -> bool + Sync) -> Option<I::Item>
    where
        I::Item: Send,
    {
        let iter = &self.iter;
        let pick = |a: Option<(usize, I::Item)>, b: Option<(usize, I::Item)>| match (a, b) {
            (Some(a), Some(b)) => {
                let (earlier, later) = if a.0 < b.0 { (a, b) } else { (b, a) };
                Some(if keep_second(&earlier.1, &later.1) { later } else { earlier })
            }
            (a, None) => a,
            (None, b) => b,
        };
        // SAFETY: the rule produces each position once.
        let start = |at: Prong| unsafe { iter.produce(at.task_index) }.map(|item| (at.task_index, item));
        let step = |best, at: Prong| pick(best, start(at));
        self.reduce_blocks(&start, &step, &pick).flatten().map(|(_, item)| item)
    }
}

impl<'p, I, S> Scheduled<'p, I, S>
where
    I: IndexedParallelIterator + Sync,
    S: Scheduler,
{
    /// The position of some item for which `predicate` holds, found by whichever thread got there first.
    pub fn position_any<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(I::Item) -> bool + Sync,
    {
        self.position(Search::Any, predicate)
    }

    /// The lowest position whose item satisfies `predicate`. Serial equivalent: `iter.position(predicate)`.
    pub fn position_first<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(I::Item) -> bool + Sync,
    {
        self.position(Search::First, predicate)
    }

    /// The highest position whose item satisfies `predicate`. Serial equivalent: `iter.rposition(predicate)`.
    pub fn position_last<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(I::Item) -> bool + Sync,
    {
        self.position(Search::Last, predicate)
    }

    fn position<P>(self, kind: Search, predicate: P) -> Option<usize>
    where
        P: Fn(I::Item) -> bool + Sync,
    {
        let iter = &self.iter;
        // SAFETY: each position is probed at most once, and is below `positions()`.
        let probe = |position: usize| Some(()).filter(|_| predicate(unsafe { iter.get(position) }));
        search(self.pool, iter.positions(), self.reduction_grain(), kind, &probe).map(|(position, _)| position)
    }
}

impl<'p, I: ParallelIterator, S: Scheduler> Scheduled<'p, I, S> {
    /// Runs `body(span, prong)` over spans partitioning `0..n`: one per thread (static), or claims of `grain`
    /// positions, 1 by default (dynamic). On the caller alone when the pool refuses.
    fn run_spans<B>(&self, n: usize, body: B)
    where
        B: Fn(Range<usize>, Prong) + Sync,
    {
        if S::DYNAMIC {
            let grain = self.grain.unwrap_or(1);
            let claims = div_ceil(n, grain);
            self.pool.for_n_dynamic_or_run_on_caller(claims, |prong| {
                let first = prong.task_index * grain;
                body(first..n.min(first + grain), Prong { task_index: first, ..prong });
            });
        } else {
            self.pool
                .for_slices_or_run_on_caller(n, |prong, count| body(prong.task_index..prong.task_index + count, prong));
        }
    }

    /// The reproducible reduction of the module docs: a lane starts as `start(at)` and takes the next position as
    /// `step(lane, at)` (`at.task_index` is the position), and `combine` joins two values in the fixed tree.
    /// `None` when there are no positions.
    fn reduce_blocks<T, B, F, C>(&self, start: &B, step: &F, combine: &C) -> Option<T>
    where
        T: Send,
        B: Fn(Prong) -> T + Sync,
        F: Fn(T, Prong) -> T + Sync,
        C: Fn(T, T) -> T + Sync,
    {
        let n = self.iter.positions();
        let grain = self.reduction_grain();
        let plan = TreePlan::new(n, grain);
        if plan.blocks == 0 {
            return None;
        }
        let block = |index: usize, prong: Prong| {
            let first = index * grain;
            reduce_block(first, first + grain.min(n - first), prong, start, step, combine)
        };
        let subtree = |task: usize, prong: Prong| {
            let (first, last) = plan.subtree(task);
            fold_tree(first, last, &mut |index| block(index, prong), combine)
        };
        if plan.tasks == 1 {
            return Some(no_unwind(|| subtree(0, ThreadPool::caller_prong(0))));
        }
        let mut partials: Vec<Option<T>> = (0..plan.tasks).map(|_| None).collect();
        let out = SyncPtr(partials.as_mut_ptr());
        let task = |prong: Prong| {
            let partial = subtree(prong.task_index, prong);
            // SAFETY: each task index runs once and writes only its own slot.
            unsafe { *out.get().add(prong.task_index) = Some(partial) };
        };
        if S::DYNAMIC {
            self.pool.for_n_dynamic_or_run_on_caller(plan.tasks, task);
        } else {
            self.pool.for_n_or_run_on_caller(plan.tasks, task);
        }
        Some(no_unwind(|| {
            fold_tree(0, plan.tasks, &mut |index| partials[index].take().expect("every subtree ran"), combine)
        }))
    }
}

// ---- The reduction tree ----

/// How a reduction over `n` positions splits: `blocks` of `grain`, grouped into `tasks` subtrees of `chunk`
/// blocks (a power of two, the smallest that keeps `tasks <= MAX_REDUCTION_TASKS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TreePlan {
    blocks: usize,
    chunk: usize,
    tasks: usize,
}

impl TreePlan {
    fn new(n: usize, grain: usize) -> TreePlan {
        let blocks = div_ceil(n, grain);
        let mut chunk = 1usize;
        while div_ceil(blocks, chunk) > MAX_REDUCTION_TASKS {
            chunk *= 2;
        }
        TreePlan { blocks, chunk, tasks: div_ceil(blocks, chunk) }
    }

    /// The blocks `[first, last)` of subtree `task`. Every split of the whole tree falls on a multiple of
    /// `chunk` until the ranges are `chunk` long, so these are exactly the whole tree's nodes at that depth.
    fn subtree(&self, task: usize) -> (usize, usize) {
        let first = task * self.chunk;
        (first, self.blocks.min(first + self.chunk))
    }
}

/// Steps 2 and 4 of the rule: the value of the block `[first, last)` (`first < last`). Lane `j` starts as
/// `start(first + j)` and takes positions `first + j + W, first + j + 2W, ...` with `step`; the block's value is the
/// tree of its lanes.
fn reduce_block<T, B, F, C>(first: usize, last: usize, prong: Prong, start: &B, step: &F, combine: &C) -> T
where
    B: Fn(Prong) -> T,
    F: Fn(T, Prong) -> T,
    C: Fn(T, T) -> T,
{
    let w = Lanes::<T>::W; // a constant, so the lanes' loop unrolls and the slices below need no bounds check
    let at = |position: usize| Prong { task_index: position, ..prong };
    if last - first < w {
        // A lane per position, each holding one item: the block is their tree.
        return fold_tree(first, last, &mut |position| start(at(position)), combine);
    }
    // The lanes are `W` independent accumulators side by side, indexed by constants once the inner loop is
    // unrolled, so they live in registers and a `f64` sum's loop vectorizes. Each step moves a lane out and
    // writes the result back: `MaybeUninit`, so that a panic in between (which aborts the process anyway) could
    // only leak a lane, never drop one twice. Only the first `w` of the array's lanes are ever initialized.
    let mut lanes: [MaybeUninit<T>; REDUCTION_LANES] = std::array::from_fn(|_| MaybeUninit::uninit());
    for (j, lane) in lanes[..w].iter_mut().enumerate() {
        lane.write(start(at(first + j)));
    }
    let mut offset = first + w;
    while last - offset >= w {
        for (j, lane) in lanes[..w].iter_mut().enumerate() {
            // SAFETY: the first `w` lanes are initialized between steps.
            let value = unsafe { lane.assume_init_read() };
            lane.write(step(value, at(offset + j)));
        }
        offset += w;
    }
    finish_block(lanes, w, offset..last, prong, step, combine)
}

/// The rest of [`reduce_block`]: the last `span.len() < w` positions go to lanes `0..span.len()`, then step 3
/// folds the `w` lanes, consuming them. Out of line, and given the lanes by value, so that the lanes' loop keeps
/// them in registers: inlined, this code's variable indices and pairs kept the lanes in memory or made the
/// vectorizer shuffle them inside that loop (seen in `f64` sums' machine code).
#[inline(never)]
fn finish_block<T, F, C>(
    mut lanes: [MaybeUninit<T>; REDUCTION_LANES],
    w: usize,
    span: Range<usize>,
    prong: Prong,
    step: &F,
    combine: &C,
) -> T
where
    F: Fn(T, Prong) -> T,
    C: Fn(T, T) -> T,
{
    for (lane, position) in lanes[..w].iter_mut().zip(span) {
        // SAFETY: the first `w` lanes are initialized between steps.
        let value = unsafe { lane.assume_init_read() };
        lane.write(step(value, Prong { task_index: position, ..prong }));
    }
    // Step 3 in place: `lanes[i] = lanes[i] ⊕ lanes[i + s]`.
    let mut s = 1;
    while s < w {
        let mut i = 0;
        while i + s < w {
            // SAFETY: lanes `i` and `i + s` are initialized; lane `i + s` is never read again.
            let (left, right) = unsafe { (lanes[i].assume_init_read(), lanes[i + s].assume_init_read()) };
            lanes[i].write(combine(left, right));
            i += 2 * s;
        }
        s *= 2;
    }
    // SAFETY: lane 0 holds the tree's value.
    unsafe { lanes[0].assume_init_read() }
}

/// Combines `leaf(first) .. leaf(last - 1)` in the fixed tree: `[lo, hi)` splits at `lo` plus the largest power of
/// two below `hi - lo`. `first < last`.
fn fold_tree<T>(first: usize, last: usize, leaf: &mut impl FnMut(usize) -> T, combine: &impl Fn(T, T) -> T) -> T {
    if last - first == 1 {
        return leaf(first);
    }
    let middle = first + largest_power_of_two_below(last - first);
    let left = fold_tree(first, middle, leaf, combine);
    let right = fold_tree(middle, last, leaf, combine);
    combine(left, right)
}

/// The largest power of two strictly below `count` (`count >= 2`).
fn largest_power_of_two_below(count: usize) -> usize {
    1 << (usize::BITS - 1 - (count - 1).leading_zeros())
}

fn div_ceil(value: usize, divisor: usize) -> usize {
    value / divisor + (value % divisor != 0) as usize
}

// ---- Searches: blocks claimed in position order from one cursor ----

#[derive(Clone, Copy, PartialEq, Eq)]
enum Search {
    /// Any hit; everyone stops at the first.
    Any,
    /// The hit at the lowest position.
    First,
    /// The hit at the highest position.
    Last,
}

/// Probes positions `0..n` in blocks of `grain` and returns a hit `(position, value)` of `probe`, by `kind`.
///
/// Blocks come from one cursor, in position order (backwards for `Last`), so a thread stops claiming once the
/// next block lies past the best hit so far. `best` is only a hint for skipping (relaxed): the answer itself
/// travels under the slot's lock, and the dispatch's join publishes it to the caller.
fn search<R, P>(pool: &ThreadPool, n: usize, grain: usize, kind: Search, probe: &P) -> Option<(usize, R)>
where
    R: Send,
    P: Fn(usize) -> Option<R> + Sync,
{
    let blocks = div_ceil(n, grain);
    if blocks == 0 {
        return None;
    }
    let cursor = CacheAligned(AtomicUsize::new(0));
    // First: the lowest hit's position (`usize::MAX`: none). Last: one past the highest hit (0: none).
    let best = CacheAligned(AtomicUsize::new(if kind == Search::Last { 0 } else { usize::MAX }));
    let found = CacheAligned(AtomicBool::new(false));
    let slot: SpinMutex<Option<(usize, R)>> = SpinMutex::new(None);

    let worker = |_thread: usize, _domain: usize| loop {
        // Relaxed: the cursor only hands out distinct blocks; nothing is published through it.
        let claim = cursor.fetch_add(1, Ordering::Relaxed);
        if claim >= blocks || (kind == Search::Any && found.load(Ordering::Relaxed)) {
            return;
        }
        let block = if kind == Search::Last { blocks - 1 - claim } else { claim };
        let first = block * grain;
        let last = n.min(first + grain);
        let past_best = match kind {
            Search::First => first > best.load(Ordering::Relaxed),
            Search::Last => last <= best.load(Ordering::Relaxed),
            Search::Any => false,
        };
        if past_best {
            return; // every later claim lies further past it
        }
        let mut scan = |position: usize| -> bool {
            match probe(position) {
                Some(value) => {
                    let mut kept = slot.lock();
                    let better = match (&*kept, kind) {
                        (None, _) => true,
                        (Some((held, _)), Search::First) => position < *held,
                        (Some((held, _)), Search::Last) => position > *held,
                        (Some(_), Search::Any) => false,
                    };
                    if better {
                        *kept = Some((position, value));
                    }
                    drop(kept);
                    match kind {
                        Search::First => {
                            best.fetch_min(position, Ordering::Relaxed);
                        }
                        Search::Last => {
                            best.fetch_max(position + 1, Ordering::Relaxed);
                        }
                        Search::Any => found.store(true, Ordering::Relaxed),
                    }
                    true
                }
                None => false,
            }
        };
        let hit = if kind == Search::Last { (first..last).rev().any(&mut scan) } else { (first..last).any(&mut scan) };
        if hit {
            return; // this thread's later claims lie past its own hit
        }
    };
    pool.for_threads_or_run_on_caller(worker);
    slot.into_inner()
}

/// A pointer the threads of one dispatch write through, each to its own elements.
struct SyncPtr<T>(*mut T);

impl<T> SyncPtr<T> {
    fn get(&self) -> *mut T {
        self.0
    }
}

// SAFETY: every use writes distinct elements from distinct threads, handing each `T` to one thread: `T: Send`.
unsafe impl<T: Send> Sync for SyncPtr<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree as text: "(ab)" joins a and b.
    fn shape(first: usize, last: usize) -> String {
        fold_tree(first, last, &mut |index| index.to_string() + ";", &|a, b| format!("({}{})", a, b))
    }

    #[test]
    fn subtrees_are_nodes_of_the_whole_tree() {
        for blocks in (1..2100).chain([4095, 4096, 4097, 100_000]) {
            let plan = TreePlan::new(blocks, 1);
            assert!(plan.tasks <= MAX_REDUCTION_TASKS && plan.chunk.is_power_of_two());
            let whole = shape(0, blocks);
            let composed = fold_tree(
                0,
                plan.tasks,
                &mut |task| {
                    let (first, last) = plan.subtree(task);
                    shape(first, last)
                },
                &|a, b| format!("({}{})", a, b),
            );
            assert_eq!(whole, composed, "{} blocks", blocks);
        }
    }

    #[test]
    fn tree_splits_at_powers_of_two() {
        assert_eq!(shape(0, 1), "0;");
        assert_eq!(shape(0, 3), "((0;1;)2;)");
        assert_eq!(shape(0, 5), "(((0;1;)(2;3;))4;)");
        assert_eq!(largest_power_of_two_below(2), 1);
        assert_eq!(largest_power_of_two_below(4), 2);
        assert_eq!(largest_power_of_two_below(5), 4);
        assert_eq!(largest_power_of_two_below(usize::MAX), 1 << (usize::BITS - 1));
    }

    /// A block as text: a lane is its positions joined by '.', and "(a b)" joins a and b. The lanes are boxed
    /// strings, 8 bytes, so they get the 16 lanes of an `f64`.
    fn block_shape(first: usize, last: usize) -> String {
        let prong = ThreadPool::caller_prong(0);
        let start = |at: Prong| Box::new(at.task_index.to_string());
        let step = |lane: Box<String>, at: Prong| Box::new(format!("{}.{}", lane, at.task_index));
        *reduce_block(first, last, prong, &start, &step, &|a, b| Box::new(format!("({} {})", a, b)))
    }

    /// The same with 16-byte lanes (a boxed string and a count), which get 4 lanes.
    fn wide_block_shape(first: usize, last: usize) -> String {
        let prong = ThreadPool::caller_prong(0);
        let start = |at: Prong| (Box::new(at.task_index.to_string()), 1u64);
        let step =
            |lane: (Box<String>, u64), at: Prong| (Box::new(format!("{}.{}", lane.0, at.task_index)), lane.1 + 1);
        let join = |a: (Box<String>, u64), b: (Box<String>, u64)| (Box::new(format!("({} {})", a.0, b.0)), a.1 + b.1);
        let (text, count) = reduce_block(first, last, prong, &start, &step, &join);
        assert_eq!(count, (last - first) as u64, "every position once");
        *text
    }

    #[test]
    fn lanes_depend_on_the_size_of_the_value_alone() {
        assert_eq!(reduction_lanes::<f64>(), 16);
        assert_eq!(reduction_lanes::<(Box<String>, u64)>(), 4);
        assert_eq!(reduction_lanes::<String>(), 2);
        assert_eq!(wide_block_shape(0, 3), "((0 1) 2)");
        assert_eq!(wide_block_shape(0, 10), "((0.4.8 1.5.9) (2.6 3.7))");
    }

    #[test]
    fn blocks_fold_lanes_then_join_them_in_the_tree() {
        assert_eq!(block_shape(7, 8), "7");
        assert_eq!(block_shape(0, 3), "((0 1) 2)");
        assert_eq!(block_shape(0, 18), "((((0.16 1.17) (2 3)) ((4 5) (6 7))) (((8 9) (10 11)) ((12 13) (14 15))))");
        assert_eq!(
            block_shape(100, 134),
            "((((100.116.132 101.117.133) (102.118 103.119)) ((104.120 105.121) (106.122 107.123))) \
             (((108.124 109.125) (110.126 111.127)) ((112.128 113.129) (114.130 115.131))))"
        );
    }

    #[test]
    fn plans_depend_on_positions_and_grain_only() {
        assert_eq!(TreePlan::new(0, 1024), TreePlan { blocks: 0, chunk: 1, tasks: 0 });
        assert_eq!(TreePlan::new(1, 1024), TreePlan { blocks: 1, chunk: 1, tasks: 1 });
        assert_eq!(TreePlan::new(1024 * 512, 1024), TreePlan { blocks: 512, chunk: 1, tasks: 512 });
        assert_eq!(TreePlan::new(1024 * 512 + 1, 1024), TreePlan { blocks: 513, chunk: 2, tasks: 257 });
        assert_eq!(TreePlan::new(usize::MAX, 1).tasks, 512);
    }
}
