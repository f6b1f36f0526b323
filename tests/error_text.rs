//! What errors say: the failing call once, the library's own text, Rust dtype names.

mod common;

use ascendcl::{DType, DeviceTensor, Error, mish_backward};
use common::*;
use half::bf16;
use ndarray::array;

#[test]
fn a_failed_call_is_named_once_with_the_library_text() {
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
    let mut out = DeviceTensor::<bf16>::zeros(&s, &[1]).unwrap();
    let e = mish_backward(&x, &x, &mut out, &s).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("dtype bf16 (CANN BF16)"), "{text}");
}

/// `fn main() -> ascendcl::Result<()>` reports an error through `Debug`: it must read as
/// the `Display` text, after the variant's name, without the fields repeated.
#[test]
fn debug_is_the_display_text_after_the_variant_name() {
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
