//! What a collective does to the ranks' memory once every rank's stream has reached it:
//! read the send buffers, reduce in rank order, write the receive buffers.
//!
//! Reductions combine rank 0's elements with rank 1's, the result with rank 2's, and so on,
//! each step rounded to the element type: f16 and bf16 are widened to f32, combined and
//! rounded back (to nearest, ties to even), as the vector units compute them; integers wrap.
//! `Max`/`Min` of floats return the number when one side is NaN (IEEE maxNum/minNum).

use crate::mem::{Alloc, still_live};
use crate::state::lock;
use ascend_sys::hccl::*;
use half::{bf16, f16};
use std::sync::Arc;

/// Which collective a rank called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    AllReduce,
    Broadcast,
    AllGather,
    ReduceScatter,
    Barrier,
}

impl Kind {
    pub(crate) fn api(self) -> &'static str {
        match self {
            Kind::AllReduce => "HcclAllReduce",
            Kind::Broadcast => "HcclBroadcast",
            Kind::AllGather => "HcclAllGather",
            Kind::ReduceScatter => "HcclReduceScatter",
            Kind::Barrier => "HcclBarrier",
        }
    }
}

/// What one rank asked for; every rank of a collective must ask for the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Desc {
    pub kind: Kind,
    /// Elements per rank (AllReduce, Broadcast: the buffer; AllGather: the send buffer;
    /// ReduceScatter: the receive buffer).
    pub count: u64,
    pub dtype: HcclDataType,
    pub op: Option<HcclReduceOp>,
    pub root: Option<u32>,
}

impl Desc {
    /// A collective of `count` elements of `dtype` per rank, without a reduction or a root.
    pub fn new(kind: Kind, count: u64, dtype: HcclDataType) -> Desc {
        Desc {
            kind,
            count,
            dtype,
            op: None,
            root: None,
        }
    }

    /// The same collective reducing with `op`.
    pub fn reducing(self, op: HcclReduceOp) -> Desc {
        Desc {
            op: Some(op),
            ..self
        }
    }
}

/// A device buffer of one rank: its allocation and the byte offset in it.
pub(crate) struct Buf {
    pub alloc: Arc<Alloc>,
    pub offset: usize,
}

/// One rank's buffers (Broadcast: `recv` is its one buffer; Barrier: none).
#[derive(Default)]
pub(crate) struct Part {
    pub send: Option<Buf>,
    pub recv: Option<Buf>,
}

/// Bytes per element of the dtypes the simulator models (`None`: not modeled).
pub(crate) fn dtype_size(dtype: HcclDataType) -> Option<usize> {
    Some(match dtype {
        HCCL_DATA_TYPE_INT8 | HCCL_DATA_TYPE_UINT8 => 1,
        HCCL_DATA_TYPE_INT16
        | HCCL_DATA_TYPE_UINT16
        | HCCL_DATA_TYPE_FP16
        | HCCL_DATA_TYPE_BFP16 => 2,
        HCCL_DATA_TYPE_INT32 | HCCL_DATA_TYPE_UINT32 | HCCL_DATA_TYPE_FP32 => 4,
        HCCL_DATA_TYPE_INT64 | HCCL_DATA_TYPE_UINT64 | HCCL_DATA_TYPE_FP64 => 8,
        _ => return None,
    })
}

/// The vendor's name of a dtype, for messages.
pub(crate) fn dtype_name(dtype: HcclDataType) -> String {
    let name = match dtype {
        HCCL_DATA_TYPE_INT8 => "INT8",
        HCCL_DATA_TYPE_INT16 => "INT16",
        HCCL_DATA_TYPE_INT32 => "INT32",
        HCCL_DATA_TYPE_FP16 => "FP16",
        HCCL_DATA_TYPE_FP32 => "FP32",
        HCCL_DATA_TYPE_INT64 => "INT64",
        HCCL_DATA_TYPE_UINT64 => "UINT64",
        HCCL_DATA_TYPE_UINT8 => "UINT8",
        HCCL_DATA_TYPE_UINT16 => "UINT16",
        HCCL_DATA_TYPE_UINT32 => "UINT32",
        HCCL_DATA_TYPE_FP64 => "FP64",
        HCCL_DATA_TYPE_BFP16 => "BFP16",
        other => return format!("HcclDataType({other})"),
    };
    name.into()
}

/// The vendor's name of a reduction, for messages.
pub(crate) fn op_name(op: HcclReduceOp) -> String {
    match op {
        HCCL_REDUCE_SUM => "SUM".into(),
        HCCL_REDUCE_PROD => "PROD".into(),
        HCCL_REDUCE_MAX => "MAX".into(),
        HCCL_REDUCE_MIN => "MIN".into(),
        other => format!("HcclReduceOp({other})"),
    }
}

/// An element type the reductions work on, read from and written to raw bytes (device
/// memory has no alignment guarantee at a byte offset).
trait Elem: Copy {
    const SIZE: usize;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
    fn combine(self, other: Self, op: HcclReduceOp) -> Self;
}

/// The elements stored as themselves: `prod` and `sum` are the element type's own
/// product and sum (integers wrap).
macro_rules! native_elem {
    (|$x:ident, $y:ident| prod $prod:expr, sum $sum:expr; $($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn load(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(b.try_into().unwrap_or_default())
            }
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_ne_bytes());
            }
            fn combine(self, other: Self, op: HcclReduceOp) -> Self {
                let ($x, $y) = (self, other);
                match op {
                    HCCL_REDUCE_PROD => $prod,
                    HCCL_REDUCE_MAX => $x.max($y),
                    HCCL_REDUCE_MIN => $x.min($y),
                    _ => $sum,
                }
            }
        }
    )*};
}
native_elem!(|x, y| prod x.wrapping_mul(y), sum x.wrapping_add(y); i8, i16, i32, i64, u8, u16, u32, u64);
native_elem!(|x, y| prod x * y, sum x + y; f32, f64);

macro_rules! half_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = 2;
            fn load(b: &[u8]) -> Self {
                <$t>::from_bits(u16::from_ne_bytes(b.try_into().unwrap_or_default()))
            }
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_bits().to_ne_bytes());
            }
            fn combine(self, other: Self, op: HcclReduceOp) -> Self {
                <$t>::from_f32(self.to_f32().combine(other.to_f32(), op))
            }
        }
    )*};
}
half_elem!(f16, bf16);

fn combine_as<T: Elem>(acc: &mut [u8], x: &[u8], op: HcclReduceOp) {
    for (a, b) in acc.chunks_exact_mut(T::SIZE).zip(x.chunks_exact(T::SIZE)) {
        T::load(a).combine(T::load(b), op).store(a);
    }
}

/// `acc[i] = acc[i] op x[i]` element by element.
fn combine(acc: &mut [u8], x: &[u8], dtype: HcclDataType, op: HcclReduceOp) {
    match dtype {
        HCCL_DATA_TYPE_INT8 => combine_as::<i8>(acc, x, op),
        HCCL_DATA_TYPE_INT16 => combine_as::<i16>(acc, x, op),
        HCCL_DATA_TYPE_INT32 => combine_as::<i32>(acc, x, op),
        HCCL_DATA_TYPE_INT64 => combine_as::<i64>(acc, x, op),
        HCCL_DATA_TYPE_UINT8 => combine_as::<u8>(acc, x, op),
        HCCL_DATA_TYPE_UINT16 => combine_as::<u16>(acc, x, op),
        HCCL_DATA_TYPE_UINT32 => combine_as::<u32>(acc, x, op),
        HCCL_DATA_TYPE_UINT64 => combine_as::<u64>(acc, x, op),
        HCCL_DATA_TYPE_FP16 => combine_as::<f16>(acc, x, op),
        HCCL_DATA_TYPE_BFP16 => combine_as::<bf16>(acc, x, op),
        HCCL_DATA_TYPE_FP32 => combine_as::<f32>(acc, x, op),
        HCCL_DATA_TYPE_FP64 => combine_as::<f64>(acc, x, op),
        // Refused when the collective was called.
        _ => {}
    }
}

fn missing(what: &str, rank: usize) -> String {
    format!("rank {rank} has no {what} buffer (internal simulator error)")
}

/// Runs `f` on the `len` bytes at `buf`, after checking the allocation is still live.
pub(crate) fn with_bytes<R>(
    what: &str,
    rank: usize,
    buf: Option<&Buf>,
    at: usize,
    len: usize,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<R, String> {
    let buf = buf.ok_or_else(|| missing(what, rank))?;
    still_live(&format!("rank {rank}'s {what}"), &buf.alloc)?;
    let data = lock(&buf.alloc.data);
    let start = buf.offset + at;
    let bytes = data
        .get(start..start + len)
        .ok_or_else(|| format!("rank {rank}'s {what} range moved out of its allocation"))?;
    Ok(f(bytes))
}

pub(crate) fn write(
    what: &str,
    rank: usize,
    buf: Option<&Buf>,
    bytes: &[u8],
) -> Result<(), String> {
    let buf = buf.ok_or_else(|| missing(what, rank))?;
    still_live(&format!("rank {rank}'s {what}"), &buf.alloc)?;
    let mut data = lock(&buf.alloc.data);
    let start = buf.offset;
    data.get_mut(start..start + bytes.len())
        .ok_or_else(|| format!("rank {rank}'s {what} range moved out of its allocation"))?
        .copy_from_slice(bytes);
    Ok(())
}

/// Reduces the `len` bytes at offset `at` of every rank's send buffer, in rank order.
fn reduce(parts: &[Part], at: usize, len: usize, desc: &Desc) -> Result<Vec<u8>, String> {
    let op = desc.op.unwrap_or(HCCL_REDUCE_SUM);
    let mut acc = with_bytes(
        "sendBuf",
        0,
        parts[0].send.as_ref(),
        at,
        len,
        <[u8]>::to_vec,
    )?;
    for (rank, part) in parts.iter().enumerate().skip(1) {
        with_bytes("sendBuf", rank, part.send.as_ref(), at, len, |x| {
            combine(&mut acc, x, desc.dtype, op)
        })?;
    }
    Ok(acc)
}

/// The bytes of one rank's send and receive buffers in collective `desc` of `n` ranks
/// (Broadcast: its one buffer is the receive buffer).
pub(crate) fn part_bytes(desc: &Desc, n: usize) -> (usize, usize) {
    let b = dtype_size(desc.dtype)
        .unwrap_or(1)
        .saturating_mul(usize::try_from(desc.count).unwrap_or(usize::MAX));
    match desc.kind {
        Kind::AllReduce => (b, b),
        Kind::Broadcast => (0, b),
        Kind::AllGather => (b, b.saturating_mul(n)),
        Kind::ReduceScatter => (b.saturating_mul(n), b),
        Kind::Barrier => (0, 0),
    }
}

/// A rank's buffer held outside device memory (see [`Alloc::staging`]).
pub(crate) fn staged(device: usize, data: Vec<u8>) -> Buf {
    Buf {
        alloc: Arc::new(Alloc::staging(device, data)),
        offset: 0,
    }
}

/// Copies `bytes` bytes from rank `key.src`'s send buffer to rank `key.dst`'s receive
/// buffer (`HcclSend` to `HcclRecv`).
pub(crate) fn copy(src: &Buf, dst: &Buf, bytes: usize, key: super::p2p::Key) -> Result<(), String> {
    let data = with_bytes("sendBuf", key.src, Some(src), 0, bytes, <[u8]>::to_vec)?;
    write("recvBuf", key.dst, Some(dst), &data)
}

/// Performs the collective `desc` over every rank's `parts` (index = rank). Reads all the
/// inputs before writing any output, so buffers may overlap.
pub(crate) fn run(desc: &Desc, parts: &[Part]) -> Result<(), String> {
    let size = dtype_size(desc.dtype).unwrap_or(1);
    let n = parts.len();
    let bytes = usize::try_from(desc.count)
        .ok()
        .and_then(|c| c.checked_mul(size))
        .ok_or("element count overflows the address space")?;
    match desc.kind {
        Kind::Barrier => {}
        Kind::AllReduce => {
            let acc = reduce(parts, 0, bytes, desc)?;
            for (rank, part) in parts.iter().enumerate() {
                write("recvBuf", rank, part.recv.as_ref(), &acc)?;
            }
        }
        Kind::Broadcast => {
            let root = desc.root.unwrap_or(0) as usize;
            let src = parts.get(root).ok_or("root outside the group")?;
            let data = with_bytes("buf", root, src.recv.as_ref(), 0, bytes, <[u8]>::to_vec)?;
            for (rank, part) in parts.iter().enumerate().filter(|(r, _)| *r != root) {
                write("buf", rank, part.recv.as_ref(), &data)?;
            }
        }
        Kind::AllGather => {
            let mut all = Vec::with_capacity(bytes * n);
            for (rank, part) in parts.iter().enumerate() {
                with_bytes("sendBuf", rank, part.send.as_ref(), 0, bytes, |x| {
                    all.extend_from_slice(x)
                })?;
            }
            for (rank, part) in parts.iter().enumerate() {
                write("recvBuf", rank, part.recv.as_ref(), &all)?;
            }
        }
        Kind::ReduceScatter => {
            let chunks = (0..n)
                .map(|r| reduce(parts, r * bytes, bytes, desc))
                .collect::<Result<Vec<_>, _>>()?;
            for (rank, (part, chunk)) in parts.iter().zip(&chunks).enumerate() {
                write("recvBuf", rank, part.recv.as_ref(), chunk)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Elem>(v: &[T]) -> Vec<u8> {
        let mut out = vec![0u8; v.len() * T::SIZE];
        for (x, b) in v.iter().zip(out.chunks_exact_mut(T::SIZE)) {
            x.store(b);
        }
        out
    }

    #[test]
    fn combine_rounds_each_step_to_the_element_type() {
        let mut acc = bytes(&[f16::from_f32(1.0), f16::from_f32(2.0)]);
        let x = bytes(&[f16::from_f32(0.0004), f16::from_f32(3.0)]);
        combine(&mut acc, &x, HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM);
        // 1 + 0.0004 is below half an f16 ulp of 1 (0.00049): rounds back to 1.
        assert_eq!(acc, bytes(&[f16::from_f32(1.0), f16::from_f32(5.0)]));
        let mut acc = bytes(&[i8::MAX, 3]);
        combine(
            &mut acc,
            &bytes(&[1i8, -7]),
            HCCL_DATA_TYPE_INT8,
            HCCL_REDUCE_SUM,
        );
        assert_eq!(acc, bytes(&[i8::MIN, -4]));
        let mut acc = bytes(&[f32::NAN, 1.0]);
        combine(
            &mut acc,
            &bytes(&[2.0f32, 5.0]),
            HCCL_DATA_TYPE_FP32,
            HCCL_REDUCE_MAX,
        );
        assert_eq!(acc, bytes(&[2.0f32, 5.0]));
        let mut acc = bytes(&[bf16::from_f32(3.0)]);
        combine(
            &mut acc,
            &bytes(&[bf16::from_f32(-2.0)]),
            HCCL_DATA_TYPE_BFP16,
            HCCL_REDUCE_PROD,
        );
        assert_eq!(acc, bytes(&[bf16::from_f32(-6.0)]));
    }

    #[test]
    fn dtype_table() {
        assert_eq!(dtype_size(HCCL_DATA_TYPE_BFP16), Some(2));
        assert_eq!(dtype_size(HCCL_DATA_TYPE_FP64), Some(8));
        assert_eq!(dtype_size(12), None);
        assert_eq!(dtype_name(HCCL_DATA_TYPE_FP32), "FP32");
        assert_eq!(dtype_name(99), "HcclDataType(99)");
        assert_eq!(op_name(HCCL_REDUCE_MIN), "MIN");
    }
}
