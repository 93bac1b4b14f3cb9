//! The parallel iterators against their serial equivalents, at 1 thread and at N, on both schedules, and in the
//! run-on-caller fallback: sources, adaptors, every terminal, reproducible reductions, early exits.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use common::{pool, topology, Tally, THREAD_COUNTS};
use forkunion as fu;
use fu::prelude::*;

/// Sizes around the default grain and the reduction's task cap.
fn sizes() -> Vec<usize> {
    let grain = fu::iter::DEFAULT_GRAIN;
    vec![0, 1, 7, grain - 1, grain, grain + 1, 2 * grain + 3, 100_003]
}

#[test]
fn for_each_visits_every_item_once() {
    for &threads in &THREAD_COUNTS {
        let mut pool = pool(threads);
        for n in sizes() {
            let tally = Tally::new(n);
            let data: Vec<usize> = (0..n).collect();
            (&data[..]).into_par_iter().with_pool(&mut pool).for_each(|&i| tally.hit(i));
            assert_eq!(tally.wrong(), vec![], "static, n = {}, {} threads", n, threads);
            let tally = Tally::new(n);
            data.par_iter().with_schedule(&pool, DynamicScheduler).for_each(|&i| tally.hit(i));
            assert_eq!(tally.wrong(), vec![], "dynamic, n = {}, {} threads", n, threads);
            let tally = Tally::new(n);
            (0..n).into_par_iter().with_schedule(&pool, DynamicScheduler).with_grain(13).for_each(|i| tally.hit(i));
            assert_eq!(tally.wrong(), vec![], "dynamic claims of 13, n = {}, {} threads", n, threads);
        }
    }
}

#[test]
fn mutable_items_go_to_one_thread_each() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        let mut data: Vec<u64> = (0..10_000).collect();
        data.par_iter_mut().with_pool(&pool).for_each(|value| *value *= 3);
        (&mut data).into_par_iter().with_schedule(&pool, DynamicScheduler).for_each(|value| *value += 1);
        assert!(data.iter().enumerate().all(|(i, &v)| v == 3 * i as u64 + 1), "{} threads", threads);
    }
}

#[test]
fn adaptors_match_their_serial_equivalents() {
    let pool = pool(3);
    let a: Vec<i64> = (0..5000).map(|i| (i * 7919) % 1013 - 500).collect();
    let b: Vec<i64> = (0..4000).map(|i| i % 17).collect();

    let zipped: Vec<i64> = a.par_iter().zip(&b).map(|(x, y)| x * y).with_pool(&pool).collect_vec();
    assert_eq!(zipped, a.iter().zip(&b).map(|(x, y)| x * y).collect::<Vec<_>>());

    let enumerated = a.par_iter().enumerate().with_pool(&pool).map(|(i, &x)| i as i64 - x).collect_vec();
    assert_eq!(enumerated, a.iter().enumerate().map(|(i, &x)| i as i64 - x).collect::<Vec<_>>());

    let filtered: i64 = a.par_iter().filter(|&&x| x > 0).map(|&x| x * 2).with_pool(&pool).sum();
    assert_eq!(filtered, a.iter().filter(|&&x| x > 0).map(|&x| x * 2).sum::<i64>());

    let bound_then_adapted =
        a.par_iter().with_pool(&pool).zip(b.par_iter()).filter(|(x, _)| **x % 3 == 0).map(|(x, y)| x - y).count();
    assert_eq!(bound_then_adapted, a.iter().zip(&b).filter(|(x, _)| **x % 3 == 0).count());

    let negative: Vec<i32> = (-50..50i32).into_par_iter().with_pool(&pool).collect_vec();
    assert_eq!(negative, (-50..50).collect::<Vec<_>>());
    #[allow(clippy::reversed_empty_ranges)] // on purpose: an empty range yields nothing
    let empty = (10..3u8).into_par_iter().with_pool(&pool).count();
    assert_eq!(empty, 0);
    assert_eq!((0..u8::MAX).into_par_iter().with_pool(&pool).max(), Some(254));
    assert_eq!((i64::MIN..i64::MIN + 3).into_par_iter().with_pool(&pool).collect_vec().len(), 3);
    assert_eq!(a.par_iter().len(), 5000);
    assert!(b[..0].par_iter().is_empty());
}

#[test]
fn reductions_equal_their_serial_equivalents() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        for n in sizes() {
            let data: Vec<u64> = (0..n as u64).map(|i| (i * 2654435761) % 1000).collect();
            let context = format!("n = {}, {} threads", n, threads);
            let serial_sum: u64 = data.iter().sum();
            assert_eq!(data.par_iter().with_pool(&pool).sum::<u64>(), serial_sum, "{}", context);
            assert_eq!(data.par_iter().with_schedule(&pool, DynamicScheduler).sum::<u64>(), serial_sum);
            assert_eq!(data.par_iter().with_pool(&pool).with_grain(5).sum::<u64>(), serial_sum);
            let evens = data.par_iter().filter(|&&x| x % 2 == 0).with_pool(&pool).count();
            assert_eq!(evens, data.iter().filter(|&&x| x % 2 == 0).count(), "{}", context);
            assert_eq!(data.par_iter().with_pool(&pool).min(), data.iter().min(), "{}", context);
            assert_eq!(data.par_iter().with_pool(&pool).max(), data.iter().max(), "{}", context);
            let xor = data.par_iter().with_pool(&pool).reduce(|| 0u64, |acc, &x, _| *acc ^= x, |a, b| a ^ b);
            assert_eq!(xor, data.iter().fold(0, |a, &x| a ^ x), "{}", context);
            let small: Vec<u32> = (0..n.min(40) as u32).map(|i| i % 3 + 1).collect();
            assert_eq!(
                small.par_iter().map(|&x| x as u64).with_pool(&pool).product::<u64>(),
                small.iter().map(|&x| x as u64).product::<u64>()
            );
        }
    }
}

#[test]
fn reduce_folds_with_the_items_prong() {
    let pool = pool(3);
    let data = vec![1u64; 5000];
    let positions = data.par_iter().with_pool(&pool).reduce(
        || 0usize,
        |acc, _, prong| {
            assert!(prong.thread_index < 3);
            *acc += prong.task_index;
        },
        |a, b| a + b,
    );
    assert_eq!(positions, (0..5000).sum::<usize>());
    let empty: Vec<u64> = Vec::new();
    assert_eq!(empty.par_iter().with_pool(&pool).reduce(|| 7u64, |_, _, _| {}, |a, b| a + b), 7);
    assert_eq!(empty.par_iter().with_pool(&pool).sum::<u64>(), 0);
    assert_eq!(empty.par_iter().with_pool(&pool).product::<u64>(), 1);
    assert_eq!(empty.par_iter().with_pool(&pool).min(), None);
}

#[test]
fn min_and_max_pick_the_first_and_last_of_equals_as_std_does() {
    let pool = pool(3);
    // Keys repeat across blocks: ties are decided by position.
    let items: Vec<(u32, usize)> = (0..20_000).map(|i| ((i % 7) as u32, i)).collect();
    let key = |item: &&(u32, usize)| item.0;
    let min = items.par_iter().with_pool(&pool).min_by_key(key);
    let max = items.par_iter().with_pool(&pool).max_by_key(key);
    assert_eq!(min, items.iter().min_by_key(key));
    assert_eq!(max, items.iter().max_by_key(key));
    assert_eq!(min.unwrap().1, 0);
    assert_eq!(max.unwrap().1, 19_998);
    // `Ord` on items whose equality ignores the position.
    #[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
    struct Key(u32);
    let keys: Vec<Key> = (0..3000).map(|i| Key(i % 5)).collect();
    let first_min = keys.par_iter().with_pool(&pool).min().unwrap() as *const Key;
    let last_max = keys.par_iter().with_pool(&pool).max().unwrap() as *const Key;
    assert_eq!(first_min, keys.iter().min().unwrap() as *const Key);
    assert_eq!(last_max, keys.iter().max().unwrap() as *const Key);
}

/// Step 3 of the rule, in place: `v[i] = v[i] op v[i + s]` for `s = 1, 2, 4, ...`; the value is `v[0]`.
fn rule_tree<T: Copy>(mut values: Vec<T>, op: impl Fn(T, T) -> T) -> T {
    let mut s = 1;
    while s < values.len() {
        let mut i = 0;
        while i + s < values.len() {
            values[i] = op(values[i], values[i + s]);
            i += 2 * s;
        }
        s *= 2;
    }
    values[0]
}

/// The reduction rule of the module docs, written here plainly and serially: blocks of `grain`; in a block, lane
/// `j < 16` folds items `j, j + 16, j + 32, ...` from the left; the in-place tree `v[i] = v[i] op v[i + s]` for
/// `s = 1, 2, 4, ...` over a block's lanes, then over the blocks' values; `init op` that tree, or `init` for no
/// items. This is the C++ algorithms' rule (`fu::reduce(pool, first, last, init, op)`).
fn rule_reduce(data: &[f64], grain: usize, init: f64, op: fn(f64, f64) -> f64) -> f64 {
    const LANES: usize = 16;
    let tree = |values: Vec<f64>| rule_tree(values, op);
    if data.is_empty() {
        return init;
    }
    let blocks: Vec<f64> = data
        .chunks(grain)
        .map(|block| {
            let lanes: Vec<f64> = (0..block.len().min(LANES))
                .map(|j| block[j..].iter().step_by(LANES).skip(1).fold(block[j], |lane, &x| op(lane, x)))
                .collect();
            tree(lanes)
        })
        .collect();
    op(init, tree(blocks))
}

fn plus(a: f64, b: f64) -> f64 {
    a + b
}
fn times(a: f64, b: f64) -> f64 {
    a * b
}

/// Pseudo-random values of wildly mixed magnitudes (±1e16, ±1, small fractions over 40 binades), so that almost
/// any change in the order of additions changes the result's bits.
fn mixed_magnitudes(n: usize) -> Vec<f64> {
    (0..n as u64)
        .map(|i| {
            let h = (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i >> 3).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            let fraction = (h >> 11) as f64 / (1u64 << 53) as f64;
            let sign = if h & 1 == 0 { 1.0 } else { -1.0 };
            sign * match (h >> 1) % 4 {
                0 => 1e16,
                1 => 1.0 + fraction,
                2 => 1e16 * (1.0 + fraction),
                _ => fraction * f64::powi(2.0, ((h >> 3) % 40) as i32 - 20),
            }
        })
        .collect()
}

/// Sizes around the lanes and the default grain.
fn rule_sizes() -> [usize; 10] {
    [0, 1, 15, 16, 17, 4095, 4096, 4097, 3 * 4096 + 5, 100_003]
}

/// The empty sum of `f64`, which is also what `sum` starts from (-0.0 since Rust 1.82, 0.0 before).
fn empty_sum() -> f64 {
    std::iter::empty::<f64>().sum()
}

/// The bits of every reproducible `f64` terminal of one chain: `sum`, `reduce` from 0.0 and from -0.0, `product`
/// of values near 1.
fn terminal_bits<S: Scheduler>(pool: &fu::ThreadPool, schedule: S, data: &[f64], grain: Option<usize>) -> [u64; 4] {
    let bind = || {
        let bound = data.par_iter().with_schedule(pool, schedule);
        match grain {
            Some(grain) => bound.with_grain(grain),
            None => bound,
        }
    };
    let sum: f64 = bind().sum();
    let from_zero = bind().reduce(|| 0.0f64, |lane, &x, _| *lane += x, |a, b| a + b);
    let from_negative_zero = bind().reduce(|| -0.0f64, |lane, &x, _| *lane += x, |a, b| a + b);
    let product: f64 = bind().map(|&x| near_one(x)).product();
    [sum.to_bits(), from_zero.to_bits(), from_negative_zero.to_bits(), product.to_bits()]
}

fn near_one(x: f64) -> f64 {
    1.0 + x * 1e-17
}

/// What [`terminal_bits`] must give: the rule with the documented `init` of each terminal, and without a grain
/// the C++ algorithms' default of 4096, written out so that a change of the crate's default shows.
fn rule_bits(data: &[f64], grain: Option<usize>) -> [u64; 4] {
    let g = grain.unwrap_or(4096);
    let factors: Vec<f64> = data.iter().map(|&x| near_one(x)).collect();
    [
        rule_reduce(data, g, empty_sum(), plus).to_bits(),
        rule_reduce(data, g, 0.0, plus).to_bits(),
        rule_reduce(data, g, -0.0, plus).to_bits(),
        rule_reduce(&factors, g, 1.0, times).to_bits(),
    ]
}

const RULE_GRAINS: [Option<usize>; 4] = [None, Some(1), Some(7), Some(100)];

#[test]
fn the_data_tells_the_orders_apart() {
    // Without this, the bit-for-bit checks below could pass for a different grouping.
    let data = mixed_magnitudes(100_003);
    let rule = rule_reduce(&data, 4096, -0.0, plus);
    let serial: f64 = data.iter().sum();
    let blocks_in_order: Vec<f64> = data.chunks(4096).map(|block| block.iter().sum()).collect();
    let one_lane_per_block = rule_reduce(&blocks_in_order, 1, -0.0, plus);
    let other_grain = rule_reduce(&data, 1024, -0.0, plus);
    for (name, other) in [("serial", serial), ("one lane per block", one_lane_per_block), ("grain 1024", other_grain)] {
        assert_ne!(rule.to_bits(), other.to_bits(), "the rule against {}", name);
    }
    for (n, grain) in [(17, 7), (4097, 100), (3 * 4096 + 5, 4096)] {
        let data = mixed_magnitudes(n);
        let serial: f64 = data.iter().sum();
        assert_ne!(rule_reduce(&data, grain, -0.0, plus).to_bits(), serial.to_bits(), "n = {}, grain {}", n, grain);
    }
    let factors: Vec<f64> = data.iter().map(|&x| near_one(x)).collect();
    let serial_product: f64 = factors.iter().product();
    assert_ne!(rule_reduce(&factors, 4096, 1.0, times).to_bits(), serial_product.to_bits(), "products");
}

#[test]
fn floating_point_reductions_follow_the_rule_bit_for_bit() {
    let topology = topology();
    let cases: Vec<(Vec<f64>, Option<usize>, [u64; 4])> = rule_sizes()
        .iter()
        .flat_map(|&n| RULE_GRAINS.iter().map(move |&grain| (n, grain)))
        .map(|(n, grain)| {
            let data = mixed_magnitudes(n);
            let expected = rule_bits(&data, grain);
            (data, grain, expected)
        })
        .collect();
    for threads in [1, 2, 3, 8] {
        let pool = fu::ThreadPool::try_spawn(&topology, threads).unwrap();
        for (data, grain, expected) in &cases {
            let context = format!("n = {}, grain {:?}, {} threads", data.len(), grain, threads);
            assert_eq!(terminal_bits(&pool, StaticScheduler, data, *grain), *expected, "static, {}", context);
            assert_eq!(terminal_bits(&pool, DynamicScheduler, data, *grain), *expected, "dynamic, {}", context);
        }
    }
}

#[test]
fn the_serial_fallback_follows_the_rule_bit_for_bit() {
    let topology = topology();
    for threads in [2, 3] {
        let pool = fu::ThreadPool::try_spawn(&topology, threads).unwrap();
        let results = fu::SpinMutex::new(Vec::new());
        let elsewhere = AtomicUsize::new(0);
        // From inside one of the pool's own callbacks: the pool refuses, and each terminal runs on the caller.
        pool.for_threads(|thread, _| {
            if thread != 0 {
                return;
            }
            let me = std::thread::current().id();
            let on_the_caller = |&x: &f64| {
                if std::thread::current().id() != me {
                    elsewhere.fetch_add(1, Ordering::Relaxed);
                }
                x
            };
            let _: f64 = mixed_magnitudes(10_000).par_iter().with_pool(&pool).map(on_the_caller).sum();
            for n in rule_sizes() {
                let data = mixed_magnitudes(n);
                for grain in RULE_GRAINS {
                    let bits = [
                        terminal_bits(&pool, StaticScheduler, &data, grain),
                        terminal_bits(&pool, DynamicScheduler, &data, grain),
                    ];
                    results.lock().push((n, grain, bits));
                }
            }
        })
        .unwrap();
        assert_eq!(elsewhere.into_inner(), 0, "items of the fallback ran off the calling thread");
        let results = results.into_inner();
        assert_eq!(results.len(), rule_sizes().len() * RULE_GRAINS.len());
        for (n, grain, [static_bits, dynamic_bits]) in results {
            let expected = rule_bits(&mixed_magnitudes(n), grain);
            let context = format!("fallback, n = {}, grain {:?}, {} threads", n, grain, threads);
            assert_eq!(static_bits, expected, "static, {}", context);
            assert_eq!(dynamic_bits, expected, "dynamic, {}", context);
        }
    }
}

/// The rule for an `(f64, f64)` sum-and-max written out serially with 4 lanes (the 16-byte case of
/// `fu::iter::reduction_lanes`): every lane starts at `(0.0, -inf)` and folds its items; no `init` on top.
fn rule_sum_and_max(data: &[f64], grain: usize) -> (f64, f64) {
    const LANES: usize = 4;
    let join = |a: (f64, f64), b: (f64, f64)| (a.0 + b.0, if a.1 < b.1 { b.1 } else { a.1 });
    let tree = |values: Vec<(f64, f64)>| rule_tree(values, join);
    let identity = (0.0, f64::NEG_INFINITY);
    if data.is_empty() {
        return identity;
    }
    let blocks: Vec<(f64, f64)> = data
        .chunks(grain)
        .map(|block| {
            let lanes: Vec<(f64, f64)> = (0..block.len().min(LANES))
                .map(|j| block[j..].iter().step_by(LANES).fold(identity, |lane, &x| join(lane, (x, x))))
                .collect();
            tree(lanes)
        })
        .collect();
    tree(blocks)
}

#[test]
fn a_sixteen_byte_accumulator_reduces_in_four_lanes() {
    use fu::iter::reduction_lanes;
    assert_eq!(
        [
            reduction_lanes::<f64>(),
            reduction_lanes::<u8>(),
            reduction_lanes::<()>(),
            reduction_lanes::<(f64, f64)>(),
            reduction_lanes::<[f64; 3]>(),
            reduction_lanes::<[f64; 4]>(),
            reduction_lanes::<[f64; 8]>(),
            reduction_lanes::<[u8; 200]>(),
        ],
        [16, 16, 16, 4, 2, 2, 1, 1]
    );
    let topology = topology();
    let cases: Vec<(usize, Option<usize>)> =
        [0, 1, 3, 4, 5, 4095, 4096, 4097, 100_003].iter().flat_map(|&n| RULE_GRAINS.map(move |g| (n, g))).collect();
    // The data tells 4 lanes from 16: the rule with the other lane count gives other bits.
    let data = mixed_magnitudes(100_003);
    let sixteen = rule_reduce(&data, 4096, 0.0, plus);
    assert_ne!(rule_sum_and_max(&data, 4096).0.to_bits(), sixteen.to_bits());
    for threads in [1, 2, 3, 8] {
        let pool = fu::ThreadPool::try_spawn(&topology, threads).unwrap();
        for &(n, grain) in &cases {
            let data = mixed_magnitudes(n);
            let bound = data.par_iter().with_pool(&pool);
            let bound = match grain {
                Some(grain) => bound.with_grain(grain),
                None => bound,
            };
            let both = bound.reduce(
                || (0.0f64, f64::NEG_INFINITY),
                |lane, &x, _| *lane = (lane.0 + x, if lane.1 < x { x } else { lane.1 }),
                |a, b| (a.0 + b.0, if a.1 < b.1 { b.1 } else { a.1 }),
            );
            let expected = rule_sum_and_max(&data, grain.unwrap_or(4096));
            let context = format!("n = {}, grain {:?}, {} threads", n, grain, threads);
            assert_eq!(both.0.to_bits(), expected.0.to_bits(), "sum, {}", context);
            assert_eq!(both.1.to_bits(), expected.1.to_bits(), "max, {}", context);
        }
    }
}

#[test]
fn zeros_keep_the_documented_signs() {
    let pool = pool(3);
    for n in [0usize, 1, 17, 5000] {
        let zeros = vec![-0.0f64; n];
        let sum: f64 = zeros.par_iter().with_pool(&pool).sum();
        let serial: f64 = zeros.iter().sum();
        assert_eq!(sum.to_bits(), serial.to_bits(), "sum of {} negative zeros, as the serial sum", n);
        assert_eq!(sum.to_bits(), rule_reduce(&zeros, 4096, empty_sum(), plus).to_bits());
        let from_zero = zeros.par_iter().with_pool(&pool).reduce(|| 0.0f64, |lane, &x, _| *lane += x, |a, b| a + b);
        assert_eq!(from_zero.to_bits(), 0.0f64.to_bits(), "0.0 + -0.0 is 0.0, as C++'s reduce from 0.0 gives");
    }
}

#[test]
fn filtered_positions_leave_their_lanes_unchanged() {
    let pool = pool(3);
    for n in [17usize, 4097, 100_003] {
        let data = mixed_magnitudes(n);
        let keep = |x: f64| x.abs() < 1e15;
        let sum: f64 = data.par_iter().filter(|&&x| keep(x)).with_pool(&pool).sum();
        // A dropped position counts as the empty sum, which adds nothing.
        let kept: Vec<f64> = data.iter().map(|&x| if keep(x) { x } else { empty_sum() }).collect();
        assert_eq!(sum.to_bits(), rule_reduce(&kept, 4096, empty_sum(), plus).to_bits(), "n = {}", n);
    }
}

#[test]
fn ties_across_lanes_go_to_the_first_or_last_position() {
    let pool = pool(3);
    for grain in [None, Some(16), Some(40)] {
        // Key 0 at positions 5 (lane 5) and 16 (lane 0 of the next stride, or of the next block at grain 16).
        let mut keys = vec![1u32; 100];
        keys[5] = 0;
        keys[16] = 0;
        // Key 9 at positions 3 (lane 3) and 17 (lane 1).
        keys[3] = 9;
        keys[17] = 9;
        let bound = || {
            let bound = keys.par_iter().enumerate().with_pool(&pool);
            match grain {
                Some(grain) => bound.with_grain(grain),
                None => bound,
            }
        };
        assert_eq!(bound().min_by_key(|(_, &key)| key).map(|(i, _)| i), Some(5), "grain {:?}", grain);
        assert_eq!(bound().max_by_key(|(_, &key)| key).map(|(i, _)| i), Some(17), "grain {:?}", grain);
    }
}

#[test]
fn reduce_with_scratch_combines_every_threads_slot() {
    for &threads in &THREAD_COUNTS {
        let mut pool = pool(threads);
        let data: Vec<u64> = (0..50_000).collect();
        for dynamic in [false, true] {
            let mut scratch: Vec<CacheAligned<u64>> = (0..pool.threads_count()).map(|_| CacheAligned(0)).collect();
            let fold = |acc: &mut CacheAligned<u64>, value: &u64, prong: fu::Prong| {
                assert!(prong.thread_index < threads);
                acc.0 += *value;
            };
            let combine = |a: &mut CacheAligned<u64>, b: &CacheAligned<u64>| a.0 += b.0;
            let total = if dynamic {
                data.par_iter().with_schedule(&mut pool, DynamicScheduler).reduce_with_scratch(
                    &mut scratch,
                    fold,
                    combine,
                )
            } else {
                data.par_iter().with_pool(&mut pool).reduce_with_scratch(&mut scratch, fold, combine)
            };
            assert_eq!(total.0, 50_000 * 49_999 / 2, "{} threads, dynamic {}", threads, dynamic);
        }
    }
}

#[test]
#[should_panic(expected = "needs a slot per thread: 1 slots for 3 threads")]
fn reduce_with_scratch_refuses_too_few_slots() {
    let pool = pool(3);
    let mut scratch = [0u64];
    (0..10u64).into_par_iter().with_pool(&pool).reduce_with_scratch(&mut scratch, |a, x, _| *a += x, |a, b| *a += b);
}

#[test]
#[should_panic(expected = "a grain of 0 positions")]
fn a_zero_grain_is_refused() {
    let pool = pool(1);
    let _ = (0..10u64).into_par_iter().with_pool(&pool).with_grain(0);
}

#[test]
fn searches_find_the_documented_match() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        let n = 300_000usize;
        let data: Vec<usize> = (0..n).map(|i| i % 1000).collect();
        for target in [0usize, 1, 999, 1234] {
            let first = data.par_iter().enumerate().with_pool(&pool).find_first(|(_, &x)| x == target);
            let last = data.par_iter().enumerate().with_pool(&pool).find_last(|(_, &x)| x == target);
            let any = data.par_iter().with_pool(&pool).find_any(|&&x| x == target);
            let expected_first = data.iter().enumerate().find(|(_, &x)| x == target);
            let expected_last = data.iter().enumerate().rev().find(|(_, &x)| x == target);
            assert_eq!(first, expected_first, "find_first({}) at {} threads", target, threads);
            assert_eq!(last, expected_last, "find_last({}) at {} threads", target, threads);
            assert_eq!(any.copied(), expected_first.map(|(_, &x)| x), "find_any({})", target);
            assert_eq!(data.par_iter().with_pool(&pool).any(|&x| x == target), target < 1000);
            assert_eq!(data.par_iter().with_pool(&pool).all(|&x| x != target), target >= 1000);
        }
        assert!(data.par_iter().with_pool(&pool).all(|&x| x < 1000));
        let empty: [u8; 0] = [];
        assert_eq!(empty.par_iter().with_pool(&pool).find_first(|_| true), None);
        assert!(!empty.par_iter().with_pool(&pool).any(|_| true));
        assert!(empty.par_iter().with_pool(&pool).all(|_| false));
    }
}

#[test]
fn searches_stop_early() {
    let n = 8_000_000usize;
    // One thread claims blocks in order and stops at the match: exactly (index + 1) predicate calls.
    let single = pool(1);
    for target in [0usize, 5, 1023, 1024, 777_777] {
        let calls = AtomicUsize::new(0);
        let found = (0..n)
            .into_par_iter()
            .with_pool(&single)
            .find_first(|&i| {
                calls.fetch_add(1, Ordering::Relaxed);
                i == target
            })
            .unwrap();
        assert_eq!((found, calls.into_inner()), (target, target + 1), "find_first at 1 thread");
        let calls = AtomicUsize::new(0);
        let found = (0..n)
            .into_par_iter()
            .with_pool(&single)
            .find_last(|&i| {
                calls.fetch_add(1, Ordering::Relaxed);
                i == n - 1 - target
            })
            .unwrap();
        assert_eq!((found, calls.into_inner()), (n - 1 - target, target + 1), "find_last at 1 thread");
    }
    // At N threads the others stop once they see the match: far fewer calls than positions.
    for &threads in &THREAD_COUNTS[1..] {
        let pool = pool(threads);
        let calls = AtomicUsize::new(0);
        let counting = |&i: &usize| {
            calls.fetch_add(1, Ordering::Relaxed);
            i == 10
        };
        assert_eq!((0..n).into_par_iter().with_pool(&pool).find_first(|i| counting(i)), Some(10));
        assert!((0..n).into_par_iter().with_pool(&pool).any(|i| counting(&i)));
        assert!(
            calls.load(Ordering::Relaxed) < n,
            "{} calls over {} positions at {} threads",
            calls.into_inner(),
            n,
            threads
        );
    }
}

#[test]
fn try_for_each_returns_an_error_and_stops() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        let calls = AtomicUsize::new(0);
        let outcome = (0..1_000_000usize).into_par_iter().with_pool(&pool).try_for_each(|i| {
            calls.fetch_add(1, Ordering::Relaxed);
            if i % 100_000 == 4321 {
                Err(i)
            } else {
                Ok(())
            }
        });
        let error = outcome.unwrap_err();
        assert_eq!(error % 100_000, 4321);
        assert!(calls.load(Ordering::Relaxed) < 1_000_000, "{} threads stopped early", threads);
        if threads == 1 {
            assert_eq!((error, calls.into_inner()), (4321, 4322));
        }
        let tally = Tally::new(5000);
        let fine: Result<(), ()> = (0..5000usize).into_par_iter().with_pool(&pool).try_for_each(|i| {
            tally.hit(i);
            Ok(())
        });
        assert_eq!((fine, tally.wrong()), (Ok(()), vec![]));
    }
}

#[test]
fn terminals_run_on_the_caller_when_the_pool_refuses() {
    let topology = topology();
    let mut pool = fu::ThreadPool::try_spawn(&topology, 3).unwrap();
    let data: Vec<u32> = (0..20_000).collect();
    let expected: u64 = data.iter().map(|&x| x as u64).sum();
    // From inside a callback: the pool is busy with that very dispatch.
    let results = fu::SpinMutex::new(Vec::new());
    pool.for_threads(|_, _| {
        let me = std::thread::current().id();
        let sum: u64 = data
            .par_iter()
            .with_pool(&pool)
            .map(|&x| {
                assert_eq!(std::thread::current().id(), me, "every item on the calling thread");
                x as u64
            })
            .sum();
        let found = data.par_iter().with_pool(&pool).find_first(|&&x| x == 12_345).copied();
        let tally = Tally::new(data.len());
        data.par_iter().with_schedule(&pool, DynamicScheduler).for_each(|&x| tally.hit(x as usize));
        results.lock().push((sum, found, tally.wrong().len()));
    })
    .unwrap();
    assert_eq!(results.into_inner(), vec![(expected, Some(12_345), 0); 3]);
    // On a terminated pool.
    pool.terminate().unwrap();
    assert_eq!(data.par_iter().with_pool(&pool).map(|&x| x as u64).sum::<u64>(), expected);
    assert_eq!(data.par_iter().with_pool(&pool).collect_vec().len(), data.len());
    let mut scratch = [CacheAligned(0u64)];
    let total = data.par_iter().with_pool(&pool).reduce_with_scratch(
        &mut scratch,
        |a, &x, _| a.0 += x as u64,
        |a, b| a.0 += b.0,
    );
    assert_eq!(total.0, expected);
}

#[test]
fn items_need_not_be_send_when_they_stay_on_their_thread() {
    // `Rc` made and dropped inside one callback never crosses threads: allowed.
    let pool = pool(2);
    let lengths = (0..1000usize)
        .into_par_iter()
        .map(std::rc::Rc::new)
        .map(|rc| std::rc::Rc::strong_count(&rc))
        .with_pool(&pool)
        .sum::<usize>();
    assert_eq!(lengths, 1000);
}
