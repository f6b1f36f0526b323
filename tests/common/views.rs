//! Random views of a larger storage, cut the same way on the host (ndarray) and on the
//! device (`TensorView`/`TensorViewMut`): every axis sliced with a start offset and a step,
//! the axes permuted, optionally broadcast. The property harness (`props.rs`) uses them for
//! every tensor of a case.
#![allow(dead_code)]

use ascendcl::{Element, TensorView, TensorViewMut};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};
use proptest::prelude::*;

/// How a view is cut from its storage (axis `j` of the storage, before the permutation).
#[derive(Debug, Clone)]
pub struct ViewSpec {
    /// Axis `i` of the view is storage axis `perm[i]`.
    pub perm: Vec<usize>,
    pub starts: Vec<usize>,
    pub steps: Vec<usize>,
    pub extra: Vec<usize>,
    /// Inputs only: `broadcast_to` the output shape explicitly.
    pub broadcast: bool,
}

/// The cuts both device view types offer (their inherent methods, behind one name).
pub trait Cut: Sized {
    fn slice(self, axis: usize, start: usize, end: usize, step: usize) -> ascendcl::Result<Self>;
    fn permute(self, axes: &[usize]) -> ascendcl::Result<Self>;
}

macro_rules! impl_cut {
    ($view:ident) => {
        impl<T: Element> Cut for $view<'_, T> {
            fn slice(
                self,
                axis: usize,
                start: usize,
                end: usize,
                step: usize,
            ) -> ascendcl::Result<Self> {
                $view::slice(self, axis, start, end, step)
            }
            fn permute(self, axes: &[usize]) -> ascendcl::Result<Self> {
                $view::permute(self, axes)
            }
        }
    };
}
impl_cut!(TensorView);
impl_cut!(TensorViewMut);

impl ViewSpec {
    /// The storage shape and, per storage axis, `(start, end, step)` for a view of `shape`.
    pub fn storage(&self, shape: &[usize]) -> (Vec<usize>, Vec<(usize, usize, usize)>) {
        let n = shape.len();
        let mut base = vec![0; n];
        let mut cuts = vec![(0, 0, 1); n];
        for (i, &d) in shape.iter().enumerate() {
            let j = self.perm[i];
            let (s, st) = (self.starts[j], self.steps[j]);
            let end = if d == 0 { s } else { s + (d - 1) * st + 1 };
            base[j] = end + self.extra[j];
            cuts[j] = (s, end, st);
        }
        (base, cuts)
    }

    /// Makes the storage of a view of `shape` at most `max` elements, by turning the
    /// widest axes back into plain ones (step 1, no offset, no padding).
    pub fn fit(mut self, shape: &[usize], max: usize) -> Self {
        loop {
            let (base, _) = self.storage(shape);
            if base.iter().product::<usize>() <= max {
                return self;
            }
            // the storage axis with the largest padding factor
            let mut best = (0usize, 0.0f64);
            for (i, &d) in shape.iter().enumerate() {
                let j = self.perm[i];
                let factor = base[j] as f64 / d.max(1) as f64;
                if factor > best.1 && (self.steps[j] > 1 || self.starts[j] > 0 || self.extra[j] > 0)
                {
                    best = (j, factor);
                }
            }
            if best.1 == 0.0 {
                return self;
            }
            let j = best.0;
            self.steps[j] = 1;
            self.starts[j] = 0;
            self.extra[j] = 0;
        }
    }

    /// The device counterpart of [`ViewSpec::host`]: `view` (of the whole storage) cut
    /// by `cuts` and permuted. Errors name `what` and the step that failed.
    pub fn device<V: Cut>(
        &self,
        view: V,
        cuts: &[(usize, usize, usize)],
        what: &str,
    ) -> Result<V, String> {
        let mut v = view;
        for (j, &(s, e, st)) in cuts.iter().enumerate() {
            v = v
                .slice(j, s, e, st)
                .map_err(|err| format!("{what} slice: {err}"))?;
        }
        v.permute(&self.perm)
            .map_err(|err| format!("{what} permute: {err}"))
    }

    pub fn host<'a, T>(
        &self,
        storage: &'a ArrayD<T>,
        shape: &[usize],
        cuts: &[(usize, usize, usize)],
    ) -> ArrayViewD<'a, T> {
        let mut v = storage.view();
        for (j, &(s, e, st)) in cuts.iter().enumerate() {
            v.slice_axis_inplace(
                Axis(j),
                Slice::new(s as isize, Some(e as isize), st as isize),
            );
        }
        let v = v.permuted_axes(IxDyn(&self.perm));
        assert_eq!(v.shape(), shape);
        v
    }
}

/// A random view of a tensor of `n` dims (`input`: may also be broadcast explicitly).
pub fn view_spec(n: usize, input: bool) -> impl Strategy<Value = ViewSpec> {
    (
        Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
        prop::collection::vec(prop_oneof![3 => Just(0usize), 1 => 1usize..=2], n),
        prop::collection::vec(prop_oneof![3 => Just(1usize), 1 => 2usize..=3], n),
        prop::collection::vec(prop_oneof![3 => Just(0usize), 1 => 1usize..=2], n),
        if input {
            prop::bool::weighted(0.25).boxed()
        } else {
            Just(false).boxed()
        },
    )
        .prop_map(|(perm, starts, steps, extra, broadcast)| ViewSpec {
            perm,
            starts,
            steps,
            extra,
            broadcast,
        })
}
