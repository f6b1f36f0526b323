//! The tt-muncher: each argument's role becomes parameters and values of the function,
//! the plan's `new` and `launch`, and the allocating form.

#[doc(hidden)]
#[macro_export]
macro_rules! __operator_munch {
    // The function, the plan's `new` and `launch`: parameters and values per argument.
    // F: function parameters, N: `new` parameters, L: `launch` parameters, CV/NV/LV: the
    // values each passes.
    (@munch $ctx:tt [$($f:tt)*] [$($n:tt)*] [$($l:tt)*] [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: input<$e:ty>, $($rest:tt)*) => {
        $crate::__operator_munch!(@munch $ctx
            [$($f)* $a: impl $crate::AsTensorView<Elem = $e>,]
            [$($n)* $a: impl $crate::AsTensorView<Elem = $e>,]
            [$($l)* $a: impl $crate::AsTensorView<Elem = $e>,]
            [$($cv)* $crate::protocol::Value::input($a.as_tensor_view()),]
            [$($nv)* $crate::protocol::Value::input($a.as_tensor_view()),]
            [$($lv)* $crate::protocol::Value::input($a.as_tensor_view()),]
            [$($al)* $a: impl $crate::AsTensorView<Elem = $e>,]
            [$($alv)* $crate::protocol::Value::input($a.as_tensor_view()),]
            $o
            $($rest)*);
    };
    // The allocating variant has no parameter for the output: it makes it.
    (@munch $ctx:tt $f:tt $n:tt $l:tt $cv:tt $nv:tt $lv:tt [$($al:tt)*] [$($alv:tt)*] [$($o:tt)*]
        $a:ident: output<$e:ty>, $($rest:tt)*) => {
        $crate::__operator_munch!(@munch_mut $ctx $f $n $l $cv $nv $lv
            [$($al)*] [$($alv)* $crate::protocol::Value::pending::<$e>(),] [$($o)* [$e]]
            $a [$e] $($rest)*);
    };
    (@munch $ctx:tt $f:tt $n:tt $l:tt $cv:tt $nv:tt $lv:tt [$($al:tt)*] [$($alv:tt)*] [$($o:tt)*]
        $a:ident: output_const<$e:ty>, $($rest:tt)*) => {
        $crate::__operator_munch!(@munch_mut $ctx $f $n $l $cv $nv $lv
            [$($al)*] [$($alv)* $crate::protocol::Value::pending::<$e>(),] [$($o)* [$e]]
            $a [$e] $($rest)*);
    };
    (@munch $ctx:tt $f:tt $n:tt $l:tt $cv:tt $nv:tt $lv:tt [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: inplace<$e:ty>, $($rest:tt)*) => {
        $crate::__operator_munch!(@munch_mut $ctx $f $n $l $cv $nv $lv
            [$($al)* mut $a: impl $crate::AsTensorViewMut<Elem = $e>,]
            [$($alv)* $crate::protocol::Value::output($a.as_tensor_view_mut()),] $o
            $a [$e] $($rest)*);
    };
    (@munch $ctx:tt $f:tt $n:tt $l:tt $cv:tt $nv:tt $lv:tt [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: inplace_const<$e:ty>, $($rest:tt)*) => {
        $crate::__operator_munch!(@munch_mut $ctx $f $n $l $cv $nv $lv
            [$($al)* mut $a: impl $crate::AsTensorViewMut<Elem = $e>,]
            [$($alv)* $crate::protocol::Value::output($a.as_tensor_view_mut()),] $o
            $a [$e] $($rest)*);
    };
    (@munch $ctx:tt [$($f:tt)*] [$($n:tt)*] $l:tt [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: attr<$e:ty>, $($rest:tt)*) => {
        $crate::__operator_munch!(@munch $ctx
            [$($f)* $a: impl Into<$e>,]
            [$($n)* $a: impl Into<$e>,]
            $l
            [$($cv)* $crate::protocol::Value::attr($crate::protocol::Attribute::to_attr(Into::<$e>::into($a))),]
            [$($nv)* $crate::protocol::Value::attr($crate::protocol::Attribute::to_attr(Into::<$e>::into($a))),]
            [$($lv)* $crate::protocol::Value::PLANNED,]
            [$($al)* $a: impl Into<$e>,]
            [$($alv)* $crate::protocol::Value::attr($crate::protocol::Attribute::to_attr(Into::<$e>::into($a))),]
            $o
            $($rest)*);
    };
    (@munch $ctx:tt $f:tt $n:tt $l:tt [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        $al:tt [$($alv:tt)*] $o:tt
        $a:ident: dtype_of<$e:ty>, $($rest:tt)*) => {
        $crate::__operator_munch!(@munch $ctx $f $n $l
            [$($cv)* $crate::protocol::Value::dtype_of::<$e>(),]
            [$($nv)* $crate::protocol::Value::dtype_of::<$e>(),]
            [$($lv)* $crate::protocol::Value::PLANNED,]
            $al
            [$($alv)* $crate::protocol::Value::dtype_of::<$e>(),]
            $o
            $($rest)*);
    };
    // A tensor list: a slice of views, read; `launch` takes one of the planned layouts.
    (@munch $ctx:tt [$($f:tt)*] [$($n:tt)*] [$($l:tt)*] [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: list<$e:ty>, $($rest:tt)*) => {
        $crate::__operator_munch!(@munch $ctx
            [$($f)* $a: &[$crate::TensorView<'_, $e>],]
            [$($n)* $a: &[$crate::TensorView<'_, $e>],]
            [$($l)* $a: &[$crate::TensorView<'_, $e>],]
            [$($cv)* $crate::protocol::Value::list(&$a),]
            [$($nv)* $crate::protocol::Value::list(&$a),]
            [$($lv)* $crate::protocol::Value::list(&$a),]
            [$($al)* $a: &[$crate::TensorView<'_, $e>],]
            [$($alv)* $crate::protocol::Value::list(&$a),]
            $o
            $($rest)*);
    };
    // An optional tensor: `Some(view)` or `None` (NULL), the same at `new` and `launch`.
    (@munch $ctx:tt [$($f:tt)*] [$($n:tt)*] [$($l:tt)*] [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: opt_input<$e:ty>, $($rest:tt)*) => {
        $crate::__operator_munch!(@munch $ctx
            [$($f)* $a: ::std::option::Option<$crate::TensorView<'_, $e>>,]
            [$($n)* $a: ::std::option::Option<$crate::TensorView<'_, $e>>,]
            [$($l)* $a: ::std::option::Option<$crate::TensorView<'_, $e>>,]
            [$($cv)* $crate::protocol::Value::opt_input($a),]
            [$($nv)* $crate::protocol::Value::opt_input($a),]
            [$($lv)* $crate::protocol::Value::opt_input($a),]
            [$($al)* $a: ::std::option::Option<$crate::TensorView<'_, $e>>,]
            [$($alv)* $crate::protocol::Value::opt_input($a),]
            $o
            $($rest)*);
    };
    // An optional tensor written in place (`maxGradNormOptionalRef`): `Some(view)` or
    // `None` (NULL); `new` reads its layout only.
    (@munch $ctx:tt [$($f:tt)*] [$($n:tt)*] [$($l:tt)*] [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: opt_inplace<$e:ty>, $($rest:tt)*) => {
        $crate::__operator_munch!(@munch $ctx
            [$($f)* $a: ::std::option::Option<$crate::TensorViewMut<'_, $e>>,]
            [$($n)* $a: ::std::option::Option<$crate::TensorView<'_, $e>>,]
            [$($l)* $a: ::std::option::Option<$crate::TensorViewMut<'_, $e>>,]
            [$($cv)* $crate::protocol::Value::opt_output($a),]
            [$($nv)* $crate::protocol::Value::opt_input($a),]
            [$($lv)* $crate::protocol::Value::opt_output($a),]
            [$($al)* $a: ::std::option::Option<$crate::TensorViewMut<'_, $e>>,]
            [$($alv)* $crate::protocol::Value::opt_output($a),]
            $o
            $($rest)*);
    };
    // An optional attribute: `Some(value)` or `None` (NULL), fixed at `new`.
    (@munch $ctx:tt [$($f:tt)*] [$($n:tt)*] $l:tt [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: opt_attr<$e:ty>, $($rest:tt)*) => {
        $crate::__operator_munch!(@munch $ctx
            [$($f)* $a: ::std::option::Option<$e>,]
            [$($n)* $a: ::std::option::Option<$e>,]
            $l
            [$($cv)* $crate::protocol::Value::opt_attr($a.map($crate::protocol::Attribute::to_attr)),]
            [$($nv)* $crate::protocol::Value::opt_attr($a.map($crate::protocol::Attribute::to_attr)),]
            [$($lv)* $crate::protocol::Value::PLANNED,]
            [$($al)* $a: ::std::option::Option<$e>,]
            [$($alv)* $crate::protocol::Value::opt_attr($a.map($crate::protocol::Attribute::to_attr)),]
            $o
            $($rest)*);
    };
    (@munch_mut $ctx:tt [$($f:tt)*] [$($n:tt)*] [$($l:tt)*] [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        $al:tt $alv:tt $o:tt
        $a:ident [$e:ty] $($rest:tt)*) => {
        $crate::__operator_munch!(@munch $ctx
            [$($f)* mut $a: impl $crate::AsTensorViewMut<Elem = $e>,]
            [$($n)* $a: impl $crate::AsTensorView<Elem = $e>,]
            [$($l)* mut $a: impl $crate::AsTensorViewMut<Elem = $e>,]
            [$($cv)* $crate::protocol::Value::output($a.as_tensor_view_mut()),]
            [$($nv)* $crate::protocol::Value::input($a.as_tensor_view()),]
            [$($lv)* $crate::protocol::Value::output($a.as_tensor_view_mut()),]
            $al $alv $o
            $($rest)*);
    };
    (@munch {
        op: $op:ident, fname: $fname:ident, plan: $plan:ident, types: [$($ty:ident),+],
        fn_doc: [$($fn_doc:tt)*], plan_doc: [$($plan_doc:tt)*], alloc: $alloc:tt,
    } [$($f:tt)*] [$($n:tt)*] [$($l:tt)*] [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        $al:tt $alv:tt $o:tt) => {
        $crate::__operator_emit!(@emit {
            op: $op, fname: $fname, plan: $plan, types: [$($ty),+],
            fn_doc: [$($fn_doc)*], plan_doc: [$($plan_doc)*], alloc: $alloc,
        } [$($f)*] [$($n)*] [$($l)*] [$($cv)*] [$($nv)*] [$($lv)*] $al $alv $o);
    };
}
