//! The one error type: why the C library refused a call.

use std::ffi::CStr;
use std::fmt;

use crate::ffi;

/// Why a call was refused: the C API's `fu_status_t` codes, one to one.
///
/// A refused dispatch ran nothing, a refused spawn started nothing, a refused allocation mapped nothing: every
/// `Err` leaves the pool, topology or memory as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// Memory ran out: a handle, a thread table, or an allocation too large to map.
    BadAlloc,
    /// A bad argument: 0 threads, fewer threads than compute domains, a domain out of range, a name with a NUL
    /// byte, a page size that is not a power of two.
    InvalidArgument,
    /// The pool has threads already: terminate it first.
    AlreadySpawned,
    /// The pool has no threads: never spawned, or terminated.
    NotSpawned,
    /// The OS refused to start a thread; the threads that did start were joined.
    ThreadRefused,
    /// The pool runs another dispatch (from another thread, or this dispatch's own callbacks): nothing ran. The
    /// `*_or_run_on_caller` verbs run the loop on the calling thread instead.
    Contended,
    /// The build, the platform or the pool's allowed capabilities lack the feature.
    Unsupported,
    /// The OS refused to bind memory (or threads) where asked.
    PlacementRefused,
    /// A generation token that is no longer the pool's pending broadcast.
    StaleGeneration,
    /// The pool was spawned by the parent of this `fork()`ed process, whose workers do not exist here: every
    /// dispatch is refused (the `*_or_run_on_caller` verbs run on the caller); respawn or drop it.
    Forked,
    /// A status code this crate does not know (a newer C library).
    Other(i32),
}

impl Error {
    pub(crate) fn from_code(code: ffi::fu_status_t) -> Error {
        match code {
            ffi::fu_bad_alloc_k => Error::BadAlloc,
            ffi::fu_invalid_argument_k => Error::InvalidArgument,
            ffi::fu_already_spawned_k => Error::AlreadySpawned,
            ffi::fu_not_spawned_k => Error::NotSpawned,
            ffi::fu_thread_refused_k => Error::ThreadRefused,
            ffi::fu_contended_k => Error::Contended,
            ffi::fu_unsupported_k => Error::Unsupported,
            ffi::fu_placement_refused_k => Error::PlacementRefused,
            ffi::fu_stale_generation_k => Error::StaleGeneration,
            ffi::fu_forked_k => Error::Forked,
            other => Error::Other(other),
        }
    }

    /// `Ok(())` for `fu_success_k`, the error otherwise.
    pub(crate) fn check(code: ffi::fu_status_t) -> Result<(), Error> {
        if code == ffi::fu_success_k {
            Ok(())
        } else {
            Err(Error::from_code(code))
        }
    }

    /// The C status code (`fu_contended_k` is -6).
    pub fn code(self) -> i32 {
        match self {
            Error::BadAlloc => ffi::fu_bad_alloc_k,
            Error::InvalidArgument => ffi::fu_invalid_argument_k,
            Error::AlreadySpawned => ffi::fu_already_spawned_k,
            Error::NotSpawned => ffi::fu_not_spawned_k,
            Error::ThreadRefused => ffi::fu_thread_refused_k,
            Error::Contended => ffi::fu_contended_k,
            Error::Unsupported => ffi::fu_unsupported_k,
            Error::PlacementRefused => ffi::fu_placement_refused_k,
            Error::StaleGeneration => ffi::fu_stale_generation_k,
            Error::Forked => ffi::fu_forked_k,
            Error::Other(code) => code,
        }
    }

    /// The C library's canonical name of the code (`"contended"`), `"unknown"` for codes it does not know.
    pub fn name(self) -> &'static str {
        // SAFETY: `fu_status_to_string` never returns NULL and returns static, NUL-terminated ASCII.
        let name = unsafe { CStr::from_ptr(ffi::fu_status_to_string(self.code())) };
        name.to_str().unwrap_or("unknown")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let meaning = match self {
            Error::BadAlloc => "memory ran out",
            Error::InvalidArgument => "invalid argument",
            Error::AlreadySpawned => "the pool has threads already",
            Error::NotSpawned => "the pool has no threads",
            Error::ThreadRefused => "the OS refused to start a thread",
            Error::Contended => "the pool runs another dispatch; nothing ran",
            Error::Unsupported => "not supported by this build, platform or pool",
            Error::PlacementRefused => "the OS refused to place memory or threads there",
            Error::StaleGeneration => "the generation is no longer pending",
            Error::Forked => "the pool was inherited by a forked process",
            Error::Other(_) => "unknown status",
        };
        write!(f, "forkunion: {} ({}, status {})", meaning, self.name(), self.code())
    }
}

impl std::error::Error for Error {}
