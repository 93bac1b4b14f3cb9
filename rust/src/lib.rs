//! Rust bindings of forkunion: a NUMA-aware fork-join thread pool for `#pragma omp parallel for`-style loops,
//! over its C API (`include/forkunion.h`), plus Rayon-style parallel iterators that run on an explicit pool.
//!
//! ```
//! use forkunion as fu;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//!
//! let topology = fu::Topology::new().expect("the machine's topology");
//! let pool = fu::spawn(&topology, 2);
//! let mut squares = vec![0usize; 100];
//! let out = fu::SpinMutex::new(&mut squares);
//! pool.for_n(100, |prong| out.lock()[prong.task_index] = prong.task_index * prong.task_index).unwrap();
//! assert_eq!(squares[9], 81);
//!
//! use fu::prelude::*;
//! let sum: usize = (0..1000usize).into_par_iter().with_pool(&pool).sum();
//! assert_eq!(sum, 499500);
//! let calls = AtomicUsize::new(0);
//! pool.for_threads(|_thread, _compute_domain| {
//!     calls.fetch_add(1, Ordering::Relaxed);
//! })
//! .unwrap();
//! assert_eq!(calls.into_inner(), 2);
//! ```
//!
//! # What is here
//! - [`Topology`]: compute domains ([`ComputeDomain`]) and memory domains ([`MemoryDomain`]) of the machine, or
//!   of a recorded sysfs tree ([`Topology::from_sysfs`]).
//! - [`ThreadPool`]: [`spawn`], [`ThreadPool::try_named_spawn`], [`ThreadPool::builder`]; the blocking verbs
//!   [`for_threads`](ThreadPool::for_threads), [`for_n`](ThreadPool::for_n),
//!   [`for_n_dynamic`](ThreadPool::for_n_dynamic), [`for_slices`](ThreadPool::for_slices), each calling its
//!   closure with a [`Prong`] (task index, thread index, compute domain); the same verbs that
//!   `_or_run_on_caller` when refused; [`broadcast`](ThreadPool::broadcast), which overlaps the caller's work
//!   with the workers', and its unsafe split form; the [`IdlePolicy`] (spin, adaptive, nap, sleep) and the
//!   workers' stack size ([`PoolBuilder::stack_size`]).
//! - Memory on a domain: [`Allocation`], [`ShardedArray`] (one shard per memory domain) and [`ReplicatedArray`]
//!   (one copy per memory domain); [`Fabric`], the measured latencies and bandwidths.
//! - [`SpinMutex`] and [`CacheAligned`], for callbacks that merge results.
//! - [`comptime_capabilities`], [`runtime_capabilities`], [`name_capabilities`] and [`version`].
//! - [`prelude`]: the parallel iterators (`into_par_iter`, `with_pool`, `with_schedule`, `map`, `filter`, `zip`,
//!   `for_each`, `sum`, `reduce`, `min`, `find_first`, ...); see [`iter`] for their schedules and guarantees.
//!
//! # Safe by construction
//! - **Borrowing**: every blocking verb and every iterator terminal returns only after all its callbacks
//!   returned, so closures borrow the caller's stack freely; nothing needs `'static`, `Arc` or boxing, and the
//!   closure itself is never copied or allocated.
//! - **`Send` and `Sync`, exactly as the threading needs**: a callback runs on several threads at once through a
//!   shared reference, so it must be `Fn + Sync` (an `FnMut`, or a closure holding an `Rc` or a `Cell`, does
//!   not compile). Items cross threads as the pool hands them out: `&T` items need `T: Sync`, `&mut T` items
//!   need `T: Send`, and values that travel back to the caller (sums, found items, errors) need `Send`.
//!   [`ThreadPool`] and [`Topology`] are `Send + Sync`: the C library allows every query and dispatch from any
//!   thread.
//! - **`&self` dispatch**: the C pool runs one dispatch at a time and refuses any other, concurrent or nested,
//!   with [`Error::Contended`] at once: it never blocks and never corrupts. So the verbs take `&self` and a pool
//!   can be shared by threads; what changes its threads ([`terminate`](ThreadPool::terminate),
//!   [`respawn`](ThreadPool::respawn), drop) takes `&mut self`, which no running callback can hold.
//! - **Refusals are never silent**: the raw verbs return a `#[must_use]` [`Result`], `Err` meaning nothing ran.
//!   The `*_or_run_on_caller` verbs and every iterator terminal always run every task: on the pool, or on the
//!   calling thread as a team of one (thread 0, compute domain 0) when the pool refuses, as library code called
//!   from inside a callback needs.
//! - **Panics abort**: a panic in any callback prints its message and `forkunion: a callback panicked inside a
//!   dispatch; aborting` and aborts the process. It cannot unwind through the C library's threads, and a
//!   fork-join loop with a missing task has no state worth resuming.
//!
//! # Cargo features
//! - `portable`: the C build's `FORKUNION_PORTABLE=ON`, every optional instruction path (UMWAIT, WFET, WRS,
//!   CMPccXADD, ...) compiled out; [`comptime_capabilities`] then lacks those bits.
//! - `place-memory-on-domain`: placement is required. The C build has no switch for it (it binds memory
//!   wherever the OS can, on Linux with `mbind`), so the build script refuses targets without that backend, and
//!   allocations that the kernel left unplaced are refused with [`Error::Unsupported`] instead of being returned
//!   with [`Allocation::placed`] false.
//!
//! # Building, versions, publishing
//! - The build script builds the C library with this repository's CMake project (`../CMakeLists.txt`, target
//!   `forkunion_static` only, `ccache` when present) into cargo's `OUT_DIR`, so the sources, compile probes and
//!   the C++ runtime it links live in one place. It needs CMake 3.21 and a C++20 compiler.
//! - Minimum Rust version: **1.63** (`rust-version` in `Cargo.toml`), checked by building and testing with
//!   Debian 12's `rustc` 1.63; CI uses the machine image's newer toolchain. The crate's examples also build
//!   and run under edition 2024 (`rust/editions/`).
//! - **Packaging**: `rust/package.sh` copies the C library's CMake project, headers and C API sources into
//!   `vendor/forkunion/` inside the crate, runs `cargo package --offline`, and builds and tests the `.crate`
//!   unpacked outside the repository. The build script takes its sources from `vendor/forkunion/` when present,
//!   else from the repository around the crate (`..`); a plain `cargo package` without the copy is refused by
//!   the build script of its own verification.
//! - The crate's version is the C library's; the build fails when they differ.
//!
//! # Testing without Miri
//! Miri needs a nightly toolchain with its `miri` component, which these machines do not have, and it cannot
//! execute the calls into the C library that every dispatch makes. Instead the crate's tests run against a C
//! library built with AddressSanitizer and UndefinedBehaviorSanitizer (`FORKUNION_SANITIZE=address`, with the
//! runtime linked by `-C link-arg=-fsanitize=address,undefined`; see `rust/ci.sh`).
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
#![allow(clippy::missing_safety_doc)]

mod capabilities;
mod error;
mod fabric;
mod ffi;
pub mod iter;
mod memory;
mod pool;
mod sync;
mod topology;

pub use capabilities::{
    comptime_capabilities, name_capabilities, runtime_capabilities, version, Capabilities, Version,
};
pub use error::Error;
pub use fabric::Fabric;
pub use memory::{Allocation, AllocationOptions, ReplicatedArray, ShardedArray, Zeroable};
pub use pool::{spawn, Broadcast, CallerExclusivity, Generation, IdlePolicy, PoolBuilder, Prong, ThreadPool};
pub use sync::{CacheAligned, SpinMutex, SpinMutexGuard, CACHE_LINE_PAIR_BYTES};
pub use topology::{ComputeDomain, MemoryDomain, Topology};

/// Everything the parallel iterators need: `use forkunion::prelude::*;`.
pub mod prelude {
    pub use crate::iter::{
        AsPool, DynamicScheduler, IndexedParallelIterator, IntoParallelIterator, IntoParallelRefIterator,
        IntoParallelRefMutIterator, ParallelIterator, ParallelSlice, ParallelSliceMut, Scheduled, Scheduler,
        StaticScheduler,
    };
    pub use crate::sync::CacheAligned;
}

/// The Rust snippets of the product's documentation, compiled and run as they stand (only hidden set-up lines
/// added), so the API they show stays the API that exists.
#[cfg(doctest)]
#[doc = include_str!("../tests/documented_snippets.md")]
pub struct DocumentedSnippets;

/// The README section's examples, compiled and run.
#[cfg(doctest)]
#[doc = include_str!(concat!(env!("FORKUNION_SOURCE_ROOT"), "/docs/readme-sections/rust.md"))]
pub struct ReadmeSection;
