//! Closures in the shapes the documentation shows, compiled under this crate's edition: patterns that bind
//! through the references the iterators hand out, which edition 2024's match ergonomics treat differently.

use forkunion as fu;
use fu::prelude::*;

fn pool() -> fu::ThreadPool {
    fu::ThreadPool::try_spawn(&fu::Topology::new().expect("the topology"), 2).expect("a pool")
}

#[test]
fn searches_destructure_enumerated_references() {
    let pool = pool();
    let data: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
    // The predicate gets `&(usize, &f64)`: one explicit `&` for the pair, one for the item.
    let first = data.par_iter().enumerate().with_pool(&pool).find_first(|&(_, &x)| x > 500.0);
    assert_eq!(first.map(|(i, _)| i), Some(501));
    let last = data.par_iter().enumerate().with_pool(&pool).find_last(|(_, x)| **x < 20.0);
    assert_eq!(last.map(|(i, _)| i), Some(19));
    let evens: usize = data.par_iter().filter(|&&x| x % 2.0 == 0.0).with_pool(&pool).count();
    assert_eq!(evens, 5_000);
}

#[test]
fn maps_and_reductions_bind_items_by_value() {
    let pool = pool();
    let data: Vec<u64> = (1..=1000).collect();
    let sum: u64 = data.par_iter().map(|&x| x * 2).with_pool(&pool).sum();
    assert_eq!(sum, 1000 * 1001);
    let weighted = data.par_iter().enumerate().with_pool(&pool).reduce(
        || 0u64,
        |acc, (i, &x), _| *acc += i as u64 * x,
        |a, b| a + b,
    );
    assert_eq!(weighted, data.iter().enumerate().map(|(i, &x)| i as u64 * x).sum::<u64>());
    let mut out = vec![0u64; 1000];
    out.par_iter_mut().zip(&data).with_pool(&pool).for_each(|(o, &x)| *o = x + 1);
    assert!(out.iter().zip(&data).all(|(&o, &x)| o == x + 1));
}
