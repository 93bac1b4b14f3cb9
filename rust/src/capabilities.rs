//! The capability trio and the version: what the build compiled in, what the machine offers, and their names.

use std::ffi::CString;
use std::fmt;
use std::ops::{BitAnd, BitOr, Not};
use std::os::raw::c_char;
use std::str::FromStr;

use crate::error::Error;
use crate::ffi;

/// A set of capability bits: the C API's `fu_capabilities_t`, bit for bit.
///
/// A feature is used only where [`comptime_capabilities`], [`runtime_capabilities`] and a pool's allowed set
/// ([`PoolBuilder::allowed_capabilities`](crate::PoolBuilder::allowed_capabilities)) all have it.
///
/// ```
/// use forkunion::Capabilities;
/// let usable = forkunion::comptime_capabilities() & forkunion::runtime_capabilities();
/// assert!(usable.contains(Capabilities::OS_THREADS));
/// let parsed: Capabilities = "os_threads,topology".parse().unwrap();
/// assert_eq!(parsed, Capabilities::OS_THREADS | Capabilities::TOPOLOGY);
/// assert_eq!(parsed.to_string(), "os_threads,topology");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Capabilities(u64);

impl Capabilities {
    /// The empty set.
    pub const NONE: Capabilities = Capabilities(0);
    /// Every bit, including those a later library may define: a pool allowed everything.
    pub const ALL: Capabilities = Capabilities(!0);
    /// x86 UMONITOR/UMWAIT/TPAUSE.
    pub const X86_WAITPKG: Capabilities = Capabilities(1 << 0);
    /// x86 CMPccXADD.
    pub const X86_CMPCCXADD: Capabilities = Capabilities(1 << 1);
    /// x86 AADD/AAND/AOR/AXOR.
    pub const X86_RAOINT: Capabilities = Capabilities(1 << 2);
    /// x86 CLDEMOTE.
    pub const X86_CLDEMOTE: Capabilities = Capabilities(1 << 3);
    /// AArch64 LSE atomics.
    pub const ARM64_LSE: Capabilities = Capabilities(1 << 8);
    /// AArch64 WFET.
    pub const ARM64_WFXT: Capabilities = Capabilities(1 << 9);
    /// AArch64 event stream bounding WFE.
    pub const ARM64_EVTSTRM: Capabilities = Capabilities(1 << 10);
    /// RISC-V A-extension AMOs.
    pub const RISCV_AMO: Capabilities = Capabilities(1 << 16);
    /// RISC-V Zawrs WRS.NTO/WRS.STO.
    pub const RISCV_ZAWRS: Capabilities = Capabilities(1 << 17);
    /// RISC-V Zacas AMOCAS.
    pub const RISCV_ZACAS: Capabilities = Capabilities(1 << 18);
    /// RISC-V Zicbom cache-line hints.
    pub const RISCV_ZICBOM: Capabilities = Capabilities(1 << 19);
    /// The OS starts threads.
    pub const OS_THREADS: Capabilities = Capabilities(1 << 32);
    /// Compute and memory domains are harvested.
    pub const TOPOLOGY: Capabilities = Capabilities(1 << 33);
    /// Threads can be bound to cores.
    pub const THREAD_PINNING: Capabilities = Capabilities(1 << 34);
    /// Memory can be bound to a domain.
    pub const MEMORY_PLACEMENT: Capabilities = Capabilities(1 << 35);
    /// Huge pages can be mapped.
    pub const HUGE_PAGES: Capabilities = Capabilities(1 << 36);
    /// Every wait beyond the pause hint that a napping pool may park on.
    pub const WAITS: Capabilities = Capabilities((1 << 0) | (1 << 9) | (1 << 10) | (1 << 17));

    /// The raw bits.
    pub const fn bits(self) -> u64 {
        self.0
    }
    /// The set with exactly these bits.
    pub const fn from_bits(bits: u64) -> Capabilities {
        Capabilities(bits)
    }
    /// Whether every bit of `other` is in `self`.
    pub const fn contains(self, other: Capabilities) -> bool {
        self.0 & other.0 == other.0
    }
    /// Whether no bit is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl BitOr for Capabilities {
    type Output = Capabilities;
    fn bitor(self, other: Capabilities) -> Capabilities {
        Capabilities(self.0 | other.0)
    }
}
impl BitAnd for Capabilities {
    type Output = Capabilities;
    fn bitand(self, other: Capabilities) -> Capabilities {
        Capabilities(self.0 & other.0)
    }
}
impl Not for Capabilities {
    type Output = Capabilities;
    fn not(self) -> Capabilities {
        Capabilities(!self.0)
    }
}

/// The C library's names, comma-separated in bit order (`x86_cldemote,os_threads`), `none` when empty.
impl fmt::Display for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&name_capabilities(*self))
    }
}
impl fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Capabilities({})", name_capabilities(*self))
    }
}

/// Parses what [`Display`](fmt::Display) writes: names and `bit<N>`, comma-separated, blanks allowed; `none` or an
/// empty text is the empty set. [`Error::InvalidArgument`] for any other token or a NUL byte.
impl FromStr for Capabilities {
    type Err = Error;
    fn from_str(text: &str) -> Result<Capabilities, Error> {
        let text = CString::new(text).map_err(|_| Error::InvalidArgument)?;
        let mut mask: ffi::fu_capabilities_t = 0;
        // SAFETY: a NUL-terminated text and a valid output pointer.
        Error::check(unsafe { ffi::fu_parse_capabilities(text.as_ptr(), &mut mask) })?;
        Ok(Capabilities(mask))
    }
}

/// What this build may use: the instruction families compiled in, `os_threads`, and the OS facilities it has code
/// for (`topology`, `thread_pinning`, `memory_placement`, `huge_pages` on Linux). Any thread.
pub fn comptime_capabilities() -> Capabilities {
    // SAFETY: no arguments, no preconditions.
    Capabilities(unsafe { ffi::fu_comptime_capabilities() })
}

/// What this machine offers: the instruction families the CPU reports and the OS facilities this process can
/// reach. The first call in the process detects (a few system calls), later ones read a cached word. Any thread.
pub fn runtime_capabilities() -> Capabilities {
    // SAFETY: no arguments, no preconditions.
    Capabilities(unsafe { ffi::fu_runtime_capabilities() })
}

/// The names of the bits of `mask`, comma-separated in bit order, `none` for the empty set.
pub fn name_capabilities(mask: Capabilities) -> String {
    // SAFETY: a NULL buffer with capacity 0 asks for the length only.
    let length = unsafe { ffi::fu_name_capabilities(mask.0, std::ptr::null_mut(), 0) };
    let mut buffer = vec![0u8; length + 1];
    // SAFETY: `buffer` holds `length + 1` bytes, room for the text and its terminating zero.
    unsafe { ffi::fu_name_capabilities(mask.0, buffer.as_mut_ptr() as *mut c_char, buffer.len()) };
    buffer.truncate(length);
    String::from_utf8(buffer).unwrap_or_default()
}

/// The C library's version, which is also this crate's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Incompatible API changes (from 1.0 on).
    pub major: u32,
    /// Additions (and, before 1.0, changes).
    pub minor: u32,
    /// Fixes.
    pub patch: u32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The version of the linked C library (`fu_version_major/_minor/_patch`).
///
/// ```
/// assert_eq!(forkunion::version().to_string(), env!("CARGO_PKG_VERSION"));
/// ```
pub fn version() -> Version {
    // SAFETY: no arguments, no preconditions.
    unsafe {
        Version {
            major: ffi::fu_version_major() as u32,
            minor: ffi::fu_version_minor() as u32,
            patch: ffi::fu_version_patch() as u32,
        }
    }
}
