//! The persisted state as Rust types: what [`DoomLoopMonitor::get_state`]
//! returns as an untyped [`Value`], with a field per key.
//!
//! The shape is the reference's (`tools`, `text`, `escalationsUsed`) plus
//! this crate's opt-in `beyond` section, kept as a [`Value`] because the
//! opt-in detectors own its shape. Numbers stay `f64`: a restored blob may
//! carry any finite count, and the reference's arithmetic is in doubles.
//! With the `serde` feature the struct serializes to exactly the JSON
//! `get_state` writes (see [`DoomLoopState`]).

use crate::error::{Error, ErrorKind, Result};
use crate::js_string::JsString;
use crate::json::{Object, Value};
use crate::monitor::DoomLoopMonitor;

/// The detector's persisted state (the reference's
/// `ConversationState.doomLoop`).
///
/// With the `serde` feature, `serde_json::to_string(&monitor.state())` is
/// byte-identical to `json::to_json(&monitor.get_state())` whenever every
/// no name holds a lone surrogate and no number lies in 10⁻⁶ ≤ |n| < 10⁻⁵,
/// the one range where serde_json (≥ 1.0.149, whose float formatter this
/// relies on) writes `1e-6` where JS writes `0.000001` — the same number.
/// Streaks and counts are integers (every state the reference corpus
/// reaches is identical). A lone surrogate, which serde's strings cannot
/// carry, makes serializing fail with an error saying so;
/// [`DoomLoopState::to_json`] carries it.
///
/// ```
/// use doom_loop::{json::{parse, to_json}, DoomLoopMonitor};
/// let mut monitor = DoomLoopMonitor::default();
/// let args = parse(r#"{"id":7}"#)?;
/// monitor.record_call("get", &args, 1)?;
/// monitor.record_call("get", &args, 2)?;
/// let state = monitor.state();
/// assert_eq!(state.tools[0].1.streak, 2.0);
/// assert_eq!(state.to_json(), to_json(&monitor.get_state()));
///
/// let mut resumed = DoomLoopMonitor::default();
/// assert!(resumed.restore_state(&state).is_empty());
/// assert_eq!(resumed.state(), state);
/// # Ok::<(), doom_loop::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DoomLoopState {
    /// Per tool, in JS own-property order (array-index names first).
    pub tools: Vec<(JsString, ToolState)>,
    /// The cross-turn text streak, if any text was recorded.
    pub text: Option<StreakState>,
    /// The opt-in detectors' state, when any runs and has something to keep.
    pub beyond: Option<Value>,
    /// Escalations consumed (written only when positive).
    pub escalations_used: f64,
}

/// One tool's entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolState {
    /// Fingerprint of the tool's last call.
    pub fingerprint: JsString,
    /// Consecutive rounds with the same round set.
    pub streak: f64,
    /// The round's sorted fingerprint set, for multi-call rounds only.
    pub round_fingerprints: Option<Vec<JsString>>,
    /// Per-call streaks, only when the set and streak cannot rebuild them.
    pub call_streaks: Option<Vec<(JsString, f64)>>,
}

/// A fingerprint and its streak (the text streak).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreakState {
    /// Fingerprint of the normalized text.
    pub fingerprint: JsString,
    /// Consecutive turns with that text.
    pub streak: f64,
}

impl DoomLoopMonitor {
    /// [`DoomLoopMonitor::get_state`] as a [`DoomLoopState`].
    pub fn state(&self) -> DoomLoopState {
        // get_state always builds the documented shape.
        DoomLoopState::from_value(&self.get_state()).unwrap_or_default()
    }

    /// Replaces the state with `state` ([`DoomLoopMonitor::restore`]);
    /// returns the reference's warnings (none for a well-formed state).
    pub fn restore_state(&mut self, state: &DoomLoopState) -> Vec<String> {
        self.restore(&state.to_value())
    }
}

impl DoomLoopState {
    /// Reads the state from its JSON shape (what `get_state` writes).
    ///
    /// Stricter than [`DoomLoopMonitor::restore`], which ignores malformed
    /// entries one by one: a typed state is all well-formed or an error.
    /// Unknown top-level keys are ignored, as `restore` ignores them.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] naming the first key whose value has
    /// the wrong type.
    ///
    /// ```
    /// use doom_loop::{json::parse, DoomLoopState};
    /// let state = DoomLoopState::from_value(&parse(r#"{"tools":{"get":{"fingerprint":"ab","streak":3}}}"#)?)?;
    /// assert_eq!(state.tools[0].1.streak, 3.0);
    /// let error = DoomLoopState::from_value(&parse(r#"{"tools":{"get":{"streak":3}}}"#)?).unwrap_err();
    /// assert_eq!(error.to_string(), "state: tools.get.fingerprint: expected a string");
    /// # Ok::<(), doom_loop::Error>(())
    /// ```
    pub fn from_value(value: &Value) -> Result<DoomLoopState> {
        let root = object(value, "state")?;
        let tools = match root.get("tools") {
            Some(tools) => object(tools, "tools")?
                .iter()
                .map(|(name, entry)| Ok((name.clone(), tool_state(entry, &format!("tools.{name}"))?)))
                .collect::<Result<_>>()?,
            None => return Err(invalid("tools", "missing")),
        };
        let text = match root.get("text") {
            None => None,
            Some(text) => {
                let text_object = object(text, "text")?;
                Some(StreakState {
                    fingerprint: string(text_object.get("fingerprint"), "text.fingerprint")?,
                    streak: number(text_object.get("streak"), "text.streak")?,
                })
            }
        };
        let escalations_used = match root.get("escalationsUsed") {
            None => 0.0,
            some => number(some, "escalationsUsed")?,
        };
        Ok(DoomLoopState {
            tools,
            text,
            beyond: root.get("beyond").cloned(),
            escalations_used,
        })
    }

    /// The state as the JSON value `get_state` returns.
    pub fn to_value(&self) -> Value {
        let tools = self
            .tools
            .iter()
            .map(|(name, tool)| (name.clone(), tool.to_value()))
            .collect();
        let mut state = vec![(JsString::from("tools"), Value::Object(Object::from_entries(tools)))];
        if let Some(text) = &self.text {
            state.push((JsString::from("text"), streak_value(&text.fingerprint, text.streak)));
        }
        if let Some(beyond) = &self.beyond {
            state.push((JsString::from("beyond"), beyond.clone()));
        }
        if self.escalations_used > 0.0 {
            state.push((JsString::from("escalationsUsed"), Value::Number(self.escalations_used)));
        }
        Value::Object(Object::from_entries(state))
    }

    /// The state as JSON text, exactly as `to_json(&get_state())` writes it.
    pub fn to_json(&self) -> String {
        crate::json::to_json(&self.to_value())
    }
}

impl ToolState {
    fn to_value(&self) -> Value {
        let mut entry = vec![
            (JsString::from("fingerprint"), Value::String(self.fingerprint.clone())),
            (JsString::from("streak"), Value::Number(self.streak)),
        ];
        if let Some(set) = &self.round_fingerprints {
            let set = set.iter().cloned().map(Value::String).collect();
            entry.push((JsString::from("roundFingerprints"), Value::Array(set)));
        }
        if let Some(counts) = &self.call_streaks {
            let counts = counts.iter().map(|(f, n)| (f.clone(), Value::Number(*n))).collect();
            entry.push((
                JsString::from("callStreaks"),
                Value::Object(Object::from_entries(counts)),
            ));
        }
        Value::Object(Object::from_entries(entry))
    }
}

fn streak_value(fingerprint: &JsString, streak: f64) -> Value {
    Value::Object(Object::from_entries(vec![
        (JsString::from("fingerprint"), Value::String(fingerprint.clone())),
        (JsString::from("streak"), Value::Number(streak)),
    ]))
}

fn tool_state(value: &Value, at: &str) -> Result<ToolState> {
    let entry = object(value, at)?;
    let round_fingerprints = match entry.get("roundFingerprints") {
        None => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| string(Some(item), &format!("{at}.roundFingerprints[{i}]")))
                .collect::<Result<_>>()?,
        ),
        Some(_) => return Err(invalid(&format!("{at}.roundFingerprints"), "expected an array")),
    };
    let call_streaks = match entry.get("callStreaks") {
        None => None,
        Some(counts) => Some(
            object(counts, &format!("{at}.callStreaks"))?
                .iter()
                .map(|(call, n)| Ok((call.clone(), number(Some(n), &format!("{at}.callStreaks.{call}"))?)))
                .collect::<Result<_>>()?,
        ),
    };
    Ok(ToolState {
        fingerprint: string(entry.get("fingerprint"), &format!("{at}.fingerprint"))?,
        streak: number(entry.get("streak"), &format!("{at}.streak"))?,
        round_fingerprints,
        call_streaks,
    })
}

fn invalid(at: &str, problem: &str) -> Error {
    Error::new(ErrorKind::InvalidArgument, format!("state: {at}: {problem}"))
}

fn object<'a>(value: &'a Value, at: &str) -> Result<&'a Object> {
    value.as_object().ok_or_else(|| invalid(at, "expected an object"))
}

fn string(value: Option<&Value>, at: &str) -> Result<JsString> {
    value
        .and_then(Value::as_js_string)
        .cloned()
        .ok_or_else(|| invalid(at, "expected a string"))
}

fn number(value: Option<&Value>, at: &str) -> Result<f64> {
    value
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite())
        .ok_or_else(|| invalid(at, "expected a finite number"))
}
