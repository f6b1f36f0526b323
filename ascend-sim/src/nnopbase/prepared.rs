//! What phase 1 fixes for every phase 2 of an executor: each argument's layout with the
//! checks that do not depend on its data address already evaluated, and the decision.
//! A consumed executor hands it to its one kernel call; a repeatable one shares it with
//! the calls of all its launches, so a launch copies neither.

use super::TensorDesc;
use super::executor::{Decision, Slots};
use super::op_def::OpDef;
use crate::slab::{Dims64, Shape};
use crate::strided::{View, offset_range};
use crate::tables::dtype_size;
use ascend_sys::aclDataType;
use std::ops::Deref;
use std::sync::{Arc, LazyLock};

/// One argument's view without its data address (which `aclSet*TensorAddr` may change).
pub(crate) struct Layout {
    pub(super) dims: Shape,
    strides: Dims64,
    offset: i64,
    pub(super) dtype: aclDataType,
    /// Bytes per element (`None`: not byte-addressable in the simulator).
    pub(super) elem: Option<usize>,
    pub(super) empty: bool,
    /// The element offsets `[lo, hi]` the dims and strides reach, relative to `offset`
    /// (`None`: no element; `Err`: they overflow an i64).
    range: Result<Option<(i64, i64)>, String>,
    /// With `range`, the bytes `[first, end)` the view reaches from its element offset 0
    /// (an element size of 0 when the dtype has none). In i128, every term fits.
    bytes: Option<(i128, i128)>,
    /// Whether the view stays inside its declared storage (`Err`: why not).
    pub(super) storage: Result<(), String>,
}

impl Layout {
    fn of(d: &TensorDesc, name: &str) -> Layout {
        let dims = d.udims();
        let range = offset_range(&dims, &d.strides);
        let storage = match &range {
            Ok(r) => check_storage(d, *r, name),
            Err(m) => Err(format!("{name}: {m}")),
        };
        let es = dtype_size(d.dtype).unwrap_or(0) as i128;
        let bytes = match range {
            Ok(Some((lo, hi))) => Some((
                (i128::from(d.offset) + i128::from(lo)) * es,
                (i128::from(d.offset) + i128::from(hi) + 1) * es,
            )),
            _ => None,
        };
        Layout {
            range,
            bytes,
            dims,
            strides: d.strides.clone(),
            offset: d.offset,
            dtype: d.dtype,
            elem: dtype_size(d.dtype),
            empty: d.is_empty(),
            storage,
        }
    }

    /// The layout of a slot the operator has no argument for (never bound).
    fn unused() -> Layout {
        Layout {
            dims: Shape::default(),
            strides: Dims64::default(),
            offset: 0,
            dtype: ascend_sys::ACL_DT_UNDEFINED,
            elem: None,
            empty: true,
            range: Ok(None),
            bytes: None,
            storage: Ok(()),
        }
    }

    /// The view whose element offset 0 is byte `base_byte` of its buffer.
    pub(super) fn view(&self, base_byte: usize) -> View<'_> {
        View {
            dims: &self.dims,
            strides: &self.strides,
            offset: self.offset,
            base_byte,
            elem: self.elem.unwrap_or(0),
        }
    }

    /// [`View::check_bounds`] of [`Layout::view`], over the offsets computed at phase 1
    /// (the view's own check runs only to word the failure).
    pub(super) fn check_bounds(
        &self,
        base_byte: usize,
        len: usize,
        what: &str,
    ) -> Result<(), String> {
        let inside = match (&self.range, self.bytes) {
            (Ok(None), _) => true,
            (Ok(Some(_)), Some((first, end))) => {
                let base = base_byte as i128;
                base + first >= 0 && base + end <= len as i128
            }
            _ => false,
        };
        if inside {
            Ok(())
        } else {
            self.view(base_byte).check_bounds(len, what)
        }
    }

    /// The device addresses `[first, end)` the view at `data` touches (`None`: no element).
    /// Bounds were checked when the operand was bound, so the sums fit.
    pub(super) fn byte_span(&self, data: usize) -> Option<(usize, usize)> {
        let (lo, hi) = (*self.range.as_ref().ok()?)?;
        let elem = self.elem? as i128;
        let at =
            |k: i64| (data as i128 + (i128::from(self.offset) + i128::from(k)) * elem) as usize;
        Some((at(lo), at(hi) + elem as usize))
    }
}

/// Checks that a view reaching element offsets `range` (relative to its offset) stays
/// inside its declared storage: elements `[0, prod(storage))` from the data address.
fn check_storage(d: &TensorDesc, range: Option<(i64, i64)>, name: &str) -> Result<(), String> {
    let Some((lo, hi)) = range else {
        return Ok(());
    };
    let storage = d
        .storage
        .iter()
        .try_fold(
            1i64,
            |acc, &s| if s < 0 { None } else { acc.checked_mul(s) },
        )
        .ok_or_else(|| {
            format!(
                "{name}: storageDims {:?} has a negative dim or more than i64::MAX elements",
                d.storage
            )
        })?;
    // In i128 the sums cannot overflow.
    let (first, last) = (
        i128::from(d.offset) + i128::from(lo),
        i128::from(d.offset) + i128::from(hi),
    );
    if first < 0 || last >= i128::from(storage) {
        return Err(format!(
            "{name}: the view (dims {:?}, strides {:?}, offset {}) reaches elements [{first}, {last}] but its storage {:?} has {storage} elements",
            d.dims, d.strides, d.offset, d.storage
        ));
    }
    Ok(())
}

/// An executor's slots' layouts, the argument of each slot, and its decision.
pub(crate) struct Prepared {
    pub(super) layouts: Slots<Layout>,
    /// The argument (position in `OpDef::args`) of each slot: a tensor list has a slot per
    /// element.
    pub(super) arg_of: Slots<u8>,
    pub(super) decision: Decision,
}

impl Prepared {
    /// A value for no arguments, to be overwritten.
    pub(crate) fn unused() -> Prepared {
        Prepared {
            layouts: Slots::new(),
            arg_of: Slots::new(),
            decision: Decision::default(),
        }
    }

    /// The layouts of the slots described by `descs` (of `op`'s arguments `arg_of`), and
    /// phase 1's `decision`.
    pub(super) fn new(
        op: &OpDef,
        descs: &[TensorDesc],
        arg_of: &[u8],
        decision: Decision,
    ) -> Prepared {
        Prepared {
            layouts: descs
                .iter()
                .zip(arg_of)
                .map(|(d, &a)| match op.args.get(usize::from(a)) {
                    Some(name) => Layout::of(d, name),
                    None => Layout::unused(),
                })
                .collect(),
            arg_of: Slots::from_slice(arg_of),
            decision,
        }
    }

    /// The name of the argument slot `slot` belongs to.
    pub(super) fn name(&self, op: &OpDef, slot: usize) -> &'static str {
        self.arg_of
            .get(slot)
            .and_then(|&a| op.args.get(usize::from(a)))
            .copied()
            .unwrap_or("?")
    }
}

/// An executor's [`Prepared`]: inline (no allocation per phase 1), or shared once
/// `aclSetAclOpExecutorRepeatable` made the executor repeatable (one allocation then).
// Inline on purpose: boxing the value would allocate in every phase 1.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Held {
    Own(Prepared),
    Shared(Arc<Prepared>),
}

impl Held {
    /// Makes the value shared (one allocation, the first time).
    pub(super) fn make_shared(&mut self) {
        if let Held::Own(p) = self {
            let p = std::mem::replace(p, Prepared::unused());
            *self = Held::Shared(Arc::new(p));
        }
    }

    /// The value for a kernel call: the shared one, or the own one swapped into `spare` (a
    /// recycled box of the stream's; the phase 2 that calls this consumes the executor).
    pub(super) fn for_call(&mut self, spare: impl FnOnce() -> Box<Prepared>) -> ForCall {
        match self {
            Held::Shared(a) => ForCall::Shared(Arc::clone(a)),
            Held::Own(p) => {
                let mut b = spare();
                std::mem::swap(&mut *b, p);
                ForCall::Boxed(b)
            }
        }
    }
}

impl Deref for Held {
    type Target = Prepared;

    fn deref(&self) -> &Prepared {
        match self {
            Held::Own(p) => p,
            Held::Shared(a) => a,
        }
    }
}

/// What a kernel call has of its executor's [`Prepared`]: a box recycled through its
/// stream, or the repeatable executor's shared value; `Spent` once the worker took the box
/// back.
pub(crate) enum ForCall {
    Boxed(Box<Prepared>),
    Shared(Arc<Prepared>),
    Spent,
}

/// What a spent kernel call reads (nothing does: it has run).
static SPENT: LazyLock<Prepared> = LazyLock::new(Prepared::unused);

impl ForCall {
    /// The recycled box, leaving the call spent.
    pub(crate) fn take_box(&mut self) -> Option<Box<Prepared>> {
        match std::mem::replace(self, ForCall::Spent) {
            ForCall::Boxed(b) => Some(b),
            _ => None,
        }
    }
}

impl Deref for ForCall {
    type Target = Prepared;

    fn deref(&self) -> &Prepared {
        match self {
            ForCall::Boxed(p) => p,
            ForCall::Shared(a) => a,
            ForCall::Spent => &SPENT,
        }
    }
}
