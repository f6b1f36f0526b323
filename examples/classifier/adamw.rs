//! AdamW on the device: `aclnnApplyAdamWV2`, one launch per parameter tensor, whose step
//! `t = step + 1` is what `ascendcl::reference::apply_adam_w_v2` computes on the CPU.
//!
//! The count of steps taken lives on the device (one f32 element, advanced in place after
//! each step's updates) and the operator reads it at each launch, so every plan's
//! attributes stay fixed and no step uploads a number.

use ascendcl::reference::AdamW;
use ascendcl::{ApplyAdamWV2Plan, DeviceTensor, InplaceAddsPlan, Result, Stream, TensorView};

type T = DeviceTensor<f32>;

/// The steps taken so far, shared by every parameter's update.
pub struct StepCount {
    taken: T,
    advance: InplaceAddsPlan<f32>,
}

impl StepCount {
    pub fn new(stream: &Stream) -> Result<Self> {
        let taken = T::zeros(stream, [1])?;
        Ok(StepCount {
            advance: InplaceAddsPlan::new(&taken, 1.0, 1.0, stream)?,
            taken,
        })
    }

    /// Queues `taken ← taken + 1`, once every parameter of the step is updated.
    pub fn advance(&mut self, stream: &Stream) -> Result<()> {
        self.advance.launch(&mut self.taken, stream)
    }
}

/// One parameter tensor's moments and the plan of its update.
pub struct AdamWSlot {
    m: T,
    v: T,
    plan: ApplyAdamWV2Plan<f32, f32, f32>,
}

impl AdamWSlot {
    /// Zero moments for `w` and the plan of its update by `g`.
    pub fn new(w: &T, g: &T, steps: &StepCount, h: &AdamW, stream: &Stream) -> Result<Self> {
        let m = T::zeros(stream, w.shape())?;
        let v = T::zeros(stream, w.shape())?;
        let plan = ApplyAdamWV2Plan::new(
            w,
            &m,
            &v,
            None::<TensorView<'_, f32>>,
            g,
            &steps.taken,
            h.lr,
            h.beta1,
            h.beta2,
            h.weight_decay,
            h.eps,
            h.amsgrad,
            h.maximize,
            stream,
        )?;
        Ok(AdamWSlot { m, v, plan })
    }

    /// Queues the update of `w` by `g`, at the step `steps` holds.
    pub fn update(&mut self, w: &mut T, g: &T, steps: &StepCount, stream: &Stream) -> Result<()> {
        self.plan
            .launch(w, &mut self.m, &mut self.v, None, g, &steps.taken, stream)
    }
}
