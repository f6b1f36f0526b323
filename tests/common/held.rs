//! Tensors held on the device in a chosen layout (whole, transposed, strided) whose view is
//! a given host array, and shape strategies, for the operators' property tests.

use ascendcl::{DeviceTensor, Element, Stream, TensorView, TensorViewMut};
use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;

/// How a tensor argument is laid out on the device.
#[derive(Debug, Clone, Copy)]
pub enum Lay {
    Whole,
    /// A view with all axes reversed over a buffer holding the transpose.
    Transposed,
    /// Every other element of a buffer twice as long along the last axis.
    Strided,
}

pub fn lay() -> impl Strategy<Value = Lay> {
    prop_oneof![Just(Lay::Whole), Just(Lay::Transposed), Just(Lay::Strided)]
}

/// A host array on the device in a layout, whose view is the array again.
pub struct Held<T: Element> {
    pub t: DeviceTensor<T>,
    lay: Lay,
    last: usize,
}

pub fn hold<T: Element>(s: &Stream, a: &ArrayD<T>, lay: Lay) -> Held<T> {
    let n = a.ndim();
    let lay = if n == 0 { Lay::Whole } else { lay };
    let last = a.shape().last().copied().unwrap_or(0);
    let t = match lay {
        Lay::Whole => DeviceTensor::from_array(s, a).unwrap(),
        Lay::Transposed => {
            DeviceTensor::from_array(s, &a.view().reversed_axes().as_standard_layout().to_owned())
                .unwrap()
        }
        Lay::Strided => {
            let mut shape = a.shape().to_vec();
            shape[n - 1] *= 2;
            let mut wide = ArrayD::from_elem(IxDyn(&shape), T::from_f64(7.0));
            for (i, v) in a.indexed_iter() {
                let mut j = ndarray::Dimension::slice(&i).to_vec();
                j[n - 1] *= 2;
                wide[IxDyn(&j)] = *v;
            }
            DeviceTensor::from_array(s, &wide).unwrap()
        }
    };
    Held { t, lay, last }
}

impl<T: Element> Held<T> {
    pub fn view(&self) -> TensorView<'_, T> {
        match self.lay {
            Lay::Whole => self.t.view(),
            Lay::Transposed => self.t.view().t(),
            Lay::Strided => {
                let n = self.t.shape().len();
                self.t.view().slice(n - 1, 0, 2 * self.last, 2).unwrap()
            }
        }
    }

    pub fn view_mut(&mut self) -> TensorViewMut<'_, T> {
        match self.lay {
            Lay::Whole => self.t.view_mut(),
            Lay::Transposed => self.t.view_mut().t(),
            Lay::Strided => {
                let n = self.t.shape().len();
                self.t.view_mut().slice(n - 1, 0, 2 * self.last, 2).unwrap()
            }
        }
    }

    /// The view's elements on the host.
    pub fn get(&self, s: &Stream) -> ArrayD<T> {
        let all = self.t.to_array(s).unwrap();
        match self.lay {
            Lay::Whole => all,
            Lay::Transposed => all.reversed_axes().as_standard_layout().to_owned(),
            Lay::Strided => {
                let n = all.ndim();
                all.slice_axis(ndarray::Axis(n - 1), ndarray::Slice::new(0, None, 2))
                    .to_owned()
            }
        }
    }
}

/// A shape of up to `max_dims` dims of sizes 0..=3 (0 rarely), and three shapes that
/// broadcast to it (dims replaced by 1, leading dims dropped).
pub fn shapes_broadcasting_to(
    max_dims: usize,
) -> impl Strategy<Value = (Vec<usize>, [Vec<usize>; 3])> {
    prop::collection::vec(
        prop_oneof![1 => Just(0usize), 6 => 1usize..=3],
        0..=max_dims,
    )
    .prop_flat_map(|out| {
        let n = out.len();
        let sub = move |out: Vec<usize>| {
            (0..=n, prop::collection::vec(any::<bool>(), n)).prop_map(move |(drop, ones)| {
                out.iter()
                    .zip(&ones)
                    .skip(drop.min(n))
                    .map(|(d, one)| if *one { 1 } else { *d })
                    .collect::<Vec<usize>>()
            })
        };
        (
            Just(out.clone()),
            sub(out.clone()),
            sub(out.clone()),
            sub(out),
        )
    })
    .prop_map(|(out, a, b, c)| (out, [a, b, c]))
}

/// Two shapes of [`shapes_broadcasting_to`] and their broadcast (which may be smaller
/// than the shape they were made from).
pub fn broadcast_shapes(
    max_dims: usize,
) -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<usize>)> {
    shapes_broadcasting_to(max_dims).prop_map(|(_, [a, b, _])| {
        let o = ascendcl::shape::broadcast(&[("a", &a), ("b", &b)])
            .unwrap()
            .to_vec();
        (a, b, o)
    })
}
