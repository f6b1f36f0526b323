//! Host ↔ device transfers into existing tensors and arrays on the simulator, against a
//! host memcpy of the same bytes, in one criterion group per size (4 MB and 40 MB) so the
//! ratios come from the same run:
//!
//! * `memcpy`: `copy_from_slice` between two host buffers of the size;
//! * `upload`: `DeviceTensor::copy_from_array` then `Stream::synchronize` (pageable array;
//!   copied directly when the tensor is idle, as here, otherwise staged);
//! * `download`: `DeviceTensor::copy_to_array` (waits by itself);
//! * `upload_reversed`: the same upload from a reversed view of the array (not a dense
//!   slice), so the elements are gathered into the stream's pinned staging buffer and a
//!   queued copy moves them;
//! * `pinned_upload` / `pinned_download`: `copy_from_host` / `copy_to_host` with a
//!   `HostTensor`, then `Stream::synchronize`;
//! * `from_array`: `DeviceTensor::from_array` of the dense array (a new tensor from the
//!   caching allocator), then `Stream::synchronize`;
//! * `to_array`: `DeviceTensor::to_array` into a new array;
//! * `to_array_transposed`: `to_array` of a transposed `[n/2, 2]` view (not dense, so the
//!   elements are gathered from the staged copy).
//!
//! ```sh
//! cargo bench --bench transfers
//! ```

use ascendcl::{DeviceTensor, HostTensor, Runtime};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ndarray::{Array1, Ix1, Ix2, s};

fn transfers(c: &mut Criterion) {
    let runtime = Runtime::simulator().expect("simulator");
    let device = runtime.device(0).unwrap();
    let stream = device.stream().unwrap();
    for mb in [4usize, 40] {
        let n = mb * 1_000_000 / 4;
        let src = Array1::from_shape_fn(n, |i| i as f32);
        let mut dst = Array1::<f32>::zeros(n);
        let mut t = DeviceTensor::<f32>::zeros(&stream, [n]).unwrap();
        let mut pinned = HostTensor::from_array(&device, &src).unwrap();
        let reversed = src.slice(s![..;-1]);
        let mut group = c.benchmark_group(format!("transfers_{mb}MB"));
        group.throughput(Throughput::Bytes((n * 4) as u64));
        group.sample_size(10);
        group.bench_function(BenchmarkId::new("memcpy", mb), |b| {
            b.iter(|| {
                dst.as_slice_mut()
                    .unwrap()
                    .copy_from_slice(std::hint::black_box(src.as_slice().unwrap()))
            })
        });
        group.bench_function(BenchmarkId::new("upload", mb), |b| {
            b.iter(|| {
                t.copy_from_array(&stream, &src).unwrap();
                stream.synchronize().unwrap();
            })
        });
        group.bench_function(BenchmarkId::new("download", mb), |b| {
            b.iter(|| t.copy_to_array(&stream, &mut dst).unwrap())
        });
        group.bench_function(BenchmarkId::new("upload_reversed", mb), |b| {
            b.iter(|| {
                // Not a dense slice: gathered into the staging buffer, then a queued copy.
                t.copy_from_array(&stream, &reversed).unwrap();
                stream.synchronize().unwrap();
            })
        });
        group.bench_function(BenchmarkId::new("pinned_upload", mb), |b| {
            b.iter(|| {
                t.copy_from_host(&stream, &pinned).unwrap();
                stream.synchronize().unwrap();
            })
        });
        group.bench_function(BenchmarkId::new("pinned_download", mb), |b| {
            b.iter(|| {
                t.copy_to_host(&stream, &mut pinned).unwrap();
                stream.synchronize().unwrap();
            })
        });
        group.bench_function(BenchmarkId::new("from_array", mb), |b| {
            b.iter(|| {
                let fresh = DeviceTensor::from_array(&stream, &src).unwrap();
                stream.synchronize().unwrap();
                fresh
            })
        });
        group.bench_function(BenchmarkId::new("to_array", mb), |b| {
            b.iter(|| t.to_array::<Ix1>(&stream).unwrap())
        });
        group.bench_function(BenchmarkId::new("to_array_transposed", mb), |b| {
            b.iter(|| {
                let view = t.view().reshape([n / 2, 2]).unwrap().t();
                view.to_array::<Ix2>(&stream).unwrap()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, transfers);
criterion_main!(benches);
