//! The Rust surface over the parity core: the same detector, called the way
//! Rust code calls things.
//!
//! The core's signatures follow the reference (JS strings, JS numbers,
//! untyped detector labels) because the binding and the conformance runner
//! need exactly that. This module adds, without changing any of it:
//! tool names and texts as anything that converts into a [`JsString`]
//! (`&str`, `String`, `&JsString`), rounds as any integer or float
//! ([`RoundNumber`]), [`Default`] for the monitor, `Display`/`FromStr` for
//! [`Action`], a typed [`Detector`] label, and raw SHA-256 digests next to
//! the hex fingerprints.

use std::fmt;
use std::str::FromStr;

use crate::config::ResolvedConfig;
use crate::error::Result;
use crate::fingerprint::{call_prefix, digest};
use crate::js_string::JsString;
use crate::json::Value;
use crate::ladder::Action;
use crate::monitor::{
    CallRecord, DeclaredCall, DoomLoopMonitor, RecordOptions, Verdict, SERVER_TOOL_FINGERPRINT, TEXT_REPETITION,
    TEXT_STREAK, TOOL_FINGERPRINT,
};

/// A round number: any primitive integer or float. Rounds are JS numbers in
/// the reference (and so `f64` in the core); Rust callers count with
/// integers. Integers beyond 2⁵³ round as `as f64` rounds them.
pub trait RoundNumber: Copy {
    /// The round as the JS number the core compares.
    fn to_round(self) -> f64;
}

macro_rules! round_number {
    ($($t:ty),*) => {$(
        impl RoundNumber for $t {
            fn to_round(self) -> f64 {
                self as f64
            }
        }
    )*};
}
round_number!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);

impl From<&JsString> for JsString {
    fn from(s: &JsString) -> Self {
        s.clone()
    }
}

impl Default for DoomLoopMonitor {
    /// A monitor running what `doomLoop: true` resolves to.
    fn default() -> Self {
        DoomLoopMonitor::new(ResolvedConfig::default())
    }
}

impl DoomLoopMonitor {
    /// Records one tool call with the default options (a pre-execution
    /// call that may be blocked, labelled `tool-fingerprint`).
    ///
    /// [`DoomLoopMonitor::record_tool_call`] with Rust argument types.
    ///
    /// # Errors
    /// Whatever canonicalization rejects in `key_material` (non-finite
    /// numbers, nesting past 64 levels); the monitor's state is unchanged.
    ///
    /// ```
    /// use doom_loop::{json::parse, Action, DoomLoopMonitor};
    /// let mut monitor = DoomLoopMonitor::default();
    /// let args = parse(r#"{"invoice_id":"INV-2291"}"#)?;
    /// monitor.record_call("get_invoice", &args, 1)?;
    /// monitor.record_call("get_invoice", &args, 2)?;
    /// let third = monitor.record_call("get_invoice", &args, 3)?;
    /// assert_eq!(third.action(), Some(Action::Block));
    /// # Ok::<(), doom_loop::Error>(())
    /// ```
    pub fn record_call(
        &mut self,
        tool_name: impl Into<JsString>,
        key_material: &Value,
        round: impl RoundNumber,
    ) -> Result<CallRecord> {
        self.record_call_with(tool_name, key_material, round, &RecordOptions::default())
    }

    /// [`DoomLoopMonitor::record_call`] with explicit options (for example
    /// [`RecordOptions::server_tool`] for a call that already ran).
    ///
    /// # Errors
    /// As [`DoomLoopMonitor::record_call`].
    pub fn record_call_with(
        &mut self,
        tool_name: impl Into<JsString>,
        key_material: &Value,
        round: impl RoundNumber,
        options: &RecordOptions,
    ) -> Result<CallRecord> {
        self.record_tool_call(&tool_name.into(), key_material, round.to_round(), options)
    }

    /// Records one turn's assistant text ([`DoomLoopMonitor::record_assistant_text`]).
    ///
    /// ```
    /// use doom_loop::{Detector, DoomLoopMonitor};
    /// let mut monitor = DoomLoopMonitor::default();
    /// assert!(monitor.record_text("Let me check the invoice.").is_none());
    /// let verdict = monitor.record_text("Let me check the invoice.").expect("a repeat");
    /// assert_eq!(verdict.detector_kind(), Some(Detector::TextStreak));
    /// ```
    pub fn record_text(&mut self, text: impl Into<JsString>) -> Option<Verdict> {
        self.record_assistant_text(&text.into())
    }

    /// Declares the complete set of calls a round will make
    /// ([`DoomLoopMonitor::declare_round`]); returns its warnings.
    ///
    /// ```
    /// use doom_loop::{json::parse, DoomLoopMonitor};
    /// let mut monitor = DoomLoopMonitor::default();
    /// let (a, b) = (parse(r#"{"id":1}"#)?, parse(r#"{"id":2}"#)?);
    /// assert!(monitor.declare(1, [("get", &a), ("get", &b)]).is_empty());
    /// # Ok::<(), doom_loop::Error>(())
    /// ```
    pub fn declare<'a, T: Into<JsString>>(
        &mut self,
        round: impl RoundNumber,
        calls: impl IntoIterator<Item = (T, &'a Value)>,
    ) -> Vec<String> {
        let calls: Vec<DeclaredCall> = calls
            .into_iter()
            .map(|(tool_name, key_material)| DeclaredCall {
                tool_name: tool_name.into(),
                key_material: key_material.clone(),
            })
            .collect();
        self.declare_round(round.to_round(), &calls)
    }
}

/// The detectors that label verdicts: the reference's four and the opt-in
/// ones of [`crate::beyond`]. Callers may label their own records with any
/// value ([`RecordOptions::detector`]); those have no `Detector`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Detector {
    /// An exact tool call repeated across rounds (`tool-fingerprint`).
    ToolFingerprint,
    /// The same, recorded after a server-side tool ran (`server-tool-fingerprint`).
    ServerToolFingerprint,
    /// A block of text repeating at the end of one response (`text-repetition`).
    TextRepetition,
    /// Identical assistant text across turns (`text-streak`).
    TextStreak,
    /// A cycle of calls (`tool-cycle`, opt-in).
    ToolCycle,
    /// Unchanged outcomes under changing inputs (`no-progress`, opt-in).
    NoProgress,
    /// A tool failing round after round (`tool-failure`, opt-in).
    ToolFailure,
    /// The spend guard (`budget`, opt-in).
    Budget,
}

impl Detector {
    /// Every detector.
    pub const ALL: [Detector; 8] = [
        Detector::ToolFingerprint,
        Detector::ServerToolFingerprint,
        Detector::TextRepetition,
        Detector::TextStreak,
        Detector::ToolCycle,
        Detector::NoProgress,
        Detector::ToolFailure,
        Detector::Budget,
    ];

    /// The label verdicts carry.
    pub fn as_str(self) -> &'static str {
        match self {
            Detector::ToolFingerprint => TOOL_FINGERPRINT,
            Detector::ServerToolFingerprint => SERVER_TOOL_FINGERPRINT,
            Detector::TextRepetition => TEXT_REPETITION,
            Detector::TextStreak => TEXT_STREAK,
            Detector::ToolCycle => crate::beyond::TOOL_CYCLE,
            Detector::NoProgress => crate::beyond::NO_PROGRESS,
            Detector::ToolFailure => crate::beyond::TOOL_FAILURE,
            Detector::Budget => crate::beyond::BUDGET,
        }
    }
}

impl fmt::Display for Detector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Detector {
    type Err = ParseNameError;

    /// ```
    /// use doom_loop::Detector;
    /// assert_eq!("text-streak".parse::<Detector>(), Ok(Detector::TextStreak));
    /// assert!("loop".parse::<Detector>().is_err());
    /// ```
    fn from_str(name: &str) -> std::result::Result<Self, Self::Err> {
        Detector::ALL
            .into_iter()
            .find(|d| d.as_str() == name)
            .ok_or_else(|| ParseNameError::new("detector", name))
    }
}

impl fmt::Display for Action {
    /// The reference's name (`observe`, `steer`, `escalate`, `block`, `stop`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Action {
    type Err = ParseNameError;

    /// ```
    /// use doom_loop::Action;
    /// assert_eq!("block".parse::<Action>(), Ok(Action::Block));
    /// assert_eq!(Action::Steer.to_string(), "steer");
    /// let error = "halt".parse::<Action>().unwrap_err();
    /// assert_eq!(error.to_string(), "unknown action `halt`");
    /// ```
    fn from_str(name: &str) -> std::result::Result<Self, Self::Err> {
        Action::from_name(name).ok_or_else(|| ParseNameError::new("action", name))
    }
}

/// A name that is not an [`Action`] or a [`Detector`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseNameError {
    what: &'static str,
    name: String,
}

impl ParseNameError {
    fn new(what: &'static str, name: &str) -> Self {
        ParseNameError {
            what,
            name: name.to_string(),
        }
    }

    /// The rejected name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for ParseNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} `{}`", self.what, self.name)
    }
}

impl std::error::Error for ParseNameError {}

impl RecordOptions {
    /// Options that label the verdict with `detector` (blocking allowed).
    pub fn with_detector(detector: Detector) -> Self {
        RecordOptions {
            detector: Value::String(JsString::from(detector.as_str())),
            ..RecordOptions::default()
        }
    }
}

impl Verdict {
    /// The detector that produced the verdict, when it is one of this
    /// crate's (`None` for a label the caller chose): the opt-in detector
    /// where one fired (its verdict's `detector` keeps one of the
    /// reference's four kinds, see [`Verdict::opt_in_detector`]).
    pub fn detector_kind(&self) -> Option<Detector> {
        match self.opt_in_detector {
            Some(opt_in) => opt_in.parse().ok(),
            None => self.detector_label()?.parse().ok(),
        }
    }

    /// The detector label, when it is a string (it is unless a caller
    /// passed another value as [`RecordOptions::detector`]).
    pub fn detector_label(&self) -> Option<&str> {
        self.detector.as_js_string()?.as_str()
    }

    /// The fingerprint as raw SHA-256 bytes (`None` if the fingerprint is
    /// not 64 hex digits, which only a hand-made verdict can be).
    pub fn digest(&self) -> Option<[u8; 32]> {
        digest_from_hex(&self.fingerprint)
    }
}

impl CallRecord {
    /// The call's fingerprint as raw SHA-256 bytes.
    ///
    /// ```
    /// use doom_loop::{json::parse, tool_call_digest, DoomLoopMonitor};
    /// let args = parse("{}")?;
    /// let record = DoomLoopMonitor::default().record_call("list_tasks", &args, 1)?;
    /// assert_eq!(record.digest(), Some(tool_call_digest("list_tasks", &args)?));
    /// # Ok::<(), doom_loop::Error>(())
    /// ```
    pub fn digest(&self) -> Option<[u8; 32]> {
        digest_from_hex(&self.fingerprint)
    }

    /// The rung reached, if any.
    pub fn action(&self) -> Option<Action> {
        self.verdict.as_ref().map(|v| v.action)
    }
}

/// [`crate::fingerprint_tool_call`] as raw SHA-256 bytes instead of hex.
///
/// # Errors
/// Whatever [`crate::canonicalize`] rejects in `key_material`.
///
/// ```
/// use doom_loop::{json::parse, tool_call_digest};
/// let digest = tool_call_digest("list_tasks", &parse("{}")?)?;
/// assert_eq!(&digest[..4], &[0xb8, 0x4a, 0x3e, 0x32]);
/// # Ok::<(), doom_loop::Error>(())
/// ```
pub fn tool_call_digest(tool_name: impl Into<JsString>, key_material: &Value) -> Result<[u8; 32]> {
    let tool_name = tool_name.into();
    let mut text = call_prefix(&tool_name, 64);
    crate::canonical::canonicalize_into(key_material, &mut text)?;
    Ok(digest(text.as_bytes()))
}

/// [`crate::fingerprint_key_material`] as raw SHA-256 bytes.
///
/// # Errors
/// Whatever [`crate::canonicalize`] rejects.
pub fn key_material_digest(key_material: &Value) -> Result<[u8; 32]> {
    let mut text = String::new();
    crate::canonical::canonicalize_into(key_material, &mut text)?;
    Ok(digest(text.as_bytes()))
}

/// The 32 bytes a lowercase or uppercase 64-digit hex fingerprint spells.
fn digest_from_hex(hex: &JsString) -> Option<[u8; 32]> {
    let bytes = hex.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let nibble = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 32];
    for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        *slot = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::fingerprint_tool_call;
    use crate::json::parse;

    #[test]
    fn digest_is_the_fingerprint_in_bytes() {
        let args = parse(r#"{"b":[1,2.5e-7,"\ud800"],"a":null}"#).unwrap();
        for tool in ["get_invoice", "", "🎉"] {
            let hex = fingerprint_tool_call(&JsString::from(tool), &args).unwrap();
            let digest = tool_call_digest(tool, &args).unwrap();
            let spelled: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(spelled, hex);
            assert_eq!(digest_from_hex(&JsString::from(hex)), Some(digest));
        }
        let hex = crate::fingerprint_key_material(&args).unwrap();
        assert_eq!(
            Some(key_material_digest(&args).unwrap()),
            digest_from_hex(&JsString::from(hex))
        );
    }

    #[test]
    fn malformed_fingerprints_have_no_digest() {
        for bad in ["", "abc", &"g".repeat(64), &"a".repeat(63), &"é".repeat(32)] {
            assert_eq!(digest_from_hex(&JsString::from(bad)), None, "{bad}");
        }
    }

    #[test]
    fn integer_and_float_rounds_are_the_same_round() {
        let args = parse(r#"{"q":1}"#).unwrap();
        let mut by_int = DoomLoopMonitor::default();
        let mut by_f64 = DoomLoopMonitor::default();
        let tool = JsString::from("search");
        for round in 1u64..=7 {
            let a = by_int.record_call("search", &args, round).unwrap();
            let b = by_f64
                .record_tool_call(&tool, &args, round as f64, &RecordOptions::default())
                .unwrap();
            assert_eq!(a, b);
        }
        assert_eq!(by_int.get_state(), by_f64.get_state());
        // Today's argument types still work through the generic surface.
        assert!(by_int.record_call(&tool, &args, 8.0).is_ok());
    }

    #[test]
    fn names_round_trip_and_unknown_ones_fail() {
        for action in Action::ALL {
            assert_eq!(action.to_string().parse::<Action>(), Ok(action));
        }
        for detector in Detector::ALL {
            assert_eq!(detector.to_string().parse::<Detector>(), Ok(detector));
        }
        assert_eq!("Block".parse::<Action>().unwrap_err().name(), "Block");
        assert_eq!("".parse::<Detector>().unwrap_err().to_string(), "unknown detector ``");
    }

    #[test]
    fn verdicts_name_their_detector() {
        let mut monitor = DoomLoopMonitor::default();
        let args = parse("{}").unwrap();
        let options = RecordOptions::server_tool();
        monitor.record_call_with("web_search", &args, 1, &options).unwrap();
        let record = monitor.record_call_with("web_search", &args, 2, &options).unwrap();
        let verdict = record.verdict.expect("observe at 2");
        assert_eq!(verdict.detector_kind(), Some(Detector::ServerToolFingerprint));
        let custom = RecordOptions {
            detector: Value::Number(7.0),
            ..RecordOptions::default()
        };
        let mut monitor = DoomLoopMonitor::default();
        monitor.record_call_with("t", &args, 1, &custom).unwrap();
        let verdict = monitor
            .record_call_with("t", &args, 2, &custom)
            .unwrap()
            .verdict
            .unwrap();
        assert_eq!((verdict.detector_kind(), verdict.detector_label()), (None, None));
    }
}
