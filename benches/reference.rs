//! Throughput of `ascendcl::reference::mish_backward_into` (f32), side by side with a naive
//! scalar f32 loop and a memory-bandwidth baseline moving the same bytes (read 2 arrays,
//! write 1), single-threaded (a 1-thread rayon pool) and multi-threaded (the global pool);
//! non-contiguous and broadcast inputs against the contiguous case; and
//! `ascendcl::reference::mish_into` (f32) against a naive scalar loop.
//!
//! `cargo bench -p ascendcl --bench reference -- --measurement-time 3 --warm-up-time 1`

use ascendcl::reference::{mish_backward_into, mish_into, simd_level};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ndarray::{Array1, Array2, ArrayView1, ArrayViewMut1, ShapeBuilder};
use rayon::prelude::*;
use std::hint::black_box;

fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut unit = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    let g = (0..n).map(|_| unit() * 2.0 - 1.0).collect();
    let x = (0..n).map(|_| unit() * 16.0 - 8.0).collect();
    (g, x)
}

/// The textbook formula in f32 with std's exp / ln_1p / tanh.
fn naive(g: &[f32], x: &[f32], out: &mut [f32]) {
    for ((o, &g), &x) in out.iter_mut().zip(g).zip(x) {
        let t = x.exp().ln_1p().tanh();
        let sig = 1.0 / (1.0 + (-x).exp());
        *o = g * (t + x * sig * (1.0 - t * t));
    }
}

/// Reads two arrays and writes one: the bandwidth bound of the operator.
fn copy3(g: &[f32], x: &[f32], out: &mut [f32]) {
    for ((o, &g), &x) in out.iter_mut().zip(g).zip(x) {
        *o = g + x;
    }
}

fn par<F: Fn(&[f32], &[f32], &mut [f32]) + Sync>(f: F, g: &[f32], x: &[f32], out: &mut [f32]) {
    let chunk = out
        .len()
        .div_ceil(rayon::current_num_threads() * 4)
        .max(4096);
    out.par_chunks_mut(chunk)
        .zip(g.par_chunks(chunk))
        .zip(x.par_chunks(chunk))
        .for_each(|((o, g), x)| f(g, x, o));
}

fn reference(g: &[f32], x: &[f32], out: &mut [f32]) {
    mish_backward_into(
        ArrayView1::from(g),
        ArrayView1::from(x),
        ArrayViewMut1::from(out),
    )
    .unwrap();
}

/// The textbook forward formula in f32 with std's exp / ln_1p / tanh.
fn naive_mish(x: &[f32], out: &mut [f32]) {
    for (o, &x) in out.iter_mut().zip(x) {
        *o = x * x.exp().ln_1p().tanh();
    }
}

fn reference_mish(x: &[f32], out: &mut [f32]) {
    mish_into(ArrayView1::from(x), ArrayViewMut1::from(out)).unwrap();
}

fn forward(c: &mut Criterion) {
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let n = 1_000_000usize;
    let (_, x) = inputs(n);
    let mut out = vec![0.0f32; n];
    let mut group = c.benchmark_group(format!("mish_f32_contiguous_{n}"));
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    type Kernel = fn(&[f32], &mut [f32]);
    let kernels: [(&str, Kernel); 2] = [("naive", naive_mish), ("reference", reference_mish)];
    for (name, f) in kernels {
        group.bench_function(BenchmarkId::new(name, "1thread"), |b| {
            b.iter(|| single.install(|| f(black_box(&x), &mut out)))
        });
    }
    group.finish();
}

fn contiguous(c: &mut Criterion) {
    eprintln!(
        "reference SIMD level: {}, rayon threads: {}",
        simd_level(),
        rayon::current_num_threads()
    );
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for n in [1_000_000usize, 10_000_000] {
        let (g, x) = inputs(n);
        let mut out = vec![0.0f32; n];
        let mut group = c.benchmark_group(format!("f32_contiguous_{n}"));
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(10);
        type Kernel = fn(&[f32], &[f32], &mut [f32]);
        let kernels: [(&str, Kernel); 3] =
            [("naive", naive), ("copy3", copy3), ("reference", reference)];
        for (name, f) in kernels {
            group.bench_function(BenchmarkId::new(name, "1thread"), |b| {
                b.iter(|| single.install(|| f(black_box(&g), black_box(&x), &mut out)))
            });
            group.bench_function(BenchmarkId::new(name, "multithread"), |b| {
                b.iter(|| {
                    if name == "reference" {
                        // parallelizes internally
                        reference(black_box(&g), black_box(&x), &mut out)
                    } else {
                        par(f, black_box(&g), black_box(&x), &mut out)
                    }
                })
            });
        }
        group.finish();
    }
}

fn layouts(c: &mut Criterion) {
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let side = 1000usize;
    let n = side * side;
    let (gv, xv) = inputs(n);
    let g = Array2::from_shape_vec((side, side), gv).unwrap();
    let x = Array2::from_shape_vec((side, side), xv).unwrap();
    // column-major copies: used through transposed (non-contiguous for C order) views
    let mut gf = Array2::<f32>::zeros((side, side).f());
    gf.assign(&g);
    let xcol = Array1::from_iter(x.column(0).iter().copied())
        .into_shape_with_order((side, 1))
        .unwrap();
    // twice as many rows, used through every-other-row views (1e6 elements)
    let (g2v, x2v) = inputs(2 * n);
    let g2 = Array2::from_shape_vec((2 * side, side), g2v).unwrap();
    let x2 = Array2::from_shape_vec((2 * side, side), x2v).unwrap();
    let mut out2 = Array2::<f32>::zeros((2 * side, side));
    let mut out = Array2::<f32>::zeros((side, side));
    let mut group = c.benchmark_group("f32_layouts_1000000");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    for (threads, label) in [(Some(&single), "1thread"), (None, "multithread")] {
        let mut run = |name: &str, f: &mut (dyn FnMut(&mut Array2<f32>) + Send)| {
            group.bench_function(BenchmarkId::new(name, label), |b| {
                b.iter(|| match threads {
                    Some(pool) => pool.install(|| f(&mut out)),
                    None => f(&mut out),
                })
            });
        };
        run("contiguous", &mut |o| {
            mish_backward_into(g.view(), x.view(), o.view_mut()).unwrap()
        });
        run("grad_transposed", &mut |o| {
            // gf is column-major: its logical [i, j] walk is strided
            mish_backward_into(gf.view(), x.view(), o.view_mut()).unwrap()
        });
        run("output_transposed", &mut |o| {
            mish_backward_into(g.view(), x.view(), o.view_mut().reversed_axes()).unwrap()
        });
        run("x_broadcast_column", &mut |o| {
            mish_backward_into(g.view(), xcol.view(), o.view_mut()).unwrap()
        });
        run("stepped_slices", &mut |_| {
            let gs = g2.slice(ndarray::s![..;2, ..]);
            let xs = x2.slice(ndarray::s![1..;2, ..]);
            let os = out2.slice_mut(ndarray::s![..;2, ..]);
            mish_backward_into(gs, xs, os).unwrap()
        });
    }
    group.finish();
}

criterion_group!(benches, contiguous, layouts, forward);
criterion_main!(benches);
