//! What errors say: the failing call once, the library's own text, Rust dtype names.

use crate::common;

use ascendcl::{DType, DeviceTensor, Error, mish_backward};
use common::*;
use half::bf16;
use ndarray::array;

#[test]
fn a_failed_call_is_named_once_with_the_library_text() {
    let _gate = crate::common::shared();
    let e = runtime().device(99).unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(
            e,
            Error::Acl {
                api: "aclrtSetDevice",
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        text.matches("aclrtSetDevice failed with").count(),
        1,
        "{text}"
    );
    assert!(
        text.starts_with("aclrtSetDevice failed with ACL_ERROR_RT_INVALID_DEVICEID (107001)"),
        "{text}"
    );
    let Error::Acl { message, .. } = &e else {
        unreachable!()
    };
    assert!(
        !message.is_empty(),
        "the library's text is kept whole in the error"
    );
    // The part of the text beyond the restated prefix is shown.
    let tail = message.rsplit("): ").next().unwrap();
    assert!(text.ends_with(tail), "{text} / {message}");
}

#[test]
fn dtypes_show_rust_names_and_keep_cann_names() {
    assert_eq!(
        [DType::F32, DType::F16, DType::BF16].map(|d| d.to_string()),
        ["f32", "f16", "bf16"]
    );
    assert_eq!(DType::BF16.name(), "BF16");
    let _check = LeakCheck::start();
    let s = device(A910).stream().unwrap(); // Atlas training 910: no bf16
    let x = DeviceTensor::from_array(&s, &array![bf16::ONE]).unwrap();
    let mut out = DeviceTensor::<bf16>::zeros(&s, [1]).unwrap();
    let e = mish_backward(&x, &x, &mut out, &s).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("dtype bf16 (CANN BF16)"), "{text}");
}

/// A plan's mismatch names the Rust and the C argument and says how to get another
/// layout; an operator a product lacks points to the CPU reference.
#[test]
fn plan_mismatch_and_missing_operator_say_what_to_do() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let g = DeviceTensor::<f32>::zeros(&s, [128, 4]).unwrap();
    let small = DeviceTensor::<f32>::zeros(&s, [100, 4]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [128, 4]).unwrap();
    let mut plan = ascendcl::MishBackwardPlan::new(&g, &g, &out, &s).unwrap();
    let e = plan.launch(&g, &small, &mut out, &s).unwrap_err();
    assert_eq!(
        e.to_string(),
        "x (self) does not match the plan: shape [100, 4] strides [4, 1] offset 0 vs planned \
         shape [128, 4] strides [4, 1] offset 0; a plan is fixed to the shapes and strides \
         (any offset) it was built for: build a second plan with `new` for this layout (one \
         per batch shape, say)"
    );
    let s = device(B310).stream().unwrap();
    let x = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    let e = ascendcl::mish(&x, &mut y, &s).unwrap_err();
    assert_eq!(
        e.to_string(),
        "aclnnMish is not available on Ascend310B1; `ascendcl::reference` computes the \
         crate's operators on the host (CPU) instead"
    );
    s.synchronize().unwrap();
}

/// `fn main() -> ascendcl::Result<()>` reports an error through `Debug`: it must read as
/// the `Display` text, after the variant's name, without the fields repeated.
#[test]
fn debug_is_the_display_text_after_the_variant_name() {
    let _gate = crate::common::shared();
    let e = runtime().device(99).unwrap_err();
    assert_eq!(format!("{e:?}"), format!("Acl: {e}"));
    assert_eq!(format!("{e:#?}"), format!("Acl: {e}"));
    let load = Error::from(ascendcl::LoadError::NotFound {
        searched: Vec::new(),
    });
    assert_eq!(format!("{load:?}"), format!("Load: {load}"));
    let shape = Error::InvalidArgument("device id -1 is negative".into());
    assert_eq!(
        format!("{shape:?}"),
        "InvalidArgument: invalid argument: device id -1 is negative"
    );
}

#[test]
fn a_reshape_names_both_shapes_and_the_element_count() {
    // Serialised with the leak checks of this binary: its stream and tensors count.
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let mut t = DeviceTensor::<f32>::zeros(&s, (2, 3)).unwrap();
    let e = t.reshape([4, 2]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot reshape [2, 3] to [4, 2]: that is 8 elements, the tensor has 6 \
         (any shape of 6 elements works)"
    );
    assert_eq!(t.shape(), &[2, 3], "unchanged after the error");
    t.reshape((3, 2)).unwrap();
    assert_eq!(t.shape(), &[3, 2]);
}

#[test]
fn a_shape_too_large_is_named_once() {
    // Serialised with the leak checks of this binary: its stream and tensors count.
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let e = DeviceTensor::<f32>::zeros(&s, [usize::MAX, 2]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "shape [{}, 2] has 36893488147419103230 elements, more than the {} a tensor can \
             address",
            usize::MAX,
            i64::MAX
        )
    );
}

#[test]
fn a_download_of_another_rank_is_refused_before_copying() {
    // Serialised with the leak checks of this binary: its stream and tensors count.
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let t = DeviceTensor::<f32>::zeros(&s, (2, 3)).unwrap();
    let e = t.to_array::<ndarray::Ix3>(&s).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tensor has shape [2, 3] (2 dims), but the requested array type has 3 dims \
         (use `ArrayD` for any number)"
    );
    let a: ndarray::Array2<f32> = t.to_array(&s).unwrap();
    assert_eq!(a.dim(), (2, 3));
    let host = ascendcl::HostTensor::<f32>::zeros(&device(A2), 4).unwrap();
    assert!(matches!(
        host.view::<ndarray::Ix2>(),
        Err(Error::RankMismatch { ndim: 2, .. })
    ));
    assert_eq!(host.view::<ndarray::Ix1>().unwrap().len(), 4);
}

ascendcl::operator! {
    /// `aclnnSelu`, which the simulator does not implement.
    pub unsafe struct UserSelu: aclnnSelu, aclnnSeluGetWorkspaceSize;
    products: |_soc: ascendcl::SocFamily| true;
    dtypes: |_soc: ascendcl::SocFamily, _dtype: DType| true;
    rule: ascendcl::protocol::rules::same;

    /// `out = selu(x)`.
    pub fn user_selu<T>(x: input<T> = "self", out: output<T> = "out");

    /// Its plan.
    pub type UserSeluPlan;
}

// SAFETY: aclnnSelu's phase 1 is `(const aclTensor *self, aclTensor *out, uint64_t *,
// aclOpExecutor **)`, its phase 2 the common one, and it only reads `self`.
unsafe impl ascendcl::protocol::Promise for UserSelu {}

#[test]
fn an_operator_the_simulator_lacks_is_reported_as_missing_from_the_simulator() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let x = DeviceTensor::from_array(&s, &array![-1.0f32, 2.0]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    let e = user_selu(&x, &mut out, &s).unwrap_err();
    let text = e.to_string();
    for said in [
        "the simulator has no `aclnnSeluGetWorkspaceSize`",
        "ascend-sim does not implement aclnnSelu",
        "ASCENDCL_BACKEND=cann",
        "docs/adding-an-operator.md",
    ] {
        assert!(text.contains(said), "{said:?} not in: {text}");
    }
    assert!(!text.contains("libopapi"), "{text}");
    assert!(matches!(
        e,
        Error::UnsupportedOperator {
            backend: ascendcl::Backend::Simulator,
            missing_symbol: Some("aclnnSeluGetWorkspaceSize"),
            ..
        }
    ));
}
