//! AdamW on the device, composed from the crate's elementwise and tensor–scalar family
//! operators as one chain of plans per parameter tensor, with the vendor's step
//! (`aclnnApplyAdamWV2`, `t = step + 1`, as `ascendcl::reference::apply_adam_w_v2`
//! writes it):
//!
//! ```text
//! w ← w·(1 − η·λ);  m ← β₁·m + (1 − β₁)·g;  v ← β₂·v + (1 − β₂)·g²
//! w ← w − η/(1 − β₁ᵗ) · m / (√v · 1/√(1 − β₂ᵗ) + ε)
//! ```
//!
//! The step-dependent factors live on the device as 0-D tensors (β₁ᵗ and β₂ᵗ advance by
//! one in-place multiplication a step), so that every plan's attributes stay fixed and
//! no step uploads a number.

use ascendcl::reference::AdamW;
use ascendcl::{
    DeviceTensor, DivPlan, InplaceAddPlan, InplaceAddsPlan, InplaceMulPlan, InplaceMulsPlan,
    InplaceReciprocalPlan, InplaceRsqrtPlan, MulPlan, MulsPlan, Result, SqrtPlan, Stream,
};

type T = DeviceTensor<f32>;

/// The factors shared by every parameter's update in one step.
pub struct StepFactors {
    /// β₁ᵗ, β₂ᵗ (0-D; start at 1).
    pow1: T,
    pow2: T,
    /// η / (1 − β₁ᵗ).
    step_size: T,
    /// 1 / √(1 − β₂ᵗ).
    inv_bc2: T,
    advance1: InplaceMulsPlan<f32>,
    advance2: InplaceMulsPlan<f32>,
    negate1: MulsPlan<f32, f32>,
    negate2: MulsPlan<f32, f32>,
    one_plus_1: InplaceAddsPlan<f32>,
    one_plus_2: InplaceAddsPlan<f32>,
    reciprocal: InplaceReciprocalPlan<f32>,
    times_lr: InplaceMulsPlan<f32>,
    rsqrt: InplaceRsqrtPlan<f32>,
}

impl StepFactors {
    pub fn new(h: &AdamW, stream: &Stream) -> Result<Self> {
        let one = || DeviceTensor::from_array(stream, &ndarray::arr0(1.0f32));
        let (pow1, pow2, step_size, inv_bc2) = (one()?, one()?, one()?, one()?);
        Ok(StepFactors {
            advance1: InplaceMulsPlan::new(&pow1, h.beta1, stream)?,
            advance2: InplaceMulsPlan::new(&pow2, h.beta2, stream)?,
            negate1: MulsPlan::new(&pow1, -1.0, &step_size, stream)?,
            negate2: MulsPlan::new(&pow2, -1.0, &inv_bc2, stream)?,
            one_plus_1: InplaceAddsPlan::new(&step_size, 1.0, 1.0, stream)?,
            one_plus_2: InplaceAddsPlan::new(&inv_bc2, 1.0, 1.0, stream)?,
            reciprocal: InplaceReciprocalPlan::new(&step_size, stream)?,
            times_lr: InplaceMulsPlan::new(&step_size, h.lr, stream)?,
            rsqrt: InplaceRsqrtPlan::new(&inv_bc2, stream)?,
            pow1,
            pow2,
            step_size,
            inv_bc2,
        })
    }

    /// Queues the factors of the next step (t ← t + 1).
    pub fn advance(&mut self, stream: &Stream) -> Result<()> {
        self.advance1.launch(&mut self.pow1, stream)?;
        self.advance2.launch(&mut self.pow2, stream)?;
        self.negate1
            .launch(&self.pow1, &mut self.step_size, stream)?;
        self.one_plus_1.launch(&mut self.step_size, stream)?;
        self.reciprocal.launch(&mut self.step_size, stream)?;
        self.times_lr.launch(&mut self.step_size, stream)?;
        self.negate2.launch(&self.pow2, &mut self.inv_bc2, stream)?;
        self.one_plus_2.launch(&mut self.inv_bc2, stream)?;
        self.rsqrt.launch(&mut self.inv_bc2, stream)?;
        Ok(())
    }
}

/// One parameter tensor's moments, scratch and plans.
pub struct AdamWSlot {
    m: T,
    v: T,
    scratch: T,
    delta: T,
    decay: InplaceMulsPlan<f32>,
    m_scale: InplaceMulsPlan<f32>,
    m_add: InplaceAddPlan<f32, f32>,
    v_scale: InplaceMulsPlan<f32>,
    g_square: MulPlan<f32, f32, f32>,
    v_add: InplaceAddPlan<f32, f32>,
    root: SqrtPlan<f32, f32>,
    unbias: InplaceMulPlan<f32, f32>,
    eps: InplaceAddsPlan<f32>,
    ratio: DivPlan<f32, f32, f32>,
    times_step: InplaceMulPlan<f32, f32>,
    apply: InplaceAddPlan<f32, f32>,
}

impl AdamWSlot {
    /// Zero moments for `w` and the plans of its update by `g`.
    pub fn new(w: &T, g: &T, f: &StepFactors, h: &AdamW, stream: &Stream) -> Result<Self> {
        let zeros = || DeviceTensor::<f32>::zeros(stream, w.shape());
        let (m, v, scratch, delta) = (zeros()?, zeros()?, zeros()?, zeros()?);
        Ok(AdamWSlot {
            decay: InplaceMulsPlan::new(w, 1.0 - h.lr * h.weight_decay, stream)?,
            m_scale: InplaceMulsPlan::new(&m, h.beta1, stream)?,
            m_add: InplaceAddPlan::new(&m, g, 1.0 - h.beta1, stream)?,
            v_scale: InplaceMulsPlan::new(&v, h.beta2, stream)?,
            g_square: MulPlan::new(g, g, &scratch, stream)?,
            v_add: InplaceAddPlan::new(&v, &scratch, 1.0 - h.beta2, stream)?,
            root: SqrtPlan::new(&v, &scratch, stream)?,
            unbias: InplaceMulPlan::new(&scratch, &f.inv_bc2, stream)?,
            eps: InplaceAddsPlan::new(&scratch, h.eps, 1.0, stream)?,
            ratio: DivPlan::new(&m, &scratch, &delta, stream)?,
            times_step: InplaceMulPlan::new(&delta, &f.step_size, stream)?,
            apply: InplaceAddPlan::new(w, &delta, -1.0, stream)?,
            m,
            v,
            scratch,
            delta,
        })
    }

    /// Queues the update of `w` by `g` with this step's factors `f`.
    pub fn update(&mut self, w: &mut T, g: &T, f: &StepFactors, stream: &Stream) -> Result<()> {
        self.decay.launch(&mut *w, stream)?;
        self.m_scale.launch(&mut self.m, stream)?;
        self.m_add.launch(&mut self.m, g, stream)?;
        self.v_scale.launch(&mut self.v, stream)?;
        self.g_square.launch(g, g, &mut self.scratch, stream)?;
        self.v_add.launch(&mut self.v, &self.scratch, stream)?;
        self.root.launch(&self.v, &mut self.scratch, stream)?;
        self.unbias.launch(&mut self.scratch, &f.inv_bc2, stream)?;
        self.eps.launch(&mut self.scratch, stream)?;
        self.ratio
            .launch(&self.m, &self.scratch, &mut self.delta, stream)?;
        self.times_step
            .launch(&mut self.delta, &f.step_size, stream)?;
        self.apply.launch(w, &self.delta, stream)?;
        Ok(())
    }
}
