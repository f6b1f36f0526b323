//! What a user's phase-1 checks see: the tensors' dtypes and shapes, the scalar and
//! value arguments, the product, and the vendor's usual checks with the vendor's codes.

use super::{Role, SimulatedOperator};
use crate::nnopbase::{Attr, MAX_ARGS, OpDef, Phase1, TensorDesc, require_broadcast};
use crate::state::fail;
use crate::tables::{Family, can_cast, dtype_list, dtype_name};
use ascend_ops::Product;
use ascend_sys::*;

/// A refusal of phase 1: its status (161002 for an invalid argument, ...), whose text
/// `aclGetRecentErrMsg` returns. Made by the checks of [`Checks`], [`Checks::invalid`] or
/// [`Checks::refuse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused(i32);

impl Refused {
    /// The status phase 1 returns.
    pub fn status(self) -> i32 {
        self.0
    }
}

/// The arguments of one phase-1 call, for a simulated operator's checks: tensors by the
/// names of their parameters, scalars read (as CANN reads them in phase 1), and the
/// product of the device.
pub struct Checks<'a> {
    op: &'static SimulatedOperator,
    def: &'static OpDef,
    descs: [Option<&'a TensorDesc>; MAX_ARGS],
    soc: &'static str,
    family: Family,
    attrs: &'a [Attr],
}

impl<'a> Checks<'a> {
    pub(super) fn new(
        p: &'a Phase1<'_>,
        op: &'static SimulatedOperator,
        def: &'static OpDef,
        attrs: &'a [Attr],
    ) -> Checks<'a> {
        let mut descs = [None; MAX_ARGS];
        for (k, d) in descs.iter_mut().enumerate().take(def.args.len()) {
            *d = Some(p.desc(k));
        }
        Checks {
            op,
            def,
            descs,
            soc: p.soc,
            family: p.family,
            attrs,
        }
    }

    /// The device's SoC name (`Ascend910B4`).
    pub fn soc(&self) -> &'static str {
        self.soc
    }

    /// The device's product line, on which the vendor's dtype lists depend.
    pub fn product(&self) -> Product {
        self.family.product()
    }

    /// The tensor argument named `name`: its slot and descriptor.
    fn tensor(&self, name: &str) -> Result<(usize, &'a TensorDesc), Refused> {
        let k = self.def.args.iter().position(|a| *a == name);
        match k.and_then(|k| Some((k, self.descs[k]?))) {
            Some(found) => Ok(found),
            None => Err(self.unknown(name, "tensor")),
        }
    }

    fn unknown(&self, name: &str, what: &str) -> Refused {
        Refused(fail(
            ACLNN_ERR_INNER,
            format!(
                "the simulated {} has no {what} argument named {name:?} (bug in its declaration)",
                self.op.name()
            ),
        ))
    }

    /// Tensor `name`'s dtype.
    pub fn dtype(&self, name: &str) -> Result<aclDataType, Refused> {
        Ok(self.tensor(name)?.1.dtype)
    }

    /// Tensor `name`'s view shape.
    pub fn dims(&self, name: &str) -> Result<&'a [i64], Refused> {
        Ok(&self.tensor(name)?.1.dims)
    }

    /// Whether tensor `name` has no element.
    pub fn is_empty(&self, name: &str) -> Result<bool, Refused> {
        Ok(self.tensor(name)?.1.is_empty())
    }

    /// The value argument named `name` with its role.
    fn value(&self, name: &str, what: &str) -> Result<(&'a Attr, Role), Refused> {
        match self.op.value_index(name) {
            Some((k, role)) => Ok((&self.attrs[k], role)),
            None => Err(self.unknown(name, what)),
        }
    }

    /// Scalar `name`'s value as a double (nnopbase's `ToDouble`), or an int, double or
    /// bool argument's value.
    pub fn scalar(&self, name: &str) -> Result<f64, Refused> {
        Ok(match self.value(name, "scalar")?.0 {
            Attr::Scalar(s) => s.to_f64(),
            Attr::Int(v) => *v as f64,
            Attr::Float(v) => *v,
            Attr::Bool(b) => f64::from(u8::from(*b)),
            _ => f64::NAN,
        })
    }

    /// Scalar `name`'s dtype (the vendor's checks cast it to a tensor's).
    pub fn scalar_dtype(&self, name: &str) -> Result<aclDataType, Refused> {
        match self.value(name, "scalar")? {
            (Attr::Scalar(s), _) => Ok(s.dtype),
            _ => Err(self.unknown(name, "aclScalar")),
        }
    }

    /// Int argument `name`.
    pub fn int(&self, name: &str) -> Result<i64, Refused> {
        match self.value(name, "int")? {
            (Attr::Int(v), _) => Ok(*v),
            _ => Err(self.unknown(name, "int64_t")),
        }
    }

    /// Bool argument `name`.
    pub fn flag(&self, name: &str) -> Result<bool, Refused> {
        match self.value(name, "bool")? {
            (Attr::Bool(v), _) => Ok(*v),
            _ => Err(self.unknown(name, "bool")),
        }
    }

    /// A refusal with status 161002 (`ACLNN_ERR_PARAM_INVALID`) and this text.
    pub fn invalid(&self, message: impl Into<String>) -> Refused {
        Refused(fail(ACLNN_ERR_PARAM_INVALID, message.into()))
    }

    /// A refusal with any status and this text.
    pub fn refuse(&self, status: i32, message: impl Into<String>) -> Refused {
        Refused(fail(status, message.into()))
    }

    /// 161002 unless tensor `name`'s dtype is in `list` (the vendor's
    /// `OP_CHECK_DTYPE_NOT_SUPPORT`).
    pub fn require_dtype(&self, name: &str, list: &[aclDataType]) -> Result<(), Refused> {
        let dt = self.dtype(name)?;
        if list.contains(&dt) {
            return Ok(());
        }
        Err(self.invalid(format!(
            "{name} dtype {} is not supported on {}, should be in {}",
            dtype_name(dt),
            self.soc,
            dtype_list(list)
        )))
    }

    /// 161002 unless `from` casts to `to` (the vendor's `OP_CHECK_RESULT_DTYPE_CAST_FAILED`).
    pub fn require_cast(&self, from: aclDataType, to: aclDataType) -> Result<(), Refused> {
        if can_cast(from, to) {
            return Ok(());
        }
        Err(self.invalid(format!(
            "dtype {} can not cast to dtype {}",
            dtype_name(from),
            dtype_name(to)
        )))
    }

    /// 161002 unless tensors `a` and `b` have the same dtype.
    pub fn require_same_dtype(&self, a: &str, b: &str) -> Result<(), Refused> {
        let (x, y) = (self.dtype(a)?, self.dtype(b)?);
        if x == y {
            return Ok(());
        }
        Err(self.invalid(format!(
            "{a} dtype {} is not {b}'s dtype {}",
            dtype_name(x),
            dtype_name(y)
        )))
    }

    /// 161002 unless tensors `a` and `b` have the same shape (the vendor's
    /// `OP_CHECK_SHAPE_NOT_EQUAL`).
    pub fn require_same_shape(&self, a: &str, b: &str) -> Result<(), Refused> {
        let (x, y) = (self.dims(a)?, self.dims(b)?);
        if x == y {
            return Ok(());
        }
        Err(self.invalid(format!("{a} shape {x:?} is not {b}'s shape {y:?}")))
    }

    /// 161002 if tensor `name` has more than `max` dims (the vendor's `OP_CHECK_MAX_DIM`).
    pub fn require_max_dims(&self, name: &str, max: usize) -> Result<(), Refused> {
        let n = self.dims(name)?.len();
        if n <= max {
            return Ok(());
        }
        Err(self.invalid(format!(
            "{name} has {n} dims, more than the supported maximum {max}"
        )))
    }

    /// 161002 unless tensors `a` and `b` broadcast (numpy rules) to exactly `out`'s shape.
    pub fn require_broadcast(&self, a: &str, b: &str, out: &str) -> Result<(), Refused> {
        let (a, b, out) = (self.tensor(a)?, self.tensor(b)?, self.tensor(out)?);
        require_broadcast(self.def, a, b, out).map_err(Refused)
    }
}
