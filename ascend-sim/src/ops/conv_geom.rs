//! What the convolution operators share: the geometry of one convolution (up to three
//! spatial dims, 1-D and 2-D as 3-D with leading spatial dims of 1), im2col and col2im
//! between the convolution's input space ("big") and its output space ("small"), the
//! plain row-major GEMM over the simulator's cube (`cube::gemm`), and the attribute
//! packing phase 1 hands to the kernels.

use crate::cube::{Product, gemm};
use crate::nnopbase::Attr;
use crate::slab::Dims64;

/// Spatial dims of every geometry (fewer are padded with leading 1s).
pub(super) const SPATIAL: usize = 3;

/// One convolution's spatial relation: small position `o` and kernel tap `k` read big
/// position `o*stride - pad + k*dilation` (outside `0..big`: zero padding).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Geom {
    /// Channels of the big-space tensor im2col reads (or col2im writes), per group.
    pub c: usize,
    pub big: [usize; SPATIAL],
    pub small: [usize; SPATIAL],
    pub k: [usize; SPATIAL],
    pub stride: [usize; SPATIAL],
    pub dil: [usize; SPATIAL],
    /// Front padding per spatial dim (the back padding only shows in the sizes).
    pub pad: [usize; SPATIAL],
}

impl Geom {
    pub fn kvol(&self) -> usize {
        self.k.iter().product()
    }

    pub fn big_len(&self) -> usize {
        self.big.iter().product()
    }

    pub fn small_len(&self) -> usize {
        self.small.iter().product()
    }

    /// For each kernel tap, along spatial dim `d`: the big index of small index `o`, or
    /// `None` in the padding.
    fn at(&self, d: usize, o: usize, k: usize) -> Option<usize> {
        let p = (o * self.stride[d] + k * self.dil[d]).checked_sub(self.pad[d])?;
        (p < self.big[d]).then_some(p)
    }

    /// Visits every (row = channel·tap, column = small position, big offset or `None`).
    fn each(&self, mut f: impl FnMut(usize, usize, Option<usize>)) {
        let [kd, kh, kw] = self.k;
        let [sd, sh, sw] = self.small;
        let [bh, bw] = [self.big[1], self.big[2]];
        let bl = self.big_len();
        for c in 0..self.c {
            for a in 0..kd {
                for b in 0..kh {
                    for e in 0..kw {
                        let row = ((c * kd + a) * kh + b) * kw + e;
                        let mut col = 0;
                        for od in 0..sd {
                            let id = self.at(0, od, a);
                            for oh in 0..sh {
                                let ih = self.at(1, oh, b);
                                for ow in 0..sw {
                                    let iw = self.at(2, ow, e);
                                    let at = match (id, ih, iw) {
                                        (Some(i), Some(j), Some(l)) => {
                                            Some(c * bl + (i * bh + j) * bw + l)
                                        }
                                        _ => None,
                                    };
                                    f(row, col, at);
                                    col += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// `col[(c, taps), small]` (rows of `small_len`) from `src[c, big]`.
    pub fn im2col(&self, src: &[f32], col: &mut [f32]) {
        let n = self.small_len();
        self.each(|r, l, at| col[r * n + l] = at.map_or(0.0, |i| src[i]));
    }

    /// The transpose of [`Geom::im2col`]: `col_t[small, (c, taps)]`.
    pub fn im2col_t(&self, src: &[f32], col_t: &mut [f32]) {
        let rows = self.c * self.kvol();
        self.each(|r, l, at| col_t[l * rows + r] = at.map_or(0.0, |i| src[i]));
    }

    /// `dst[c, big] += col[(c, taps), small]`: the adjoint of [`Geom::im2col`].
    pub fn col2im(&self, col: &[f32], dst: &mut [f32]) {
        let n = self.small_len();
        self.each(|r, l, at| {
            if let Some(i) = at {
                dst[i] += col[r * n + l];
            }
        });
    }
}

/// `c[m×n] = a[m×k] @ b[k×n]`, row-major and contiguous, on the cube's GEMM.
pub(super) fn mm(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    if m == 0 || n == 0 {
        return;
    }
    let pr = Product {
        batch: Dims64::zeroed(0),
        m,
        k,
        n,
        out: Dims64::from_slice(&[m as i64, n as i64]),
    };
    gemm(
        &a[..m * k],
        &[m, k],
        &b[..k * n],
        &[k, n],
        &pr,
        &mut c[..m * n],
    );
}

/// `a[rows×cols]` transposed into `t[cols×rows]`.
pub(super) fn transpose(a: &[f32], rows: usize, cols: usize, t: &mut [f32]) {
    for r in 0..rows {
        for c in 0..cols {
            t[c * rows + r] = a[r * cols + c];
        }
    }
}

/// The spatial parameters phase 1 fixed, per spatial dim (leading dims padded): stride,
/// dilation, front and back padding, output padding.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Spatial {
    pub stride: [usize; SPATIAL],
    pub dil: [usize; SPATIAL],
    pub pad: [usize; SPATIAL],
}

impl Spatial {
    /// Packs into two attributes (stride and dilation; padding).
    pub fn to_attrs(self) -> [Attr; 2] {
        let mut sd = [0i64; 2 * SPATIAL];
        let mut p = [0i64; SPATIAL];
        for d in 0..SPATIAL {
            sd[d] = self.stride[d] as i64;
            sd[SPATIAL + d] = self.dil[d] as i64;
            p[d] = self.pad[d] as i64;
        }
        [
            Attr::Ints(Dims64::from_slice(&sd)),
            Attr::Ints(Dims64::from_slice(&p)),
        ]
    }

    pub fn from_attrs(sd: &Attr, p: &Attr) -> Spatial {
        let mut s = Spatial::default();
        if let (Attr::Ints(sd), Attr::Ints(p)) = (sd, p) {
            for d in 0..SPATIAL {
                s.stride[d] = sd.get(d).copied().unwrap_or(1) as usize;
                s.dil[d] = sd.get(SPATIAL + d).copied().unwrap_or(1) as usize;
                s.pad[d] = p.get(d).copied().unwrap_or(0) as usize;
            }
        }
        s
    }

    /// Parameters given for the last `values.len()` spatial dims, in place.
    pub fn set(dst: &mut [usize; SPATIAL], values: &[i64]) {
        let lead = SPATIAL - values.len();
        for (d, &v) in dst[lead..].iter_mut().zip(values) {
            *d = v.max(0) as usize;
        }
    }
}

/// Spatial dims of an N, C, spatial... shape, padded to three with leading 1s.
pub(super) fn spatial_of(dims: &[usize]) -> [usize; SPATIAL] {
    let mut s = [1; SPATIAL];
    let sp = &dims[2.min(dims.len())..];
    s[SPATIAL - sp.len()..].copy_from_slice(sp);
    s
}

/// The front padding per spatial dim from an aclnn padding list: one value per dim, or
/// for 2*(rank-2) values (top, bottom, left, right / left, right) the front of each pair.
pub(super) fn front_pads(padding: &[i64], spatial: usize) -> Vec<i64> {
    if padding.len() == 2 * spatial && spatial > 0 && padding.len() != spatial {
        (0..spatial).map(|d| padding[2 * d]).collect()
    } else {
        padding.to_vec()
    }
}

/// The total (front + back) padding per spatial dim, as the vendor's `ConstructPad`.
pub(super) fn total_pads(padding: &[i64], spatial: usize) -> Vec<i64> {
    if padding.len() == 2 * spatial && spatial > 0 && padding.len() != spatial {
        (0..spatial)
            .map(|d| padding[2 * d] + padding[2 * d + 1])
            .collect()
    } else {
        padding.iter().map(|&p| 2 * p).collect()
    }
}
