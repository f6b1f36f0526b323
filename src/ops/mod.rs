//! The operators, one module each (an operator and its in-place twin share one). Each is
//! `operator!` declarations: its arguments and their roles, its product and dtype rules,
//! its rule on the call and its two C entry points, from which the protocol layer
//! validates calls and runs the two-phase protocol. What an operator needs that is generic
//! lives in [`protocol`](crate::protocol), once.

/// Declares each operator module and re-exports its items in [`exports`] (the crate root
/// re-exports that): one line per operator.
macro_rules! operators {
    ($($name:ident),+ $(,)?) => {
        $(pub mod $name;)+

        /// Every operator's function, plan and marker type, re-exported at the crate root.
        pub mod exports {
            $(pub use super::$name::*;)+
        }
    };
}

operators! {
    add,
    addmm,
    binary,
    cast,
    clamp,
    copy,
    inplace_fill_scalar,
    inplace_one,
    inplace_zero,
    matmul,
    max_dim,
    mish,
    mish_backward,
    mse_loss,
    mse_loss_backward,
    mul,
    reduce_sum,
    scalar,
    unary,
    // Tensor lists.
    cat,
    gelu_backward,
    threshold_backward,
    arg_max,
    mean,
    softmax,
    convolution,
    convolution_backward,
    max_pool2d,
    random,
    gather,
    nll_loss,
    // Optimizers.
    adam_w,
    // Scatter and embedding.
    scatter_add,
    embedding,
    // Selection.
    s_where,
    masked_fill_scalar,
}
