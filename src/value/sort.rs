//! The crate's one sorting routine.
//!
//! Every sort (object keys for canonical JSON, round sets, text tokens,
//! array-index keys) goes through [`sorted_indices`], a short stable merge
//! sort, so the wasm module carries one small routine instead of the
//! standard library's sorts instantiated per element type. It sits below
//! every other module: it knows nothing of strings or values.

/// Positions `0..len` in the order `cmp` gives them (stable). Every sort in
/// the crate goes through this one function, a small merge sort, so the
/// wasm module carries one short sorting routine instead of the standard
/// library's large ones, once per element type.
pub(crate) fn sorted_indices(len: usize, cmp: &dyn Fn(usize, usize) -> std::cmp::Ordering) -> Vec<usize> {
    const RUN: usize = 8;
    let greater = |a: usize, b: usize| cmp(a, b) == std::cmp::Ordering::Greater;
    let mut order: Vec<usize> = (0..len).collect();
    for run in order.chunks_mut(RUN) {
        for i in 1..run.len() {
            let mut j = i;
            while j > 0 && greater(run[j - 1], run[j]) {
                run.swap(j - 1, j);
                j -= 1;
            }
        }
    }
    // Most sorts are of a handful of keys, one run: no second buffer then.
    if len <= RUN {
        return order;
    }
    let mut merged = vec![0; len];
    let mut width = RUN;
    while width < len {
        for (start, out) in (0..len).step_by(2 * width).zip(merged.chunks_mut(2 * width)) {
            let mid = (start + width).min(len);
            let (mut left, mut right) = (&order[start..mid], &order[mid..start + out.len()]);
            for slot in out {
                // Ties take the left run first: the sort is stable.
                let from_right = match (left.first(), right.first()) {
                    (Some(&l), Some(&r)) => greater(l, r),
                    (None, _) => true,
                    _ => false,
                };
                let source = if from_right { &mut right } else { &mut left };
                *slot = source[0];
                *source = &source[1..];
            }
        }
        std::mem::swap(&mut order, &mut merged);
        width *= 2;
    }
    order
}

/// `items` sorted by `cmp` (stable).
pub(crate) fn sorted<T: Clone>(items: &[T], cmp: &dyn Fn(&T, &T) -> std::cmp::Ordering) -> Vec<T> {
    sorted_indices(items.len(), &|a, b| cmp(&items[a], &items[b]))
        .into_iter()
        .map(|i| items[i].clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_indices_is_a_stable_sort() {
        let mut rng = crate::test_rng::XorShift(0x9E37_79B9_7F4A_7C15);
        for len in [0, 1, 2, 7, 8, 9, 16, 17, 100, 1000] {
            let keys: Vec<usize> = (0..len).map(|_| rng.below(10)).collect();
            let order = sorted_indices(len, &|a, b| keys[a].cmp(&keys[b]));
            let mut expected: Vec<usize> = (0..len).collect();
            expected.sort_by_key(|&i| keys[i]);
            assert_eq!(order, expected, "len {len}");
        }
    }
}
