//! Memory on memory domains: sizes and rounding, bad requests, the typed arrays' layout and drops, and where the
//! machine allows it, the node the kernel really put each page on (`get_mempolicy`).

mod common;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use common::topology;
use forkunion as fu;

#[test]
fn allocations_are_zeroed_whole_pages() {
    let topology = topology();
    for bytes in [1usize, 4095, 4096, 4097, 3 << 20] {
        let mut memory = fu::Allocation::try_on(&topology, fu::MemoryDomain(0), bytes).unwrap();
        assert!(memory.bytes() >= bytes && memory.page_bytes().is_power_of_two());
        assert_eq!(memory.bytes() % memory.page_bytes(), 0);
        assert_eq!((memory.slices_count(), memory.slice_bytes()), (1, memory.bytes()));
        assert!(memory.as_slice().iter().all(|&byte| byte == 0));
        memory.as_mut_slice().iter_mut().for_each(|byte| *byte = 0xA5);
        assert_eq!(memory.as_ptr() as usize % memory.page_bytes(), 0);
    }
    let empty = fu::Allocation::try_on(&topology, fu::MemoryDomain(0), 0).unwrap();
    assert_eq!((empty.bytes(), empty.as_slice().len()), (0, 0));
}

#[test]
fn symmetric_allocations_have_a_slice_per_memory_domain() {
    let topology = topology();
    let memory = fu::Allocation::try_symmetric(&topology, 10_000).unwrap();
    assert_eq!(memory.slices_count(), topology.memory_domains_count());
    assert!(memory.slice_bytes() >= 10_000 && memory.slice_bytes() % memory.page_bytes() == 0);
    assert_eq!(memory.bytes(), memory.slices_count() * memory.slice_bytes());
    let can_place =
        (fu::comptime_capabilities() & fu::runtime_capabilities()).contains(fu::Capabilities::MEMORY_PLACEMENT);
    assert_eq!(memory.placed(), can_place);
    assert!(format!("{:?}", memory).contains("placed"));
}

#[test]
fn bad_requests_get_a_status() {
    let topology = topology();
    let beyond = fu::MemoryDomain(topology.memory_domains_count());
    assert_eq!(fu::Allocation::try_on(&topology, beyond, 10).err(), Some(fu::Error::InvalidArgument));
    let odd_pages = fu::AllocationOptions { huge_page_bytes: 3 << 20, ..Default::default() };
    let refused = fu::Allocation::try_on_with(&topology, fu::MemoryDomain(0), 10, odd_pages);
    assert_eq!(refused.err(), Some(fu::Error::InvalidArgument));
    let huge = fu::Allocation::try_on(&topology, fu::MemoryDomain(0), usize::MAX - 4095);
    assert_eq!(huge.err(), Some(fu::Error::BadAlloc));
    assert_eq!(fu::ShardedArray::<u64>::try_zeroed(&topology, usize::MAX / 4).err(), Some(fu::Error::BadAlloc));
}

#[test]
fn huge_pages_fall_back_to_base_pages() {
    let topology = topology();
    let options = fu::AllocationOptions { huge_page_bytes: 2 << 20, ..Default::default() };
    let memory = fu::Allocation::try_on_with(&topology, fu::MemoryDomain(0), 5 << 20, options).unwrap();
    assert!(memory.page_bytes() == 2 << 20 || memory.page_bytes() < 2 << 20, "huge or base: {:?}", memory);
    assert_eq!(memory.bytes() % memory.page_bytes(), 0);
}

#[test]
fn sharded_arrays_map_global_indices_onto_shards() {
    let topology = topology();
    let mut shards = fu::ShardedArray::<u32>::try_zeroed(&topology, 1000).unwrap();
    let domains = topology.memory_domains_count();
    assert_eq!((shards.shards_count(), shards.shard_len(), shards.len()), (domains, 1000, 1000 * domains));
    for i in 0..shards.len() {
        shards[i] = i as u32;
    }
    for d in topology.memory_domains() {
        let shard = shards.shard(d);
        assert!(shard.iter().enumerate().all(|(i, &v)| v as usize == d.get() * 1000 + i));
        assert_eq!(shard.as_ptr() as usize % shards.page_bytes(), 0, "each shard starts a page");
    }
    shards.shard_mut(fu::MemoryDomain(0))[0] = 7;
    assert_eq!(shards[0], 7);
    let counters = fu::ShardedArray::<fu::CacheAligned<AtomicU64>>::try_zeroed(&topology, 4).unwrap();
    counters.shard(fu::MemoryDomain(0))[3].fetch_add(5, Ordering::Relaxed);
    assert_eq!(counters[3].load(Ordering::Relaxed), 5);
    let empty = fu::ShardedArray::<u64>::try_zeroed(&topology, 0).unwrap();
    assert!(empty.is_empty() && empty.shard(fu::MemoryDomain(0)).is_empty());
}

#[test]
#[should_panic(expected = "index 1000 of 1000 values")]
fn sharded_arrays_check_indices() {
    let shards = fu::ShardedArray::<u8>::try_zeroed(&topology(), 1000 / topology().memory_domains_count()).unwrap();
    let _ = shards[shards.len()];
}

/// Counts its own drops.
struct Counted<'a>(&'a AtomicUsize, u64);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn values_are_dropped_once() {
    let topology = topology();
    let drops = AtomicUsize::new(0);
    let shards = fu::ShardedArray::try_from_fn(&topology, 300, |d, i| Counted(&drops, (d.get() * 300 + i) as u64));
    let shards = shards.unwrap();
    assert_eq!(shards[299].1, 299);
    let values = shards.len();
    drop(shards);
    assert_eq!(drops.load(Ordering::Relaxed), values);

    // A panic halfway through filling drops exactly the values already written.
    let drops = AtomicUsize::new(0);
    let filled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        fu::ShardedArray::try_from_fn(&topology, 100, |_, i| {
            assert!(i != 60, "stop filling");
            Counted(&drops, i as u64)
        })
    }));
    assert!(filled.is_err());
    assert_eq!(drops.load(Ordering::Relaxed), 60);
}

#[test]
fn replicated_arrays_keep_a_copy_per_domain() {
    let topology = topology();
    let pool = fu::spawn(&topology, 2);
    let values: Vec<String> = (0..50).map(|i| format!("v{}", i)).collect();
    let mut replicas = fu::ReplicatedArray::try_from_slice(&topology, &values).unwrap();
    assert_eq!((replicas.replicas_count(), replicas.len()), (topology.memory_domains_count(), 50));
    replicas.set(7, "seven".to_string());
    for d in topology.memory_domains() {
        assert_eq!(replicas.replica(d)[7], "seven");
        assert_eq!(replicas.replica(d)[8], "v8");
    }
    replicas.replica_mut(fu::MemoryDomain(0))[8] = "eight".to_string();
    let replicas = &replicas;
    let topology = &topology;
    pool.for_threads(|_, domain| {
        let local = replicas.local(topology, fu::ComputeDomain(domain));
        assert_eq!(local.len(), 50);
        assert_eq!(local[7], "seven");
    })
    .unwrap();
    assert_eq!(replicas.replica(fu::MemoryDomain(0))[8], "eight");
}

#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
mod placement {
    use super::*;
    use std::os::raw::{c_int, c_long, c_ulong, c_void};

    extern "C" {
        fn syscall(number: c_long, ...) -> c_long;
    }
    #[cfg(target_arch = "x86_64")]
    const SYS_GET_MEMPOLICY: c_long = 239;
    #[cfg(target_arch = "aarch64")]
    const SYS_GET_MEMPOLICY: c_long = 236;
    const MPOL_F_NODE: c_ulong = 1;
    const MPOL_F_ADDR: c_ulong = 2;

    /// The NUMA node holding the page at `address` (touched first), or `None` where the kernel will not say.
    fn node_of(address: *const u8) -> Option<usize> {
        let mut node: c_int = -1;
        // SAFETY: a valid output pointer; a NULL node mask of length 0; `address` is mapped.
        let result = unsafe {
            syscall(
                SYS_GET_MEMPOLICY,
                &mut node as *mut c_int,
                std::ptr::null_mut::<c_ulong>(),
                0 as c_ulong,
                address as *const c_void,
                MPOL_F_NODE | MPOL_F_ADDR,
            )
        };
        if result == 0 && node >= 0 {
            Some(node as usize)
        } else {
            None
        }
    }

    #[test]
    fn placed_pages_sit_on_their_domains_node() {
        let topology = topology();
        if !fu::runtime_capabilities().contains(fu::Capabilities::MEMORY_PLACEMENT) {
            eprintln!("skipped: this kernel has no NUMA memory policies (get_mempolicy answers ENOSYS)");
            return;
        }
        for domain in topology.memory_domains() {
            let mut memory = fu::Allocation::try_on(&topology, domain, 64 << 10).unwrap();
            assert!(memory.placed(), "a NUMA kernel binds the pages");
            let page = memory.page_bytes();
            memory.as_mut_slice().iter_mut().step_by(page).for_each(|byte| *byte = 1); // first touch
            for offset in (0..memory.bytes()).step_by(page) {
                let node = node_of(memory.as_slice()[offset..].as_ptr()).expect("get_mempolicy on a NUMA kernel");
                assert_eq!(node, topology.memory_node_id(domain), "page at +{} of domain {}", offset, domain);
            }
        }
        let mut shards = fu::ShardedArray::<u64>::try_zeroed(&topology, 4096).unwrap();
        assert!(shards.placed());
        for domain in topology.memory_domains() {
            let shard = shards.shard_mut(domain);
            shard[0] = 1;
            assert_eq!(node_of(shard.as_ptr() as *const u8), Some(topology.memory_node_id(domain)));
        }
    }
}

#[cfg(feature = "place-memory-on-domain")]
#[test]
fn strict_placement_refuses_unplaced_memory() {
    let topology = topology();
    let outcome = fu::Allocation::try_on(&topology, fu::MemoryDomain(0), 4096);
    if fu::runtime_capabilities().contains(fu::Capabilities::MEMORY_PLACEMENT) {
        assert!(outcome.unwrap().placed());
    } else {
        assert_eq!(outcome.err(), Some(fu::Error::Unsupported));
    }
    // Opting out of placement for one allocation is honoured.
    let unbound = fu::AllocationOptions { allowed: fu::Capabilities::NONE, ..Default::default() };
    assert!(!fu::Allocation::try_on_with(&topology, fu::MemoryDomain(0), 4096, unbound).unwrap().placed());
}
