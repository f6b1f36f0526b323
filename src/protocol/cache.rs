//! The executor cache of a device: recent one-off calls' repeatable executors
//! ([`Reusable`]), so that a call like a recent one (same operator, tensor dtypes, dims,
//! strides and offsets, optional arguments given or absent alike, same attribute values)
//! rebinds the addresses and runs phase 2 alone, as a plan's launch does (CANN's own aclnn
//! cache and torch_npu's op-plugin cache do the same).
//!
//! * **Bounded, least recently used out.** An entry evicted, or dropped with the device,
//!   is released as a dropped plan's executor is: stream-ordered, after its queued
//!   launches.
//! * **One user at a time.** A call takes its entry out of the cache while it launches and
//!   puts it back afterwards, so two threads never share one; threads that call alike at
//!   the same moment make one entry each (kept, so each finds one next time).
//! * **Checked like a fresh call.** Validation in Rust runs on every call before the
//!   cache is consulted; a call whose key differs in anything phase 1 reads misses and runs
//!   phase 1 (which reports what a fresh executor would). A launch that fails drops its
//!   entry.
//! * **No allocation on a hit.** The key is hashed into a `u64` on the stack, and the
//!   stored key is compared field by field with the call's arguments.

use super::args::{Given, Value};
use super::attr::{Attr, Scalar};
use super::entry::OperatorFns;
use super::launch::Spec;
use super::reusable::Reusable;
use crate::device::DeviceInner;
use crate::element::DType;
use crate::error::Result;
use crate::stream::Stream;
use crate::tensor::Layout;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The executor cache's figures ([`Device::executor_cache_stats`](crate::Device::executor_cache_stats)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecutorCacheStats {
    /// Calls served by a cached executor.
    pub hits: u64,
    /// Calls that ran phase 1 while the cache was on.
    pub misses: u64,
    /// Entries dropped to make room (least recently used first) or by a smaller capacity.
    pub evictions: u64,
    /// Entries dropped because a launch of theirs failed.
    pub invalidations: u64,
    /// Entries held now (not counting those being launched).
    pub entries: usize,
    /// The most entries held.
    pub capacity: usize,
}

/// A device's executor cache.
pub(crate) struct ExecutorCache {
    /// A copy of the capacity, read without the lock by every call.
    capacity: AtomicUsize,
    state: Mutex<State>,
}

struct State {
    stats: ExecutorCacheStats,
    /// Counts uses, for least-recently-used order.
    clock: u64,
    /// Never longer than the capacity, and allocated for it, so a put does not allocate.
    entries: Vec<Entry>,
}

/// Small, so that taking it out and putting it back moves little: the executor's state
/// (its use records are inline) stays in its box.
struct Entry {
    hash: u64,
    last_used: u64,
    body: Box<Body>,
}

struct Body {
    key: Key,
    reusable: Reusable,
}

impl Entry {
    fn release(self, device: &DeviceInner) {
        self.body.reusable.release(device);
    }
}

/// What phase 1 read of a call: the operator and each argument.
struct Key {
    entry: usize,
    phase1: usize,
    args: Box<[Slot]>,
}

/// One argument of a key.
#[derive(Clone, Copy)]
enum Slot {
    Tensor(Layout, DType),
    Attr(Attr),
    Absent,
    /// Anything else never matches (resolved before a launch).
    Other,
}

/// The default capacity of a device's cache: `ASCENDCL_EXECUTOR_CACHE`, else 0 (off).
pub(crate) fn default_capacity() -> usize {
    std::env::var("ASCENDCL_EXECUTOR_CACHE")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

impl ExecutorCache {
    pub(crate) fn new(capacity: usize) -> ExecutorCache {
        ExecutorCache {
            capacity: AtomicUsize::new(capacity),
            state: Mutex::new(State {
                stats: ExecutorCacheStats {
                    capacity,
                    ..ExecutorCacheStats::default()
                },
                clock: 0,
                entries: Vec::with_capacity(capacity),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent across a panic (no user code runs under the lock).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether one-off calls use the cache.
    #[inline]
    pub(crate) fn enabled(&self) -> bool {
        self.capacity.load(Ordering::Relaxed) > 0
    }

    pub(crate) fn stats(&self) -> ExecutorCacheStats {
        let s = self.lock();
        ExecutorCacheStats {
            entries: s.entries.len(),
            ..s.stats
        }
    }

    /// Sets the capacity, evicting the least recently used entries beyond it (released on
    /// `device`, stream-ordered).
    pub(crate) fn set_capacity(&self, device: &DeviceInner, capacity: usize) {
        let mut evicted = Vec::new();
        {
            let mut s = self.lock();
            self.capacity.store(capacity, Ordering::Relaxed);
            s.stats.capacity = capacity;
            while s.entries.len() > capacity {
                let i = s.lru();
                evicted.push(s.entries.swap_remove(i));
                s.stats.evictions += 1;
            }
            if capacity > s.entries.capacity() {
                let more = capacity - s.entries.len();
                s.entries.reserve_exact(more);
            } else {
                s.entries.shrink_to(capacity);
            }
        }
        for e in evicted {
            e.release(device);
        }
    }

    /// Releases every entry (the device is being dropped).
    pub(crate) fn clear(&self, device: &DeviceInner) {
        let entries = std::mem::take(&mut self.lock().entries);
        for e in entries {
            e.release(device);
        }
    }

    /// Takes out the entry of this call, counting a hit or a miss.
    fn take(&self, hash: u64, spec: Spec, values: &[Value<'_>]) -> Option<Entry> {
        let mut s = self.lock();
        let found = s
            .entries
            .iter()
            .position(|e| e.hash == hash && e.body.key.matches(spec, values));
        match found {
            Some(i) => {
                s.stats.hits += 1;
                Some(s.entries.swap_remove(i))
            }
            None => {
                s.stats.misses += 1;
                None
            }
        }
    }

    /// Puts an entry (back) in, as the most recently used, evicting the least recently
    /// used one when full. Two entries may have one key (made by calls that ran at once):
    /// each serves one of the threads that call alike concurrently.
    fn put(&self, device: &DeviceInner, mut entry: Entry) {
        let dropped = {
            let mut s = self.lock();
            if s.stats.capacity == 0 {
                Some(entry)
            } else {
                s.clock += 1;
                entry.last_used = s.clock;
                let evicted = if s.entries.len() >= s.stats.capacity {
                    let i = s.lru();
                    s.stats.evictions += 1;
                    Some(s.entries.swap_remove(i))
                } else {
                    None
                };
                s.entries.push(entry);
                evicted
            }
        };
        if let Some(e) = dropped {
            e.release(device);
        }
    }

    fn invalidated(&self) {
        self.lock().stats.invalidations += 1;
    }
}

impl State {
    /// The index of the least recently used entry (the state holds at least one).
    fn lru(&self) -> usize {
        self.entries
            .iter()
            .enumerate()
            .min_by_key(|(_, e)| e.last_used)
            .map_or(0, |(i, _)| i)
    }
}

/// Runs a validated one-off call through the device's executor cache: a cached executor of
/// the same key, else a new repeatable one (phase 1), kept if its launch succeeds.
pub(crate) fn launch<const N: usize>(
    stream: &Stream,
    values: &[Value<'_>; N],
    spec: Spec,
    fns: OperatorFns,
) -> Result<()> {
    let device = &stream.inner.device;
    let cache = &device.executors;
    let hash = hash(spec, values);
    let (mut entry, new) = match cache.take(hash, spec, values) {
        Some(entry) => (entry, false),
        None => {
            let reusable = Reusable::new(device, spec, fns, values)?;
            let entry = Entry {
                hash,
                last_used: 0,
                body: Box::new(Body {
                    key: Key::of(spec, values),
                    reusable,
                }),
            };
            (entry, true)
        }
    };
    match entry.body.reusable.launch(stream, values, spec) {
        Ok(()) => {
            cache.put(device, entry);
            Ok(())
        }
        Err(e) => {
            if !new {
                cache.invalidated();
            }
            entry.release(device);
            Err(e)
        }
    }
}

/// A rotate-xor hash, mixed once at the end (no allocation, no per-process seed needed:
/// the keys are not chosen by an adversary, and a collision only costs a full comparison).
struct Mix(u64);

impl Mix {
    #[inline]
    fn add(&mut self, x: u64) {
        self.0 = self.0.rotate_left(7) ^ x;
    }

    #[inline]
    fn finish(self) -> u64 {
        self.0.wrapping_mul(0x517c_c1b7_2722_0a95)
    }
}

#[inline]
fn hash(spec: Spec, values: &[Value<'_>]) -> u64 {
    let mut h = Mix(0);
    h.add(std::ptr::from_ref(spec.entry) as usize as u64);
    for v in values {
        match &v.0 {
            Given::Tensor(t) => {
                h.add(1);
                h.add(t.dtype.acl() as u64);
                let l = &t.layout;
                // Not the strides, which the full comparison checks: views of one shape
                // with other strides are rarer than other shapes.
                h.add(l.dims.as_slice().len() as u64);
                for d in l.dims.as_slice() {
                    h.add(*d as u64);
                }
                h.add(l.offset as u64);
            }
            Given::Attr(a) => {
                h.add(2);
                h.add(attr_bits(a));
            }
            Given::Absent => h.add(3),
            _ => h.add(4),
        }
    }
    h.finish()
}

/// A word of an attribute's value for the hash.
fn attr_bits(a: &Attr) -> u64 {
    match *a {
        Attr::Bool(b) => u64::from(b),
        Attr::I8(v) => v as u64,
        Attr::I64(v) => v as u64,
        Attr::F64(v) => v.to_bits(),
        Attr::F32(v) => u64::from(v.to_bits()),
        Attr::U64(v) => v,
        Attr::DType(d) => d.acl() as u64,
        Attr::Scalar(s) => match s {
            Scalar::F64(v) => v.to_bits(),
            Scalar::F32(v) => u64::from(v.to_bits()),
            Scalar::I64(v) => v as u64,
            Scalar::Bool(b) => u64::from(b),
        },
        Attr::Ints(l) => l.get().map_or(u64::MAX, |l| {
            l.iter()
                .fold(l.len() as u64, |acc, x| acc.rotate_left(7) ^ (*x as u64))
        }),
        Attr::Bools(l) => l.get().map_or(u64::MAX, |l| {
            l.iter()
                .fold(l.len() as u64, |acc, x| (acc << 1) | u64::from(*x))
        }),
    }
}

/// The same attribute value, bit for bit (`-0.0` is not `0.0`, a NaN is itself): what
/// phase 1 reads.
#[inline(always)]
fn same_attr(a: &Attr, b: &Attr) -> bool {
    match (a, b) {
        (Attr::F64(x), Attr::F64(y)) => x.to_bits() == y.to_bits(),
        (Attr::F32(x), Attr::F32(y)) => x.to_bits() == y.to_bits(),
        (Attr::Scalar(x), Attr::Scalar(y)) => match (x, y) {
            (Scalar::F64(x), Scalar::F64(y)) => x.to_bits() == y.to_bits(),
            (Scalar::F32(x), Scalar::F32(y)) => x.to_bits() == y.to_bits(),
            (Scalar::I64(x), Scalar::I64(y)) => x == y,
            (Scalar::Bool(x), Scalar::Bool(y)) => x == y,
            _ => false,
        },
        _ => a == b,
    }
}

impl Key {
    fn of(spec: Spec, values: &[Value<'_>]) -> Key {
        Key {
            entry: std::ptr::from_ref(spec.entry) as usize,
            phase1: spec.phase1 as usize,
            args: values
                .iter()
                .map(|v| match &v.0 {
                    Given::Tensor(t) => Slot::Tensor(t.layout, t.dtype),
                    Given::Attr(a) => Slot::Attr(*a),
                    Given::Absent => Slot::Absent,
                    _ => Slot::Other,
                })
                .collect(),
        }
    }

    /// Whether a call of `spec` with `values` has this key.
    #[inline]
    fn matches(&self, spec: Spec, values: &[Value<'_>]) -> bool {
        self.entry == std::ptr::from_ref(spec.entry) as usize
            && self.phase1 == spec.phase1 as usize
            && self.args.len() == values.len()
            && self.args.iter().zip(values).all(|(s, v)| match (s, &v.0) {
                (Slot::Tensor(l, d), Given::Tensor(t)) => *d == t.dtype && *l == t.layout,
                (Slot::Attr(a), Given::Attr(b)) => same_attr(a, b),
                (Slot::Absent, Given::Absent) => true,
                _ => false,
            })
    }
}

#[cfg(test)]
mod tests {
    use crate::{DeviceTensor, ExecutorCacheStats, Runtime, add};
    use ndarray::array;

    /// Where the library lacks executor reuse (before CANN 8.0) calls stay plain whatever
    /// the capacity: the cache is never consulted, and results are right.
    #[test]
    fn calls_stay_plain_without_executor_reuse() {
        let rt = Runtime::simulator_without_executor_reuse().unwrap();
        assert!(!rt.api().supports_executor_reuse());
        let device = rt.device(0).unwrap();
        device.set_executor_cache_capacity(8);
        let stream = device.stream().unwrap();
        let a = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0]).unwrap();
        let mut out = DeviceTensor::<f32>::zeros(&stream, [2]).unwrap();
        for _ in 0..3 {
            add(&a, &a, 2.0, &mut out, &stream).unwrap();
        }
        assert_eq!(
            device.executor_cache_stats(),
            ExecutorCacheStats {
                capacity: 8,
                ..ExecutorCacheStats::default()
            }
        );
        assert_eq!(
            out.to_array(&stream).unwrap(),
            array![3.0f32, 6.0].into_dyn()
        );
    }

    /// Attribute values compare bit for bit: `-0.0` is not `0.0`, a NaN matches itself,
    /// and scalars of different types differ.
    #[test]
    fn attributes_compare_bit_for_bit() {
        use super::{Attr, Scalar, attr_bits, same_attr};
        let f = |v: f64| Attr::Scalar(Scalar::F64(v));
        assert!(!same_attr(&f(0.0), &f(-0.0)));
        assert!(same_attr(&f(f64::NAN), &f(f64::NAN)));
        assert!(!same_attr(&f(1.0), &Attr::Scalar(Scalar::I64(1))));
        assert!(!same_attr(&Attr::F64(0.0), &Attr::F64(-0.0)));
        assert!(!same_attr(&Attr::F32(0.0), &Attr::F32(-0.0)));
        assert!(same_attr(&Attr::F32(f32::NAN), &Attr::F32(f32::NAN)));
        assert!(!same_attr(&Attr::F32(1.0), &Attr::F64(1.0)));
        assert_ne!(attr_bits(&Attr::F32(0.0)), attr_bits(&Attr::F32(-0.0)));
        assert!(same_attr(&Attr::Bool(true), &Attr::Bool(true)));
        assert_ne!(attr_bits(&f(0.0)), attr_bits(&f(-0.0)));
    }
}
