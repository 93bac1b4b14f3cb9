//! The spin lock under contention, the padded wrapper's layout, the capability trio and the version.

use std::sync::atomic::{AtomicBool, Ordering};

use forkunion as fu;

#[test]
fn the_spin_mutex_excludes() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 50_000;
    // A plain (non-atomic) pair, updated only under the lock: any overlap would break `a == b`.
    let pair = fu::SpinMutex::new((0usize, 0usize));
    let torn = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                for _ in 0..ROUNDS {
                    let mut guard = pair.lock();
                    guard.0 += 1;
                    if guard.0 != guard.1 + 1 {
                        torn.store(true, Ordering::Relaxed);
                    }
                    guard.1 += 1;
                }
            });
        }
    });
    assert!(!torn.load(Ordering::Relaxed));
    assert_eq!(pair.into_inner(), (THREADS * ROUNDS, THREADS * ROUNDS));
}

#[test]
fn the_spin_mutex_is_exclusive_and_reusable() {
    let mut mutex = fu::SpinMutex::new(vec![1, 2]);
    {
        let guard = mutex.lock();
        assert!(mutex.is_locked());
        assert!(mutex.try_lock().is_none());
        assert_eq!(format!("{:?}", mutex), "SpinMutex { <locked> }");
        drop(guard);
    }
    assert!(!mutex.is_locked());
    mutex.try_lock().unwrap().push(3);
    mutex.get_mut().push(4);
    assert_eq!(format!("{:?}", mutex), "SpinMutex { value: [1, 2, 3, 4] }");
    assert_eq!(mutex.into_inner(), vec![1, 2, 3, 4]);
}

#[test]
fn cache_aligned_values_own_their_lines() {
    let slots: Vec<fu::CacheAligned<u8>> = (0..3).map(fu::CacheAligned).collect();
    for pair in slots.windows(2) {
        let distance = &pair[1] as *const _ as usize - &pair[0] as *const _ as usize;
        assert_eq!(distance, fu::CACHE_LINE_PAIR_BYTES);
    }
    assert_eq!(std::mem::align_of::<fu::CacheAligned<[u64; 20]>>(), fu::CACHE_LINE_PAIR_BYTES);
    assert_eq!(std::mem::size_of::<fu::CacheAligned<[u64; 20]>>(), 2 * fu::CACHE_LINE_PAIR_BYTES);
    let mut value = fu::CacheAligned::from(5u32);
    *value += 1;
    assert_eq!((*value, value.into_inner()), (6, 6));
}

#[test]
fn the_version_is_the_crates() {
    let version = fu::version();
    assert_eq!(version.to_string(), env!("CARGO_PKG_VERSION"));
    assert_eq!(version.major.to_string(), env!("CARGO_PKG_VERSION_MAJOR"));
}

#[test]
fn capability_names_round_trip() {
    let bits = [
        (fu::Capabilities::X86_WAITPKG, "x86_waitpkg"),
        (fu::Capabilities::X86_CLDEMOTE, "x86_cldemote"),
        (fu::Capabilities::ARM64_WFXT, "arm64_wfxt"),
        (fu::Capabilities::RISCV_ZAWRS, "riscv_zawrs"),
        (fu::Capabilities::OS_THREADS, "os_threads"),
        (fu::Capabilities::MEMORY_PLACEMENT, "memory_placement"),
        (fu::Capabilities::HUGE_PAGES, "huge_pages"),
    ];
    for (bit, name) in bits {
        assert_eq!(bit.to_string(), name);
        assert_eq!(name.parse::<fu::Capabilities>().unwrap(), bit);
        assert_eq!(bit.bits().count_ones(), 1);
    }
    let every_defined = [
        fu::Capabilities::X86_WAITPKG,
        fu::Capabilities::X86_CMPCCXADD,
        fu::Capabilities::X86_RAOINT,
        fu::Capabilities::X86_CLDEMOTE,
        fu::Capabilities::ARM64_LSE,
        fu::Capabilities::ARM64_WFXT,
        fu::Capabilities::ARM64_EVTSTRM,
        fu::Capabilities::RISCV_AMO,
        fu::Capabilities::RISCV_ZAWRS,
        fu::Capabilities::RISCV_ZACAS,
        fu::Capabilities::RISCV_ZICBOM,
        fu::Capabilities::OS_THREADS,
        fu::Capabilities::TOPOLOGY,
        fu::Capabilities::THREAD_PINNING,
        fu::Capabilities::MEMORY_PLACEMENT,
        fu::Capabilities::HUGE_PAGES,
    ];
    for bit in every_defined {
        let name = bit.to_string();
        assert!(!name.starts_with("bit") && !name.contains(','), "the C library names {:?}", bit);
        assert_eq!(name.parse::<fu::Capabilities>().unwrap(), bit);
    }
    let waits = fu::Capabilities::X86_WAITPKG
        | fu::Capabilities::ARM64_WFXT
        | fu::Capabilities::ARM64_EVTSTRM
        | fu::Capabilities::RISCV_ZAWRS;
    assert_eq!(fu::Capabilities::WAITS, waits);
    let mixed = fu::Capabilities::OS_THREADS | fu::Capabilities::TOPOLOGY;
    assert_eq!(mixed.to_string().parse::<fu::Capabilities>().unwrap(), mixed);
    assert_eq!(" os_threads , topology ".parse::<fu::Capabilities>().unwrap(), mixed);
    assert_eq!(fu::Capabilities::NONE.to_string(), "none");
    assert_eq!("none".parse::<fu::Capabilities>().unwrap(), fu::Capabilities::NONE);
    assert_eq!("".parse::<fu::Capabilities>().unwrap(), fu::Capabilities::NONE);
    assert_eq!("bit63".parse::<fu::Capabilities>().unwrap().bits(), 1 << 63);
    assert_eq!("warp_drive".parse::<fu::Capabilities>().err(), Some(fu::Error::InvalidArgument));
    assert_eq!("os_threads\0".parse::<fu::Capabilities>().err(), Some(fu::Error::InvalidArgument));
    assert!(mixed.contains(fu::Capabilities::TOPOLOGY) && !mixed.contains(fu::Capabilities::HUGE_PAGES));
    assert!(fu::Capabilities::NONE.is_empty() && (!fu::Capabilities::ALL).is_empty());
    assert_eq!(format!("{:?}", mixed), "Capabilities(os_threads,topology)");
}

#[test]
fn the_build_and_the_machine_report_their_capabilities() {
    let built = fu::comptime_capabilities();
    let offered = fu::runtime_capabilities();
    assert!(built.contains(fu::Capabilities::OS_THREADS) && offered.contains(fu::Capabilities::OS_THREADS));
    let instructions = fu::Capabilities::from_bits(0xFFFF_FFFF); // the instruction-family half
    if cfg!(feature = "portable") {
        assert_eq!(built & instructions, fu::Capabilities::NONE, "portable compiles every instruction path out");
    }
    if cfg!(target_os = "linux") {
        assert!(built.contains(fu::Capabilities::TOPOLOGY | fu::Capabilities::MEMORY_PLACEMENT));
    }
    assert_eq!(fu::name_capabilities(built), built.to_string());
}
