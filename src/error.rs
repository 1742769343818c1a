//! The crate's one error type.
//!
//! Every fallible operation returns [`Error`], whose [`ErrorKind`] says what
//! went wrong and whose message is, wherever the reference throws, the
//! reference's own text (so a JS caller that matched on
//! `error.message` keeps working).

use std::fmt;

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input is not JSON (or not the lowered-JS-value syntax of the binding).
    Syntax,
    /// The input nests deeper than [`crate::json::MAX_PARSE_DEPTH`].
    NestingLimit,
    /// Key material holds NaN or ±Infinity.
    NonFinite,
    /// Key material nests deeper than [`crate::MAX_CANONICALIZE_DEPTH`].
    TooDeep,
    /// Key material holds a bigint.
    BigInt,
    /// Key material refers to itself.
    Circular,
    /// A JS `TypeError` the reference would throw (e.g. a `null` config section).
    Type,
    /// An argument outside what the API accepts (CLI and binding inputs).
    InvalidArgument,
}

/// An error with a kind and a human-readable message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// Creates an error.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message (the reference's text where it has one).
    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn syntax(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Syntax, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
