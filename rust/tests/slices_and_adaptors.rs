//! The slice sources (`par_chunks`, `par_chunks_mut`, their `_exact` forms, `par_windows`) and the adaptors and
//! terminals that mirror Rayon's (`zip_eq`, `take`, `skip`, `rev`, `step_by`, `filter_map`, `inspect`, `copied`,
//! `cloned`, `min_by`, `max_by`, `find_map_*`, `position_*`, `collect`) against `std`'s serial equivalents: every
//! item exactly once, the chunks' bounds, empty slices, uneven tails, chunks larger than the slice, refusals of a
//! chunk size of 0, and nested use (run on the calling thread).

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use common::{pool, Tally, THREAD_COUNTS};
use forkunion as fu;
use fu::prelude::*;

/// Lengths around the chunk sizes below and the default grain.
const LENGTHS: [usize; 9] = [0, 1, 2, 6, 7, 8, 63, 1000, 4099];
/// Chunk sizes: one item, an uneven divisor, a power of two, and larger than every length but the last.
const SIZES: [usize; 4] = [1, 7, 64, 4098];

/// Where each chunk starts and how long it is, from its address inside `base`.
fn bounds(base: &[u32], chunk: &[u32]) -> (usize, usize) {
    let offset = (chunk.as_ptr() as usize - base.as_ptr() as usize) / std::mem::size_of::<u32>();
    (offset, chunk.len())
}

#[test]
fn chunks_match_std_and_cover_every_item_once() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        for len in LENGTHS {
            let data: Vec<u32> = (0..len as u32).collect();
            for size in SIZES {
                let context = format!("len {}, size {}, {} threads", len, size, threads);
                let expected: Vec<(usize, usize)> = data.chunks(size).map(|c| bounds(&data, c)).collect();
                let got = data.par_chunks(size).map(|c| bounds(&data, c)).with_pool(&pool).collect_vec();
                assert_eq!(got, expected, "{}", context);
                assert_eq!(data.par_chunks(size).len(), data.chunks(size).len(), "{}", context);
                let tally = Tally::new(len);
                data.par_chunks(size)
                    .with_schedule(&pool, DynamicScheduler)
                    .for_each(|chunk| chunk.iter().for_each(|&i| tally.hit(i as usize)));
                assert_eq!(tally.wrong(), vec![], "{}", context);

                let exact = data.par_chunks_exact(size);
                assert_eq!(exact.remainder(), data.chunks_exact(size).remainder(), "{}", context);
                let got = exact.map(|c| bounds(&data, c)).with_pool(&pool).collect_vec();
                let expected: Vec<(usize, usize)> = data.chunks_exact(size).map(|c| bounds(&data, c)).collect();
                assert_eq!(got, expected, "{}", context);

                let expected: Vec<(usize, usize)> = data.windows(size).map(|w| bounds(&data, w)).collect();
                let got = data.par_windows(size).map(|w| bounds(&data, w)).with_pool(&pool).collect_vec();
                assert_eq!(got, expected, "windows, {}", context);
            }
        }
    }
}

#[test]
fn chunks_mut_write_every_item_once_in_place() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        for len in LENGTHS {
            for size in SIZES {
                let context = format!("len {}, size {}, {} threads", len, size, threads);
                let mut data = vec![0u32; len];
                let calls = Tally::new(data.chunks(size).len());
                data.par_chunks_mut(size).enumerate().with_pool(&pool).for_each(|(index, chunk)| {
                    calls.hit(index);
                    assert!(chunk.len() == size || (index + 1) * size >= len, "only the last chunk is short");
                    for (column, cell) in chunk.iter_mut().enumerate() {
                        *cell += (index * size + column) as u32 + 1;
                    }
                });
                assert_eq!(calls.wrong(), vec![], "{}", context);
                assert!(data.iter().enumerate().all(|(i, &v)| v == i as u32 + 1), "{}", context);

                data.par_chunks_mut(size)
                    .with_schedule(&pool, DynamicScheduler)
                    .with_grain(3)
                    .for_each(|chunk| chunk.iter_mut().for_each(|v| *v *= 2));
                assert!(data.iter().enumerate().all(|(i, &v)| v == 2 * (i as u32 + 1)), "dynamic, {}", context);

                let mut exact = data.par_chunks_exact_mut(size);
                let tail = exact.take_remainder();
                assert_eq!(tail.len(), len % size, "{}", context);
                assert!(exact.take_remainder().is_empty(), "the remainder is handed out once");
                tail.iter_mut().for_each(|v| *v = 0);
                exact.with_pool(&pool).for_each(|chunk| {
                    assert_eq!(chunk.len(), size);
                    chunk.iter_mut().for_each(|v| *v = 1);
                });
                let whole = len - len % size;
                assert!(data[..whole].iter().all(|&v| v == 1) && data[whole..].iter().all(|&v| v == 0), "{}", context);
                assert_eq!(data.par_chunks_exact_mut(size).into_remainder().len(), len % size);
            }
        }
    }
}

#[test]
fn rows_of_an_output_zip_with_rows_of_the_inputs() {
    let pool = pool(3);
    let (rows, columns) = (37, 11);
    let a: Vec<f64> = (0..rows * columns).map(|i| i as f64).collect();
    let b: Vec<f64> = (0..rows * columns).map(|i| (i % 5) as f64).collect();
    let mut out = vec![0.0; rows * columns];
    out.par_chunks_mut(columns).zip(a.par_chunks(columns)).zip(b.par_chunks(columns)).with_pool(&pool).for_each(
        |((row, x), y)| {
            for ((o, x), y) in row.iter_mut().zip(x).zip(y) {
                *o = x * y;
            }
        },
    );
    let expected: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    assert_eq!(out, expected);
    // Unequal lengths: `zip` stops at the shorter, `zip_eq` refuses before running anything.
    assert_eq!(out.par_chunks_mut(columns).zip(a.par_chunks(2 * columns)).len(), (rows + 1) / 2);
    let refused = catch_unwind(AssertUnwindSafe(|| {
        out.par_chunks_mut(columns).zip_eq(a.par_chunks(2 * columns)).with_pool(&pool).for_each(|_| unreachable!());
    }));
    let message = *refused.expect_err("zip_eq of unequal lengths panics").downcast::<String>().unwrap();
    assert_eq!(message, format!("forkunion: zip_eq of iterators of {} and {} items", rows, (rows + 1) / 2));
}

#[test]
fn a_chunk_size_of_zero_is_refused_with_the_methods_name() {
    let mut data = vec![0u32; 10];
    let message = |run: &mut dyn FnMut()| -> String {
        let payload = catch_unwind(AssertUnwindSafe(run)).expect_err("refused");
        match payload.downcast::<String>() {
            Ok(text) => *text,
            Err(payload) => payload.downcast::<&str>().expect("a text message").to_string(),
        }
    };
    assert_eq!(
        message(&mut || {
            let _ = data.par_chunks(0);
        }),
        "forkunion: par_chunks with a chunk size of 0"
    );
    assert_eq!(
        message(&mut || {
            let _ = data.par_chunks_exact(0);
        }),
        "forkunion: par_chunks_exact with a chunk size of 0"
    );
    assert_eq!(
        message(&mut || {
            let _ = data.par_windows(0);
        }),
        "forkunion: par_windows with a chunk size of 0"
    );
    assert_eq!(
        message(&mut || {
            let _ = data.par_chunks_mut(0);
        }),
        "forkunion: par_chunks_mut with a chunk size of 0"
    );
    assert_eq!(
        message(&mut || {
            let _ = data.par_chunks_exact_mut(0);
        }),
        "forkunion: par_chunks_exact_mut with a chunk size of 0"
    );
    assert_eq!(
        message(&mut || {
            let _ = data.par_iter().step_by(0);
        }),
        "forkunion: step_by with a step of 0"
    );
    assert!(data.iter().all(|&v| v == 0));
}

#[test]
fn nested_chunk_loops_run_on_the_calling_thread() {
    let pool = pool(3);
    let results = fu::SpinMutex::new(Vec::new());
    pool.for_n(3, |prong| {
        let me = std::thread::current().id();
        let mut local = vec![0u32; 1000 + prong.task_index];
        local.par_chunks_mut(7).with_pool(&pool).for_each(|chunk| {
            assert_eq!(std::thread::current().id(), me, "every chunk on the calling thread");
            chunk.iter_mut().for_each(|v| *v += 1);
        });
        let sums = local.par_chunks(64).map(|c| c.iter().sum::<u32>()).with_pool(&pool).collect::<Vec<u32>>();
        results.lock().push((local.iter().all(|&v| v == 1), sums.iter().sum::<u32>() as usize, local.len()));
    })
    .unwrap();
    let mut results = results.into_inner();
    results.sort_unstable_by_key(|r| r.2);
    assert_eq!(results, vec![(true, 1000, 1000), (true, 1001, 1001), (true, 1002, 1002)]);
}

#[test]
fn index_adaptors_match_std() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        for len in LENGTHS {
            let data: Vec<u32> = (0..len as u32).map(|i| i.wrapping_mul(2654435761) % 1000).collect();
            for n in [0, 1, 5, len / 2, len, len + 3] {
                let context = format!("len {}, n {}, {} threads", len, n, threads);
                let take = data.par_iter().take(n).copied().with_pool(&pool).collect_vec();
                assert_eq!(take, data.iter().take(n).copied().collect::<Vec<_>>(), "take, {}", context);
                let skip = data.par_iter().skip(n).copied().with_pool(&pool).collect_vec();
                assert_eq!(skip, data.iter().skip(n).copied().collect::<Vec<_>>(), "skip, {}", context);
                let step = n.max(1);
                let stepped = data.par_iter().cloned().step_by(step).with_pool(&pool).collect_vec();
                assert_eq!(stepped, data.iter().cloned().step_by(step).collect::<Vec<_>>(), "step_by, {}", context);
            }
            let reversed = data.par_iter().rev().enumerate().with_pool(&pool).collect_vec();
            assert_eq!(reversed, data.iter().rev().enumerate().collect::<Vec<_>>(), "rev, len {}", len);
            // Each base position exactly once through every remapping, on both schedules.
            let tally = Tally::new(len);
            (0..len).into_par_iter().rev().skip(1).step_by(2).with_pool(&pool).for_each(|i| tally.hit(i));
            (0..len).into_par_iter().rev().take(1).with_schedule(&pool, DynamicScheduler).for_each(|i| tally.hit(i));
            (0..len)
                .into_par_iter()
                .rev()
                .skip(2)
                .step_by(2)
                .with_schedule(&pool, DynamicScheduler)
                .for_each(|i| tally.hit(i));
            assert_eq!(tally.wrong(), vec![], "rev/skip/step_by, len {}", len);
        }
    }
}

#[test]
fn item_adaptors_and_terminals_match_std() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        for len in [0usize, 1, 17, 4096, 9001] {
            let data: Vec<i64> = (0..len as i64).map(|i| (i * 7919) % 1013 - 500).collect();
            let context = format!("len {}, {} threads", len, threads);
            let half = |&x: &i64| if x % 2 == 0 { Some(x / 2) } else { None };
            let got: Vec<i64> = data.par_iter().filter_map(half).with_pool(&pool).collect();
            assert_eq!(got, data.iter().filter_map(half).collect::<Vec<_>>(), "filter_map, {}", context);
            let got: Vec<i64> =
                data.par_iter().with_schedule(&pool, DynamicScheduler).with_grain(5).filter_map(half).collect();
            assert_eq!(got, data.iter().filter_map(half).collect::<Vec<_>>(), "dynamic filter_map, {}", context);
            let text: String =
                data.par_iter().map(|x| (b'a' + (x.rem_euclid(26)) as u8) as char).with_pool(&pool).collect();
            assert_eq!(text, data.iter().map(|x| (b'a' + (x.rem_euclid(26)) as u8) as char).collect::<String>());

            let seen = Tally::new(len);
            let sum: i64 =
                data.par_iter().enumerate().inspect(|(i, _)| seen.hit(*i)).map(|(_, &x)| x).with_pool(&pool).sum();
            assert_eq!((sum, seen.wrong()), (data.iter().sum::<i64>(), vec![]), "inspect, {}", context);

            // Keys with ties: the first (min) and last (max) of equals, as `std`.
            let by_key = |a: &&i64, b: &&i64| (**a % 7).cmp(&(**b % 7));
            let min = data.par_iter().with_pool(&pool).min_by(by_key).map(|x| x as *const i64);
            let max = data.par_iter().with_pool(&pool).max_by(by_key).map(|x| x as *const i64);
            assert_eq!(min, data.iter().min_by(by_key).map(|x| x as *const i64), "min_by, {}", context);
            assert_eq!(max, data.iter().max_by(by_key).map(|x| x as *const i64), "max_by, {}", context);

            let big = |&x: &i64| if x > 480 { Some(x * 10) } else { None };
            assert_eq!(data.par_iter().with_pool(&pool).find_map_first(big), data.iter().find_map(big), "{}", context);
            assert_eq!(data.par_iter().with_pool(&pool).find_map_last(big), data.iter().filter_map(big).next_back());
            let any = data.par_iter().with_pool(&pool).find_map_any(big);
            assert_eq!(any.is_some(), data.iter().any(|x| big(x).is_some()), "{}", context);
            assert!(any.map_or(true, |v| data.contains(&(v / 10))));

            let odd = |x: &i64| x % 2 != 0;
            assert_eq!(data.par_iter().with_pool(&pool).position_first(odd), data.iter().position(odd), "{}", context);
            assert_eq!(data.par_iter().with_pool(&pool).position_last(odd), data.iter().rposition(odd), "{}", context);
            let at = data.par_iter().with_pool(&pool).position_any(odd);
            assert_eq!(at.is_some(), data.iter().any(odd), "{}", context);
            assert!(at.map_or(true, |i| odd(&data[i])));
        }
    }
}

#[test]
fn slices_of_zero_sized_items_as_long_as_usize_allows() {
    // `usize::MAX` items take no memory: the counts must not overflow computing chunk ends or window counts.
    // SAFETY: zero-sized items need no memory, so any aligned non-null pointer holds `usize::MAX` of them (not
    // `vec![(); usize::MAX]`, which older toolchains fill one item at a time).
    let units: &[()] = unsafe { std::slice::from_raw_parts(std::ptr::NonNull::dangling().as_ptr(), usize::MAX) };
    let pool = pool(2);
    let half = usize::MAX / 2 + 1;
    assert_eq!(units.par_chunks(half).len(), 2);
    let lengths = units.par_chunks(half).map(<[()]>::len).with_pool(&pool).collect_vec();
    assert_eq!(lengths, vec![half, usize::MAX - half]);
    assert_eq!(units.par_windows(usize::MAX).len(), 1);
    assert_eq!(units.par_windows(1).skip(usize::MAX - 2).with_pool(&pool).count(), 2);
    assert_eq!(units[..3].par_windows(usize::MAX).len(), 0);
}

#[test]
fn adaptors_after_binding_match_adaptors_before_it() {
    let pool = pool(3);
    let data: Vec<u64> = (0..5000).map(|i| (i * 7919) % 1013).collect();
    let before = data.par_iter().copied().rev().skip(3).take(4000).step_by(3).with_pool(&pool).collect_vec();
    let after = data.par_iter().with_pool(&pool).copied().rev().skip(3).take(4000).step_by(3).collect_vec();
    let serial: Vec<u64> = data.iter().copied().rev().skip(3).take(4000).step_by(3).collect();
    assert_eq!((&before, &after), (&serial, &serial));
    let seen = Tally::new(data.len());
    let cloned: Vec<u64> = data
        .par_iter()
        .enumerate()
        .with_schedule(&pool, DynamicScheduler)
        .inspect(|(i, _)| seen.hit(*i))
        .map(|(_, x)| x)
        .cloned()
        .zip_eq(&data)
        .map(|(a, &b)| a + b)
        .collect();
    assert_eq!(cloned, data.iter().map(|x| 2 * x).collect::<Vec<_>>());
    assert_eq!(seen.wrong(), vec![]);
}
