//! What a user's kernel sees when the stream runs it: its tensors, read into and written
//! from host buffers (row-major over each view), and the values phase 1 fixed.

use super::{Role, SimulatedOperator};
use crate::nnopbase::{Attr, KernelCall, OpDef};
use crate::tables::dtype_name;
use ascend_sys::*;
use half::{bf16, f16};

/// An element type a kernel reads or writes as it is stored (no conversion).
pub trait Element: Copy + sealed::Sealed {
    /// Its `aclDataType`.
    const DTYPE: aclDataType;
    /// Bytes per element.
    const SIZE: usize;
    /// From its little-endian bytes.
    fn from_le(bytes: &[u8]) -> Self;
    /// Into its little-endian bytes (`out` is `SIZE` long).
    fn to_le(self, out: &mut [u8]);
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! element {
    ($($t:ty = $dt:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: aclDataType = $dt;
            const SIZE: usize = std::mem::size_of::<$t>();
            fn from_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(&bytes[..Self::SIZE]);
                <$t>::from_le_bytes(b)
            }
            fn to_le(self, out: &mut [u8]) {
                out[..Self::SIZE].copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

element!(
    f32 = ACL_FLOAT,
    f64 = ACL_DOUBLE,
    f16 = ACL_FLOAT16,
    bf16 = ACL_BF16,
    i8 = ACL_INT8,
    i16 = ACL_INT16,
    i32 = ACL_INT32,
    i64 = ACL_INT64,
    u8 = ACL_UINT8,
    u16 = ACL_UINT16,
    u32 = ACL_UINT32,
    u64 = ACL_UINT64,
);

/// One queued run of a simulated operator: its tensors by the names of their parameters,
/// and its scalar and value arguments as phase 1 fixed them. Runs on the stream's thread
/// when the stream reaches it; a kernel's `Err` fails the stream with its text.
///
/// Reads give a tensor's elements row-major over its view (strides and offset applied);
/// writes take them in the same order and store them through the view. An in-place
/// tensor is read as the input and written as the output under the same name.
pub struct Kernel<'a> {
    call: &'a KernelCall,
    op: &'static SimulatedOperator,
    def: &'static OpDef,
}

impl<'a> Kernel<'a> {
    pub(super) fn new(
        call: &'a KernelCall,
        op: &'static SimulatedOperator,
        def: &'static OpDef,
    ) -> Kernel<'a> {
        Kernel { call, op, def }
    }

    /// The slot of tensor `name`, an input's for reading or an output's for writing.
    fn slot(&self, name: &str, output: bool) -> Result<usize, String> {
        let list = if output {
            self.def.outputs
        } else {
            self.def.inputs
        };
        let any = self.def.args.iter().position(|a| *a == name);
        match (
            list.iter().copied().find(|&k| self.def.args[k] == name),
            any,
        ) {
            (Some(k), _) => Ok(k),
            (None, Some(_)) if output => Err(format!("{name} is not an output")),
            // An output is read as it is, for kernels that accumulate into it.
            (None, Some(k)) => Ok(k),
            (None, None) => Err(format!(
                "{} has no tensor argument named {name:?}",
                self.op.name()
            )),
        }
    }

    /// Tensor `name`'s view shape.
    pub fn dims(&self, name: &str) -> Result<&[usize], String> {
        Ok(self.call.dims(self.slot(name, false)?))
    }

    /// Tensor `name`'s element count.
    pub fn len(&self, name: &str) -> Result<usize, String> {
        Ok(self.dims(name)?.iter().product())
    }

    /// Tensor `name`'s dtype.
    pub fn dtype(&self, name: &str) -> Result<aclDataType, String> {
        self.call.dtype(self.slot(name, false)?)
    }

    /// Tensor `name`'s elements widened to f32 (floating-point dtypes: FLOAT, FLOAT16,
    /// BF16).
    pub fn read_f32(&self, name: &str) -> Result<Vec<f32>, String> {
        let k = self.slot(name, false)?;
        let dims = self.call.dims(k).to_vec();
        let mut v = vec![0.0; dims.iter().product()];
        self.call.read(k, &dims, &mut v)?;
        Ok(v)
    }

    /// Tensor `name`'s elements converted to f64 (every dtype the simulator converts;
    /// exact for floating-point dtypes and integers up to 2^53).
    pub fn read_f64(&self, name: &str) -> Result<Vec<f64>, String> {
        let k = self.slot(name, false)?;
        let dims = self.call.dims(k).to_vec();
        let mut v = vec![0.0; dims.iter().product()];
        self.call.read_f64(k, &dims, &mut v)?;
        Ok(v)
    }

    /// Tensor `name`'s elements as stored; its dtype must be `T`'s.
    pub fn read<T: Element>(&self, name: &str) -> Result<Vec<T>, String> {
        let k = self.slot(name, false)?;
        self.require_dtype::<T>(k, name)?;
        let mut bytes = vec![0u8; self.call.dims(k).iter().product::<usize>() * T::SIZE];
        self.call.read_bytes(k, &mut bytes)?;
        Ok(bytes.chunks_exact(T::SIZE).map(T::from_le).collect())
    }

    /// Stores `values` into output `name`, rounded to its dtype (to nearest even);
    /// floating-point outputs only.
    pub fn write_f32(&self, name: &str, values: &[f32]) -> Result<(), String> {
        let k = self.writable(name, values.len())?;
        self.call.write(k, values)
    }

    /// Stores `values` into output `name`, converted to its dtype by the device's cast
    /// (one rounding).
    pub fn write_f64(&self, name: &str, values: &[f64]) -> Result<(), String> {
        let k = self.writable(name, values.len())?;
        self.call.write_f64(k, values)
    }

    /// Stores `values` into output `name` as they are; its dtype must be `T`'s.
    pub fn write<T: Element>(&self, name: &str, values: &[T]) -> Result<(), String> {
        let k = self.writable(name, values.len())?;
        self.require_dtype::<T>(k, name)?;
        let mut bytes = vec![0u8; values.len() * T::SIZE];
        for (v, b) in values.iter().zip(bytes.chunks_exact_mut(T::SIZE)) {
            v.to_le(b);
        }
        self.call.scatter_bytes(k, &bytes)
    }

    /// The output slot of `name`, checked to hold `n` elements.
    fn writable(&self, name: &str, n: usize) -> Result<usize, String> {
        let k = self.slot(name, true)?;
        let want: usize = self.call.dims(k).iter().product();
        if n != want {
            return Err(format!(
                "the kernel wrote {n} values to {name}, which has {want} elements"
            ));
        }
        Ok(k)
    }

    fn require_dtype<T: Element>(&self, k: usize, name: &str) -> Result<(), String> {
        let dt = self.call.dtype(k)?;
        if dt == T::DTYPE {
            return Ok(());
        }
        Err(format!(
            "{name} is {}, not {}",
            dtype_name(dt),
            dtype_name(T::DTYPE)
        ))
    }

    /// The value argument `name` as phase 1 fixed it.
    fn value(&self, name: &str) -> Result<(&Attr, Role), String> {
        let (k, role) = self
            .op
            .value_index(name)
            .ok_or_else(|| format!("{} has no value argument named {name:?}", self.op.name()))?;
        Ok((&self.call.decision().attrs[k], role))
    }

    /// Scalar `name` as a double (nnopbase's `ToDouble`), or an int, double or bool
    /// argument's value.
    pub fn scalar(&self, name: &str) -> Result<f64, String> {
        let (k, _) = self
            .op
            .value_index(name)
            .ok_or_else(|| format!("{} has no value argument named {name:?}", self.op.name()))?;
        Ok(self.call.decision().attr_f64(k))
    }

    /// Int argument `name`.
    pub fn int(&self, name: &str) -> Result<i64, String> {
        match self.value(name)? {
            (Attr::Int(v), _) => Ok(*v),
            (_, role) => Err(format!("{name} is a {role:?} argument, not an int")),
        }
    }

    /// Bool argument `name`.
    pub fn flag(&self, name: &str) -> Result<bool, String> {
        match self.value(name)? {
            (Attr::Bool(v), _) => Ok(*v),
            (_, role) => Err(format!("{name} is a {role:?} argument, not a bool")),
        }
    }
}
