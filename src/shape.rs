//! Shape rules shared by the device operators and the CPU reference: at most 8 dims,
//! numpy broadcasting, output shape equal to the broadcast shape. Nothing here allocates
//! unless an error is being reported.

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
    /// Copies `shape`, naming it `argument` in the error when it has too many dims.
    ///
    /// # Errors
    /// [`Error::TooManyDims`] when `shape.len() > MAX_DIMS`.
    pub fn new(argument: &'static str, shape: &[usize]) -> Result<Dims> {
        if shape.len() > MAX_DIMS {
            return Err(Error::TooManyDims {
                argument,
                dims: shape.len(),
                max: MAX_DIMS,
            });
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

    /// Number of elements (1 for a 0-d shape).
    pub fn numel(&self) -> usize {
        self.as_slice().iter().product()
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

/// The numpy broadcast of two shapes (aligned at the trailing dim; each pair equal or one
/// of them 1).
///
/// # Errors
/// [`Error::TooManyDims`] for a shape of more than 8 dims, [`Error::NotBroadcastable`]
/// when a pair of dims differs and neither is 1.
pub fn broadcast(grad: &[usize], x: &[usize]) -> Result<Dims> {
    let g = Dims::new("grad_output", grad)?;
    let s = Dims::new("self", x)?;
    let ndim = g.ndim().max(s.ndim());
    let mut out = [0usize; MAX_DIMS];
    for (i, slot) in out[..ndim].iter_mut().enumerate() {
        let from_end = ndim - i;
        let a = dim_from_end(&g, from_end);
        let b = dim_from_end(&s, from_end);
        *slot = match (a, b) {
            (a, b) if a == b => a,
            (1, b) => b,
            (a, 1) => a,
            _ => {
                return Err(Error::NotBroadcastable {
                    grad: grad.to_vec(),
                    x: x.to_vec(),
                });
            }
        };
    }
    Dims::new("broadcast", &out[..ndim])
}

fn dim_from_end(d: &Dims, from_end: usize) -> usize {
    d.ndim()
        .checked_sub(from_end)
        .map_or(1, |i| d.as_slice()[i])
}

/// Checks the operator's shape rules in the vendor's order (dims, broadcast, output) and
/// returns the broadcast shape.
///
/// # Errors
/// [`Error::TooManyDims`], [`Error::NotBroadcastable`], or [`Error::ShapeMismatch`] when
/// `out` differs from the broadcast shape.
pub fn check_mish_backward(grad: &[usize], x: &[usize], out: Option<&[usize]>) -> Result<Dims> {
    if let Some(out) = out {
        Dims::new("grad_input", out)?;
    }
    let shape = broadcast(grad, x)?;
    if let Some(out) = out
        && out != shape.as_slice()
    {
        return Err(Error::ShapeMismatch {
            argument: "grad_input",
            expected: shape.to_vec(),
            actual: out.to_vec(),
        });
    }
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasts_like_numpy() {
        assert_eq!(
            broadcast(&[4, 1, 3], &[2, 1]).unwrap().as_slice(),
            &[4, 2, 3]
        );
        assert_eq!(broadcast(&[], &[5]).unwrap().as_slice(), &[5]);
        assert_eq!(broadcast(&[0, 1], &[1, 7]).unwrap().as_slice(), &[0, 7]);
        assert!(matches!(
            broadcast(&[3], &[4]),
            Err(Error::NotBroadcastable { .. })
        ));
    }

    #[test]
    fn rejects_nine_dims_and_wrong_output() {
        let nine = [1usize; 9];
        assert!(matches!(
            check_mish_backward(&nine, &[1], None),
            Err(Error::TooManyDims {
                argument: "grad_output",
                dims: 9,
                max: 8
            })
        ));
        assert!(matches!(
            check_mish_backward(&[2, 3], &[3], Some(&[3, 2])),
            Err(Error::ShapeMismatch { .. })
        ));
        assert_eq!(
            check_mish_backward(&[2, 3], &[3], Some(&[2, 3]))
                .unwrap()
                .as_slice(),
            &[2, 3]
        );
    }
}
