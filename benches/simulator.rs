//! The simulator's kernels against ndarray on the same data, in one criterion group per
//! size, so that every ratio comes from one run:
//!
//! * elementwise, on 1 M and 16 M f32: `add` (into an existing tensor, then
//!   `Stream::synchronize`) against ndarray's `&a + &b` into an existing array (`Zip`),
//!   `mul` against `&a * &b`, `adds` (a tensor plus a scalar) against `&a + 0.5`, `exp`
//!   against `mapv(f32::exp)`;
//! * GEMM, at 256³ and 1024³ f32: `matmul` (`KEEP_DTYPE`) against ndarray's `dot` into an
//!   existing array (`general_mat_mul`);
//! * a device-to-device `copy` of 16 M f32 against a host `copy_from_slice`.
//!
//! Each device figure includes the call's host overhead (validation, phase 1, the queue)
//! and the stream synchronisation; on the large sizes that is noise.
//!
//! ```sh
//! cargo bench --bench simulator
//! ```

use ascendcl::{CubeMath, DeviceTensor, Runtime, Stream, add, adds, copy, exp, matmul, mul};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ndarray::linalg::general_mat_mul;
use ndarray::{Array1, Array2, Zip};

fn elementwise(c: &mut Criterion, stream: &Stream) {
    for n in [1usize << 20, 1 << 24] {
        let a = Array1::from_shape_fn(n, |i| (i % 1000) as f32 * 1e-3);
        let b = Array1::from_shape_fn(n, |i| 1.0 + (i % 7) as f32);
        let mut host_out = Array1::<f32>::zeros(n);
        let da = DeviceTensor::from_array(stream, &a).unwrap();
        let db = DeviceTensor::from_array(stream, &b).unwrap();
        let mut out = DeviceTensor::<f32>::zeros(stream, [n]).unwrap();
        let mut group = c.benchmark_group(format!("elementwise_{}M", n >> 20));
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(10);
        group.bench_function(BenchmarkId::new("ndarray_add", n), |bench| {
            bench.iter(|| {
                Zip::from(&mut host_out)
                    .and(&a)
                    .and(&b)
                    .for_each(|o, &x, &y| *o = x + y)
            })
        });
        group.bench_function(BenchmarkId::new("add", n), |bench| {
            bench.iter(|| {
                add(&da, &db, 1.0f32, &mut out, stream).unwrap();
                stream.synchronize().unwrap();
            })
        });
        group.bench_function(BenchmarkId::new("ndarray_mul", n), |bench| {
            bench.iter(|| {
                Zip::from(&mut host_out)
                    .and(&a)
                    .and(&b)
                    .for_each(|o, &x, &y| *o = x * y)
            })
        });
        group.bench_function(BenchmarkId::new("mul", n), |bench| {
            bench.iter(|| {
                mul(&da, &db, &mut out, stream).unwrap();
                stream.synchronize().unwrap();
            })
        });
        group.bench_function(BenchmarkId::new("ndarray_adds", n), |bench| {
            bench.iter(|| {
                Zip::from(&mut host_out)
                    .and(&a)
                    .for_each(|o, &x| *o = x + 0.5)
            })
        });
        group.bench_function(BenchmarkId::new("adds", n), |bench| {
            bench.iter(|| {
                adds(&da, 0.5f32, 1.0f32, &mut out, stream).unwrap();
                stream.synchronize().unwrap();
            })
        });
        group.bench_function(BenchmarkId::new("ndarray_mapv_exp", n), |bench| {
            bench.iter(|| std::hint::black_box(a.mapv(f32::exp)))
        });
        group.bench_function(BenchmarkId::new("exp", n), |bench| {
            bench.iter(|| {
                exp(&da, &mut out, stream).unwrap();
                stream.synchronize().unwrap();
            })
        });
        group.finish();
    }
}

fn gemm(c: &mut Criterion, stream: &Stream) {
    for n in [256usize, 1024] {
        let a = Array2::from_shape_fn((n, n), |(i, j)| ((i * 7 + j) % 13) as f32 * 0.1);
        let b = Array2::from_shape_fn((n, n), |(i, j)| ((i + j * 3) % 11) as f32 * 0.1);
        let mut host_out = Array2::<f32>::zeros((n, n));
        let da = DeviceTensor::from_array(stream, &a).unwrap();
        let db = DeviceTensor::from_array(stream, &b).unwrap();
        let mut out = DeviceTensor::<f32>::zeros(stream, [n, n]).unwrap();
        let mut group = c.benchmark_group(format!("gemm_{n}"));
        group.throughput(Throughput::Elements((2 * n * n * n) as u64));
        group.sample_size(10);
        group.bench_function(BenchmarkId::new("ndarray_dot", n), |bench| {
            bench.iter(|| general_mat_mul(1.0, &a, &b, 0.0, &mut host_out))
        });
        group.bench_function(BenchmarkId::new("matmul", n), |bench| {
            bench.iter(|| {
                matmul(&da, &db, &mut out, CubeMath::KeepDtype, stream).unwrap();
                stream.synchronize().unwrap();
            })
        });
        group.finish();
    }
}

fn device_copy(c: &mut Criterion, stream: &Stream) {
    let n = 1usize << 24;
    let src = Array1::from_shape_fn(n, |i| i as f32);
    let mut dst = Array1::<f32>::zeros(n);
    let d_src = DeviceTensor::from_array(stream, &src).unwrap();
    let mut d_dst = DeviceTensor::<f32>::zeros(stream, [n]).unwrap();
    let mut group = c.benchmark_group("copy_16M");
    group.throughput(Throughput::Bytes((n * 4) as u64));
    group.sample_size(10);
    group.bench_function(BenchmarkId::new("memcpy", n), |bench| {
        bench.iter(|| {
            dst.as_slice_mut()
                .unwrap()
                .copy_from_slice(std::hint::black_box(src.as_slice().unwrap()))
        })
    });
    group.bench_function(BenchmarkId::new("device_copy", n), |bench| {
        bench.iter(|| {
            copy(&d_src, &mut d_dst, stream).unwrap();
            stream.synchronize().unwrap();
        })
    });
    group.finish();
}

fn simulator(c: &mut Criterion) {
    let runtime = Runtime::simulator().expect("simulator");
    let stream = runtime.device(0).unwrap().stream().unwrap();
    elementwise(c, &stream);
    gemm(c, &stream);
    device_copy(c, &stream);
}

criterion_group!(benches, simulator);
criterion_main!(benches);
