//! A user's crate: `aclnnSoftplus`, an operator that `ascendcl` does not wrap and that
//! the simulator does not ship, declared for `ascendcl` with `operator!` and simulated
//! for the crate's tests with `ascend_sim::simulated_operator!`.
//!
//! On a machine with CANN, [`softplus`] calls the vendor's `libopapi.so`; on the
//! simulator it runs [`SIMULATED_SOFTPLUS`] once [`simulate`] has registered it.
//!
//! The crate is not a member of the `ascendcl` workspace. Its tests, from the repository
//! root, with the workspace's dependency versions and build directory:
//!
//! ```text
//! cp Cargo.lock examples/user-crate/
//! CARGO_TARGET_DIR=$PWD/target cargo test --offline --manifest-path examples/user-crate/Cargo.toml
//! ```
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use ascendcl::{DeviceTensor, Runtime};
//! ascendcl_user_crate::simulate()?;
//! let s = Runtime::simulator()?.device(0)?.stream()?;
//! let x = DeviceTensor::from_array(&s, &ndarray::array![0.0f32, 30.0])?;
//! let mut out = DeviceTensor::<f32>::zeros(&s, [2])?;
//! ascendcl_user_crate::softplus(&x, 1.0, 20.0, &mut out, &s)?;
//! let got = out.to_array::<ndarray::Ix1>(&s)?;
//! assert!((got[0] - std::f32::consts::LN_2).abs() < 1e-6); // ln(1 + e^0)
//! assert_eq!(got[1], 30.0); // above the threshold: x itself
//! # Ok(()) }
//! ```

use ascend_sim::custom::{Checks, Kernel, Product, RegisterError};
use ascend_sim::sys::{ACL_BF16, ACL_FLOAT, ACL_FLOAT16, aclDataType};
use ascendcl::protocol::{Scalar, rules};
use ascendcl::{DType, SocFamily};

ascendcl::operator! {
    /// `aclnnSoftplus` (ops-nn `activation/softplus_v2`).
    pub unsafe struct Softplus: aclnnSoftplus, aclnnSoftplusGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    // The operator's phase 1 checks the dtypes (its lists depend on the product).
    dtypes: |_soc: SocFamily, _dtype: DType| true;
    rule: rules::same;

    /// `out = ln(1 + exp(beta·x)) / beta`, or `x` where `beta·x > threshold`.
    pub fn softplus<T>(
        x: input<T> = "self",
        beta: attr<Scalar> = "beta",
        threshold: attr<Scalar> = "threshold",
        out: output<T> = "out",
    );

    /// [`softplus`] prepared once, launched many times.
    pub type SoftplusPlan;
}

// SAFETY: aclnnSoftplus's phase 1 is `(const aclTensor *self, const aclScalar *beta,
// const aclScalar *threshold, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor
// **executor)` (the vendor's `aclnn_softplus.h`), its phase 2 the common one, and it only
// reads `self`.
unsafe impl ascendcl::protocol::Promise for Softplus {}

/// The dtypes the vendor lists for `self` and `out` on `product`.
fn dtypes(product: Product) -> &'static [aclDataType] {
    match product {
        Product::AtlasA2 | Product::AtlasA3 => &[ACL_FLOAT, ACL_FLOAT16, ACL_BF16],
        _ => &[ACL_FLOAT, ACL_FLOAT16],
    }
}

/// Softplus of one element as the kernel computes it (in f32).
pub fn softplus_f32(x: f32, beta: f32, threshold: f32) -> f32 {
    let bx = beta * x;
    if bx > threshold {
        x
    } else {
        bx.exp().ln_1p() / beta
    }
}

ascend_sim::simulated_operator! {
    /// `aclnnSoftplus` on the simulator: the vendor's checks in the vendor's order
    /// (`aclnn_softplus.cpp`: the dtype of self, the casts of beta, threshold and self,
    /// then the rank and the shape of out), and the kernel in f32, rounded once to out.
    pub static SIMULATED_SOFTPLUS: aclnnSoftplus, aclnnSoftplusGetWorkspaceSize(
        self_: input = "self",
        beta: scalar,
        threshold: scalar,
        out: output,
    );
    checks: |c: &Checks<'_>| {
        c.require_dtype("self", dtypes(c.product()))?;
        let x = c.dtype("self")?;
        c.require_cast(c.scalar_dtype("beta")?, x)?;
        c.require_cast(c.scalar_dtype("threshold")?, x)?;
        c.require_cast(x, c.dtype("out")?)
    };
    output: |c: &Checks<'_>| {
        c.require_max_dims("self", 8)?;
        c.require_same_shape("self", "out")
    };
    kernel: |k: &mut Kernel<'_>| {
        let (beta, threshold) = (k.scalar("beta")? as f32, k.scalar("threshold")? as f32);
        let y: Vec<f32> = k
            .read_f32("self")?
            .into_iter()
            .map(|x| softplus_f32(x, beta, threshold))
            .collect();
        k.write_f32("out", &y)
    };
}

/// Registers [`SIMULATED_SOFTPLUS`] with the simulator: call it before the first
/// [`softplus`] on a simulator runtime (again is harmless).
///
/// # Errors
/// The simulator's refusal, e.g. when a later version ships `aclnnSoftplus` itself.
pub fn simulate() -> Result<(), RegisterError> {
    ascend_sim::register(&SIMULATED_SOFTPLUS)
}
