//! [`AsTensorView`] and [`AsTensorViewMut`]: what operators accept as input and output
//! tensors, for tensors, views and references to them.

use super::{DeviceTensor, Tensor, TensorView, TensorViewMut};
use crate::element::Element;
use crate::operand::{Dyn, Operand};

/// Anything an operator accepts as an input tensor: [`DeviceTensor`], [`Tensor`],
/// [`TensorView`], [`TensorViewMut`] (read), and references to them.
pub trait AsTensorView {
    /// The element type: an [`Element`] or, for a [`Tensor`], [`Dyn`].
    type Elem: Operand;
    /// The view the operator reads.
    fn as_tensor_view(&self) -> TensorView<'_, Self::Elem>;
}

/// Anything an operator accepts as an output tensor: `&mut DeviceTensor`, `&mut Tensor`
/// (the write is seen through every tensor sharing its storage), [`TensorViewMut`], and
/// mutable references to them.
pub trait AsTensorViewMut {
    /// The element type: an [`Element`] or, for a [`Tensor`], [`Dyn`].
    type Elem: Operand;
    /// The view the operator writes.
    fn as_tensor_view_mut(&mut self) -> TensorViewMut<'_, Self::Elem>;
}

impl<T: Element> AsTensorView for DeviceTensor<T> {
    type Elem = T;
    fn as_tensor_view(&self) -> TensorView<'_, T> {
        self.view()
    }
}

impl<T: Operand> AsTensorView for TensorView<'_, T> {
    type Elem = T;
    fn as_tensor_view(&self) -> TensorView<'_, T> {
        *self
    }
}

impl<T: Operand> AsTensorView for TensorViewMut<'_, T> {
    type Elem = T;
    fn as_tensor_view(&self) -> TensorView<'_, T> {
        self.as_view()
    }
}

impl<A: AsTensorView + ?Sized> AsTensorView for &A {
    type Elem = A::Elem;
    fn as_tensor_view(&self) -> TensorView<'_, A::Elem> {
        (**self).as_tensor_view()
    }
}

impl<A: AsTensorView + ?Sized> AsTensorView for &mut A {
    type Elem = A::Elem;
    fn as_tensor_view(&self) -> TensorView<'_, A::Elem> {
        (**self).as_tensor_view()
    }
}

impl<T: Element> AsTensorViewMut for DeviceTensor<T> {
    type Elem = T;
    fn as_tensor_view_mut(&mut self) -> TensorViewMut<'_, T> {
        self.view_mut()
    }
}

impl<T: Operand> AsTensorViewMut for TensorViewMut<'_, T> {
    type Elem = T;
    fn as_tensor_view_mut(&mut self) -> TensorViewMut<'_, T> {
        self.reborrow()
    }
}

impl<A: AsTensorViewMut + ?Sized> AsTensorViewMut for &mut A {
    type Elem = A::Elem;
    fn as_tensor_view_mut(&mut self) -> TensorViewMut<'_, A::Elem> {
        (**self).as_tensor_view_mut()
    }
}

impl AsTensorView for Tensor {
    type Elem = Dyn;
    fn as_tensor_view(&self) -> TensorView<'_, Dyn> {
        self.view()
    }
}

impl AsTensorViewMut for Tensor {
    type Elem = Dyn;
    fn as_tensor_view_mut(&mut self) -> TensorViewMut<'_, Dyn> {
        self.view_mut()
    }
}
