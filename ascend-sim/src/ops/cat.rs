//! `aclnnCat` (ops-math `conversion/concat_d`): the tensors of a list joined along `dim`
//! into out, each cast to the list's promoted dtype and the result cast to out's.
//!
//! Phase 1, in the vendor's order:
//! 1. `workspaceSize` or `executor` NULL: 161001 (the vendor writes through them);
//!    `tensors` NULL, then a NULL element: 161001;
//! 2. the 1-D empty elements (dims `[0]`) are dropped from the list; none left: success,
//!    nothing computed, whatever out is (even NULL);
//! 3. out NULL: 161001;
//! 4. an element's dtype, then out's, outside the product's list: 161002. Lists: FLOAT,
//!    FLOAT16, INT8, INT16, INT32, INT64, UINT8, DOUBLE, COMPLEX64, BOOL everywhere; plus
//!    BF16 on Atlas A2 / A3 and 310B;
//! 5. the promoted dtype of the elements undefined or COMPLEX128, or not castable to
//!    out's: 161002;
//! 6. the first element's format private (NC1HWC0, FRACTAL_*), an element's format not
//!    the first's, or out's not the first's: 161002;
//! 7. the first element above 8 dims, `dim` outside `[-r, r-1]` (r its rank; no dim fits a
//!    0-D list), an element of another rank or of other dims off `dim`: 161002;
//! 8. the empty elements dropped; none left: success, nothing computed; one left: out's
//!    shape not that element's: 561103 (the vendor's copy into out fails); more: out's
//!    shape not the joined shape: 161002.
//!
//! Every product runs it. Executors hold one tensor slot per element of the list (the
//! dropped ones included, never bound) and out's; input index `k` of
//! `aclSetInputTensorAddr` is element `k`.

use super::MAX_DIMS;
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, OutParams, Phase1, TensorDesc, invalid, list_elements,
    nullptr_error, positions, release_on_fault,
};
use crate::state::{fail, status_of};
use crate::stream::Scratch;
use crate::tables::{Family, can_cast, dtype_list, dtype_name, dtype_size, promote_type};
use ascend_sys::*;
use std::ffi::c_void;

positions!(TENSORS, OUT);
// Attribute: the joined dim, normalised.
positions!(DIM);

pub(crate) static OP: OpDef = OpDef {
    name: "Cat",
    launch_api: "aclnnCat",
    args: &["tensors", "out"],
    inputs: &[TENSORS],
    outputs: &[OUT],
    available: crate::nnopbase::every_product,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnCatGetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnCat");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnCatGetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnCat",
        address: || phase2 as *const c_void,
    },
];

/// The dtypes of the elements and out: BF16 only where the vendor's list for the product
/// has it (Atlas A2 / A3 and 310B share one list).
fn dtypes(family: Family) -> &'static [aclDataType] {
    const ALL: &[aclDataType] = &[
        ACL_FLOAT,
        ACL_INT32,
        ACL_INT64,
        ACL_FLOAT16,
        ACL_INT16,
        ACL_INT8,
        ACL_UINT8,
        ACL_DOUBLE,
        ACL_COMPLEX64,
        ACL_BOOL,
        ACL_BF16,
    ];
    match family {
        Family::A2 | Family::A3 | Family::Atlas310B => ALL,
        Family::Training | Family::Inference310P => &ALL[..ALL.len() - 1],
    }
}

/// The device's private storage formats, which the first element may not have.
fn is_private_format(format: aclFormat) -> bool {
    !matches!(
        format,
        ACL_FORMAT_UNDEFINED
            | ACL_FORMAT_ND
            | ACL_FORMAT_NCHW
            | ACL_FORMAT_NHWC
            | ACL_FORMAT_HWCN
            | ACL_FORMAT_NDHWC
            | ACL_FORMAT_NCDHW
            | ACL_FORMAT_NC
            | ACL_FORMAT_NCL
    )
}

/// Simulated `aclnnCatGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnCatGetWorkspaceSize")
)]
pub unsafe extern "C" fn phase1(
    tensors: *const aclTensorList,
    dim: i64,
    out: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        get_workspace_size(tensors, dim, out, outs)
    })
}

/// Simulated `aclnnCat`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnCat"))]
pub unsafe extern "C" fn phase2(
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    crate::state::entry_with_fault_effect(
        &PHASE2,
        crate::introspect::fault_code_at(PHASE2.index()),
        move || release_on_fault(executor),
        move || crate::nnopbase::phase2(&OP, workspace, workspace_size, executor, stream),
    )
}

fn get_workspace_size(
    tensors: *const aclTensorList,
    dim: i64,
    out: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        let outs = outs.slots()?;
        let elements = list_elements(tensors, "tensors")?;
        let mut slots: crate::nnopbase::Slots<(*const aclTensor, u8)> =
            elements.iter().map(|&t| (t, TENSORS as u8)).collect();
        if !out.is_null() {
            slots.push((out, OUT as u8));
        }
        let p = Phase1::begin_slots(&OP, &slots, outs)?;
        let n = elements.len();
        let kept: Vec<&TensorDesc> = (0..n)
            .map(|k| p.desc(k))
            .filter(|d| !(d.dims.len() == 1 && d.dims[0] == 0))
            .collect();
        if kept.is_empty() {
            return p.finish(Decision::new(ACL_FLOAT, &[], true));
        }
        if out.is_null() {
            return Err(nullptr_error("out"));
        }
        let o = p.desc(n).clone();
        let (real_dim, promote) = check(&p, &kept, &o, dim)?;
        let nonempty: Vec<&&TensorDesc> = kept.iter().filter(|d| !d.is_empty()).collect();
        let mut joined = kept[0].dims.clone();
        joined[real_dim] = nonempty.iter().map(|d| d.dims[real_dim]).sum();
        match nonempty.len() {
            0 => return p.finish(Decision::new(promote, &[], true)),
            1 if *o.dims != *nonempty[0].dims => {
                return Err(fail(
                    ACLNN_ERR_INNER_NULLPTR,
                    format!(
                        "out shape {:?} is not the shape {:?} of the one non-empty tensor: the copy into out fails",
                        o.dims, nonempty[0].dims
                    ),
                ));
            }
            1 => {}
            _ if *o.dims != *joined => {
                return Err(invalid(format!(
                    "out shape {:?} is not the joined shape {joined:?}",
                    o.dims
                )));
            }
            _ => {}
        }
        let mut decision = Decision::new(promote, &o.dims, false);
        decision.attrs[DIM] = Attr::Int(real_dim as i64);
        p.finish(decision)
    })
}

/// Steps 4 to 7 on the kept elements: the normalised dim and the promoted dtype.
fn check(
    p: &Phase1<'_>,
    kept: &[&TensorDesc],
    o: &TensorDesc,
    dim: i64,
) -> Result<(usize, aclDataType), i32> {
    let list = dtypes(p.family);
    for (k, d) in kept.iter().enumerate() {
        if !list.contains(&d.dtype) {
            return Err(invalid(format!(
                "tensor {k} dtype {} is not supported on {}, should be in {}",
                dtype_name(d.dtype),
                p.soc,
                dtype_list(list)
            )));
        }
    }
    if !list.contains(&o.dtype) {
        return Err(invalid(format!(
            "out dtype {} is not supported on {}, should be in {}",
            dtype_name(o.dtype),
            p.soc,
            dtype_list(list)
        )));
    }
    let mut promote = kept[0].dtype;
    for (k, d) in kept.iter().enumerate().skip(1) {
        promote = promote_type(d.dtype, promote).ok_or_else(|| {
            invalid(format!(
                "tensor {k} dtype {} and dtype {} can not promote",
                dtype_name(d.dtype),
                dtype_name(promote)
            ))
        })?;
        if promote == ACL_COMPLEX128 {
            return Err(invalid(
                "the tensors promote to COMPLEX128, which is not implemented".into(),
            ));
        }
    }
    if !can_cast(promote, o.dtype) {
        return Err(invalid(format!(
            "the promote dtype {} can not cast to out dtype {}",
            dtype_name(promote),
            dtype_name(o.dtype)
        )));
    }
    let format = kept[0].format;
    if is_private_format(format) {
        return Err(invalid(
            "the tensors' format must be one of ND, NCHW, NHWC, HWCN, NDHWC, NCDHW".into(),
        ));
    }
    if let Some(k) = kept.iter().position(|d| d.format != format) {
        return Err(invalid(format!(
            "format of tensor {k} ({}) is not tensor 0's ({format})",
            kept[k].format
        )));
    }
    if o.format != format {
        return Err(invalid(format!(
            "out format {} is not the tensors' format {format}",
            o.format
        )));
    }
    let first = kept[0];
    let r = first.dims.len();
    if r > MAX_DIMS {
        return Err(invalid(format!(
            "tensor 0 has {r} dims, more than the supported maximum {MAX_DIMS}"
        )));
    }
    let real = if dim < 0 { dim + r as i64 } else { dim };
    if real < 0 || real >= r as i64 {
        return Err(invalid(format!(
            "dim {dim} exceeds the dim range of the tensors' rank {r}"
        )));
    }
    let real = real as usize;
    for (k, d) in kept.iter().enumerate().skip(1) {
        if d.dims.len() != r {
            return Err(invalid(format!(
                "tensor {k} has {} dims, tensor 0 has {r}",
                d.dims.len()
            )));
        }
        if let Some(j) = (0..r).find(|&j| j != real && d.dims[j] != first.dims[j]) {
            return Err(invalid(format!(
                "dim {j} of tensor {k} is {}, tensor 0's is {}",
                d.dims[j], first.dims[j]
            )));
        }
    }
    Ok((real, promote))
}

/// Joins the non-empty elements in the promoted dtype, then casts the result to out's
/// dtype (two roundings, as the vendor's chain casts each tensor then the result).
fn run(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let decision = call.decision();
    let promote = decision.compute;
    let dim = decision.attr_i64(DIM) as usize;
    let shape = &decision.out_shape;
    let pe = dtype_size(promote).ok_or("the promoted dtype has no element size")?;
    let outer: usize = shape[..dim].iter().product();
    let inner: usize = shape[dim + 1..].iter().product();
    let total = shape[dim];
    let mut joined = vec![0u8; decision.numel() * pe];
    let mut part = Vec::new();
    let mut at = 0usize;
    for k in call.slots_of(TENSORS) {
        let dims = call.dims(k);
        if dims.contains(&0) || (dims.len() == 1 && dims[0] == 0) {
            continue;
        }
        let c = dims[dim];
        part.resize(dims.iter().product::<usize>() * pe, 0);
        call.read_as(k, promote, &mut part)?;
        let row = c * inner * pe;
        for o in 0..outer {
            let to = (o * total + at) * inner * pe;
            joined[to..to + row].copy_from_slice(&part[o * row..(o + 1) * row]);
        }
        at += c;
    }
    let out = call.slots_of(OUT).next().ok_or("out is not bound")?;
    let od = call.dtype(out)?;
    if od == promote {
        return call.scatter_bytes(out, &joined);
    }
    let oe = dtype_size(od).ok_or("out's dtype has no element size")?;
    let mut cast = vec![0u8; decision.numel() * oe];
    for (s, d) in joined.chunks_exact(pe).zip(cast.chunks_exact_mut(oe)) {
        crate::cast::convert(promote, s, od, d);
    }
    call.scatter_bytes(out, &cast)
}
