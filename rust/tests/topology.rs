//! The topology, live and on a recorded two-socket machine (through the C API's sysfs root), and a distributed
//! pool spawned over that recording: domains in prongs, threads split by cores, placement refusals reported.
//!
//! The recorded machine is hwloc's `32intel64-2p8co2t+8ve` (test/fixtures/sysfs): 2 × Xeon Silver 4108, 32 CPUs,
//! node 0 = CPUs 0-7,16-23, node 1 = 8-15,24-31, distances 10/21. Its facts below come from the fixture's
//! `expected.json`, not from the library.

mod common;

use common::{recorded_machine, topology};
use forkunion as fu;
use fu::prelude::*;

const TWO_SOCKETS: &str = "32intel64-2p8co2t+8ve";

#[test]
fn the_live_topology_is_consistent() {
    let topology = topology();
    assert!(topology.compute_domains_count() >= 1 && topology.memory_domains_count() >= 1);
    assert_eq!(topology.allowed_cores_count(), topology.logical_cores_count());
    assert!(topology.online_cores_count() >= topology.allowed_cores_count());
    let mut cores: Vec<u32> = topology.compute_domains().flat_map(|d| topology.cores_in(d)).collect();
    assert_eq!(cores.len(), topology.logical_cores_count());
    cores.sort_unstable();
    cores.dedup();
    assert_eq!(cores.len(), topology.logical_cores_count(), "no core in two compute domains");
    for domain in topology.compute_domains() {
        assert!(topology.compute_level_in(domain) < topology.compute_levels_count().max(1));
        assert!(topology.local_memory_of(domain).get() < topology.memory_domains_count());
    }
    for memory in topology.memory_domains() {
        assert_eq!(topology.declared_distance(memory, memory), if topology.harvested() { 10 } else { 0 });
        let sizes = topology.huge_page_sizes_in(memory);
        assert!(sizes.windows(2).all(|pair| pair[0] < pair[1]) && sizes.iter().all(|s| s.is_power_of_two()));
    }
    // Out of range answers 0, as in C.
    let beyond = fu::ComputeDomain(topology.compute_domains_count());
    assert_eq!((topology.logical_cores_count_in(beyond), topology.cores_in(beyond).len()), (0, 0));
    assert!(format!("{:?}", topology).contains("compute_domains"));
}

#[test]
fn bad_sysfs_roots_are_refused() {
    assert_eq!(fu::Topology::from_sysfs("/nonexistent/forkunion").err(), Some(fu::Error::InvalidArgument));
    assert_eq!(fu::Topology::from_sysfs("bad\0root").err(), Some(fu::Error::InvalidArgument));
}

fn recorded() -> Option<fu::Topology> {
    let root = recorded_machine(TWO_SOCKETS)?;
    Some(fu::Topology::from_sysfs(&root).expect("the recorded tree harvests"))
}

#[test]
fn a_recorded_two_socket_machine_harvests_as_hwloc_describes_it() {
    let topology = match recorded() {
        Some(topology) => topology,
        None => return,
    };
    let (c0, c1) = (fu::ComputeDomain(0), fu::ComputeDomain(1));
    let (m0, m1) = (fu::MemoryDomain(0), fu::MemoryDomain(1));
    assert!(topology.harvested());
    assert_eq!((topology.compute_domains_count(), topology.memory_domains_count()), (2, 2));
    assert_eq!((topology.logical_cores_count(), topology.logical_cores_count_in(c1)), (32, 16));
    let node0: Vec<u32> = (0..8).chain(16..24).collect();
    let node1: Vec<u32> = (8..16).chain(24..32).collect();
    assert_eq!((topology.cores_in(c0), topology.cores_in(c1)), (node0, node1));
    assert_eq!((topology.local_memory_of(c0), topology.local_memory_of(c1)), (m0, m1));
    assert_eq!(topology.memory_node_id(m1), 1);
    assert_eq!((topology.declared_distance(m0, m1), topology.declared_distance(m1, m1)), (21, 10));
    assert_eq!(topology.volume_ram_in(m0), 49_075_843_072);
    assert_eq!(topology.volume_ram(), 49_075_843_072 + 50_708_443_136);
    assert_eq!(topology.compute_cache_bytes_in(c0), 11_534_336, "the package's L3");
    assert_eq!(topology.compute_capacity_in(c0), 0, "no cpu_capacity on x86");
    assert_eq!(topology.huge_pages_count_in(m1), 2048);
    assert_eq!(topology.volume_huge_pages_in(m1), 2048 << 21);
    assert_eq!(topology.huge_page_sizes_in(m0), vec![2 << 20, 1 << 30]);
    assert_eq!((topology.compute_level_in(c1), topology.compute_levels_count()), (0, 1));
    assert_eq!((topology.online_cores_count(), topology.allowed_cores_count()), (32, 32), "whatever our affinity");
    assert_eq!(topology.huge_pages_count(), 4096, "2048 free 2 MiB pages per node");
    assert_eq!(topology.volume_huge_pages(), 4096 << 21);
}

#[test]
fn a_pool_on_the_recorded_machine_spans_both_sockets() {
    let topology = match recorded() {
        Some(topology) => topology,
        None => return,
    };
    // Threads split in proportion to the domains' cores (16 and 16), numbered domain by domain. Pins to CPUs this
    // machine may lack are refused and counted, never fatal.
    let pool = fu::ThreadPool::try_named_spawn(&topology, "recorded", 4).unwrap();
    assert_eq!(pool.threads_count(), 4);
    assert_eq!(pool.compute_domains_count(), 2);
    assert_eq!((pool.threads_count_in(fu::ComputeDomain(0)), pool.threads_count_in(fu::ComputeDomain(1))), (2, 2));
    assert!(pool.unpinned_threads_count() <= 4);
    let domain_of_thread = |thread: usize| thread / 2;

    let seen = fu::SpinMutex::new(Vec::new());
    pool.for_threads(|thread, domain| seen.lock().push((thread, domain))).unwrap();
    let mut seen = seen.into_inner();
    seen.sort_unstable();
    assert_eq!(seen, vec![(0, 0), (1, 0), (2, 1), (3, 1)]);

    let tally = common::Tally::new(1000);
    pool.for_n(1000, |prong| {
        assert_eq!(prong.compute_domain, domain_of_thread(prong.thread_index));
        tally.hit(prong.task_index);
    })
    .unwrap();
    pool.for_n_dynamic(1000, |prong| {
        assert_eq!(prong.compute_domain, domain_of_thread(prong.thread_index));
        tally.hit(prong.task_index);
    })
    .unwrap();
    pool.for_slices(1000, |prong, count| {
        assert_eq!(prong.compute_domain, domain_of_thread(prong.thread_index));
        (prong.task_index..prong.task_index + count).for_each(|task| tally.hit(task));
    })
    .unwrap();
    assert_eq!(tally.total(), 3000);

    // Nested dispatches are refused on a distributed pool too, and the iterators fall back to the caller.
    pool.for_threads(|_, _| {
        assert_eq!(pool.for_n(3, |_| {}), Err(fu::Error::Contended));
        assert_eq!((0..100u64).into_par_iter().with_pool(&pool).sum::<u64>(), 4950);
    })
    .unwrap();
    let sum: u64 = (0..100_000u64).into_par_iter().with_pool(&pool).sum();
    assert_eq!(sum, 4_999_950_000);

    // One domain only: every thread on domain 1.
    let second = fu::ThreadPool::builder().try_spawn_on(&topology, fu::ComputeDomain(1), 2).unwrap();
    second.for_n(10, |prong| assert_eq!(prong.compute_domain, 1)).unwrap();
    // Fewer threads than domains is refused.
    assert_eq!(fu::ThreadPool::try_spawn(&topology, 1).err(), Some(fu::Error::InvalidArgument));
}

#[test]
fn memory_on_the_recorded_machine_is_placed_or_refused_never_misplaced() {
    let topology = match recorded() {
        Some(topology) => topology,
        None => return,
    };
    // Node 1 of the recording exists here only on a machine with a second NUMA node: binding to it either works
    // (and says placed) or is refused with a status, never silently left elsewhere.
    let live_node1 = std::path::Path::new("/sys/devices/system/node/node1").is_dir();
    let numa_kernel = fu::runtime_capabilities().contains(fu::Capabilities::MEMORY_PLACEMENT);
    match fu::ShardedArray::<u64>::try_zeroed(&topology, 1000) {
        Ok(shards) => {
            assert_eq!(shards.shards_count(), 2);
            assert!(shards.placed() || !numa_kernel, "placed on both nodes");
            assert!(live_node1 || !numa_kernel, "placed on a node this machine lacks?");
        }
        Err(error) => {
            assert_eq!(error, fu::Error::PlacementRefused);
            assert!(!live_node1, "refused although node 1 exists");
        }
    }
    // Without placement allowed, the slices exist, unbound.
    let unbound = fu::AllocationOptions {
        allowed: fu::Capabilities::ALL & !fu::Capabilities::MEMORY_PLACEMENT,
        ..Default::default()
    };
    let memory = fu::Allocation::try_symmetric_with(&topology, 5000, unbound).unwrap();
    assert_eq!((memory.slices_count(), memory.placed()), (2, false));
    assert_eq!(memory.bytes(), 2 * memory.slice_bytes());
    assert_eq!(fu::Allocation::try_on(&topology, fu::MemoryDomain(2), 10).err(), Some(fu::Error::InvalidArgument));
}
