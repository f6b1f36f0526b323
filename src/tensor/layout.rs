//! [`Layout`]: the shape, strides and offset of a view, and the view algebra (permute,
//! slice, broadcast, reshape) checked against its storage.

use crate::error::{Error, Result};
use crate::shape::{Dims, MAX_DIMS};

/// Shape, strides and offset of a view, in elements. Strides past the last dim are 0.
#[derive(Clone, Copy, Eq, Default)]
pub(crate) struct Layout {
    pub(crate) dims: Dims,
    pub(crate) strides: [i64; MAX_DIMS],
    pub(crate) offset: i64,
}

/// The same view: the dims in use and their strides (a plan compares every launch's
/// tensors with its layouts, so this looks at no more than the view has).
impl PartialEq for Layout {
    #[inline]
    fn eq(&self, other: &Layout) -> bool {
        let (a, b) = (self.dims.as_slice(), other.dims.as_slice());
        self.offset == other.offset
            && a.len() == b.len()
            && a.iter()
                .zip(b)
                .zip(self.strides.iter().zip(&other.strides))
                .all(|((x, y), (s, t))| x == y && s == t)
    }
}

fn to_i64(v: usize) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::InvalidArgument(format!("{v} does not fit in i64")))
}

impl Layout {
    pub(crate) fn contiguous(dims: Dims) -> Result<Layout> {
        let mut strides = [0i64; MAX_DIMS];
        let mut acc: i64 = 1;
        for i in (0..dims.ndim()).rev() {
            strides[i] = acc;
            acc = acc.saturating_mul(to_i64(dims[i])?.max(1));
        }
        Ok(Layout {
            dims,
            strides,
            offset: 0,
        })
    }

    pub(crate) fn strides(&self) -> &[i64] {
        &self.strides[..self.dims.ndim()]
    }

    pub(crate) fn numel(&self) -> usize {
        self.dims.numel()
    }

    /// Whether the elements are dense in row-major order.
    pub(crate) fn is_contiguous(&self) -> bool {
        let mut acc: i64 = 1;
        for i in (0..self.dims.ndim()).rev() {
            let d = self.dims[i];
            if d != 1 && self.strides[i] != acc {
                return false;
            }
            acc = acc.saturating_mul(i64::try_from(d).unwrap_or(i64::MAX));
        }
        true
    }

    /// Whether a dim of more than one element has stride 0 (a broadcast view, which an
    /// output must not be).
    pub(crate) fn is_broadcast(&self) -> bool {
        (self.dims.iter().zip(self.strides())).any(|(d, s)| *d > 1 && *s == 0)
    }

    /// Index range `[lo, hi]` of storage elements the view touches (`None` when empty).
    pub(crate) fn span(&self) -> Option<(i64, i64)> {
        if self.numel() == 0 {
            return None;
        }
        let mut hi = self.offset;
        for (d, s) in self.dims.iter().zip(self.strides()) {
            let extent = i64::try_from(*d).ok()?.checked_sub(1)?.checked_mul(*s)?;
            hi = hi.checked_add(extent)?;
        }
        Some((self.offset, hi))
    }

    /// How many storage elements, from the start of the storage, the view needs: one past
    /// the last it touches (its offset when empty). Every storage a checked view of this
    /// layout lives in is at least this long.
    pub(crate) fn reach(&self) -> usize {
        let end = self
            .span()
            .map_or(self.offset, |(_, hi)| hi.saturating_add(1));
        usize::try_from(end).unwrap_or(0)
    }

    /// Checks that the view stays inside a storage of `len` elements.
    pub(crate) fn check_within(&self, len: usize) -> Result<()> {
        let len = to_i64(len)?;
        let ok = self.offset >= 0
            && self.strides().iter().all(|s| *s >= 0)
            && match self.span() {
                None => self.numel() == 0 && self.offset <= len,
                Some((lo, hi)) => lo >= 0 && hi < len,
            };
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "view {:?} strides {:?} offset {} reaches outside its storage of {len} elements",
                self.dims,
                self.strides(),
                self.offset
            )))
        }
    }

    pub(crate) fn permute(&self, axes: &[usize]) -> Result<Layout> {
        let n = self.dims.ndim();
        let mut seen = [false; MAX_DIMS];
        let valid = axes.len() == n
            && axes
                .iter()
                .all(|&a| a < n && !std::mem::replace(seen.get_mut(a).unwrap_or(&mut true), true));
        if !valid {
            return Err(Error::InvalidArgument(format!(
                "permutation {axes:?} is not a permutation of {n} axes"
            )));
        }
        let mut dims = [0usize; MAX_DIMS];
        let mut strides = [0i64; MAX_DIMS];
        for (i, &a) in axes.iter().enumerate() {
            dims[i] = self.dims[a];
            strides[i] = self.strides[a];
        }
        Ok(Layout {
            dims: Dims::new("view", &dims[..n])?,
            strides,
            offset: self.offset,
        })
    }

    pub(crate) fn reversed_axes(&self) -> Layout {
        let n = self.dims.ndim();
        let mut axes = [0usize; MAX_DIMS];
        for (i, a) in axes[..n].iter_mut().enumerate() {
            *a = n - 1 - i;
        }
        // A reversal is always a valid permutation.
        self.permute(&axes[..n]).unwrap_or(*self)
    }

    pub(crate) fn slice(
        &self,
        axis: usize,
        start: usize,
        end: usize,
        step: usize,
    ) -> Result<Layout> {
        let n = self.dims.ndim();
        if axis >= n || step == 0 || start > end || end > self.dims[axis] {
            return Err(Error::InvalidArgument(format!(
                "slice {start}..{end} step {step} of axis {axis} is invalid for shape {:?}",
                self.dims
            )));
        }
        let mut dims = [0usize; MAX_DIMS];
        dims[..n].copy_from_slice(&self.dims);
        dims[axis] = (end - start).div_ceil(step);
        let overflow = || Error::InvalidArgument(format!("slice step {step} overflows i64"));
        let mut strides = self.strides;
        // An empty view touches no element: its offset stays put (advancing it could
        // point past the end of an empty storage and make a valid slice an error).
        let offset = if dims[axis] == 0 || self.numel() == 0 {
            self.offset
        } else {
            to_i64(start)?
                .checked_mul(self.strides[axis])
                .and_then(|o| o.checked_add(self.offset))
                .ok_or_else(overflow)?
        };
        strides[axis] = if dims[axis] <= 1 {
            self.strides[axis]
        } else {
            self.strides[axis]
                .checked_mul(to_i64(step)?)
                .ok_or_else(overflow)?
        };
        Ok(Layout {
            dims: Dims::new("view", &dims[..n])?,
            strides,
            offset,
        })
    }

    pub(crate) fn broadcast_to(&self, target: Dims) -> Result<Layout> {
        let shape = target.as_slice();
        let (n, m) = (self.dims.ndim(), target.ndim());
        let fail = || {
            Error::InvalidArgument(format!(
                "shape {:?} cannot be broadcast to {shape:?}",
                self.dims
            ))
        };
        if n > m {
            return Err(fail());
        }
        let mut strides = [0i64; MAX_DIMS];
        for i in 0..m {
            strides[i] = match i.checked_sub(m - n) {
                None => 0,
                Some(j) if self.dims[j] == target[i] => self.strides[j],
                Some(j) if self.dims[j] == 1 => 0,
                Some(_) => return Err(fail()),
            };
        }
        Ok(Layout {
            dims: target,
            strides,
            offset: self.offset,
        })
    }

    pub(crate) fn reshape(&self, dims: Dims) -> Result<Layout> {
        let shape = dims.as_slice();
        if !self.is_contiguous() || dims.numel() != self.numel() {
            return Err(Error::InvalidArgument(format!(
                "cannot reshape {:?} (strides {:?}) to {shape:?}: needs a contiguous view with the same number of elements",
                self.dims,
                self.strides()
            )));
        }
        let mut l = Layout::contiguous(dims)?;
        l.offset = self.offset;
        Ok(l)
    }

    /// Drops `axis`, which must have size 1 (its stride no longer matters).
    pub(crate) fn squeeze(&self, axis: usize) -> Result<Layout> {
        let n = self.dims.ndim();
        if axis >= n || self.dims[axis] != 1 {
            return Err(Error::InvalidArgument(format!(
                "cannot squeeze axis {axis} of shape {:?}: it must exist and have size 1",
                self.dims
            )));
        }
        let (mut dims, mut strides) = ([0usize; MAX_DIMS], [0i64; MAX_DIMS]);
        for (j, i) in (0..n).filter(|&i| i != axis).enumerate() {
            dims[j] = self.dims[i];
            strides[j] = self.strides[i];
        }
        Ok(Layout {
            dims: Dims::new("view", &dims[..n - 1])?,
            strides,
            offset: self.offset,
        })
    }

    /// Inserts a dim of size 1 at `axis` (`0..=ndim`), with the stride a contiguous
    /// layout would give it, so that a contiguous view stays contiguous.
    pub(crate) fn unsqueeze(&self, axis: usize) -> Result<Layout> {
        let n = self.dims.ndim();
        if axis > n {
            return Err(Error::InvalidArgument(format!(
                "cannot insert an axis at {axis} into shape {:?}",
                self.dims
            )));
        }
        if n == MAX_DIMS {
            return Err(Error::TooManyDims {
                argument: "view",
                dims: n + 1,
                max: MAX_DIMS,
            });
        }
        let (mut dims, mut strides) = ([0usize; MAX_DIMS], [0i64; MAX_DIMS]);
        dims[..axis].copy_from_slice(&self.dims[..axis]);
        strides[..axis].copy_from_slice(&self.strides[..axis]);
        dims[axis] = 1;
        strides[axis] = if axis < n {
            self.strides[axis].saturating_mul(to_i64(self.dims[axis])?.max(1))
        } else {
            1
        };
        dims[axis + 1..=n].copy_from_slice(&self.dims[axis..n]);
        strides[axis + 1..=n].copy_from_slice(&self.strides[axis..n]);
        Ok(Layout {
            dims: Dims::new("view", &dims[..=n])?,
            strides,
            offset: self.offset,
        })
    }

    /// The same elements as bytes of an element of `size` bytes: a last dim of `size`
    /// bytes with stride 1, the other strides and the offset scaled (for a contiguous
    /// layout, one dim of all its bytes, so that it needs no extra dim).
    pub(crate) fn as_bytes(&self, size: usize) -> Result<Layout> {
        let scale = to_i64(size)?;
        let overflow = || Error::InvalidArgument(format!("{:?} in bytes overflows i64", self.dims));
        let offset = self.offset.checked_mul(scale).ok_or_else(overflow)?;
        if self.is_contiguous() {
            let bytes = self.numel().checked_mul(size).ok_or_else(overflow)?;
            let mut l = Layout::contiguous(Dims::new("view", &[bytes])?)?;
            l.offset = offset;
            return Ok(l);
        }
        let n = self.dims.ndim();
        if n == MAX_DIMS {
            return Err(Error::TooManyDims {
                argument: "view",
                dims: n + 1,
                max: MAX_DIMS,
            });
        }
        let (mut dims, mut strides) = ([0usize; MAX_DIMS], [0i64; MAX_DIMS]);
        dims[..n].copy_from_slice(&self.dims);
        for (to, from) in strides.iter_mut().zip(self.strides()) {
            *to = from.checked_mul(scale).ok_or_else(overflow)?;
        }
        dims[n] = size;
        strides[n] = 1;
        Ok(Layout {
            dims: Dims::new("view", &dims[..=n])?,
            strides,
            offset,
        })
    }
}
