//! The operators of `libopapi.so`, one module each: its phase-1 checks in the vendor's
//! order and its kernel. Everything they share lives in nnopbase. Each module's
//! documentation is what the simulator models of that operator.

pub mod add;
pub mod addmm;
pub(crate) mod alpha_chain;
pub(crate) mod arg_max;
pub(crate) mod binary;
pub(crate) mod cast;
mod checks;
pub(crate) mod clamp;
mod complex;
mod conv_geom;
pub(crate) mod convolution;
pub(crate) mod convolution_backward;
mod convolution_backward_checks;
mod entry_pair;
pub mod gather;
pub(crate) mod gelu_backward;
pub mod inplace_copy;
pub mod inplace_fill_scalar;
pub(crate) mod inplace_one;
pub mod inplace_zero;
pub mod matmul;
pub(crate) mod max_dim;
pub(crate) mod max_pool2d;
pub(crate) mod max_pool2d_backward;
pub(crate) mod mean;
pub mod mish;
pub mod mish_backward;
pub mod mse_loss;
pub mod mse_loss_backward;
pub mod mul;
pub(crate) mod nll_loss;
pub mod random;
pub mod reduce_sum;
pub(crate) mod scalar;
pub(crate) mod softmax;
pub(crate) mod softmax_backward;
pub(crate) mod threshold_backward;
pub(crate) mod unary;
// Tensor lists.
pub(crate) mod cat;
// Optimizers.
pub(crate) mod adam_w;
// Scatter and embedding.
pub(crate) mod embedding;
pub(crate) mod scatter_add;
// Selection.
pub(crate) mod masked_fill_scalar;
pub(crate) mod s_where;

/// The families' entry points, one slice per family (see `catalog`).
pub(crate) static FAMILIES: &[&[crate::catalog::Entry]] = &[
    unary::ENTRIES,
    binary::ENTRIES,
    scalar::ENTRIES,
    clamp::ENTRIES,
    max_dim::ENTRIES,
    // Tensor lists.
    cat::ENTRIES,
    gelu_backward::ENTRIES,
    threshold_backward::ENTRIES,
    arg_max::ENTRIES,
    mean::ENTRIES,
    softmax::ENTRIES,
    softmax_backward::ENTRIES,
    convolution::ENTRIES,
    convolution_backward::ENTRIES,
    max_pool2d::ENTRIES,
    max_pool2d_backward::ENTRIES,
    random::uniform_entries::ENTRIES,
    random::normal_entries::ENTRIES,
    random::bernoulli_entries::ENTRIES,
    random::bernoulli_tensor_entries::ENTRIES,
    gather::gather_entries::ENTRIES,
    gather::index_select_entries::ENTRIES,
    nll_loss::ENTRIES,
    // Optimizers.
    adam_w::ENTRIES,
    // Scatter and embedding.
    scatter_add::scatter_add_entries::ENTRIES,
    embedding::embedding_entries::ENTRIES,
    embedding::embedding_dense_backward_entries::ENTRIES,
    // Selection.
    s_where::s_where_entries::ENTRIES,
    masked_fill_scalar::masked_fill_scalar_entries::ENTRIES,
    // Conversion and fills.
    cast::cast_entries::ENTRIES,
    inplace_one::inplace_one_entries::ENTRIES,
];

/// The rank limit of the operators' tensors (their "above 8 dims" checks).
const MAX_DIMS: usize = 8;

/// The operators' scalar kernels, exactly as the simulated device evaluates them.
pub mod kernel {
    pub use super::gelu_backward::gelu_grad_f32;
    pub use super::mish::mish_f32;
    pub use super::mish_backward::mish_grad_f32;
    pub use super::random::{bernoulli_unit, philox, standard_normal, uniform_unit};
}

/// The common case of a two-input elementwise kernel whose inputs, output and compute
/// dtype are all FLOAT: the operands read as f32 over the output's shape, `f` applied in
/// f32 in a loop the compiler vectorises (split over threads for large tensors), the
/// result written through the output's view. `None` when the call is not all FLOAT, for
/// the kernel's general path. `f` must be the general path's FLOAT formula, so that the
/// two give the same bits.
fn float_pair_fast_path(
    call: &crate::nnopbase::KernelCall,
    scratch: &mut crate::stream::Scratch,
    [lhs, rhs, out]: [usize; 3],
    f: impl Fn(f32, f32) -> f32 + Sync,
) -> Option<Result<(), String>> {
    use ascend_sys::ACL_FLOAT;
    let all_float = [lhs, rhs, out]
        .iter()
        .all(|&k| call.dtype(k) == Ok(ACL_FLOAT));
    if call.decision().compute != ACL_FLOAT || !all_float {
        return None;
    }
    if let Some(done) = call.dense_f32_streaming([lhs, rhs], out, |[x, y]| f(x, y)) {
        return Some(done);
    }
    let shape = &call.decision().out_shape;
    let [a, b] = scratch.get::<2>(call.decision().numel());
    if let Err(e) = call
        .read(lhs, shape, a)
        .and_then(|()| call.read(rhs, shape, b))
    {
        return Some(Err(e));
    }
    crate::strided::par_zip(a, b, |a, b| {
        for (x, &y) in a.iter_mut().zip(b) {
            *x = f(*x, y);
        }
    });
    Some(call.write(out, a))
}
