//! The simulator's f32 aclnnMatmul (cubeMathType 0, through the C ABI, a repeatable
//! executor launched and synchronized each iteration) against ndarray's `dot` of the same
//! matrices, in the same run, at 256³ and 1024³.
//!
//! `cargo bench -p ascend-sim --bench matmul`

use ascend_sim::api;
use ascend_sys::*;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ndarray::Array2;
use std::ffi::c_void;
use std::hint::black_box;
use std::ptr::null_mut;

fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect()
}

/// Device memory holding `v`, and a contiguous `n`×`n` f32 tensor over it.
fn device_matrix(v: &[f32], n: i64) -> (*mut c_void, *mut aclTensor) {
    let bytes = std::mem::size_of_val(v);
    let mut p = null_mut();
    let dims = [n, n];
    // SAFETY: valid out-pointers, live host slices of the stated sizes.
    unsafe {
        assert_eq!(api::aclrtMalloc(&mut p, bytes, 0), 0);
        assert_eq!(api::aclrtMemcpy(p, bytes, v.as_ptr().cast(), bytes, 1), 0);
        let t = api::aclCreateTensor(
            dims.as_ptr(),
            2,
            ACL_FLOAT,
            null_mut(),
            0,
            2,
            dims.as_ptr(),
            2,
            p,
        );
        assert!(!t.is_null());
        (p, t)
    }
}

fn matmul(c: &mut Criterion) {
    // SAFETY: NULL config; plain device id.
    unsafe {
        assert_eq!(api::aclInit(std::ptr::null()), 0);
        assert_eq!(api::aclrtSetDevice(0), 0);
    }
    let mut group = c.benchmark_group("matmul_f32");
    group.sample_size(10);
    for n in [256usize, 1024] {
        group.throughput(Throughput::Elements((2 * n * n * n) as u64));
        let (a, b) = (values(n * n, 1), values(n * n, 2));
        let (pa, ta) = device_matrix(&a, n as i64);
        let (pb, tb) = device_matrix(&b, n as i64);
        let (pc, tc) = device_matrix(&vec![0.0; n * n], n as i64);
        let (mut ws, mut ex) = (0u64, null_mut());
        // SAFETY: live tensors and out-pointers; the executor is made repeatable at once.
        unsafe {
            assert_eq!(
                api::aclnnMatmulGetWorkspaceSize(ta, tb, tc, 0, &mut ws, &mut ex),
                0
            );
            assert_eq!(api::aclSetAclOpExecutorRepeatable(ex), 0);
        }
        assert_eq!(ws, 0);
        group.bench_with_input(BenchmarkId::new("simulator", n), &n, |bench, _| {
            bench.iter(|| {
                // SAFETY: the repeatable executor of live tensors, the default stream.
                unsafe {
                    assert_eq!(api::aclnnMatmul(null_mut(), 0, ex, null_mut()), 0);
                    assert_eq!(api::aclrtSynchronizeStream(null_mut()), 0);
                }
            })
        });
        let (ha, hb) = (
            Array2::from_shape_vec((n, n), a).expect("n*n values"),
            Array2::from_shape_vec((n, n), b).expect("n*n values"),
        );
        group.bench_with_input(BenchmarkId::new("ndarray_dot", n), &n, |bench, _| {
            bench.iter(|| black_box(black_box(&ha).dot(black_box(&hb))))
        });
        // SAFETY: handles from above, released once.
        unsafe {
            api::aclDestroyAclOpExecutor(ex);
            for t in [ta, tb, tc] {
                api::aclDestroyTensor(t);
            }
            for p in [pa, pb, pc] {
                api::aclrtFree(p);
            }
        }
    }
    group.finish();
}

criterion_group!(benches, matmul);
criterion_main!(benches);
