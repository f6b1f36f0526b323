//! `aclnnGather` (torch.gather) and `aclnnIndexSelect` (torch.index_select): elements
//! picked by an `i64` or `i32` index along one dim.

use crate::device::SocFamily;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::protocol::{Arg, Attr, Call, rules};

/// The element types of the gathered tensors this crate has types for, BF16 on Atlas
/// A2/A3 (Gather's and IndexSelect's lists agree on them).
pub(crate) fn data_dtypes(soc: SocFamily, dtype: DType) -> bool {
    dtype != DType::BF16 || soc.has_bf16()
}

/// `index` (or `indices`) `i64` or `i32`; every other tensor by [`data_dtypes`].
fn arg_dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match arg.name {
        "index" | "indices" => matches!(dtype, DType::I64 | DType::I32),
        _ => data_dtypes(soc, dtype),
    }
}

/// Attribute `i` as an `i64`.
pub(crate) fn int_attr(c: &Call<'_>, i: usize) -> Result<i64> {
    match c.attr(i) {
        Some(Attr::I64(v)) => Ok(v),
        _ => Err(Error::InvalidArgument(format!(
            "{} is not an i64",
            c.label(i)
        ))),
    }
}

/// `dim` normalised into `0..r`, or an error naming it.
pub(crate) fn normalised_dim(c: &Call<'_>, i: usize, r: usize) -> Result<usize> {
    let dim = int_attr(c, i)?;
    let r = r as i64;
    if dim < -r || dim >= r {
        return Err(Error::InvalidArgument(format!(
            "{} ({dim}) is outside [{}, {}]",
            c.label(i),
            -r,
            r - 1
        )));
    }
    Ok(dim.rem_euclid(r) as usize)
}

/// Output `out` has shape `want` (a pending output gets it).
pub(crate) fn expect_out(c: &Call<'_>, out: usize, want: &[usize]) -> Result<()> {
    if c.is_pending(out) {
        return c.infer(out, want);
    }
    if c.dims(out) != want {
        return Err(Error::ShapeMismatch {
            argument: c.label(out),
            expected: want.to_vec(),
            actual: c.dims(out).to_vec(),
        });
    }
    Ok(())
}

/// Gather's rule, in the vendor's order: out of self's dtype; self and index of one rank
/// (0-D counting as 1-D); out of index's shape; `dim` in range; unless index is empty,
/// `index[d] <= self[d]` off `dim` and `self[dim] > 0`.
fn gather_rule(c: &Call<'_>) -> Result<()> {
    const SELF: usize = 0;
    const DIM: usize = 1;
    const INDEX: usize = 2;
    const OUT: usize = 3;
    rules::same_dtype(c, SELF, &[OUT])?;
    let (x, i) = (c.dims(SELF), c.dims(INDEX));
    let r = x.len().max(1);
    if r != i.len().max(1) {
        return Err(Error::InvalidArgument(format!(
            "{} has {} dims, {} has {}: they must have the same number",
            c.label(INDEX),
            i.len(),
            c.label(SELF),
            x.len()
        )));
    }
    expect_out(c, OUT, i)?;
    let d = normalised_dim(c, DIM, r)?;
    if i.contains(&0) {
        return Ok(());
    }
    for (k, (&s, &n)) in x.iter().zip(i).enumerate() {
        if (k != d && n > s) || (k == d && s == 0) {
            return Err(Error::ShapeMismatch {
                argument: c.label(INDEX),
                expected: x.to_vec(),
                actual: i.to_vec(),
            });
        }
    }
    Ok(())
}

/// IndexSelect's rule: out of self's dtype; `dim` in range (0-D self: as 1-D); index of
/// at most 1 dim; out of self's shape with `[dim]` = index's length (a 0-D self: 0-D).
fn index_select_rule(c: &Call<'_>) -> Result<()> {
    const SELF: usize = 0;
    const DIM: usize = 1;
    const INDEX: usize = 2;
    const OUT: usize = 3;
    rules::same_dtype(c, SELF, &[OUT])?;
    let (x, i) = (c.dims(SELF), c.dims(INDEX));
    let d = normalised_dim(c, DIM, x.len().max(1))?;
    if i.len() > 1 {
        return Err(Error::InvalidArgument(format!(
            "{} has {} dims: it must be 0-D or 1-D",
            c.label(INDEX),
            i.len()
        )));
    }
    let mut want = x.to_vec();
    if let Some(w) = want.get_mut(d) {
        *w = i.first().copied().unwrap_or(1);
    }
    let empty = x.contains(&0) || i.contains(&0);
    if empty && !c.is_pending(OUT) {
        return Ok(());
    }
    expect_out(c, OUT, &want)
}

crate::operator! {
    @verified
    /// `aclnnGather`: `out[p] = self[p with p[dim] = index[p]]` (torch.gather). Every
    /// product runs it (the vendor's documentation lists Atlas A2/A3).
    pub struct Gather: aclnnGather, aclnnGatherGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    arg_dtypes: arg_dtypes;
    rule: gather_rule;

    /// Gathers `x` along `dim` at `index` into `out`, queued on `stream` (`aclnnGather`):
    /// `out[i][j] = x[index[i][j]][j]` for `dim` 0, `x[i][index[i][j]]` for `dim` 1.
    ///
    /// * `x` (self): any element type but `bf16` off Atlas A2/A3, up to 8 dims.
    /// * `index`: `i64` or `i32`, of `x`'s rank, no larger than `x` on the other dims;
    ///   its values in `[0, x.shape[dim])`. CANN does not check them; the simulator fails
    ///   the launch (at the next synchronisation) naming the first outside.
    /// * `out`: of `x`'s type and `index`'s shape. Elements are copied bit for bit.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, gather_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]])?;
    /// let at = DeviceTensor::from_array(&stream, &array![[2i64, 0], [1, 1]])?;
    /// let out: DeviceTensor<f32> = gather_new(&x, 1, &at, &stream)?;
    /// assert_eq!(out.to_array::<ndarray::Ix2>(&stream)?, array![[3.0f32, 1.0], [5.0, 5.0]]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::UnsupportedDtype`],
    /// [`Error::InvalidArgument`] (out's dtype, ranks, `dim`),
    /// [`Error::ShapeMismatch`],
    /// [`Error::DeviceMismatch`];
    /// [`Error::Aclnn`] from the library.
    pub fn gather<T, I>(
        x: input<T> = "self",
        dim: attr<i64> = "dim",
        index: input<I> = "index",
        out: output<T> = "out",
    );

    /// A reusable [`gather`] for fixed layouts, element types and `dim`.
    pub type GatherPlan;
    allocating: gather_new;
}

crate::operator! {
    @verified
    /// `aclnnIndexSelect`: the slices of `self` along `dim` at `index`
    /// (torch.index_select). Every product; BF16 on Atlas A2/A3.
    pub struct IndexSelect: aclnnIndexSelect, aclnnIndexSelectGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    arg_dtypes: arg_dtypes;
    rule: index_select_rule;

    /// Selects the slices of `x` along `dim` at `index` into `out`, queued on `stream`
    /// (`aclnnIndexSelect`): `out[.., j, ..] = x[.., index[j], ..]`.
    ///
    /// * `x` (self): any element type but `bf16` off Atlas A2/A3, up to 8 dims, 0-D (then
    ///   `out` is 0-D and `index` has one element).
    /// * `index`: `i64` or `i32`, 0-D or 1-D, values in `[0, x.shape[dim])` (checked on
    ///   the simulator at launch, not by CANN); repeats allowed.
    /// * `out`: of `x`'s type and shape with `[dim]` = `index`'s length.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, index_select_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![[1i32, 2, 3], [4, 5, 6]])?;
    /// let at = DeviceTensor::from_array(&stream, &array![2i64, 0, 2])?;
    /// let out: DeviceTensor<i32> = index_select_new(&x, 1, &at, &stream)?;
    /// assert_eq!(out.to_array::<ndarray::Ix2>(&stream)?, array![[3, 1, 3], [6, 4, 6]]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`gather`].
    pub fn index_select<T, I>(
        x: input<T> = "self",
        dim: attr<i64> = "dim",
        index: input<I> = "index",
        out: output<T> = "out",
    );

    /// A reusable [`index_select`] for fixed layouts, element types and `dim`.
    pub type IndexSelectPlan;
    allocating: index_select_new;
}
