//! Each role's argument kind (for `ARGS`) and C type (for the phase-1 prototype).

#[doc(hidden)]
#[macro_export]
macro_rules! __operator_role {
    (@kind $in:ident input $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::$in)
    };
    (@kind $in:ident output $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::Output)
    };
    (@kind $in:ident output_const $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::Output)
    };
    (@kind $in:ident inplace $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::InPlace)
    };
    (@kind $in:ident inplace_const $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::InPlace)
    };
    (@kind $in:ident attr $e:ty) => {
        $crate::protocol::attr_kind(
            <<$e as $crate::protocol::Attribute>::C as $crate::protocol::CValue>::KIND,
        )
    };
    (@kind $in:ident dtype_of $e:ty) => {
        $crate::protocol::ArgKind::Attr($crate::protocol::Kind::DType)
    };
    (@cty input $e:ty) => { *const $crate::__private::ascend_sys::aclTensor };
    (@cty output $e:ty) => { *mut $crate::__private::ascend_sys::aclTensor };
    (@cty inplace $e:ty) => { *mut $crate::__private::ascend_sys::aclTensor };
    (@cty inplace_const $e:ty) => { *const $crate::__private::ascend_sys::aclTensor };
    (@cty output_const $e:ty) => { *const $crate::__private::ascend_sys::aclTensor };
    (@cty attr $e:ty) => { <$e as $crate::protocol::Attribute>::C };
    (@cty dtype_of $e:ty) => { $crate::__private::ascend_sys::aclDataType };
    (@kind $in:ident opt_input $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::$in)
    };
    (@kind $in:ident opt_attr $e:ty) => {
        $crate::__operator_role!(@kind $in attr $e)
    };
    (@kind $in:ident list $e:ty) => {
        $crate::protocol::ArgKind::List($crate::protocol::Role::$in)
    };
    (@cty list $e:ty) => { *const $crate::__private::ascend_sys::aclTensorList };
    (@cty opt_input $e:ty) => { *const $crate::__private::ascend_sys::aclTensor };
    (@cty opt_attr $e:ty) => { <$e as $crate::protocol::Attribute>::C };
    (@kind $in:ident opt_inplace $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::InPlace)
    };
    (@cty opt_inplace $e:ty) => { *mut $crate::__private::ascend_sys::aclTensor };
    (@optional opt_input) => { true };
    (@optional opt_inplace) => { true };
    (@optional opt_attr) => { true };
    (@optional $role:ident) => { false };
}
