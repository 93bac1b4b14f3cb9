//! The measured fabric: empty before a harvest, refused without the capabilities it needs, and, where this machine
//! lets a pool pin threads and place memory, a harvest whose local edges read as local.

mod common;

use forkunion as fu;

#[test]
fn an_empty_fabric_reads_zero() {
    let fabric = fu::Fabric::new().unwrap();
    let (c0, m0) = (fu::ComputeDomain(0), fu::MemoryDomain(0));
    assert!(!fabric.harvested());
    assert_eq!((fabric.memory_levels_count(), fabric.memory_distance(c0, m0)), (0, 0));
    assert_eq!((fabric.memory_latency_ns(c0, m0), fabric.memory_bandwidth(c0, m0)), (0.0, 0.0));
}

#[test]
fn a_harvest_needs_pinning_and_placement() {
    let topology = common::topology();
    let mut unpinned = fu::ThreadPool::builder()
        .allowed_capabilities(fu::Capabilities::ALL & !fu::Capabilities::THREAD_PINNING)
        .try_spawn(&topology, 2)
        .unwrap();
    let mut fabric = fu::Fabric::new().unwrap();
    assert_eq!(fabric.harvest(&topology, &mut unpinned, 1 << 20), Err(fu::Error::Unsupported));
    assert!(!fabric.harvested(), "a failed harvest leaves the fabric as it was");
}

#[test]
fn a_harvest_measures_every_local_edge() {
    let topology = common::topology();
    let needs = fu::Capabilities::THREAD_PINNING | fu::Capabilities::MEMORY_PLACEMENT;
    if !(fu::comptime_capabilities() & fu::runtime_capabilities()).contains(needs) {
        eprintln!("skipped: this machine lets no pool pin threads and place memory, which a harvest needs");
        return;
    }
    let mut pool = fu::ThreadPool::try_spawn(&topology, 2).unwrap();
    let mut fabric = fu::Fabric::new().unwrap();
    fabric.harvest(&topology, &mut pool, 1 << 20).unwrap();
    assert!(fabric.harvested() && fabric.memory_levels_count() >= 1);
    for domain in topology.compute_domains() {
        let local = topology.local_memory_of(domain);
        assert_eq!(fabric.memory_distance(domain, local), 10, "a domain's own memory is local");
        assert!(fabric.memory_latency_ns(domain, local) > 0.0 && fabric.memory_bandwidth(domain, local) > 0.0);
        assert!(fabric.memory_level_in(local) < fabric.memory_levels_count());
    }
    // The pool still dispatches afterwards.
    pool.for_n(10, |_| {}).unwrap();
}
