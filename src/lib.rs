//! placeholder: the safe layer is being built.
pub mod element;
pub mod error;
pub mod shape;

pub use element::{DType, Element};
pub use error::{Error, Result};
