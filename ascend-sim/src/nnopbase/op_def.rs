//! The operator kind: what an operator declares to nnopbase ([`OpDef`], written with
//! [`op_def!`]) and the phase-1 entry its `GetWorkspaceSize` runs through.

use super::executor::{Arg, OutParams, Phase1};
use super::phase2::KernelCall;
use crate::state::status_of;
use crate::stream::Scratch;
use crate::tables::Family;
use ascend_sys::*;

/// One operator, as nnopbase sees it.
pub(crate) struct OpDef {
    /// Its name in messages (`MishBackward`).
    pub name: &'static str,
    /// Its phase-2 entry point (`aclnnMishBackward`).
    pub launch_api: &'static str,
    /// Its tensor arguments in phase-1 parameter order; an in-place operator names its
    /// tensor once per role.
    pub args: &'static [&'static str],
    /// The argument of each input index (`aclSetInputTensorAddr`) and output index.
    pub inputs: &'static [usize],
    pub outputs: &'static [usize],
    /// Whether a product family has the operator's kernel.
    pub available: fn(Family) -> bool,
    /// The queued compute.
    pub kernel: fn(&KernelCall, &mut Scratch) -> Result<(), String>,
}

/// Declares an operator's [`OpDef`] in one line: its name (the launch entry point is
/// `aclnn` + name), its tensor arguments' names in phase-1 order, the argument of each
/// input and output index, its kernel, and optionally `on` the products that have it
/// (every product otherwise).
macro_rules! op_def {
    ($name:literal, [$($arg:literal),* $(,)?], [$($input:expr),*] -> [$($output:expr),*],
     $kernel:expr $(, on $available:expr)?) => {
        $crate::nnopbase::OpDef {
            name: $name,
            launch_api: concat!("aclnn", $name),
            args: &[$($arg),*],
            inputs: &[$($input),*],
            outputs: &[$($output),*],
            available: op_def!(@available $($available)?),
            kernel: $kernel,
        }
    };
    (@available) => { $crate::nnopbase::every_product };
    (@available $available:expr) => { $available };
}
pub(crate) use op_def;

/// Declares the positions of an operator's arguments or attributes as `usize` constants
/// numbered in order from 0 (`positions!(pub(super) SELF, OTHER, OUT);`), so that an
/// index is where its name stands.
macro_rules! positions {
    ($vis:vis $($name:ident),+ $(,)?) => {
        $crate::nnopbase::positions!(@next [$vis] 0usize; $($name),+);
    };
    (@next [$($vis:tt)*] $n:expr; $name:ident $(, $rest:ident)*) => {
        $($vis)* const $name: usize = $n;
        $crate::nnopbase::positions!(@next [$($vis)*] $n + 1; $($rest),*);
    };
    (@next [$($vis:tt)*] $n:expr;) => {};
}
pub(crate) use positions;

impl OpDef {
    /// Phase 1 of this operator as a C status: [`Phase1::open`] on `args`, then the
    /// operator's own `checks`, which end in [`Phase1::finish`].
    pub fn phase1(
        &'static self,
        outs: OutParams<'_>,
        args: &[Arg],
        checks: impl FnOnce(Phase1<'_>) -> Result<(), i32>,
    ) -> aclnnStatus {
        status_of(|| {
            let p = Phase1::open(self, outs, args)?;
            checks(p)
        })
    }
}

/// [`OpDef::available`] of an operator whose code refuses no product.
pub(crate) fn every_product(_: Family) -> bool {
    true
}
