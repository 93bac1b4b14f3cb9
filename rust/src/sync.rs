//! Two small synchronization helpers for callbacks: a padded wrapper against false sharing and a spin lock.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// A value on its own pair of cache lines, so that per-thread slots written by different threads never share a
/// line: 128 bytes, because x86 and Arm prefetchers fetch 64-byte lines in adjacent pairs (the C library pads
/// its own hot words the same way). On s390x, whose lines are 256 bytes, one line of 256.
///
/// ```
/// use forkunion::CacheAligned;
/// let slots: Vec<CacheAligned<u64>> = (0..4).map(|_| CacheAligned(0)).collect();
/// assert_eq!(std::mem::size_of_val(&slots[0]), forkunion::CACHE_LINE_PAIR_BYTES);
/// assert_eq!(&slots[1] as *const _ as usize - &slots[0] as *const _ as usize, forkunion::CACHE_LINE_PAIR_BYTES);
/// ```
#[cfg_attr(not(target_arch = "s390x"), repr(align(128)))]
#[cfg_attr(target_arch = "s390x", repr(align(256)))]
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CacheAligned<T>(pub T);

/// The alignment and minimum size of [`CacheAligned`].
pub const CACHE_LINE_PAIR_BYTES: usize = if cfg!(target_arch = "s390x") { 256 } else { 128 };

const _: () = assert!(std::mem::align_of::<CacheAligned<u8>>() == CACHE_LINE_PAIR_BYTES);
const _: () = assert!(std::mem::size_of::<CacheAligned<u64>>() == CACHE_LINE_PAIR_BYTES);

impl<T> CacheAligned<T> {
    /// The wrapped value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for CacheAligned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
impl<T> DerefMut for CacheAligned<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}
impl<T> From<T> for CacheAligned<T> {
    fn from(value: T) -> Self {
        CacheAligned(value)
    }
}
impl<T: fmt::Debug> fmt::Debug for CacheAligned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A mutual-exclusion lock that waits by spinning on the CPU's pause hint, never by a system call.
///
/// For short critical sections between the threads of one dispatch (merging per-thread results), where a
/// kernel round trip (microseconds) would cost more than the wait. Not for long sections or oversubscribed
/// machines: a waiter burns its core while the holder is descheduled, and there is no fairness. Acquiring is a
/// test-and-test-and-set: waiters read the word until it looks free, then try one exchange, so a contended lock
/// bounces its line only on release. `lock` pairs an acquire with the previous holder's release in `unlock`:
/// everything written under the lock is visible to the next holder. Not poisoned by panics (a panic inside a
/// dispatch aborts anyway).
///
/// ```
/// use forkunion::SpinMutex;
/// let topology = forkunion::Topology::new().unwrap();
/// let pool = forkunion::spawn(&topology, 2);
/// let total = SpinMutex::new(0u64);
/// pool.for_n(1000, |prong| *total.lock() += prong.task_index as u64).unwrap();
/// assert_eq!(total.into_inner(), 499500);
/// ```
pub struct SpinMutex<T: ?Sized> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands out `&mut T` to one thread at a time, which needs `T: Send` and nothing more, as for
// `std::sync::Mutex`.
unsafe impl<T: ?Sized + Send> Send for SpinMutex<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send> Sync for SpinMutex<T> {}

impl<T> SpinMutex<T> {
    /// An unlocked mutex holding `value`.
    pub const fn new(value: T) -> Self {
        SpinMutex { locked: AtomicBool::new(false), value: UnsafeCell::new(value) }
    }
    /// The value, consuming the mutex.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized> SpinMutex<T> {
    /// Spins until the lock is free, takes it and returns the guard that releases it.
    pub fn lock(&self) -> SpinMutexGuard<'_, T> {
        loop {
            if let Some(guard) = self.try_lock() {
                return guard;
            }
            // Test before the next exchange: read-only waiting keeps the line shared until the release.
            while self.locked.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        }
    }

    /// Takes the lock if it is free, without waiting.
    pub fn try_lock(&self) -> Option<SpinMutexGuard<'_, T>> {
        // Acquire pairs with the release in `SpinMutexGuard::drop`.
        if self.locked.swap(true, Ordering::Acquire) {
            None
        } else {
            Some(SpinMutexGuard { mutex: self })
        }
    }

    /// Whether some thread holds the lock now (a hint: it may change at once).
    pub fn is_locked(&self) -> bool {
        self.locked.load(Ordering::Relaxed)
    }

    /// The value, through exclusive access: no locking needed.
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T: Default> Default for SpinMutex<T> {
    fn default() -> Self {
        SpinMutex::new(T::default())
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for SpinMutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.try_lock() {
            Some(guard) => f.debug_struct("SpinMutex").field("value", &&*guard).finish(),
            None => f.write_str("SpinMutex { <locked> }"),
        }
    }
}

/// Holds a [`SpinMutex`] and releases it when dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct SpinMutexGuard<'a, T: ?Sized> {
    mutex: &'a SpinMutex<T>,
}

// SAFETY: a guard shared between threads only gives `&T`, which needs `T: Sync`.
unsafe impl<T: ?Sized + Sync> Sync for SpinMutexGuard<'_, T> {}

impl<T: ?Sized> Deref for SpinMutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock.
        unsafe { &*self.mutex.value.get() }
    }
}
impl<T: ?Sized> DerefMut for SpinMutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock, and `&mut self` makes this the only reference.
        unsafe { &mut *self.mutex.value.get() }
    }
}
impl<T: ?Sized> Drop for SpinMutexGuard<'_, T> {
    fn drop(&mut self) {
        // Release pairs with the acquire in `try_lock`: the writes under the lock reach the next holder.
        self.mutex.locked.store(false, Ordering::Release);
    }
}
