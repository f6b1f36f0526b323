//! `aclnnMishBackward`: the gradient of Mish.

use crate::device::SocFamily;
use crate::element::DType;

crate::operator! {
    @verified
    /// `aclnnMishBackward`: `grad_input = grad_output · mish'(self)`. Available on every
    /// product but the Atlas 200I/500 A2 (310B); FLOAT and FLOAT16 everywhere, BF16 on
    /// Atlas A2/A3.
    pub struct MishBackward: aclnnMishBackward, aclnnMishBackwardGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    dtypes: |soc: SocFamily, dtype: DType| dtype.is_core_float() && (dtype != DType::BF16 || soc.has_bf16());
    rule: crate::protocol::rules::broadcast;

    /// `grad_input = grad_output * mish'(self)`, queued on `stream` (`aclnnMishBackward`).
    ///
    /// * `grad` (gradOutput) and `x` (self): any [`AsTensorView`](crate::AsTensorView) —
    ///   `&DeviceTensor<_>`, [`TensorView`](crate::TensorView)s (permuted, sliced,
    ///   broadcast) — of `f32`, `f16` or `bf16` (bf16 on Atlas A2/A3 only), broadcastable
    ///   together (numpy rules, up to 8 dims).
    /// * `out` (gradInput): `&mut DeviceTensor<_>` or a
    ///   [`TensorViewMut`](crate::TensorViewMut) (may be non-contiguous) whose shape is the
    ///   broadcast shape. Any of the three dtypes: the inputs are promoted (same → same,
    ///   mixed → f32), computed, then cast to `out`'s.
    ///
    /// Everything is validated first, in Rust, with typed errors and no FFI call; then the
    /// two-phase protocol runs with the workspace from the stream's cache. The call returns
    /// once the work is queued; all three tensors stay alive until it has run. Empty
    /// tensors succeed without computing anything. In steady state the call does not
    /// allocate.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator) (SoC
    /// "Ascend310B*", or a toolkit without the operator),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch);
    /// [`Error::Aclnn`](crate::Error::Aclnn) / [`Error::Acl`](crate::Error::Acl) from the
    /// library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, mish_backward};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let grad = DeviceTensor::from_array(&stream, &array![[0.0f32, 1.0], [2.0, 3.0]])?;
    /// let x = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0])?; // broadcast
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2, 2])?;
    /// mish_backward(&grad, &x, &mut out, &stream)?;
    /// let y: ndarray::Array2<f32> = out.to_array(&stream)?;
    /// assert!((y[[0, 1]] - 1.069).abs() < 1e-3);
    /// # Ok(()) }
    /// ```
    pub fn mish_backward<G, X, O>(
        grad: input<G> = "grad_output",
        x: input<X> = "self",
        out: output<O> = "grad_input",
    );

    /// A reusable [`mish_backward`] for fixed layouts and element types (a
    /// [`Plan`](crate::Plan)): phase 1 runs once, each launch rebinds the addresses that
    /// changed and runs phase 2.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, MishBackwardPlan, Runtime};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let g = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0])?;
    /// let x = DeviceTensor::from_array(&stream, &array![0.0f32, 1.0])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2])?;
    /// let mut plan = MishBackwardPlan::new(&g, &x, &out, &stream)?;
    /// for _ in 0..3 {
    ///     plan.launch(&g, &x, &mut out, &stream)?;
    /// }
    /// assert!((out.to_array::<ndarray::Ix1>(&stream)?[0] - 0.6).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    pub type MishBackwardPlan;
    allocating: mish_backward_new;
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use super::*;
    use crate::{DeviceTensor, Error, Result, Runtime};
    use ndarray::{ArrayD, array};

    fn calls(symbol: &str) -> u64 {
        ascend_sim::call_count(symbol)
    }

    /// A toolkit without the operator still loads and runs everything else; the operator
    /// (one-off or plan) reports the missing entry point.
    #[test]
    fn a_toolkit_without_the_operator_reports_the_missing_symbol() {
        let rt = Runtime::simulator_without_operators().unwrap();
        let stream = rt.device(0).unwrap().stream().unwrap();
        let g = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0]).unwrap();
        let mut out = DeviceTensor::<f32>::zeros(&stream, [2]).unwrap();
        let expect = |r: Result<()>| match r {
            Err(Error::UnsupportedOperator {
                operator: "aclnnMishBackward",
                missing_symbol: Some("aclnnMishBackwardGetWorkspaceSize"),
                ..
            }) => {}
            other => panic!("expected UnsupportedOperator, got {other:?}"),
        };
        expect(mish_backward(&g, &g, &mut out, &stream));
        expect(MishBackwardPlan::new(&g, &g, &out, &stream).map(drop));
        let text = mish_backward(&g, &g, &mut out, &stream)
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("has no `aclnnMishBackwardGetWorkspaceSize`"),
            "{text}"
        );
        assert_eq!(
            out.to_array(&stream).unwrap(),
            array![0.0f32, 0.0].into_dyn()
        );
    }

    /// Without the executor-reuse functions a plan runs plain calls: no phase 1 when it is
    /// built, then the whole protocol (phase 1, phase 2) per launch, with correct results
    /// and the usual checks.
    #[test]
    fn plan_falls_back_to_plain_calls_without_executor_reuse() {
        let rt = Runtime::simulator_without_executor_reuse().unwrap();
        assert!(!rt.api().supports_executor_reuse());
        let stream = rt.device(0).unwrap().stream().unwrap();
        let g = DeviceTensor::from_array(&stream, &array![[1.0f32, -2.0], [0.5, 3.0]]).unwrap();
        let x = DeviceTensor::from_array(&stream, &array![0.0f32, 1.0]).unwrap(); // broadcast
        let mut out = DeviceTensor::<f32>::zeros(&stream, [2, 2]).unwrap();
        let (phase1, repeatable, set_in, set_out) = (
            calls("aclnnMishBackwardGetWorkspaceSize"),
            calls("aclSetAclOpExecutorRepeatable"),
            calls("aclSetInputTensorAddr"),
            calls("aclSetOutputTensorAddr"),
        );
        let mut plan = MishBackwardPlan::new(&g, &x, &out, &stream).unwrap();
        assert!(!plan.is_reusable());
        assert_eq!(
            calls("aclnnMishBackwardGetWorkspaceSize"),
            phase1,
            "no phase 1 yet"
        );
        for _ in 0..3 {
            plan.launch(&g, &x, &mut out, &stream).unwrap();
        }
        assert_eq!(
            calls("aclnnMishBackwardGetWorkspaceSize"),
            phase1 + 3,
            "one plain call (phase 1 + phase 2) per launch"
        );
        assert_eq!(calls("aclSetAclOpExecutorRepeatable"), repeatable);
        assert_eq!(calls("aclSetInputTensorAddr"), set_in);
        assert_eq!(calls("aclSetOutputTensorAddr"), set_out);
        let got = out.to_array::<ndarray::IxDyn>(&stream).unwrap();
        let want: ArrayD<f32> = crate::reference::mish_backward(
            array![[1.0f32, -2.0], [0.5, 3.0]].into_dyn().view(),
            array![0.0f32, 1.0].into_dyn().view(),
        )
        .unwrap();
        for (a, b) in got.iter().zip(want.iter()) {
            assert!(
                (a - b).abs() <= 1e-6 * b.abs().max(1.0),
                "{got:?} vs {want:?}"
            );
        }
        // The checks still apply in the fallback.
        let mut other = DeviceTensor::<f32>::zeros(&stream, [2, 3]).unwrap();
        assert!(matches!(
            plan.launch(&g, &x, other.view_mut().slice(1, 0, 2, 1).unwrap(), &stream),
            Err(Error::PlanMismatch {
                argument: "out (grad_input)",
                ..
            })
        ));
        drop(plan);
        stream.synchronize().unwrap();
    }
}
