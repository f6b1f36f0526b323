//! Shape rules shared by the device operators and the CPU reference, generic over the
//! arguments' names: at most 8 dims, numpy broadcasting of the inputs with outputs of the
//! broadcast shape, or equal shapes. Nothing here allocates unless an error is being
//! reported.

use crate::error::{Error, Result};

/// The most dims an aclnn tensor may have.
pub const MAX_DIMS: usize = 8;

/// A shape of at most [`MAX_DIMS`] dims, stored inline (no heap).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Dims {
    len: u8,
    dims: [usize; MAX_DIMS],
}

impl Dims {
    /// Copies `shape`, naming it `argument` in the errors.
    ///
    /// Its element count must fit in `i64` (aclnn's dims, strides and offsets are
    /// `int64_t`), so that [`numel`](Dims::numel) and every index computed from a `Dims`
    /// cannot overflow.
    ///
    /// # Errors
    /// [`Error::TooManyDims`] when `shape.len() > MAX_DIMS`, [`Error::TooManyElements`]
    /// when the product of the dims exceeds `i64::MAX`.
    ///
    /// ```
    /// use ascendcl::{Error, shape::Dims};
    /// assert_eq!(Dims::new("x", &[2, 3])?.numel(), 6);
    /// assert!(matches!(
    ///     Dims::new("x", &[1 << 32, 1 << 32]),
    ///     Err(Error::TooManyElements { .. })
    /// ));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new(argument: &'static str, shape: &[usize]) -> Result<Dims> {
        if shape.len() > MAX_DIMS {
            return Err(Error::TooManyDims {
                argument,
                dims: shape.len(),
                max: MAX_DIMS,
            });
        }
        let count = shape.iter().try_fold(1u64, |acc, d| {
            u64::try_from(*d).ok().and_then(|d| acc.checked_mul(d))
        });
        // A zero dim makes any product empty, however large the other dims.
        let empty = shape.contains(&0);
        if !empty && count.is_none_or(|n| n > i64::MAX as u64) {
            return Err(too_many_elements(argument, shape));
        }
        let mut dims = [0; MAX_DIMS];
        dims[..shape.len()].copy_from_slice(shape);
        Ok(Dims {
            len: shape.len() as u8,
            dims,
        })
    }

    /// The dims as a slice.
    pub fn as_slice(&self) -> &[usize] {
        &self.dims[..usize::from(self.len)]
    }

    /// Number of dims.
    pub fn ndim(&self) -> usize {
        usize::from(self.len)
    }

    /// Number of elements (1 for a 0-d shape). Never overflows: [`Dims::new`] bounds it.
    pub fn numel(&self) -> usize {
        let dims = self.as_slice();
        if dims.contains(&0) {
            0
        } else {
            dims.iter().product()
        }
    }
}

/// `shape` as the ndarray dimension `D`, or [`Error::RankMismatch`] naming `argument` when
/// `D` has a fixed number of dims other than `shape.len()`.
pub(crate) fn dimension<D: ndarray::Dimension>(
    argument: &'static str,
    shape: &[usize],
) -> Result<D> {
    match D::NDIM {
        Some(ndim) if ndim != shape.len() => Err(Error::RankMismatch {
            argument,
            shape: shape.to_vec(),
            ndim,
        }),
        _ => {
            let mut dim = D::zeros(shape.len());
            dim.slice_mut().copy_from_slice(shape);
            Ok(dim)
        }
    }
}

#[cold]
fn too_many_elements(argument: &'static str, shape: &[usize]) -> Error {
    // The exact count as a decimal product, computed without overflow (u128 holds the
    // product of up to two usize dims; beyond that the digits are multiplied out).
    let mut digits: Vec<u32> = vec![1];
    for d in shape {
        let mut carry: u128 = 0;
        for digit in digits.iter_mut() {
            let v = u128::from(*digit) * (*d as u128) + carry;
            *digit = (v % 1_000_000_000) as u32;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            digits.push((carry % 1_000_000_000) as u32);
            carry /= 1_000_000_000;
        }
    }
    let mut elements = digits.last().map(u32::to_string).unwrap_or_default();
    for chunk in digits.iter().rev().skip(1) {
        elements.push_str(&format!("{chunk:09}"));
    }
    Error::TooManyElements {
        argument,
        shape: shape.to_vec(),
        elements,
    }
}

impl std::ops::Deref for Dims {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        self.as_slice()
    }
}

impl std::fmt::Debug for Dims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// Anything that names a shape, in the forms ndarray accepts: an array or a `Vec` (by value
/// or by reference), a slice, a tuple of up to 8 sizes, a single size, an ndarray dimension
/// (`Ix2`, `IxDyn`, ...) or [`Dims`].
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DeviceTensor, Runtime};
/// let stream = Runtime::auto()?.device(0)?.stream()?;
/// let a = DeviceTensor::<f32>::zeros(&stream, (2, 3))?;
/// let b = DeviceTensor::<f32>::zeros(&stream, &[2, 3])?;
/// let c = DeviceTensor::<f32>::zeros(&stream, ndarray::IxDyn(&[2, 3]))?;
/// let d = DeviceTensor::<f32>::zeros(&stream, ndarray::Ix2(2, 3))?;
/// let e = DeviceTensor::<f32>::zeros(&stream, &vec![2, 3])?;
/// let f = DeviceTensor::<f32>::zeros(&stream, a.shape())?;
/// let g = DeviceTensor::<f32>::zeros(&stream, 6)?;
/// let h = DeviceTensor::<f32>::zeros(&stream, [2, 3])?; // arrays by value, as ndarray takes them
/// let i = DeviceTensor::<f32>::zeros(&stream, vec![2, 3])?;
/// for t in [&a, &b, &c, &d, &e, &f, &h, &i] {
///     assert_eq!(t.shape(), &[2, 3]);
/// }
/// assert_eq!(g.shape(), &[6]);
/// # Ok(()) }
/// ```
pub trait IntoDims {
    /// The shape as [`Dims`], naming it `argument` in the errors of [`Dims::new`].
    ///
    /// # Errors
    /// As [`Dims::new`].
    fn into_dims(self, argument: &'static str) -> Result<Dims>;
}

impl IntoDims for &[usize] {
    fn into_dims(self, argument: &'static str) -> Result<Dims> {
        Dims::new(argument, self)
    }
}

impl<const N: usize> IntoDims for &[usize; N] {
    fn into_dims(self, argument: &'static str) -> Result<Dims> {
        Dims::new(argument, self)
    }
}

impl<const N: usize> IntoDims for [usize; N] {
    fn into_dims(self, argument: &'static str) -> Result<Dims> {
        Dims::new(argument, &self)
    }
}

impl IntoDims for Vec<usize> {
    fn into_dims(self, argument: &'static str) -> Result<Dims> {
        Dims::new(argument, &self)
    }
}

impl IntoDims for &Vec<usize> {
    fn into_dims(self, argument: &'static str) -> Result<Dims> {
        Dims::new(argument, self)
    }
}

impl IntoDims for usize {
    fn into_dims(self, argument: &'static str) -> Result<Dims> {
        Dims::new(argument, &[self])
    }
}

impl IntoDims for Dims {
    fn into_dims(self, _argument: &'static str) -> Result<Dims> {
        Ok(self)
    }
}

impl IntoDims for () {
    fn into_dims(self, argument: &'static str) -> Result<Dims> {
        Dims::new(argument, &[])
    }
}

macro_rules! size {
    ($v:ident) => {
        usize
    };
}

macro_rules! tuple_dims {
    ($(($($v:ident)*))*) => {$(
        impl IntoDims for ($(size!($v),)*) {
            fn into_dims(self, argument: &'static str) -> Result<Dims> {
                let ($($v,)*) = self;
                Dims::new(argument, &[$($v),*])
            }
        }
    )*};
}
tuple_dims! {
    (a) (a b) (a b c) (a b c d) (a b c d e) (a b c d e f) (a b c d e f g) (a b c d e f g h)
}

macro_rules! ndarray_dims {
    ($($n:literal)*) => {$(
        impl IntoDims for ndarray::Dim<[usize; $n]> {
            fn into_dims(self, argument: &'static str) -> Result<Dims> {
                Dims::new(argument, ndarray::Dimension::slice(&self))
            }
        }
    )*};
}
ndarray_dims!(0 1 2 3 4 5 6);

impl IntoDims for ndarray::IxDyn {
    fn into_dims(self, argument: &'static str) -> Result<Dims> {
        Dims::new(argument, ndarray::Dimension::slice(&self))
    }
}

/// A shape with the name of the argument it belongs to, for errors.
pub type Named<'a> = (&'static str, &'a [usize]);

/// The numpy broadcast of the named shapes (aligned at the trailing dim; along each dim
/// all sizes equal, or 1).
///
/// # Errors
/// [`Error::TooManyDims`] for a shape of more than 8 dims, [`Error::NotBroadcastable`]
/// naming the first pair of arguments whose sizes differ along a dim where neither is 1.
pub fn broadcast(shapes: &[Named<'_>]) -> Result<Dims> {
    broadcast_of(shapes.iter().copied())
}

/// [`broadcast`] of shapes from an iterator (walked once per dim, never collected).
pub(crate) fn broadcast_of<'a>(shapes: impl Iterator<Item = Named<'a>> + Clone) -> Result<Dims> {
    for (name, s) in shapes.clone() {
        Dims::new(name, s)?;
    }
    let ndim = shapes.clone().map(|(_, s)| s.len()).max().unwrap_or(0);
    let mut out = [1usize; MAX_DIMS];
    for (i, slot) in out[..ndim].iter_mut().enumerate() {
        let from_end = ndim - i;
        // The argument that set this dim's size (other than 1), if any.
        let mut set_by: Option<Named<'a>> = None;
        for named in shapes.clone() {
            let d = dim_from_end(named.1, from_end);
            match set_by {
                _ if d == 1 => {}
                None => {
                    *slot = d;
                    set_by = Some(named);
                }
                Some(_) if d == *slot => {}
                Some(first) => return Err(not_broadcastable(first, named)),
            }
        }
    }
    Dims::new("broadcast", &out[..ndim])
}

#[cold]
fn not_broadcastable(a: Named<'_>, b: Named<'_>) -> Error {
    Error::NotBroadcastable {
        argument: a.0,
        shape: a.1.to_vec(),
        other: b.0,
        other_shape: b.1.to_vec(),
    }
}

fn dim_from_end(s: &[usize], from_end: usize) -> usize {
    s.len().checked_sub(from_end).map_or(1, |i| s[i])
}

/// The broadcast rule of an operator, in the vendor's order: every argument has at most 8
/// dims, the inputs broadcast together, every output has the broadcast shape. Returns the
/// broadcast shape.
///
/// # Errors
/// [`Error::TooManyDims`], [`Error::NotBroadcastable`], or [`Error::ShapeMismatch`] naming
/// the first output whose shape differs from the broadcast shape.
///
/// ```
/// use ascendcl::shape::check_broadcast;
/// let shape = check_broadcast(&[("a", &[4, 1, 3]), ("b", &[2, 1])], &[("out", &[4, 2, 3])])?;
/// assert_eq!(shape.as_slice(), &[4, 2, 3]);
/// assert!(check_broadcast(&[("a", &[3]), ("b", &[4])], &[]).is_err());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn check_broadcast(inputs: &[Named<'_>], outputs: &[Named<'_>]) -> Result<Dims> {
    check_broadcast_of(inputs.iter().copied(), outputs.iter().copied())
}

/// [`check_broadcast`] of shapes from iterators.
pub(crate) fn check_broadcast_of<'a>(
    inputs: impl Iterator<Item = Named<'a>> + Clone,
    outputs: impl Iterator<Item = Named<'a>> + Clone,
) -> Result<Dims> {
    for (name, s) in outputs.clone() {
        Dims::new(name, s)?;
    }
    let shape = broadcast_of(inputs)?;
    for (name, s) in outputs {
        if s != shape.as_slice() {
            return Err(shape_mismatch(name, &shape, s));
        }
    }
    Ok(shape)
}

/// The rule of operators without broadcasting: at most 8 dims, and every argument has the
/// shape of the first. Returns that shape.
///
/// # Errors
/// [`Error::TooManyDims`], or [`Error::ShapeMismatch`] naming the first argument whose
/// shape differs.
pub fn check_same(args: &[Named<'_>]) -> Result<Dims> {
    check_same_of(args.iter().copied())
}

/// [`check_same`] of shapes from an iterator.
pub(crate) fn check_same_of<'a>(args: impl Iterator<Item = Named<'a>> + Clone) -> Result<Dims> {
    for (name, s) in args.clone() {
        Dims::new(name, s)?;
    }
    let mut rest = args;
    let Some((_, first)) = rest.next() else {
        return Ok(Dims::default());
    };
    let shape = Dims::new("shape", first)?;
    for (name, s) in rest {
        if s != shape.as_slice() {
            return Err(shape_mismatch(name, &shape, s));
        }
    }
    Ok(shape)
}

#[cold]
fn shape_mismatch(argument: &'static str, expected: &Dims, actual: &[usize]) -> Error {
    Error::ShapeMismatch {
        argument,
        expected: expected.to_vec(),
        actual: actual.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(shapes: &[&[usize]]) -> Result<Vec<usize>> {
        let named: Vec<Named<'_>> = shapes.iter().map(|s| ("x", *s)).collect();
        broadcast(&named).map(|d| d.to_vec())
    }

    #[test]
    fn broadcasts_like_numpy() {
        assert_eq!(b(&[&[4, 1, 3], &[2, 1]]).unwrap(), [4, 2, 3]);
        assert_eq!(b(&[&[], &[5]]).unwrap(), [5]);
        assert_eq!(b(&[&[0, 1], &[1, 7]]).unwrap(), [0, 7]);
        assert_eq!(b(&[&[1], &[3, 1], &[2, 1, 4]]).unwrap(), [2, 3, 4]);
        assert_eq!(b(&[]).unwrap(), Vec::<usize>::new());
        assert!(matches!(
            b(&[&[3], &[4]]),
            Err(Error::NotBroadcastable { .. })
        ));
    }

    #[test]
    fn names_the_conflicting_pair() {
        let err = broadcast(&[("a", &[1, 3]), ("b", &[2, 1]), ("c", &[5, 4])]).unwrap_err();
        assert_eq!(
            err,
            Error::NotBroadcastable {
                argument: "b",
                shape: vec![2, 1],
                other: "c",
                other_shape: vec![5, 4],
            }
        );
        assert_eq!(
            err.to_string(),
            "b [2, 1] and c [5, 4] are not broadcastable"
        );
    }

    #[test]
    fn rejects_nine_dims_and_wrong_output() {
        let nine = [1usize; 9];
        assert!(matches!(
            check_broadcast(&[("grad_output", &nine), ("self", &[1])], &[]),
            Err(Error::TooManyDims {
                argument: "grad_output",
                dims: 9,
                max: 8
            })
        ));
        assert!(matches!(
            check_broadcast(&[("a", &[2, 3]), ("b", &[3])], &[("out", &[3, 2])]),
            Err(Error::ShapeMismatch {
                argument: "out",
                ..
            })
        ));
        assert_eq!(
            check_broadcast(&[("a", &[2, 3]), ("b", &[3])], &[("out", &[2, 3])])
                .unwrap()
                .as_slice(),
            &[2, 3]
        );
    }

    #[test]
    fn same_shapes() {
        assert_eq!(
            check_same(&[("self", &[2, 3]), ("out", &[2, 3])])
                .unwrap()
                .as_slice(),
            &[2, 3]
        );
        assert!(matches!(
            check_same(&[("self", &[2, 3]), ("out", &[3])]),
            Err(Error::ShapeMismatch {
                argument: "out",
                ..
            })
        ));
        assert!(matches!(
            check_same(&[("self", &[1; 9])]),
            Err(Error::TooManyDims {
                argument: "self",
                ..
            })
        ));
    }
}
