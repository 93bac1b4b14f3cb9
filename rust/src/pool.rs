//! The thread pool: spawning, the blocking dispatch verbs, the broadcast that overlaps the caller's work, the
//! run-on-caller fallbacks, the idle policy and the workers' stack size.
//!
//! # How a closure reaches the workers
//! Every verb passes the C library a monomorphized `extern "C"` trampoline and a pointer to the caller's closure,
//! which stays on the caller's stack: no allocation, no boxing, one indirect call per task on top of the C
//! dispatch. The blocking verbs return only after every callback returned, so the closure may borrow anything
//! the caller can (`F: Fn + Sync`, no `'static`). The trampoline catches a panic and aborts the process with a
//! message: unwinding into the C thread pool would be undefined behaviour, and a half-run loop has no safe
//! state to resume from.
//!
//! # Why `&self`
//! The dispatch verbs take `&self`. The C pool already arbitrates its callers: one dispatch runs at a time, and
//! any other, from another thread or from inside a callback, is refused at once with [`Error::Contended`],
//! without blocking and without touching the running one. Exclusive access would add nothing to safety and
//! would take away sharing a pool between threads (`Arc<ThreadPool>`, scoped threads) and library code that
//! is handed a `&ThreadPool`. What changes the set of threads ([`ThreadPool::terminate`],
//! [`ThreadPool::respawn`], drop) takes `&mut self` or ownership, so it can never coincide with a dispatch or
//! run from inside a callback, which the C API forbids.

use std::ffi::CString;
use std::fmt;
use std::io::Write;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::time::Duration;

use crate::capabilities::Capabilities;
use crate::error::Error;
use crate::ffi;
use crate::topology::{ComputeDomain, Topology};

/// Where a task runs: the task's index, the index of the thread running it, and that thread's compute domain.
///
/// In [`ThreadPool::for_slices`] `task_index` is the first index of the slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Prong {
    /// The task's index in `[0, n)` (the slice's first index in `for_slices`).
    pub task_index: usize,
    /// The thread's index in `[0, threads_count())`; 0 is the caller on inclusive pools.
    pub thread_index: usize,
    /// The compute domain of that thread, a topology index.
    pub compute_domain: usize,
}

/// Whether the dispatching thread works as thread 0 ([`Inclusive`](CallerExclusivity::Inclusive), the default)
/// or only publishes and joins while every task runs on workers ([`Exclusive`](CallerExclusivity::Exclusive)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CallerExclusivity {
    /// The caller runs thread 0's share of every dispatch.
    #[default]
    Inclusive,
    /// The caller only publishes and joins; every thread is a worker.
    Exclusive,
}

impl CallerExclusivity {
    fn to_c(self) -> ffi::fu_caller_exclusivity_t {
        match self {
            CallerExclusivity::Inclusive => ffi::fu_caller_inclusive_k,
            CallerExclusivity::Exclusive => ffi::fu_caller_exclusive_k,
        }
    }
}

/// An always-odd token naming one broadcast of [`ThreadPool::unsafe_broadcast`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Generation(usize);

impl Generation {
    /// The token's value (odd, never 0).
    pub const fn get(self) -> usize {
        self.0
    }
}

/// How a pool's idle workers wait between dispatches: a property of the pool that lasts, across dispatches and
/// respawns, until set again ([`ThreadPool::set_idle_policy`], [`PoolBuilder::idle_policy`]).
///
/// Durations are rounded up to whole microseconds, so a non-zero duration never becomes 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdlePolicy {
    /// The pause hint in a loop: the lowest dispatch latency, a core per idle worker.
    Spin,
    /// Spin for this window, then block in the kernel: the default, with [`IdlePolicy::DEFAULT_WINDOW`]. A
    /// dispatch after a longer gap pays one kernel wake-up; [`Duration::ZERO`] parks at once.
    Adaptive(Duration),
    /// Light sleep on the CPU's address monitor (UMWAIT, WFET, WFE, WRS) where the CPU and the pool's allowed
    /// capabilities have one. Without one the pool keeps [`IdlePolicy::Spin`], and reports that.
    Nap,
    /// Block in the kernel at once; a non-zero period also wakes the workers that often to look for work,
    /// [`Duration::ZERO`] leaves it to the dispatch to wake them.
    Sleep(Duration),
}

impl IdlePolicy {
    /// The spin window of the default policy: 100 µs.
    pub const DEFAULT_WINDOW: Duration = Duration::from_micros(ffi::FU_DEFAULT_IDLE_WINDOW_US);

    /// The C mode and microseconds; [`Error::InvalidArgument`] for a duration the C API refuses (2^61 µs or
    /// more, about 73 000 years).
    fn to_c(self) -> Result<(ffi::fu_idle_mode_t, u64), Error> {
        fn micros(duration: Duration) -> Result<u64, Error> {
            let rounded_up = (duration.as_nanos() + 999) / 1000;
            u64::try_from(rounded_up).ok().filter(|&us| us < 1 << 61).ok_or(Error::InvalidArgument)
        }
        Ok(match self {
            IdlePolicy::Spin => (ffi::fu_idle_spin_k, 0),
            IdlePolicy::Adaptive(window) => (ffi::fu_idle_adaptive_k, micros(window)?),
            IdlePolicy::Nap => (ffi::fu_idle_nap_k, 0),
            IdlePolicy::Sleep(period) => (ffi::fu_idle_sleep_k, micros(period)?),
        })
    }

    fn from_c(mode: ffi::fu_idle_mode_t, microseconds: u64) -> IdlePolicy {
        match mode {
            ffi::fu_idle_spin_k => IdlePolicy::Spin,
            ffi::fu_idle_adaptive_k => IdlePolicy::Adaptive(Duration::from_micros(microseconds)),
            ffi::fu_idle_nap_k => IdlePolicy::Nap,
            ffi::fu_idle_sleep_k => IdlePolicy::Sleep(Duration::from_micros(microseconds)),
            other => unreachable!("the C library reported idle mode {}", other),
        }
    }
}

impl Default for IdlePolicy {
    /// [`IdlePolicy::Adaptive`] with [`IdlePolicy::DEFAULT_WINDOW`], what every new pool starts with.
    fn default() -> Self {
        IdlePolicy::Adaptive(IdlePolicy::DEFAULT_WINDOW)
    }
}

/// Settings of a pool before it spawns: thread names, allowed capabilities, caller exclusivity, the idle policy
/// and the workers' stack size.
///
/// ```
/// use forkunion as fu;
/// let topology = fu::Topology::new().unwrap();
/// let pool = fu::ThreadPool::builder()
///     .name("solver")
///     .exclusivity(fu::CallerExclusivity::Exclusive)
///     .allowed_capabilities(fu::Capabilities::ALL & !fu::Capabilities::THREAD_PINNING)
///     .try_spawn(&topology, 2)
///     .unwrap();
/// assert_eq!(pool.threads_count(), 2);
/// assert_eq!(pool.caller_exclusivity(), fu::CallerExclusivity::Exclusive);
/// assert_eq!(pool.unpinned_threads_count(), 2); // not allowed to pin: every thread keeps its mask
/// ```
#[derive(Clone, Debug)]
pub struct PoolBuilder {
    name: Option<String>,
    allowed: Capabilities,
    exclusivity: CallerExclusivity,
    idle_policy: Option<IdlePolicy>,
    stack_size: usize,
}

impl Default for PoolBuilder {
    fn default() -> Self {
        PoolBuilder {
            name: None,
            allowed: Capabilities::ALL,
            exclusivity: CallerExclusivity::Inclusive,
            idle_policy: None,
            stack_size: 0,
        }
    }
}

impl PoolBuilder {
    /// Workers call themselves `name:NNN` (thread index; Linux keeps 15 bytes, so a long name is cut). Without a
    /// name, thread names are left alone.
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }
    /// Narrows what the pool may use: without `THREAD_PINNING` threads keep their inherited mask, without
    /// `MEMORY_PLACEMENT` thread tables are not bound to their domains, without `TOPOLOGY` a spawn sees one
    /// domain of every allowed core, without the `WAITS` [`IdlePolicy::Nap`] spins on the pause hint, without `OS_THREADS` only
    /// a one-thread inclusive pool can spawn.
    pub fn allowed_capabilities(mut self, allowed: Capabilities) -> Self {
        self.allowed = allowed;
        self
    }
    /// Inclusive (the caller is thread 0) or exclusive (the caller only publishes and joins).
    pub fn exclusivity(mut self, exclusivity: CallerExclusivity) -> Self {
        self.exclusivity = exclusivity;
        self
    }
    /// How idle workers wait from the start ([`IdlePolicy::default`] unless set); see
    /// [`ThreadPool::set_idle_policy`].
    pub fn idle_policy(mut self, policy: IdlePolicy) -> Self {
        self.idle_policy = Some(policy);
        self
    }
    /// The stack size of every worker, in bytes; 0 (the default) keeps the platform's. The spawn is refused
    /// with [`Error::InvalidArgument`] below the platform's minimum (`PTHREAD_STACK_MIN`), and with
    /// [`Error::Unsupported`] where threads cannot take a size. The calling thread, thread 0 of an inclusive
    /// pool, keeps its own stack.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self
    }

    /// Starts `threads` contributors on `topology`: over several compute domains, threads split in proportion
    /// to the domains' cores (at least one each), numbered domain by domain and pinned there; over one, all pinned
    /// to it. A pin the OS refuses is counted ([`ThreadPool::unpinned_threads_count`]), never fatal.
    /// Errors: [`Error::InvalidArgument`] for 0 threads, fewer threads than compute domains or a name with a NUL
    /// byte; [`Error::ThreadRefused`], [`Error::BadAlloc`], [`Error::Unsupported`] (more than one thread without
    /// `OS_THREADS`), with nothing started.
    pub fn try_spawn(self, topology: &Topology, threads: usize) -> Result<ThreadPool, Error> {
        let pool = self.create()?;
        // SAFETY: live handles; the pool is not shared yet.
        Error::check(unsafe { ffi::fu_pool_spawn(topology.raw(), pool.raw(), threads, self.exclusivity.to_c()) })?;
        Ok(pool)
    }

    /// Like [`try_spawn`](Self::try_spawn), with every thread on compute domain `domain`, pinned to its cores
    /// where pinning is allowed and possible. [`Error::InvalidArgument`] also for a domain out of range.
    pub fn try_spawn_on(self, topology: &Topology, domain: ComputeDomain, threads: usize) -> Result<ThreadPool, Error> {
        let pool = self.create()?;
        // SAFETY: live handles; the pool is not shared yet.
        Error::check(unsafe {
            ffi::fu_pool_spawn_on(topology.raw(), pool.raw(), domain.0, threads, self.exclusivity.to_c())
        })?;
        Ok(pool)
    }

    fn create(&self) -> Result<ThreadPool, Error> {
        let name = match &self.name {
            Some(name) => Some(CString::new(name.as_str()).map_err(|_| Error::InvalidArgument)?),
            None => None,
        };
        let name_pointer = name.as_ref().map_or(std::ptr::null(), |name| name.as_ptr());
        // SAFETY: a NUL-terminated name or NULL; the C pool copies the name.
        let raw = unsafe { ffi::fu_pool_new(name_pointer, self.allowed.bits()) };
        let raw = NonNull::new(raw).ok_or(Error::BadAlloc)?;
        // Owned from here: an error below drops (deletes) the unspawned pool.
        let mut pool = ThreadPool { raw, exclusivity: self.exclusivity };
        if let Some(policy) = self.idle_policy {
            pool.set_idle_policy(policy)?;
        }
        if self.stack_size != 0 {
            pool.set_stack_size(self.stack_size)?;
        }
        Ok(pool)
    }
}

/// A fork-join thread pool over the C API's `fu_pool_t`.
///
/// Spawned once ([`spawn`], [`ThreadPool::try_spawn`], [`ThreadPool::try_named_spawn`], [`ThreadPool::builder`]),
/// then dispatched to from any thread, one dispatch at a time: another dispatch while one runs, from another
/// thread or from inside a callback, is refused with [`Error::Contended`] and runs nothing (and in a `fork()`ed
/// child a pool inherited from the parent refuses every dispatch with [`Error::Forked`]). The one exception is
/// thread 0 of an exclusive pool on one compute domain, which may dispatch the blocking verbs from inside its
/// own callback. Every blocking dispatch happens-after everything its caller did before it, and everything its
/// callbacks did happens-before its return.
///
/// Dropping the pool terminates it (completing a broadcast in flight) and frees it.
pub struct ThreadPool {
    raw: NonNull<ffi::fu_pool>,
    exclusivity: CallerExclusivity,
}

// SAFETY: the C pool may be dispatched to, queried and given an idle policy from any thread; spawn, terminate,
// the stack size and delete need only that nothing else uses the pool at the time, which `&mut self` and
// ownership guarantee. A caller's
// saved affinity is restored on the thread it was saved from, whichever thread terminates.
unsafe impl Send for ThreadPool {}
// SAFETY: every `&self` method maps to a C call that any thread may make concurrently with the others: concurrent
// and nested dispatches are refused with `contended`, never raced.
unsafe impl Sync for ThreadPool {}

/// Spawns a pool of `threads` on `topology` (caller inclusive, named `forkunion:NNN`), or panics with the reason.
/// Use [`ThreadPool::try_spawn`] to handle the refusal instead.
///
/// ```
/// let topology = forkunion::Topology::new().unwrap();
/// let pool = forkunion::spawn(&topology, 2);
/// assert_eq!(pool.threads_count(), 2);
/// ```
pub fn spawn(topology: &Topology, threads: usize) -> ThreadPool {
    match ThreadPool::try_named_spawn(topology, "forkunion", threads) {
        Ok(pool) => pool,
        Err(error) => panic!("forkunion::spawn({} threads) failed: {}", threads, error),
    }
}

impl ThreadPool {
    /// The settings of a pool that has not spawned yet.
    pub fn builder() -> PoolBuilder {
        PoolBuilder::default()
    }

    /// Spawns an inclusive pool of `threads` on `topology`, leaving thread names alone.
    pub fn try_spawn(topology: &Topology, threads: usize) -> Result<ThreadPool, Error> {
        PoolBuilder::default().try_spawn(topology, threads)
    }

    /// Spawns an inclusive pool of `threads` on `topology` whose workers are named `name:NNN`.
    pub fn try_named_spawn(topology: &Topology, name: &str, threads: usize) -> Result<ThreadPool, Error> {
        PoolBuilder::default().name(name).try_spawn(topology, threads)
    }

    pub(crate) fn raw(&self) -> ffi::fu_pool_t {
        self.raw.as_ptr()
    }

    // ---- Lifecycle ----

    /// Stops and joins every worker. The pool then refuses dispatches with [`Error::NotSpawned`] until
    /// [`respawn`](Self::respawn). [`Error::NotSpawned`] if it had no threads.
    ///
    /// `&mut self`: no dispatch can be running, and no callback can reach it (the C library forbids both):
    ///
    /// ```compile_fail,E0596
    /// let topology = forkunion::Topology::new().unwrap();
    /// let mut pool = forkunion::spawn(&topology, 2);
    /// pool.for_n(10, |_| drop(pool.terminate())).unwrap(); // `pool` is borrowed by the dispatch
    /// ```
    pub fn terminate(&mut self) -> Result<(), Error> {
        // SAFETY: live handle, and `&mut self`: no dispatch or callback of this pool is running.
        Error::check(unsafe { ffi::fu_pool_terminate(self.raw()) })
    }

    /// Starts `threads` contributors again over the whole `topology` (as [`PoolBuilder::try_spawn`]), with the
    /// exclusivity, name and capabilities it was created with, its idle policy and its stack size.
    /// [`Error::AlreadySpawned`] if it has threads; otherwise refused as [`PoolBuilder::try_spawn`], with nothing
    /// started. In a `fork()`ed child a pool inherited from the parent respawns here (its parent's workers are
    /// forgotten, not joined).
    pub fn respawn(&mut self, topology: &Topology, threads: usize) -> Result<(), Error> {
        // SAFETY: live handles, and `&mut self`: no dispatch or callback of this pool is running.
        Error::check(unsafe { ffi::fu_pool_spawn(topology.raw(), self.raw(), threads, self.exclusivity.to_c()) })
    }

    /// Sets the stack size, in bytes, of the workers the next spawn starts ([`respawn`](Self::respawn)); 0 keeps
    /// the platform's default. The running workers keep theirs. [`Error::InvalidArgument`] below the platform's
    /// minimum (`PTHREAD_STACK_MIN`), [`Error::Unsupported`] for a non-zero size where threads cannot take one;
    /// either leaves the size as it was. `&mut self`: the C API allows it on the controlling thread only, between
    /// spawns, never inside a callback.
    pub fn set_stack_size(&mut self, bytes: usize) -> Result<(), Error> {
        // SAFETY: live handle, and `&mut self`: no spawn, dispatch or callback of this pool is running.
        Error::check(unsafe { ffi::fu_pool_set_stack_size(self.raw(), bytes) })
    }

    /// What [`set_stack_size`](Self::set_stack_size) last set (0: the platform's default).
    pub fn stack_size(&self) -> usize {
        // SAFETY: live handle.
        unsafe { ffi::fu_pool_stack_size(self.raw()) }
    }

    // ---- Queries (any thread) ----

    /// Contributors of every dispatch: workers, plus the caller on inclusive pools; 0 when not spawned.
    pub fn threads_count(&self) -> usize {
        // SAFETY: live handle (here and in every query below).
        unsafe { ffi::fu_pool_threads_count(self.raw()) }
    }
    /// The exclusivity the pool was created with.
    pub fn caller_exclusivity(&self) -> CallerExclusivity {
        self.exclusivity
    }
    /// What the pool may use: its allowed set narrowed to this build and this machine.
    pub fn capabilities(&self) -> Capabilities {
        Capabilities::from_bits(unsafe { ffi::fu_pool_capabilities(self.raw()) })
    }
    /// Compute domains the threads span: the topology's for a multi-domain spawn, 1 for a single-domain one.
    pub fn compute_domains_count(&self) -> usize {
        unsafe { ffi::fu_pool_compute_domains_count(self.raw()) }
    }
    /// Threads of the pool on compute domain `domain` (0 for domains it does not use).
    pub fn threads_count_in(&self, domain: ComputeDomain) -> usize {
        unsafe { ffi::fu_pool_threads_count_in(self.raw(), domain.0) }
    }
    /// Threads running with the mask they inherited: all of them when pinning is not allowed, and those whose
    /// pin the OS refused.
    pub fn unpinned_threads_count(&self) -> usize {
        unsafe { ffi::fu_pool_unpinned_threads_count(self.raw()) }
    }
    /// Whether the per-thread tables sit on their domains' local memory.
    pub fn memory_placed(&self) -> bool {
        unsafe { ffi::fu_pool_memory_placed(self.raw()) != 0 }
    }
    /// Bytes the pool owns: its handle, its C++ pool and its per-thread table.
    pub fn memory_usage(&self) -> usize {
        unsafe { ffi::fu_pool_memory_usage(self.raw()) }
    }

    // ---- Blocking dispatches ----

    /// Calls `f(thread_index, compute_domain)` once on every thread and returns when all returned.
    ///
    /// Serial equivalent: `for t in 0..threads_count() { f(t, domain_of(t)) }`.
    /// Refused with [`Error::Contended`] (another dispatch runs) or [`Error::NotSpawned`], running nothing.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let topology = forkunion::Topology::new().unwrap();
    /// let pool = forkunion::spawn(&topology, 3);
    /// let calls = AtomicUsize::new(0);
    /// pool.for_threads(|_thread, _domain| {
    ///     calls.fetch_add(1, Ordering::Relaxed);
    /// })
    /// .unwrap();
    /// assert_eq!(calls.into_inner(), 3);
    /// ```
    ///
    /// The callback runs on several threads at once, so it must be `Fn` and `Sync`; one that mutates its
    /// captures is rejected at compile time (use atomics, [`SpinMutex`](crate::SpinMutex), or per-thread slots):
    ///
    /// ```compile_fail,E0594
    /// let topology = forkunion::Topology::new().unwrap();
    /// let pool = forkunion::spawn(&topology, 2);
    /// let mut calls = 0;
    /// pool.for_threads(|_, _| calls += 1).unwrap(); // FnMut where Fn is required
    /// ```
    ///
    /// ```compile_fail,E0277
    /// use std::rc::Rc;
    /// let topology = forkunion::Topology::new().unwrap();
    /// let pool = forkunion::spawn(&topology, 2);
    /// let shared = Rc::new(5);
    /// pool.for_threads(|_, _| assert_eq!(*shared, 5)).unwrap(); // `Rc` is not `Sync`
    /// ```
    #[must_use = "a refused dispatch ran nothing: check the Result, or call for_threads_or_run_on_caller"]
    pub fn for_threads<F>(&self, f: F) -> Result<(), Error>
    where
        F: Fn(usize, usize) + Sync,
    {
        // SAFETY: `f` outlives the call, which returns after every callback returned; the trampoline matches F.
        Error::check(unsafe { ffi::fu_pool_for_threads(self.raw(), Some(for_threads_trampoline::<F>), context(&f)) })
    }

    /// Calls `f(prong)` for every task in `[0, n)`, statically split: thread `t` of `T` runs the contiguous block
    /// starting at `q*t + min(t, r)` of length `q + (t < r)`, with `q = n / T`, `r = n % T`.
    ///
    /// Serial equivalent: `for i in 0..n { f(Prong { task_index: i, .. }) }`. Refused as
    /// [`for_threads`](Self::for_threads).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU8, Ordering};
    /// let topology = forkunion::Topology::new().unwrap();
    /// let pool = forkunion::spawn(&topology, 2);
    /// let visits: Vec<AtomicU8> = (0..1000).map(|_| AtomicU8::new(0)).collect();
    /// pool.for_n(visits.len(), |prong| {
    ///     visits[prong.task_index].fetch_add(1, Ordering::Relaxed);
    /// })
    /// .unwrap();
    /// assert!(visits.iter().all(|v| v.load(Ordering::Relaxed) == 1));
    /// ```
    #[must_use = "a refused dispatch ran nothing: check the Result, or call for_n_or_run_on_caller"]
    pub fn for_n<F>(&self, n: usize, f: F) -> Result<(), Error>
    where
        F: Fn(Prong) + Sync,
    {
        // SAFETY: as in `for_threads`.
        Error::check(unsafe { ffi::fu_pool_for_n(self.raw(), n, Some(for_n_trampoline::<F>), context(&f)) })
    }

    /// The same loop for tasks of uneven cost: each thread drains its own block, then steals single tasks from
    /// the others (inside its compute domain first).
    ///
    /// Serial equivalent: `for i in 0..n { f(Prong { task_index: i, .. }) }`. Refused as
    /// [`for_threads`](Self::for_threads).
    #[must_use = "a refused dispatch ran nothing: check the Result, or call for_n_dynamic_or_run_on_caller"]
    pub fn for_n_dynamic<F>(&self, n: usize, f: F) -> Result<(), Error>
    where
        F: Fn(Prong) + Sync,
    {
        // SAFETY: as in `for_threads`.
        Error::check(unsafe { ffi::fu_pool_for_n_dynamic(self.raw(), n, Some(for_n_trampoline::<F>), context(&f)) })
    }

    /// Calls `f(prong, count)` once per thread whose block of [`for_n`](Self::for_n)'s split is non-empty, with
    /// `prong.task_index` the block's first index; a thread with nothing to do is not called.
    ///
    /// Serial equivalent: `for t in 0..T { if count_t > 0 { f(Prong { task_index: first_t, .. }, count_t) } }`.
    /// Refused as [`for_threads`](Self::for_threads).
    #[must_use = "a refused dispatch ran nothing: check the Result, or call for_slices_or_run_on_caller"]
    pub fn for_slices<F>(&self, n: usize, f: F) -> Result<(), Error>
    where
        F: Fn(Prong, usize) + Sync,
    {
        // SAFETY: as in `for_threads`.
        Error::check(unsafe { ffi::fu_pool_for_slices(self.raw(), n, Some(for_slices_trampoline::<F>), context(&f)) })
    }

    // ---- The same loops, run on the caller when the pool refuses ----
    //
    // Each is one call to the C API's `fu_pool_*_or_run_on_caller`, the one place that turns a refusal
    // (`contended`, `not_spawned`, `forked`) into a serial run on the calling thread as a team of one: every
    // prong then says thread 0 and compute domain 0, whatever thread and domain the caller really is. The
    // parallel iterators call only these. They can fail only for a NULL pool or callback, which a live
    // `ThreadPool` and a trampoline never are.

    /// [`for_threads`](Self::for_threads), or `f(0, 0)` once on the calling thread when the pool refuses. Always
    /// runs: never loses the call, never returns an error, so it is the verb for library code that may be
    /// called from inside a callback of the same pool or share the pool with other threads.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let topology = forkunion::Topology::new().unwrap();
    /// let pool = forkunion::spawn(&topology, 2);
    /// let calls = AtomicUsize::new(0);
    /// pool.for_threads(|_, _| {
    ///     // Nested: the pool is busy with this very dispatch, so this thread runs `f(0, 0)` itself.
    ///     pool.for_threads_or_run_on_caller(|thread, domain| {
    ///         assert_eq!((thread, domain), (0, 0));
    ///         calls.fetch_add(1, Ordering::Relaxed);
    ///     });
    /// })
    /// .unwrap();
    /// assert_eq!(calls.into_inner(), 2); // once per outer thread
    /// ```
    pub fn for_threads_or_run_on_caller<F>(&self, f: F)
    where
        F: Fn(usize, usize) + Sync,
    {
        // SAFETY: as in `for_threads`.
        let status = unsafe {
            ffi::fu_pool_for_threads_or_run_on_caller(self.raw(), Some(for_threads_trampoline::<F>), context(&f))
        };
        debug_assert_eq!(status, ffi::fu_success_k);
    }

    /// [`for_n`](Self::for_n), or the serial loop `for i in 0..n` on the calling thread (thread 0, domain 0) when
    /// the pool refuses. Always runs every task exactly once.
    pub fn for_n_or_run_on_caller<F>(&self, n: usize, f: F)
    where
        F: Fn(Prong) + Sync,
    {
        // SAFETY: as in `for_threads`.
        let status =
            unsafe { ffi::fu_pool_for_n_or_run_on_caller(self.raw(), n, Some(for_n_trampoline::<F>), context(&f)) };
        debug_assert_eq!(status, ffi::fu_success_k);
    }

    /// [`for_n_dynamic`](Self::for_n_dynamic), or the serial loop on the calling thread (thread 0, domain 0)
    /// when the pool refuses. Always runs every task exactly once.
    pub fn for_n_dynamic_or_run_on_caller<F>(&self, n: usize, f: F)
    where
        F: Fn(Prong) + Sync,
    {
        // SAFETY: as in `for_threads`.
        let status = unsafe {
            ffi::fu_pool_for_n_dynamic_or_run_on_caller(self.raw(), n, Some(for_n_trampoline::<F>), context(&f))
        };
        debug_assert_eq!(status, ffi::fu_success_k);
    }

    /// [`for_slices`](Self::for_slices), or `f(prong of task 0, n)` once on the calling thread (thread 0,
    /// domain 0) when the pool refuses, and nothing when `n == 0`. Always covers `[0, n)` exactly once.
    pub fn for_slices_or_run_on_caller<F>(&self, n: usize, f: F)
    where
        F: Fn(Prong, usize) + Sync,
    {
        // SAFETY: as in `for_threads`.
        let status = unsafe {
            ffi::fu_pool_for_slices_or_run_on_caller(self.raw(), n, Some(for_slices_trampoline::<F>), context(&f))
        };
        debug_assert_eq!(status, ffi::fu_success_k);
    }

    /// The prong of a task run by a team of one, as the fallbacks report it: thread 0, compute domain 0.
    pub(crate) fn caller_prong(task_index: usize) -> Prong {
        Prong { task_index, thread_index: 0, compute_domain: 0 }
    }

    // ---- Broadcasts that overlap the caller's own work ----

    /// Broadcasts `f(thread_index, compute_domain)` to every thread, runs `overlap` on the calling thread while
    /// the broadcast is in flight, then joins it and returns what `overlap` returned.
    ///
    /// On exclusive pools the workers start at once, so `overlap` truly overlaps them and may poll
    /// [`Broadcast::is_complete`]. On inclusive pools thread 0's share runs on the calling thread after
    /// `overlap`, at the join. The join happens even if `overlap` panics (before the panic continues), so `f`
    /// may borrow the caller's data like every other verb. Refused as [`for_threads`](Self::for_threads), in
    /// which case neither `f` nor `overlap` runs.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use forkunion as fu;
    /// let topology = fu::Topology::new().unwrap();
    /// let pool = fu::ThreadPool::builder()
    ///     .exclusivity(fu::CallerExclusivity::Exclusive)
    ///     .try_spawn(&topology, 2)
    ///     .unwrap();
    /// let calls = AtomicUsize::new(0);
    /// let own_work = pool
    ///     .broadcast(
    ///         |_thread, _domain| {
    ///             calls.fetch_add(1, Ordering::Relaxed);
    ///         },
    ///         |_flight| (0..1000u64).sum::<u64>(), // the caller's work, while the workers run
    ///     )
    ///     .unwrap();
    /// assert_eq!((own_work, calls.into_inner()), (499500, 2));
    /// ```
    #[must_use = "a refused broadcast ran nothing: check the Result"]
    pub fn broadcast<F, W, R>(&self, f: F, overlap: W) -> Result<R, Error>
    where
        F: Fn(usize, usize) + Sync,
        W: FnOnce(&Broadcast<'_>) -> R,
    {
        // SAFETY: `f` lives on this frame until `_join` below has joined the broadcast, on every path out of
        // this function (normal return or unwinding from `overlap`).
        let generation = unsafe { self.unsafe_broadcast(&f)? };
        let flight = Broadcast { pool: self, generation };
        struct JoinOnDrop<'a>(&'a Broadcast<'a>);
        impl Drop for JoinOnDrop<'_> {
            fn drop(&mut self) {
                // Joined from the dispatching thread: the only outcomes are success, or `stale` if the pool was
                // already joined, and neither leaves the broadcast running.
                let _ = self.0.pool.join(self.0.generation);
            }
        }
        let _join = JoinOnDrop(&flight);
        Ok(overlap(&flight))
    }

    /// Broadcasts `f(thread_index, compute_domain)` without waiting and returns the broadcast's token. On
    /// exclusive pools the workers start now; on inclusive pools thread 0's share runs inside
    /// [`join`](Self::join), which the same thread must call. Refused as [`for_threads`](Self::for_threads)
    /// (also while another broadcast is pending).
    ///
    /// # Safety
    /// `f` must stay valid, at the same address, until the broadcast completes: until [`join`](Self::join)
    /// returned `Ok` or [`Error::StaleGeneration`], [`is_complete`](Self::is_complete) answered `true` on an
    /// exclusive pool, or, never joined, until the pool is terminated or dropped (which completes it, running
    /// thread 0's share of an inclusive pool there). Prefer [`broadcast`](Self::broadcast), which keeps this
    /// contract for you.
    ///
    /// ```
    /// let topology = forkunion::Topology::new().unwrap();
    /// let pool = forkunion::spawn(&topology, 2);
    /// let hello = |_thread: usize, _domain: usize| {};
    /// // SAFETY: `hello` outlives the join below.
    /// let generation = unsafe { pool.unsafe_broadcast(&hello) }.unwrap();
    /// assert_eq!(generation.get() % 2, 1);
    /// pool.join(generation).unwrap();
    /// assert!(pool.is_complete(generation));
    /// ```
    pub unsafe fn unsafe_broadcast<F>(&self, f: &F) -> Result<Generation, Error>
    where
        F: Fn(usize, usize) + Sync,
    {
        let mut generation = 0usize;
        // SAFETY: the caller keeps `f` alive until the broadcast completes; the trampoline matches F.
        Error::check(unsafe {
            ffi::fu_pool_unsafe_for_threads(self.raw(), Some(for_threads_trampoline::<F>), context(f), &mut generation)
        })?;
        Ok(Generation(generation))
    }

    /// Whether broadcast `generation` has completed on every thread (also `true` for older tokens). Never blocks;
    /// any thread. A `true` answer makes every callback's writes visible to the caller.
    pub fn is_complete(&self, generation: Generation) -> bool {
        // SAFETY: live handle; tokens from `unsafe_broadcast` are odd.
        unsafe { ffi::fu_pool_is_complete(self.raw(), generation.0) == 1 }
    }

    /// Runs thread 0's share (inclusive pools) and blocks until broadcast `generation` completes. Never from
    /// inside one of this pool's callbacks (it would wait for itself).
    /// [`Error::StaleGeneration`]: already joined or superseded (returns at once, harmless);
    /// [`Error::InvalidArgument`]: an inclusive pool's broadcast joined from another thread than the one that
    /// broadcast it (only that thread can run thread 0's share; nothing changed).
    pub fn join(&self, generation: Generation) -> Result<(), Error> {
        // SAFETY: live handle; the callback's validity is `unsafe_broadcast`'s contract.
        Error::check(unsafe { ffi::fu_pool_unsafe_join(self.raw(), generation.0) })
    }

    // ---- Idling ----

    /// Sets how idle workers wait, from now on and across respawns, until set again; workers parked in the
    /// kernel are woken to wait the new way. Any thread, any time, also while a dispatch runs and from inside
    /// its callbacks: never refused for contention. [`Error::InvalidArgument`] only for a duration of 2^61 µs
    /// or more. Without an address-monitor wait (the CPU, or the pool's allowed capabilities, lack the
    /// `WAITS`), [`IdlePolicy::Nap`] keeps [`IdlePolicy::Spin`], which [`idle_policy`](Self::idle_policy) then
    /// reports.
    ///
    /// ```
    /// use std::time::Duration;
    /// use forkunion::IdlePolicy;
    /// let topology = forkunion::Topology::new().unwrap();
    /// let pool = forkunion::spawn(&topology, 2);
    /// assert_eq!(pool.idle_policy(), IdlePolicy::default());
    /// pool.set_idle_policy(IdlePolicy::Sleep(Duration::from_millis(5))).unwrap(); // look every 5 ms
    /// pool.for_n(100, |_| {}).unwrap(); // a dispatch wakes them, and they go back to sleep after it
    /// assert_eq!(pool.idle_policy(), IdlePolicy::Sleep(Duration::from_millis(5)));
    /// ```
    pub fn set_idle_policy(&self, policy: IdlePolicy) -> Result<(), Error> {
        let (mode, microseconds) = policy.to_c()?;
        // SAFETY: live handle; any thread may call it at any time.
        Error::check(unsafe { ffi::fu_pool_set_idle_policy(self.raw(), mode, microseconds) })
    }

    /// The idle policy in force (durations in whole microseconds).
    pub fn idle_policy(&self) -> IdlePolicy {
        let (mut mode, mut microseconds) = (ffi::fu_idle_adaptive_k, 0u64);
        // SAFETY: live handle and two writable outputs.
        let status = unsafe { ffi::fu_pool_idle_policy(self.raw(), &mut mode, &mut microseconds) };
        debug_assert_eq!(status, ffi::fu_success_k);
        IdlePolicy::from_c(mode, microseconds)
    }

    /// Workers blocked in the kernel right now (adaptive past its window, or sleep): a snapshot that may be
    /// stale when it returns; 0 when not spawned.
    pub fn parked_threads_count(&self) -> usize {
        // SAFETY: live handle.
        unsafe { ffi::fu_pool_parked_threads_count(self.raw()) }
    }

    /// Deprecated: `set_idle_policy(IdlePolicy::Nap)`, which now lasts until changed. Still refused with
    /// [`Error::NotSpawned`] or [`Error::Forked`] where the pool has no workers here.
    #[deprecated(note = "use set_idle_policy(IdlePolicy::Nap), which lasts until changed")]
    pub fn nap(&self) -> Result<(), Error> {
        // SAFETY: live handle.
        Error::check(unsafe { ffi::fu_pool_nap(self.raw()) })
    }

    /// Deprecated: `set_idle_policy(IdlePolicy::Sleep(Duration::from_micros(microseconds)))`, which now lasts
    /// until changed. Still refused with [`Error::NotSpawned`] or [`Error::Forked`] where the pool has no workers
    /// here.
    #[deprecated(note = "use set_idle_policy(IdlePolicy::Sleep(period)), which lasts until changed")]
    pub fn sleep(&self, microseconds: usize) -> Result<(), Error> {
        // SAFETY: live handle.
        Error::check(unsafe { ffi::fu_pool_sleep(self.raw(), microseconds) })
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        // SAFETY: owned, live handle; ownership means no dispatch or callback of this pool is running.
        unsafe { ffi::fu_pool_delete(self.raw()) }
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("threads", &self.threads_count())
            .field("exclusivity", &self.caller_exclusivity())
            .field("compute_domains", &self.compute_domains_count())
            .finish()
    }
}

/// A broadcast in flight, as [`ThreadPool::broadcast`] shows it to the caller's overlapping work.
pub struct Broadcast<'a> {
    pool: &'a ThreadPool,
    generation: Generation,
}

impl Broadcast<'_> {
    /// Whether every thread has finished (always `false` on inclusive pools before the join: thread 0's share
    /// runs there).
    pub fn is_complete(&self) -> bool {
        self.pool.is_complete(self.generation)
    }
    /// The broadcast's token.
    pub fn generation(&self) -> Generation {
        self.generation
    }
}

// ---- Trampolines: from the C callbacks to the Rust closures ----

fn context<F>(f: &F) -> *mut c_void {
    f as *const F as *mut c_void
}

/// Runs `body`; a panic inside aborts the process with a message instead of unwinding further.
///
/// Every callback of a dispatch runs inside this, on the pool's threads and on the caller alike, so a panic has
/// one outcome wherever the task ran: the panic's own message (printed by the panic hook), this line, and
/// `abort`. Unwinding is impossible on the workers (it would cross the C library's frames) and would leave the
/// caller's loop half-run; catching costs nothing until a panic happens.
#[inline(always)]
pub(crate) fn no_unwind<R>(body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(_) => abort_after_panic(),
    }
}

#[cold]
#[inline(never)]
fn abort_after_panic() -> ! {
    let _ = writeln!(
        std::io::stderr(),
        "forkunion: a callback panicked inside a dispatch; aborting (a panic cannot unwind across the thread pool)"
    );
    std::process::abort()
}

unsafe extern "C" fn for_threads_trampoline<F: Fn(usize, usize) + Sync>(
    context: *mut c_void,
    thread: usize,
    compute_domain: usize,
) {
    // SAFETY: `context` is the `&F` the dispatching verb passed, alive until that verb returns.
    let f = unsafe { &*(context as *const F) };
    no_unwind(|| f(thread, compute_domain));
}

unsafe extern "C" fn for_n_trampoline<F: Fn(Prong) + Sync>(
    context: *mut c_void,
    task: usize,
    thread: usize,
    compute_domain: usize,
) {
    // SAFETY: as in `for_threads_trampoline`.
    let f = unsafe { &*(context as *const F) };
    no_unwind(|| f(Prong { task_index: task, thread_index: thread, compute_domain }));
}

unsafe extern "C" fn for_slices_trampoline<F: Fn(Prong, usize) + Sync>(
    context: *mut c_void,
    first: usize,
    count: usize,
    thread: usize,
    compute_domain: usize,
) {
    // SAFETY: as in `for_threads_trampoline`.
    let f = unsafe { &*(context as *const F) };
    no_unwind(|| f(Prong { task_index: first, thread_index: thread, compute_domain }, count));
}
