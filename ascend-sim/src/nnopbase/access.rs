//! How a kernel reads and writes its tensors: each argument in its own shape or
//! broadcast to a shape the kernel names, widened to f32 (floating-point dtypes) or to f64
//! (every modeled dtype), and the workspace round trips of temporaries.

use super::phase2::{KernelCall, Operand, float};
use super::prepared::Layout;
use crate::state::lock;
use crate::stream::Scratch;
use crate::strided::{self, DType};
use crate::tables::dtype_size;
use ascend_sys::aclDataType;
use std::sync::MutexGuard;

/// The locked workspace bytes and where an argument's region starts in them.
type Region<'a> = (MutexGuard<'a, Vec<u8>>, usize);

impl KernelCall {
    /// Argument `arg`'s operand and layout.
    fn operand(&self, arg: usize) -> Result<(&Operand, &Layout), String> {
        let op = self
            .operands
            .get(arg)
            .and_then(Option::as_ref)
            .ok_or_else(|| format!("argument {arg} is not bound"))?;
        Ok((op, &self.prepared.layouts[arg]))
    }

    fn name(&self, arg: usize) -> &'static str {
        self.prepared.name(self.op, arg)
    }

    /// The slots of argument `arg`, in order: one for a tensor, one per element of a
    /// tensor list.
    pub fn slots_of(&self, arg: usize) -> impl Iterator<Item = usize> + '_ {
        let of = &self.prepared.arg_of;
        (0..of.len()).filter(move |&k| usize::from(of[k]) == arg)
    }

    /// Reads slot `arg` in its own dims, row-major, converted to `to` (`to`'s element size
    /// each) into `dst`.
    pub fn read_as(&self, arg: usize, to: aclDataType, dst: &mut [u8]) -> Result<(), String> {
        let (op, l) = self.operand(arg)?;
        let to_size = dtype_size(to).ok_or("no element size")?;
        if dst.len() != l.dims.iter().product::<usize>() * to_size {
            return Err(format!(
                "{}: {} bytes do not hold its elements",
                self.name(arg),
                dst.len()
            ));
        }
        let buf = lock(&op.alloc.data);
        l.check_bounds(op.base_byte(), buf.len(), self.name(arg))?;
        let v = l.view(op.base_byte());
        strided::gather_cast(&buf, &v, l.dtype, &l.dims, (to, to_size), dst);
        Ok(())
    }

    /// Argument `arg`'s view shape (empty for an unbound argument).
    pub fn dims(&self, arg: usize) -> &[usize] {
        match self.operand(arg) {
            Ok((_, l)) => &l.dims,
            Err(_) => &[],
        }
    }

    /// Argument `arg`'s dtype.
    pub fn dtype(&self, arg: usize) -> Result<aclDataType, String> {
        Ok(self.operand(arg)?.1.dtype)
    }

    /// Reads argument `arg` broadcast to `shape` (its own dims for no broadcast),
    /// row-major, widened to f32. Floating-point dtypes only.
    pub fn read(&self, arg: usize, shape: &[usize], dst: &mut [f32]) -> Result<(), String> {
        let (op, l) = self.operand(arg)?;
        let dt = float(l, self.name(arg))?;
        let buf = lock(&op.alloc.data);
        l.check_bounds(op.base_byte(), buf.len(), self.name(arg))?;
        let v = l.view(op.base_byte());
        strided::gather(&buf, &v, dt, shape, dst);
        Ok(())
    }

    /// Writes `src` (row-major over argument `arg`'s dims) through its view, rounding to
    /// its dtype (to nearest even).
    pub fn write(&self, arg: usize, src: &[f32]) -> Result<(), String> {
        let (op, l) = self.operand(arg)?;
        let dt = float(l, self.name(arg))?;
        let mut buf = lock(&op.alloc.data);
        l.check_bounds(op.base_byte(), buf.len(), self.name(arg))?;
        let v = l.view(op.base_byte());
        strided::scatter(&mut buf, &v, dt, src);
        Ok(())
    }

    /// [`KernelCall::read`] for any dtype the simulator converts, as f64 (exact for every
    /// floating-point dtype and for integers up to 2^53).
    pub fn read_f64(&self, arg: usize, shape: &[usize], dst: &mut [f64]) -> Result<(), String> {
        let (op, l) = self.operand(arg)?;
        let buf = lock(&op.alloc.data);
        l.check_bounds(op.base_byte(), buf.len(), self.name(arg))?;
        let v = l.view(op.base_byte());
        strided::gather_f64(&buf, &v, l.dtype, shape, dst);
        Ok(())
    }

    /// Writes `src` through argument `arg`'s view, converted to its dtype by the device's
    /// cast (one rounding from the f64 value).
    pub fn write_f64(&self, arg: usize, src: &[f64]) -> Result<(), String> {
        let (op, l) = self.operand(arg)?;
        let mut buf = lock(&op.alloc.data);
        l.check_bounds(op.base_byte(), buf.len(), self.name(arg))?;
        let v = l.view(op.base_byte());
        strided::scatter_f64(&mut buf, &v, l.dtype, src);
        Ok(())
    }

    /// Reads argument `arg`, broadcast to the decision's shape, converted to `to`, into `dst`
    /// (row-major, `to`'s element size each).
    pub fn gather_as(&self, arg: usize, to: aclDataType, dst: &mut [u8]) -> Result<(), String> {
        let (op, l) = self.operand(arg)?;
        let to_size = dtype_size(to).ok_or("no element size")?;
        let buf = lock(&op.alloc.data);
        l.check_bounds(op.base_byte(), buf.len(), self.name(arg))?;
        let v = l.view(op.base_byte());
        strided::gather_cast(
            &buf,
            &v,
            l.dtype,
            &self.decision().out_shape,
            (to, to_size),
            dst,
        );
        Ok(())
    }

    /// Reads argument `arg` in its own dims and dtype, row-major, into `dst` (its element
    /// size each).
    pub fn read_bytes(&self, arg: usize, dst: &mut [u8]) -> Result<(), String> {
        let (op, l) = self.operand(arg)?;
        let size = dtype_size(l.dtype).ok_or("no element size")?;
        if dst.len() != l.dims.iter().product::<usize>() * size {
            return Err(format!(
                "{}: {} bytes do not hold its elements",
                self.name(arg),
                dst.len()
            ));
        }
        let buf = lock(&op.alloc.data);
        l.check_bounds(op.base_byte(), buf.len(), self.name(arg))?;
        let v = l.view(op.base_byte());
        strided::gather_cast(&buf, &v, l.dtype, &l.dims, (l.dtype, size), dst);
        Ok(())
    }

    /// Writes `src` (row-major over argument `arg`'s dims, in its dtype) through its view.
    pub fn scatter_bytes(&self, arg: usize, src: &[u8]) -> Result<(), String> {
        let (op, l) = self.operand(arg)?;
        let mut buf = lock(&op.alloc.data);
        l.check_bounds(op.base_byte(), buf.len(), self.name(arg))?;
        let v = l.view(op.base_byte());
        strided::scatter_bytes(&mut buf, &v, src);
        Ok(())
    }

    /// Writes `element` (one element of argument `arg`'s dtype) to every element of its
    /// view, through `scratch`.
    pub fn fill(&self, arg: usize, scratch: &mut Scratch, element: &[u8]) -> Result<(), String> {
        let bytes = scratch.bytes(element.len() * self.decision().numel());
        for chunk in bytes.chunks_exact_mut(element.len().max(1)) {
            chunk.copy_from_slice(element);
        }
        self.scatter_bytes(arg, bytes)
    }

    /// Argument `arg`'s element size in bytes.
    pub fn elem_size(&self, arg: usize) -> Result<usize, String> {
        dtype_size(self.dtype(arg)?).ok_or_else(|| "no element size".into())
    }

    /// Stores argument `arg`'s temporary as `dt` in its workspace region and reads it
    /// back, if the decision gave it one.
    pub fn through_workspace(&self, arg: usize, dt: DType, vals: &mut [f32]) -> Result<(), String> {
        let Some((mut buf, start)) = self.region(arg, vals.len() * dt.size())? else {
            return Ok(());
        };
        strided::through_workspace(&mut buf, start, dt, vals);
        Ok(())
    }

    /// Stores argument `arg`'s temporary bytes in its workspace region and reads them
    /// back, if the decision gave it one.
    pub fn through_workspace_bytes(&self, arg: usize, vals: &mut [u8]) -> Result<(), String> {
        let Some((mut buf, start)) = self.region(arg, vals.len())? else {
            return Ok(());
        };
        buf[start..start + vals.len()].copy_from_slice(vals);
        vals.copy_from_slice(&buf[start..start + vals.len()]);
        Ok(())
    }

    /// The locked workspace and the start of argument `arg`'s region of `len` bytes
    /// (`None`: the decision gave it none).
    fn region(&self, arg: usize, len: usize) -> Result<Option<Region<'_>>, String> {
        let Some(at) = self.decision().ws[arg] else {
            return Ok(None);
        };
        let what = self.name(arg);
        let Some(ws) = &self.ws else {
            return Err(format!("{what} temporary needs a workspace"));
        };
        let buf = lock(&ws.data);
        let start = self.ws_off + at;
        let end = start + len;
        if end > buf.len() {
            return Err(format!(
                "{what} temporary [{start}, {end}) overruns the workspace allocation of {} bytes",
                buf.len()
            ));
        }
        Ok(Some((buf, start)))
    }
}
