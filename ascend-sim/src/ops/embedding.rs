//! `aclnnEmbedding` (torch.nn.functional.embedding; ops-nn `index/embedding`) and
//! `aclnnEmbeddingDenseBackward` (its gradient with respect to the weight; ops-nn
//! `index/embedding_dense_grad_v2`).
//!
//! Embedding's phase-1 checks in the vendor's order (`op_api/aclnn_embedding.cpp`), 161001
//! NULL, 161002 invalid:
//! 1. `workspaceSize` or `executor`, then weight, indices, out NULL;
//! 2. weight's dtype outside DOUBLE, FLOAT, FLOAT16, INT64, INT32, INT16, INT8, UINT8,
//!    BOOL, COMPLEX128, COMPLEX64 (+ BF16 on Atlas A2 / A3); out's dtype not weight's;
//!    indices not INT32 or INT64;
//! 3. weight, indices or out above 8 dims;
//! 4. out's rank not indices' plus one, or out's leading dims not indices' shape;
//! 5. weight or indices empty: success, workspace 0.
//!
//! The vendor checks neither weight's rank nor out's last dim: its GatherV2 along dim 0
//! yields `indices.shape + weight.shape[1..]`, and the ViewCopy of that into an out of
//! another shape fails with 561103, which the simulator reports at the same point.
//! Storage formats are not checked (the UT passes NCHW, NHWC, HWCN, NDHWC, NCDHW).
//!
//! EmbeddingDenseBackward's (`op_api/aclnn_embedding_dense_backward.cpp`):
//! 1. `workspaceSize` or `executor`, then grad, indices, out NULL;
//! 2. grad's dtype outside FLOAT, FLOAT16 (+ BF16 on A2 / A3); indices' outside FLOAT16,
//!    FLOAT, DOUBLE, INT8, UINT8, INT16, INT32, INT64, BOOL; out's outside grad's list
//!    (out need not be grad's dtype);
//! 3. grad, indices or out above 8 dims;
//! 4. unless grad's last dim is 0: grad's leading dims not holding one row per index
//!    (their product not indices' element count);
//! 5. out not 2-D, or out's shape not `[numWeights, grad.shape[-1]]`;
//! 6. a private storage format on grad, indices or out;
//! 7. grad or indices empty: success, and phase 2 zeroes out.
//!
//! A 0-D grad counts as one row of one element (the vendor reads its dim −1).
//!
//! The kernels: `out[p, :] = weight[indices[p], :]`, copied bit for bit; the backward
//! accumulates grad's rows in f64 into `numWeights` rows, skipping rows whose index is
//! `paddingIdx` (a `uint64_t`: −1 names none), each divided by its index's number of
//! occurrences when `scaleGradByFreq`, rounded once to out's dtype. Float or bool indices
//! are truncated as the vendor's cast to INT32 does. CANN does not check the index values;
//! the simulator fails the launch naming the first outside [0, rows).

use super::MAX_DIMS;
use super::entry_pair::entry_pair;
use super::gather::{INDEX_DTYPES, bytes_of, checked_indices, require_same_dtype};
use super::random::refuse_private_formats;
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, invalid, op_def, positions,
};
use crate::state::fail;
use crate::stream::Scratch;
use crate::tables::Family;
use ascend_sys::*;

positions!(WEIGHT, INDICES, OUT);
positions!(GRAD);
// Attributes of the backward: numWeights, paddingIdx (its bits), scaleGradByFreq.
positions!(NUM_WEIGHTS, PADDING_IDX, SCALE);

pub(crate) static EMBEDDING: OpDef = op_def!(
    "Embedding",
    ["weight", "indices", "out"],
    [WEIGHT, INDICES] -> [OUT],
    embedding
);
pub(crate) static EMBEDDING_DENSE_BACKWARD: OpDef = op_def!(
    "EmbeddingDenseBackward",
    ["grad", "indices", "out"],
    [GRAD, INDICES] -> [OUT],
    embedding_dense_backward
);

entry_pair!(embedding_entries: "aclnnEmbeddingGetWorkspaceSize"(
    weight: *const aclTensor, indices: *const aclTensor, out: *const aclTensor,
) => embedding_checks; "aclnnEmbedding" => super::EMBEDDING);
entry_pair!(embedding_dense_backward_entries: "aclnnEmbeddingDenseBackwardGetWorkspaceSize"(
    grad: *const aclTensor, indices: *const aclTensor, num_weights: u64, padding_idx: u64,
    scale_grad_by_freq: bool, out: *const aclTensor,
) => embedding_dense_backward_checks; "aclnnEmbeddingDenseBackward" => super::EMBEDDING_DENSE_BACKWARD);

fn weight_dtypes(family: Family) -> &'static [aclDataType] {
    const LIST: &[aclDataType] = &[
        ACL_DOUBLE,
        ACL_FLOAT,
        ACL_FLOAT16,
        ACL_INT64,
        ACL_INT32,
        ACL_INT16,
        ACL_INT8,
        ACL_UINT8,
        ACL_BOOL,
        ACL_COMPLEX128,
        ACL_COMPLEX64,
        ACL_BF16,
    ];
    if family.has_bf16() {
        LIST
    } else {
        &LIST[..LIST.len() - 1]
    }
}

/// The backward's grad and out dtypes.
fn grad_dtypes(family: Family) -> &'static [aclDataType] {
    const LIST: &[aclDataType] = &[ACL_FLOAT, ACL_FLOAT16, ACL_BF16];
    if family.has_bf16() {
        LIST
    } else {
        &LIST[..LIST.len() - 1]
    }
}

/// The backward's indices dtypes (the vendor casts the non-integers to INT32).
const BACKWARD_INDEX_DTYPES: &[aclDataType] = &[
    ACL_FLOAT16,
    ACL_FLOAT,
    ACL_DOUBLE,
    ACL_INT8,
    ACL_UINT8,
    ACL_INT16,
    ACL_INT32,
    ACL_INT64,
    ACL_BOOL,
];

fn embedding_checks(
    weight: *const aclTensor,
    indices: *const aclTensor,
    out: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(weight), Arg::Tensor(indices), Arg::Tensor(out)];
    EMBEDDING.phase1(outs, &args, |p| {
        p.require_dtype(WEIGHT, weight_dtypes(p.family))?;
        require_same_dtype(&p, WEIGHT, OUT)?;
        p.require_dtype(INDICES, INDEX_DTYPES)?;
        for a in [WEIGHT, INDICES, OUT] {
            p.require_max_dims(a, MAX_DIMS)?;
        }
        let (w, i, o) = (p.desc(WEIGHT), p.desc(INDICES), p.desc(OUT));
        if o.dims.len() != i.dims.len() + 1 {
            return Err(invalid(format!(
                "out dim [{}] should be one larger than indices dim [{}].",
                o.dims.len(),
                i.dims.len()
            )));
        }
        if o.dims[..i.dims.len()] != i.dims[..] {
            return Err(invalid(format!(
                "out shape {:?} is not match with indices shape {:?}.",
                o.dims, i.dims
            )));
        }
        if w.is_empty() || i.is_empty() {
            let decision = Decision::new(w.dtype, &o.dims, true);
            return p.finish(decision);
        }
        let gathered: Vec<i64> = i.dims.iter().chain(w.dims.iter().skip(1)).copied().collect();
        if o.dims[..] != gathered[..] {
            return Err(fail(
                ACLNN_ERR_INNER_NULLPTR,
                format!(
                    "ViewCopy of the gathered rows {gathered:?} into out {:?} fails: the shapes differ",
                    o.dims
                ),
            ));
        }
        let decision = Decision::new(w.dtype, &o.dims, false);
        p.finish(decision)
    })
}

fn embedding_dense_backward_checks(
    grad: *const aclTensor,
    indices: *const aclTensor,
    num_weights: u64,
    padding_idx: u64,
    scale_grad_by_freq: bool,
    out: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(grad), Arg::Tensor(indices), Arg::Tensor(out)];
    EMBEDDING_DENSE_BACKWARD.phase1(outs, &args, |p| {
        p.require_dtype(GRAD, grad_dtypes(p.family))?;
        p.require_dtype(INDICES, BACKWARD_INDEX_DTYPES)?;
        p.require_dtype(OUT, grad_dtypes(p.family))?;
        for a in [GRAD, INDICES, OUT] {
            p.require_max_dims(a, MAX_DIMS)?;
        }
        let (g, i, o) = (p.desc(GRAD), p.desc(INDICES), p.desc(OUT));
        let cols = g.dims.last().copied().unwrap_or(1);
        let lead = g.dims.get(..g.dims.len().saturating_sub(1)).unwrap_or(&[]);
        if cols != 0 && lead.iter().product::<i64>() != i.dims.iter().product::<i64>() {
            return Err(invalid(format!(
                "grad shape {:?} is not match with indices shape {:?}.",
                g.dims, i.dims
            )));
        }
        if o.dims.len() != 2 {
            return Err(invalid("outDim shape is not equal to 2".into()));
        }
        if o.dims[0] as u64 != num_weights || o.dims[1] != cols {
            return Err(invalid(format!(
                "outshape {:?} is not match with infershape {{{num_weights}, {cols}}}.",
                o.dims
            )));
        }
        refuse_private_formats(&p, &[GRAD, INDICES, OUT])?;
        let mut decision = Decision::new(o.dtype, &o.dims, o.is_empty());
        decision.attrs[NUM_WEIGHTS] = Attr::Int(num_weights as i64);
        decision.attrs[PADDING_IDX] = Attr::Int(padding_idx as i64);
        decision.attrs[SCALE] = Attr::Bool(scale_grad_by_freq);
        p.finish(decision)
    })
}

fn embedding(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let rows = call.dims(WEIGHT).first().copied().unwrap_or(1);
    let idx = checked_indices(call, (INDICES, "indices"), rows, "weight's rows")?;
    let (src, esz) = bytes_of(call, WEIGHT)?;
    let row = call.dims(WEIGHT).get(1..).map_or(1, |d| d.iter().product()) * esz;
    let mut out = vec![0u8; idx.len() * row];
    for (k, &r) in idx.iter().enumerate() {
        out[k * row..(k + 1) * row].copy_from_slice(&src[r * row..(r + 1) * row]);
    }
    call.scatter_bytes(OUT, &out)
}

fn embedding_dense_backward(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let d = call.decision();
    let num_weights = d.attr_i64(NUM_WEIGHTS) as usize;
    let padding = d.attr_i64(PADDING_IDX) as u64;
    let scale = d.attr_i64(SCALE) != 0;
    let cols = call.dims(OUT).get(1).copied().unwrap_or(0);
    let mut acc = vec![0f64; num_weights * cols];
    let gd = call.dims(GRAD).to_vec();
    if gd.contains(&0) || call.dims(INDICES).contains(&0) {
        return call.write_f64(OUT, &acc);
    }
    let idx = checked_indices(call, (INDICES, "indices"), num_weights, "numWeights")?;
    let mut grad = vec![0f64; gd.iter().product::<usize>()];
    call.read_f64(GRAD, &gd, &mut grad)?;
    let mut count = vec![0usize; num_weights];
    for &r in &idx {
        count[r] += 1;
    }
    for (k, &r) in idx.iter().enumerate() {
        if r as u64 == padding {
            continue;
        }
        let by = if scale { count[r] as f64 } else { 1.0 };
        let from = &grad[k * cols..(k + 1) * cols];
        for (a, &g) in acc[r * cols..(r + 1) * cols].iter_mut().zip(from) {
            *a += g / by;
        }
    }
    call.write_f64(OUT, &acc)
}
