//! The crate's error type.

use crate::element::DType;

/// Everything that can go wrong in `ascendcl`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// CANN's libraries could not be loaded (not found, or a function missing).
    #[error(transparent)]
    Load(#[from] ascend_sys::LoadError),

    /// A runtime call (`libascendcl.so`) failed.
    #[error("{api} failed with {name} ({code}){}", detail(message))]
    Acl {
        /// The C function that failed, e.g. `"aclrtMalloc"`.
        api: &'static str,
        /// The `aclError` it returned.
        code: i32,
        /// The symbolic name of `code`.
        name: &'static str,
        /// `aclGetRecentErrMsg()` right after the failure (may be empty).
        message: String,
    },

    /// An aclnn call (`libnnopbase.so` / `libopapi.so`) failed.
    #[error("{api} failed with {name} ({status}){}", detail(message))]
    Aclnn {
        /// The C function that failed, e.g. `"aclnnMishBackwardGetWorkspaceSize"`.
        api: &'static str,
        /// The `aclnnStatus` it returned.
        status: i32,
        /// The symbolic name of `status`.
        name: &'static str,
        /// `aclGetRecentErrMsg()` right after the failure (may be empty).
        message: String,
    },

    /// A tensor has more dims than aclnn accepts.
    #[error("{argument} has {dims} dims; at most {max} are supported")]
    TooManyDims {
        /// Which argument.
        argument: &'static str,
        /// Its number of dims.
        dims: usize,
        /// The limit (8).
        max: usize,
    },

    /// Two inputs cannot be broadcast together.
    #[error("{argument} {shape:?} and {other} {other_shape:?} are not broadcastable")]
    NotBroadcastable {
        /// The first argument of the conflicting pair (in argument order).
        argument: &'static str,
        /// Its shape.
        shape: Vec<usize>,
        /// The second argument of the pair.
        other: &'static str,
        /// Its shape.
        other_shape: Vec<usize>,
    },

    /// A shape differs from the one required.
    #[error("{argument} has shape {actual:?}, expected {expected:?}")]
    ShapeMismatch {
        /// Which argument.
        argument: &'static str,
        /// The required shape.
        expected: Vec<usize>,
        /// The shape given.
        actual: Vec<usize>,
    },

    /// The device's SoC does not support this dtype for the operator.
    #[error("{argument} has dtype {dtype}, which {operator} does not support on {soc}")]
    UnsupportedDtype {
        /// Which argument.
        argument: &'static str,
        /// Its dtype.
        dtype: DType,
        /// The operator.
        operator: &'static str,
        /// The SoC name, e.g. `"Ascend910A"`.
        soc: String,
    },

    /// The operator does not exist on this product, or the loaded toolkit lacks it.
    #[error("{operator} is not available on {soc}{}", missing(*missing_symbol))]
    UnsupportedOperator {
        /// The operator.
        operator: &'static str,
        /// The SoC name, e.g. `"Ascend310B1"`.
        soc: String,
        /// The entry point the loaded toolkit lacks (`None`: the product has no such
        /// operator).
        missing_symbol: Option<&'static str>,
    },

    /// Tensors and stream belong to different devices.
    #[error("{argument} lives on device {found}, but the stream is on device {expected}")]
    DeviceMismatch {
        /// Which argument.
        argument: &'static str,
        /// The stream's device.
        expected: i32,
        /// The argument's device.
        found: i32,
    },

    /// A tensor given to a reusable plan differs from the one the plan was built for
    /// (shape, strides, offset or storage size).
    #[error("{argument} does not match the plan: {detail}")]
    PlanMismatch {
        /// Which argument.
        argument: &'static str,
        /// What differs.
        detail: String,
    },

    /// Host memory sized by the caller's request could not be allocated (too large for
    /// the address space or the allocator); nothing was changed.
    #[error("cannot allocate {bytes} bytes of host memory for {what}")]
    HostAllocation {
        /// What the memory was for, e.g. `"to_array"`.
        what: &'static str,
        /// The size requested (saturated at `usize::MAX` when it overflows).
        bytes: usize,
    },

    /// Anything else the caller asked for that cannot be done (bad device id, a view
    /// outside its storage, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

fn detail(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

fn missing(symbol: Option<&str>) -> String {
    symbol.map_or_else(String::new, |s| {
        format!(": the loaded toolkit has no `{s}` (its libopapi.so predates the operator)")
    })
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
