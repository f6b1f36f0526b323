//! Property tests of the shape machinery through the C ABI: Matmul over random ranks,
//! batch broadcasting and transposed views, Add over random broadcasts, ReduceSum over
//! random dims, each against a plain index-by-index computation. Values are small
//! integers, so every f32 result is exact whatever the summation order.

use crate::common;
use crate::opkit;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use opkit::*;
use proptest::prelude::*;

/// Row-major strides of `d`.
fn strides(d: &[usize]) -> Vec<usize> {
    let mut s = vec![1; d.len()];
    for k in (0..d.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * d[k + 1];
    }
    s
}

/// The multi-index of linear index `i` in `d`.
fn unravel(mut i: usize, d: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; d.len()];
    for k in (0..d.len()).rev() {
        idx[k] = i % d[k].max(1);
        i /= d[k].max(1);
    }
    idx
}

/// The element of `v` (row-major over `d`) at the broadcast index `idx` (right-aligned).
fn at(v: &[f32], d: &[usize], idx: &[usize]) -> f32 {
    let lead = idx.len() - d.len();
    let s = strides(d);
    let off: usize = (0..d.len())
        .map(|k| if d[k] == 1 { 0 } else { idx[lead + k] * s[k] })
        .sum();
    v[off]
}

fn ints(n: usize, seed: u64) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as u64 * 7 + seed * 13) % 9) as f32 - 4.0)
        .collect()
}

/// A device tensor of `d` holding `v`, stored transposed in its last two dims when asked.
fn device(d: &[usize], v: &[f32], transposed: bool) -> *mut aclTensor {
    let dims: Vec<i64> = d.iter().map(|&x| x as i64).collect();
    let r = d.len();
    if !transposed || r < 2 {
        return f32_tensor(&dims, v).0;
    }
    // Store with the last two dims swapped, then describe the view with swapped strides.
    let mut sd = d.to_vec();
    sd.swap(r - 1, r - 2);
    let mut stored = vec![0.0; v.len()];
    for (i, x) in v.iter().enumerate() {
        let mut idx = unravel(i, d);
        idx.swap(r - 1, r - 2);
        let s = strides(&sd);
        stored[idx.iter().zip(&s).map(|(a, b)| a * b).sum::<usize>()] = *x;
    }
    let mut st: Vec<i64> = strides(&sd).iter().map(|&x| x as i64).collect();
    st.swap(r - 1, r - 2);
    tensor_view(
        &dims,
        &st,
        0,
        &[v.len().max(1) as i64],
        ACL_FLOAT,
        upload(&stored),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn matmul_matches_index_by_index(
        m in 1usize..4, k in 1usize..4, n in 1usize..4,
        ba in proptest::collection::vec(1usize..3, 0..3),
        flip in proptest::collection::vec(any::<bool>(), 3),
        left_1d in any::<bool>(), right_1d in any::<bool>(),
        ta in any::<bool>(), tb in any::<bool>(),
    ) {
        let _gate = crate::common::shared();
        on(A2);
        // mat2's batch dims: the same as self's, with some set to 1 (both broadcast ways).
        let bb: Vec<usize> = ba.iter().zip(&flip).map(|(&d, &f)| if f { 1 } else { d }).collect();
        let ad: Vec<usize> = if left_1d { vec![k] } else { ba.iter().copied().chain([m, k]).collect() };
        let bd: Vec<usize> = if right_1d { vec![k] } else { bb.iter().copied().chain([k, n]).collect() };
        let (av, bv) = (ints(ad.iter().product(), 1), ints(bd.iter().product(), 2));
        let batch: Vec<usize> = if left_1d { if right_1d { vec![] } else { bb.clone() } }
            else if right_1d { ba.clone() }
            else { ba.iter().zip(&bb).map(|(&x, &y)| x.max(y)).collect() };
        let (mm, nn) = (if left_1d { 1 } else { m }, if right_1d { 1 } else { n });
        let mut out_d = batch.clone();
        if !left_1d { out_d.push(m) }
        if !right_1d { out_d.push(n) }
        let total: usize = batch.iter().product::<usize>() * mm * nn;
        let mut want = vec![0f32; total];
        for (o, w) in want.iter_mut().enumerate() {
            let bi = unravel(o / (mm * nn), &batch);
            let (r, c) = ((o / nn) % mm, o % nn);
            *w = (0..k).map(|kk| {
                let a = if left_1d { av[kk] } else {
                    let mut idx = bi.clone(); idx.extend([r, kk]); at(&av, &ad, &idx)
                };
                let b = if right_1d { bv[kk] } else {
                    let mut idx = bi.clone(); idx.extend([kk, c]); at(&bv, &bd, &idx)
                };
                a * b
            }).sum();
        }
        let od: Vec<i64> = out_d.iter().map(|&x| x as i64).collect();
        let (to, po) = f32_tensor(&od, &vec![0.0; total]);
        let (x, y) = (device(&ad, &av, ta), device(&bd, &bv, tb));
        // SAFETY: live handles; out-pointers from `p1`.
        run(p1(|ws, ex| unsafe { api::aclnnMatmulGetWorkspaceSize(x, y, to, 0, ws, ex) }), api::aclnnMatmul);
        prop_assert_eq!(d2h::<f32>(po, total), want);
    }

    #[test]
    fn add_and_reduce_sum_match_index_by_index(
        d in proptest::collection::vec(1usize..4, 0..4),
        ones in proptest::collection::vec(any::<bool>(), 4),
        drop in 0usize..3,
        keep in any::<bool>(),
        mask in 0u32..16,
    ) {
        let _gate = crate::common::shared();
        on(A2);
        // other: a suffix of d with some dims set to 1.
        let od: Vec<usize> = d[drop.min(d.len())..].iter().zip(&ones).map(|(&x, &o)| if o { 1 } else { x }).collect();
        let (xv, yv) = (ints(d.iter().product(), 3), ints(od.iter().product(), 4));
        let n: usize = d.iter().product();
        let want: Vec<f32> = (0..n).map(|i| { let idx = unravel(i, &d); at(&xv, &d, &idx) + 2.0 * at(&yv, &od, &idx) }).collect();
        let di: Vec<i64> = d.iter().map(|&x| x as i64).collect();
        let (to, po) = f32_tensor(&di, &vec![0.0; n]);
        let (x, y) = (device(&d, &xv, true), device(&od, &yv, false));
        let two = f64_scalar(2.0);
        // SAFETY: as above.
        run(p1(|ws, ex| unsafe { api::aclnnAddGetWorkspaceSize(x, y, two, to, ws, ex) }), api::aclnnAdd);
        prop_assert_eq!(d2h::<f32>(po, n), want.clone());
        // ReduceSum of that result over the dims in `mask` (all of them when none).
        let dims: Vec<i64> = (0..d.len() as i64).filter(|&k| mask & (1 << k) != 0).collect();
        let red = |k: usize| dims.is_empty() || dims.contains(&(k as i64));
        let rd: Vec<usize> = d.iter().enumerate().filter_map(|(k, &x)| if red(k) { keep.then_some(1) } else { Some(x) }).collect();
        let rn: usize = rd.iter().product();
        let mut sums = vec![0f32; rn];
        for (i, w) in want.iter().enumerate() {
            let idx = unravel(i, &d);
            let oi: Vec<usize> = idx.iter().enumerate().filter_map(|(k, &j)| if red(k) { keep.then_some(0) } else { Some(j) }).collect();
            sums[oi.iter().zip(strides(&rd)).map(|(a, b)| a * b).sum::<usize>()] += w;
        }
        let ri: Vec<i64> = rd.iter().map(|&x| x as i64).collect();
        let (tr, pr) = f32_tensor(&ri, &vec![0.0; rn]);
        let a = int_array(&dims);
        // SAFETY: as above.
        run(p1(|ws, ex| unsafe { api::aclnnReduceSumGetWorkspaceSize(to, a, keep, ACL_FLOAT, tr, ws, ex) }), api::aclnnReduceSum);
        prop_assert_eq!(d2h::<f32>(pr, rn), sums);
    }
}
