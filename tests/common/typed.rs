//! Host arrays and device views of any of the three element types behind one type each,
//! and [`typed!`], which compiles a body once per element type: the property harness
//! (`props.rs`) handles inputs of mixed dtypes through them.
#![allow(dead_code)]

use ascendcl::{DeviceTensor, Element, TensorView};
use half::{bf16, f16};
use ndarray::ArrayD;

use super::views::ViewSpec;

/// A host array of any element type.
#[derive(Debug, Clone)]
pub enum Host {
    F32(ArrayD<f32>),
    F16(ArrayD<f16>),
    Bf16(ArrayD<bf16>),
}

/// A device view of any element type.
pub enum DevView<'a> {
    F32(TensorView<'a, f32>),
    F16(TensorView<'a, f16>),
    Bf16(TensorView<'a, bf16>),
}

/// `match` over the variants of `$t` (`Host`, `DevView`), binding the payload to `$v`:
/// the body is compiled once per element type.
macro_rules! typed {
    ($t:ident, $e:expr, |$v:ident| $body:expr) => {
        match $e {
            $t::F32($v) => $body,
            $t::F16($v) => $body,
            $t::Bf16($v) => $body,
        }
    };
}
pub(crate) use typed;

/// The element types behind [`Host`] and [`DevView`].
pub trait Typed: ascendcl::FloatElement {
    fn host(a: ArrayD<Self>) -> Host;
    /// The array, when `h` holds this element type.
    fn of_host(h: &Host) -> Option<&ArrayD<Self>>;
    fn dev(v: TensorView<'_, Self>) -> DevView<'_>;
    /// The view, when `v` has this element type.
    fn of_dev(v: DevView<'_>) -> Option<TensorView<'_, Self>>;
}

macro_rules! impl_typed {
    ($ty:ty, $variant:ident) => {
        impl Typed for $ty {
            fn host(a: ArrayD<Self>) -> Host {
                Host::$variant(a)
            }
            fn of_host(h: &Host) -> Option<&ArrayD<Self>> {
                match h {
                    Host::$variant(a) => Some(a),
                    _ => None,
                }
            }
            fn dev(v: TensorView<'_, Self>) -> DevView<'_> {
                DevView::$variant(v)
            }
            fn of_dev(v: DevView<'_>) -> Option<TensorView<'_, Self>> {
                match v {
                    DevView::$variant(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
impl_typed!(f32, F32);
impl_typed!(f16, F16);
impl_typed!(bf16, Bf16);

impl Host {
    pub fn shape(&self) -> &[usize] {
        typed!(Host, self, |a| a.shape())
    }

    /// The values widened to f64.
    pub fn to_f64(&self) -> ArrayD<f64> {
        typed!(Host, self, |a| a.mapv(|v| v.to_f64()))
    }
}

/// An uploaded input of any element type.
pub enum Uploaded {
    F32(DeviceTensor<f32>),
    F16(DeviceTensor<f16>),
    Bf16(DeviceTensor<bf16>),
}

macro_rules! uploaded_from {
    ($ty:ty, $variant:ident) => {
        impl From<DeviceTensor<$ty>> for Uploaded {
            fn from(t: DeviceTensor<$ty>) -> Self {
                Uploaded::$variant(t)
            }
        }
    };
}
uploaded_from!(f32, F32);
uploaded_from!(f16, F16);
uploaded_from!(bf16, Bf16);

impl Uploaded {
    /// `spec`'s view of the tensor, broadcast to `out_shape` when the spec says so.
    pub fn view(
        &self,
        spec: &ViewSpec,
        cuts: &[(usize, usize, usize)],
        name: &str,
        out_shape: &[usize],
    ) -> Result<DevView<'_>, String> {
        typed!(Uploaded, self, |t| {
            let mut v = spec.device(t.view(), cuts, name)?;
            if spec.broadcast {
                v = v
                    .broadcast_to(out_shape)
                    .map_err(|e| format!("{name} broadcast: {e}"))?;
            }
            Ok(Typed::dev(v))
        })
    }
}
