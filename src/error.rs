//! The crate's error type.

use crate::element::DType;
use crate::runtime::Backend;
use std::fmt;

/// Everything that can go wrong in `ascendcl`.
///
/// `Debug` prints the variant's name and then the same text as `Display`, so that
/// `fn main() -> ascendcl::Result<()>` (whose failure Rust reports through `Debug`) shows
/// the readable message. The fields stay available for matching.
///
/// ```
/// let e = ascendcl::Error::LengthMismatch { argument: "data", expected: 6, actual: 4 };
/// assert_eq!(e.to_string(), "data has 4 elements, expected 6");
/// assert_eq!(format!("{e:?}"), "LengthMismatch: data has 4 elements, expected 6");
/// ```
#[derive(Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// CANN's libraries could not be loaded (not found, or a function missing).
    #[error(transparent)]
    Load(#[from] ascend_sys::LoadError),

    /// A runtime call (`libascendcl.so`) failed.
    #[error("{api} failed with {name} ({code}){}", detail(api, message))]
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
    #[error("{api} failed with {name} ({status}){}", detail(api, message))]
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

    /// A shape whose element count does not fit in `i64` (aclnn's index type).
    #[error(
        "{argument} {shape:?} has {elements} elements, more than the {} a tensor can address",
        i64::MAX
    )]
    TooManyElements {
        /// Which argument.
        argument: &'static str,
        /// The shape asked for.
        shape: Vec<usize>,
        /// Its exact element count, in decimal.
        elements: String,
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

    /// A download or host view asked for an array type of another number of dims than
    /// the tensor has.
    #[error(
        "{argument} has shape {shape:?} ({} dims), but the requested array type has {ndim} \
         dims (use `ArrayD` for any number)",
        shape.len()
    )]
    RankMismatch {
        /// Which tensor.
        argument: &'static str,
        /// Its shape.
        shape: Vec<usize>,
        /// The number of dims of the requested array type.
        ndim: usize,
    },

    /// A reshape to a shape with another number of elements.
    #[error(
        "cannot reshape {shape:?} to {requested:?}: that is {} elements, the tensor has {} \
         (any shape of {1} elements works)",
        numel(requested),
        numel(shape)
    )]
    ReshapeMismatch {
        /// The tensor's shape.
        shape: Vec<usize>,
        /// The shape asked for.
        requested: Vec<usize>,
    },

    /// The device's SoC does not support this dtype for the operator.
    #[error(
        "{argument} has dtype {dtype} (CANN {}), which {operator} does not support on {soc}",
        dtype.name()
    )]
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

    /// The operator does not exist on this product, or the loaded toolkit (or the
    /// simulator) lacks it.
    #[error(
        "{operator} is not available on {soc}{}",
        missing(operator, *missing_symbol, *backend)
    )]
    UnsupportedOperator {
        /// The operator.
        operator: &'static str,
        /// The SoC name, e.g. `"Ascend310B1"`.
        soc: String,
        /// The entry point the loaded toolkit lacks (`None`: the product has no such
        /// operator).
        missing_symbol: Option<&'static str>,
        /// What lacks it: CANN's libraries, or the simulator (which implements only some
        /// operators).
        backend: Backend,
    },

    /// Tensors and stream belong to different devices.
    #[error(
        "{argument} lives on device {found}, but the stream is on device {expected}: use a \
         stream of device {found}, or copy the tensor to device {expected} first \
         (`DeviceTensor::copy_from_peer`)"
    )]
    DeviceMismatch {
        /// Which argument.
        argument: &'static str,
        /// The stream's device.
        expected: i32,
        /// The argument's device.
        found: i32,
    },

    /// A tensor given to a reusable plan has other dims or strides (or another dtype, or a
    /// tensor list another length) than the plan was built for. Neither the offset nor the
    /// size of its storage matters.
    #[error(
        "{argument} does not match the plan: {detail}; a plan is fixed to the shapes and \
         strides (any offset) it was built for: build a second plan with `new` for this \
         layout (one per batch shape, say)"
    )]
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

    /// An HCCL call (`libhccl.so`) failed.
    #[error("{api} failed with {name} ({code}){}", detail(api, message))]
    Hccl {
        /// The C function that failed, e.g. `"HcclAllReduce"`.
        api: &'static str,
        /// The `HcclResult` it returned.
        code: u32,
        /// The symbolic name of `code`, e.g. `"HCCL_E_TIMEOUT"`.
        name: &'static str,
        /// `HcclGetErrorString(code)`, then `aclGetRecentErrMsg()` when it has a text.
        message: String,
    },

    /// A collective on a communicator that failed earlier (a timeout, a peer's failure,
    /// an asynchronous error): HCCL cannot resume it. Drop it (`HcclCommDestroy`) and
    /// make a new one; the first failure is kept in `first`.
    #[error(
        "the communicator of rank {rank} failed earlier and cannot be used again (drop it and create a new one): {first}"
    )]
    CommunicatorFailed {
        /// The rank of the failed communicator.
        rank: u32,
        /// Its first failure.
        first: Box<Error>,
    },

    /// The root-info exchange of [`Communicator::from_env`](crate::hccl::Communicator::from_env)
    /// failed.
    #[error("rendezvous: {0}")]
    Rendezvous(#[from] crate::hccl::RendezvousError),

    /// The runtime has no HCCL (a toolkit without `libhccl.so`, or a backend without it).
    #[error("HCCL is not available: {0}")]
    HcclUnavailable(ascend_sys::hccl::HcclLoadError),

    /// A buffer holds a different number of elements than the call needs.
    #[error("{argument} has {actual} elements, expected {expected}")]
    LengthMismatch {
        /// Which argument.
        argument: &'static str,
        /// The number required.
        expected: usize,
        /// The number given.
        actual: usize,
    },

    /// Work this call was ordered after failed (or its stream was dropped after a failed
    /// drain): the values it would read were never computed. The crate orders work
    /// between streams by itself, so this names the other stream's work; that stream's
    /// own callers see the original failure too.
    #[error(
        "work on stream {stream} (up to its submission {ticket}) that this call depends on failed: {source}"
    )]
    DependencyFailed {
        /// The uid of the stream of the failed work (as in its `Debug` output).
        stream: u64,
        /// The number of the failed submission on that stream (or the last one its failed
        /// synchronisation covered).
        ticket: u64,
        /// The failure.
        source: Box<Error>,
    },

    /// The process's simulator already runs another machine than the one asked for (see
    /// `Runtime::simulator_with`: one simulated machine per process).
    #[error(
        "the simulator already runs {active}; a process has one simulated machine, so it \
         cannot also run {requested} (run that configuration in another process)"
    )]
    SimulatorConfigured {
        /// The configuration in use.
        active: String,
        /// The one asked for.
        requested: String,
    },

    /// A tensor's run-time dtype is not the element type asked for (a download, a typed
    /// view, [`Tensor::into_typed`](crate::Tensor::into_typed)).
    #[error("{argument} has dtype {actual}, but {expected} was asked for")]
    DtypeMismatch {
        /// Which tensor.
        argument: &'static str,
        /// The element type asked for.
        expected: DType,
        /// The tensor's dtype.
        actual: DType,
    },

    /// A [`Tensor`](crate::Tensor)'s storage cannot be moved out: other tensors (clones,
    /// views) share it.
    #[error(
        "{argument} shares its storage with {} other tensor(s); drop them, or copy it \
         (`Tensor::contiguous`) to move a storage of its own",
        handles - 1
    )]
    SharedStorage {
        /// Which tensor.
        argument: &'static str,
        /// How many tensors hold the storage, this one included.
        handles: usize,
    },

    /// A [`Tensor`](crate::Tensor) is a view of part of its storage, or not a dense
    /// row-major one, where the whole storage is needed.
    #[error(
        "{argument} (shape {shape:?}, strides {strides:?}, offset {offset}) is not its whole \
         storage of {storage} elements in row-major order; copy it (`Tensor::contiguous`) first"
    )]
    NotWholeStorage {
        /// Which tensor.
        argument: &'static str,
        /// Its shape.
        shape: Vec<usize>,
        /// Its strides, in elements.
        strides: Vec<i64>,
        /// Its offset, in elements.
        offset: i64,
        /// The storage's length, in elements.
        storage: usize,
    },

    /// Anything else the caller asked for that cannot be done (bad device id, a view
    /// outside its storage, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl Error {
    /// The variant's name, e.g. `"Acl"`.
    fn variant(&self) -> &'static str {
        match self {
            Error::Load(_) => "Load",
            Error::Acl { .. } => "Acl",
            Error::Aclnn { .. } => "Aclnn",
            Error::TooManyDims { .. } => "TooManyDims",
            Error::TooManyElements { .. } => "TooManyElements",
            Error::NotBroadcastable { .. } => "NotBroadcastable",
            Error::ShapeMismatch { .. } => "ShapeMismatch",
            Error::RankMismatch { .. } => "RankMismatch",
            Error::ReshapeMismatch { .. } => "ReshapeMismatch",
            Error::UnsupportedDtype { .. } => "UnsupportedDtype",
            Error::UnsupportedOperator { .. } => "UnsupportedOperator",
            Error::DeviceMismatch { .. } => "DeviceMismatch",
            Error::PlanMismatch { .. } => "PlanMismatch",
            Error::HostAllocation { .. } => "HostAllocation",
            Error::Hccl { .. } => "Hccl",
            Error::CommunicatorFailed { .. } => "CommunicatorFailed",
            Error::Rendezvous(_) => "Rendezvous",
            Error::HcclUnavailable(_) => "HcclUnavailable",
            Error::LengthMismatch { .. } => "LengthMismatch",
            Error::DependencyFailed { .. } => "DependencyFailed",
            Error::SimulatorConfigured { .. } => "SimulatorConfigured",
            Error::DtypeMismatch { .. } => "DtypeMismatch",
            Error::SharedStorage { .. } => "SharedStorage",
            Error::NotWholeStorage { .. } => "NotWholeStorage",
            Error::InvalidArgument(_) => "InvalidArgument",
        }
    }
}

/// The variant's name and the `Display` text (see the type's docs).
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {self}", self.variant())
    }
}

/// The library's text after the crate's own "`api` failed with ..." (which some libraries,
/// the simulator among them, repeat at the start of their text: printed once).
fn detail(api: &str, message: &str) -> String {
    let own = message
        .strip_prefix(api)
        .and_then(|rest| rest.strip_prefix(" failed with "))
        .and_then(|rest| rest.split_once("): "))
        .map_or(message, |(_, text)| text);
    if own.is_empty() {
        String::new()
    } else {
        format!(": {own}")
    }
}

/// The element count of a shape that [`Dims::new`](crate::shape::Dims::new) accepted (so
/// it fits in `usize`; saturated otherwise).
fn numel(shape: &[usize]) -> usize {
    if shape.contains(&0) {
        return 0;
    }
    shape
        .iter()
        .try_fold(1usize, |acc, d| acc.checked_mul(*d))
        .unwrap_or(usize::MAX)
}

fn missing(operator: &str, symbol: Option<&str>, backend: Backend) -> String {
    match (symbol, backend) {
        (None, _) => {
            "; `ascendcl::reference` computes the crate's operators on the host (CPU) instead"
                .to_owned()
        }
        (Some(s), Backend::Simulator) => format!(
            ": the simulator has no `{s}`: ascend-sim does not implement {operator}; run on \
             CANN (ASCENDCL_BACKEND=cann), or add the operator to ascend-sim (see \
             docs/adding-an-operator.md, \"Simulate it\")"
        ),
        (Some(s), _) => {
            format!(": the loaded toolkit has no `{s}` (its libopapi.so predates the operator)")
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
