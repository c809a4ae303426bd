//! The crate's error type. Every user-reachable failure is one of these; the
//! Python layer maps them to ValueError / TypeError / OSError / MemoryError /
//! RuntimeError / KeyboardInterrupt.
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum RgbmError {
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter { name: String, reason: String },
    #[error("shape mismatch: {0}")]
    Shape(String),
    #[error("non-finite value: {0}")]
    NonFinite(String),
    #[error("empty input: {0}")]
    EmptyInput(String),
    #[error("invalid labels: {0}")]
    InvalidLabel(String),
    #[error("invalid model: {0}")]
    ModelFormat(String),
    #[error("I/O error: {0}")]
    Io(String),
    #[error("interrupted")]
    Interrupted,
    /// A large buffer could not be allocated (Python: MemoryError).
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// Worker threads could not be started (Python: RuntimeError).
    #[error("cannot start threads: {0}")]
    Threads(String),
    /// A user callback raised; the bindings re-raise the original exception.
    #[error("a callback failed: {0}")]
    Callback(String),
}

impl RgbmError {
    pub fn param(name: &str, reason: impl Into<String>) -> Self {
        RgbmError::InvalidParameter {
            name: name.to_string(),
            reason: reason.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, RgbmError>;
