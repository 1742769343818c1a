//! The wasm binding's private entry points into the core. **Not an API**:
//! hidden from the documentation and exempt from semver; Rust users have
//! [`crate::json::parse`], [`crate::canonicalize`],
//! [`crate::fingerprint_tool_call`] and [`DoomLoopMonitor::record_tool_call`].
//!
//! The binding hands JS values over as *lowered* text — JSON plus the bare
//! words `undefined`, `NaN`, `Infinity`, `-Infinity`, `bigint`, `hole` and
//! `circular` — so that canonicalization, not the binding, decides what each
//! JS-only value means. Everything here reads that form, or wires the host
//! into the core (a faster SHA-256). The test oracles the fuzz workspace
//! shares with the unit tests ([`naive`]) live here for the same reason:
//! they must be reachable from another crate, but they are not an API.

use crate::error::Result;
use crate::js_string::JsString;
use crate::json::Value;
use crate::monitor::{CallRecord, DoomLoopMonitor, RecordOptions};

/// Parses the lowered form of a JS value.
///
/// # Errors
/// As [`crate::json::parse`].
///
/// ```
/// use doom_loop::{binding::parse_lowered, Value};
/// assert!(matches!(parse_lowered("[hole,NaN]").unwrap(), Value::Array(_)));
/// ```
pub fn parse_lowered(text: &str) -> Result<Value> {
    crate::json::parse_lowered(text)
}

/// Canonical JSON of a lowered value, straight from the text when it is
/// plain JSON: the same answer, and the same errors, as
/// `canonicalize(&parse_lowered(text)?)`.
///
/// # Errors
/// As [`parse_lowered`] and [`crate::canonicalize`].
///
/// ```
/// use doom_loop::binding::canonicalize_lowered;
/// assert_eq!(canonicalize_lowered(r#"{"b":[1.50,undefined,hole],"a":undefined}"#).unwrap(), r#"{"b":[1.5,null,]}"#);
/// ```
pub fn canonicalize_lowered(text: &str) -> Result<String> {
    crate::canonical::canonicalize_lowered(text)
}

/// [`crate::fingerprint_tool_call`] over lowered key material.
///
/// # Errors
/// As [`canonicalize_lowered`].
///
/// ```
/// use doom_loop::{binding::fingerprint_lowered_tool_call, JsString};
/// let fp = fingerprint_lowered_tool_call(&JsString::from("list_tasks"), "{ }").unwrap();
/// assert_eq!(fp, "b84a3e324e9dc95335f72cfee5e5898465349be72cb1348fe7927c49c8d65d92");
/// ```
pub fn fingerprint_lowered_tool_call(tool_name: &JsString, key_material: &str) -> Result<String> {
    crate::fingerprint::fingerprint_lowered_tool_call(tool_name, key_material)
}

/// [`crate::fingerprint_key_material`] over lowered key material.
///
/// # Errors
/// As [`canonicalize_lowered`].
pub fn fingerprint_lowered_key_material(key_material: &str) -> Result<String> {
    crate::fingerprint::fingerprint_lowered_key_material(key_material)
}

/// Registers a host SHA-256 for large inputs (once; later calls are
/// ignored and return `false`). Process-global, which is why it is not an
/// API: one wasm instance is one process, a Rust program is not. The
/// backend must compute SHA-256 (fingerprints are a cross-port contract);
/// `None` from it falls back to the built-in one.
pub fn set_sha256_backend(backend: fn(&[u8]) -> Option<[u8; 32]>) -> bool {
    crate::fingerprint::set_sha256_backend(backend)
}

/// The binding's record path: [`DoomLoopMonitor::record_tool_call`] over
/// lowered key material, fingerprinted without building a value tree.
pub trait LoweredCalls {
    /// Records one call whose key material is lowered text.
    ///
    /// # Errors
    /// As [`canonicalize_lowered`]; the monitor's state is unchanged then.
    fn record_lowered_call(
        &mut self,
        tool_name: &JsString,
        key_material: &str,
        round: f64,
        options: &RecordOptions,
    ) -> Result<CallRecord>;
}

impl LoweredCalls for DoomLoopMonitor {
    fn record_lowered_call(
        &mut self,
        tool_name: &JsString,
        key_material: &str,
        round: f64,
        options: &RecordOptions,
    ) -> Result<CallRecord> {
        DoomLoopMonitor::record_lowered_call(self, tool_name, key_material, round, options)
    }
}

/// Record options read from a JS options object.
pub trait JsRecordOptions {
    /// `allowBlock ?? true` (by truthiness), `detector ?? "tool-fingerprint"`.
    fn from_js(options: Option<&Value>) -> Self;
}

impl JsRecordOptions for RecordOptions {
    fn from_js(options: Option<&Value>) -> Self {
        RecordOptions::from_js(options)
    }
}

/// The naive transcription of the reference's text detection (the oracle
/// of the unit tests and the `text` fuzz target).
pub mod naive {
    pub use crate::text::naive::{detect, normalize, tokens, Hit};
}
