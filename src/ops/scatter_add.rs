//! `aclnnScatterAdd` (torch.scatter_add): `src` added into a copy of `self` at the
//! positions an `i64` or `i32` index names along one dim.

use super::gather::{data_dtypes, expect_out, int_attr};
use crate::device::SocFamily;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::protocol::{Arg, Call, rules};

/// `index` `i64` or `i32`; `self`, `src` and `out` any type this crate has, BF16 on
/// Atlas A2/A3 (the vendor's list also has I16 and complex types, which it has not).
fn arg_dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match arg.name {
        "index" => matches!(dtype, DType::I64 | DType::I32),
        _ => data_dtypes(soc, dtype),
    }
}

/// ScatterAdd's rule, in the vendor's order: src and out of self's dtype; an empty index
/// ends the checks (out receives a copy of self); self, index and src of one rank; out
/// 0-D or of self's shape; index no larger than src on any dim, nor than self off
/// `dim`; `dim` in [−r, r−1] ([−1, 0] for a 0-D self).
fn scatter_add_rule(c: &Call<'_>) -> Result<()> {
    const SELF: usize = 0;
    const DIM: usize = 1;
    const INDEX: usize = 2;
    const SRC: usize = 3;
    const OUT: usize = 4;
    rules::same_dtype(c, SELF, &[SRC, OUT])?;
    let (x, i, s) = (c.dims(SELF), c.dims(INDEX), c.dims(SRC));
    if i.contains(&0) {
        return expect_out(c, OUT, x);
    }
    if x.len() != i.len() || x.len() != s.len() {
        return Err(Error::InvalidArgument(format!(
            "{}, {} and {} have {}, {} and {} dims: they must have the same number",
            c.label(SELF),
            c.label(INDEX),
            c.label(SRC),
            x.len(),
            i.len(),
            s.len()
        )));
    }
    if c.is_pending(OUT) || !c.dims(OUT).is_empty() {
        expect_out(c, OUT, x)?;
    }
    let r = x.len() as i64;
    let dim = int_attr(c, DIM)?;
    let (lo, hi) = ((-r).min(r - 1), (-r).max(r - 1));
    let clamped = if dim < 0 {
        (dim + r).max(0)
    } else {
        dim.min(r - 1)
    };
    let fits = |b: &[usize], skip: i64| {
        i.iter()
            .zip(b)
            .enumerate()
            .all(|(k, (&n, &m))| k as i64 == skip || n <= m)
    };
    if !fits(s, -1) {
        return Err(Error::ShapeMismatch {
            argument: c.label(INDEX),
            expected: s.to_vec(),
            actual: i.to_vec(),
        });
    }
    if !fits(x, clamped) {
        return Err(Error::ShapeMismatch {
            argument: c.label(INDEX),
            expected: x.to_vec(),
            actual: i.to_vec(),
        });
    }
    if dim < lo || dim > hi {
        return Err(Error::InvalidArgument(format!(
            "{} ({dim}) is outside [{lo}, {hi}]",
            c.label(DIM)
        )));
    }
    Ok(())
}

crate::operator! {
    @verified
    /// `aclnnScatterAdd`: `out = self`, then `out[p with p[dim] = index[p]] += src[p]`
    /// for every position `p` of index (torch.scatter_add). The vendor's documentation
    /// lists Atlas A2/A3 (and the 950); its code runs on every product, BF16 on A2/A3.
    pub struct ScatterAdd: aclnnScatterAdd, aclnnScatterAddGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    arg_dtypes: arg_dtypes;
    rule: scatter_add_rule;

    /// Adds `src` into a copy of `x` along `dim` at `index`, into `out`, queued on
    /// `stream` (`aclnnScatterAdd`): for `dim` 0, `out[index[i][j]][j] += src[i][j]`;
    /// repeated indices accumulate. `out` may be `x` itself (in place).
    ///
    /// * `x` (self): any element type but `bf16` off Atlas A2/A3, up to 8 dims.
    /// * `index`: `i64` or `i32`, of `x`'s rank, no larger than `src` on any dim nor than
    ///   `x` off `dim`; its values in `[0, x.shape[dim])`. CANN does not check them; the
    ///   simulator fails the launch (at the next synchronisation) naming the first outside.
    ///   An empty index makes `out` a copy of `x` and skips the other checks.
    /// * `src`: of `x`'s type and rank; only its part covered by `index` is read.
    /// * `out`: of `x`'s type and shape.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, scatter_add_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]])?;
    /// let at = DeviceTensor::from_array(&stream, &array![[2i64, 2], [0, 1]])?;
    /// let src = DeviceTensor::from_array(&stream, &array![[10.0f32, 20.0], [30.0, 40.0]])?;
    /// let out: DeviceTensor<f32> = scatter_add_new(&x, 1, &at, &src, &stream)?;
    /// assert_eq!(out.to_array::<ndarray::Ix2>(&stream)?, array![[1.0f32, 2.0, 33.0], [34.0, 45.0, 6.0]]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::UnsupportedDtype`],
    /// [`Error::InvalidArgument`] (dtypes, ranks, `dim`),
    /// [`Error::ShapeMismatch`],
    /// [`Error::DeviceMismatch`];
    /// [`Error::Aclnn`] from the library.
    pub fn scatter_add<T, I>(
        x: input<T> = "self",
        dim: attr<i64> = "dim",
        index: input<I> = "index",
        src: input<T> = "src",
        out: output<T> = "out",
    );

    /// A reusable [`scatter_add`] for fixed layouts, element types and `dim`.
    pub type ScatterAddPlan;
    allocating: scatter_add_new;
}
