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

/// The documented tree, written here independently: blocks of `grain`, summed left to right; a range of blocks
/// `[lo, hi)` splits at `lo` plus the largest power of two below `hi - lo`.
fn documented_tree_sum(data: &[f64], grain: usize) -> f64 {
    fn tree(blocks: &[f64]) -> f64 {
        if blocks.len() == 1 {
            return blocks[0];
        }
        let mut half = 1;
        while half * 2 < blocks.len() {
            half *= 2;
        }
        let (left, right) = blocks.split_at(half);
        [tree(left), tree(right)].into_iter().sum()
    }
    let blocks: Vec<f64> = data.chunks(grain).map(|block| block.iter().sum()).collect();
    if blocks.is_empty() {
        0.0
    } else {
        tree(&blocks)
    }
}

#[test]
fn floating_point_sums_are_bit_identical_at_every_thread_count() {
    let topology = topology();
    // Values over 40 binades, so that the order of additions shows in the last bits.
    let data: Vec<f64> = (0..1_000_003u64)
        .map(|i| {
            let x = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64;
            (x - 0.5) * f64::powi(2.0, (i % 40) as i32 - 20)
        })
        .collect();
    let expected = documented_tree_sum(&data, fu::iter::DEFAULT_GRAIN);
    let naive: f64 = data.iter().sum();
    assert_ne!(expected.to_bits(), naive.to_bits(), "the data must tell orders apart");
    for threads in [1, 2, 3, 8] {
        let pool = fu::ThreadPool::try_spawn(&topology, threads).unwrap();
        let static_sum: f64 = data.par_iter().with_pool(&pool).sum();
        let dynamic_sum: f64 = data.par_iter().with_schedule(&pool, DynamicScheduler).sum();
        let reduced = data.par_iter().with_pool(&pool).reduce(|| 0.0f64, |acc, &x, _| *acc += x, |a, b| a + b);
        assert_eq!(static_sum.to_bits(), expected.to_bits(), "static at {} threads", threads);
        assert_eq!(dynamic_sum.to_bits(), expected.to_bits(), "dynamic at {} threads", threads);
        assert_eq!(reduced.to_bits(), expected.to_bits(), "reduce at {} threads", threads);
        // The fallback, from inside one of the pool's own callbacks, uses the same blocks and tree.
        let nested = fu::SpinMutex::new(Vec::new());
        pool.for_threads(|thread, _| {
            if thread == 0 {
                nested.lock().push(data.par_iter().with_pool(&pool).sum::<f64>().to_bits());
            }
        })
        .unwrap();
        assert_eq!(nested.into_inner(), vec![expected.to_bits()], "fallback at {} threads", threads);
    }
    let grain = 77;
    let pool = fu::ThreadPool::try_spawn(&topology, 2).unwrap();
    let custom: f64 = data.par_iter().with_pool(&pool).with_grain(grain).sum();
    assert_eq!(custom.to_bits(), documented_tree_sum(&data, grain).to_bits(), "grain {}", grain);
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
