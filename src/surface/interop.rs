//! `serde_json` interop (the `serde_json` feature): [`Value`] from and
//! into [`serde_json::Value`], and canonical JSON and fingerprints of a
//! `serde_json::Value` written straight from it, without printing and
//! re-parsing text.
//!
//! A `serde_json::Value` is always plain JSON — finite numbers, well-formed
//! strings, unique keys — so everything the reference can fingerprint from
//! such input converts losslessly. Numbers are doubles on this side (as in
//! JS): an integer beyond 2⁵³ rounds as `JSON.parse` rounds it. Parse with
//! serde_json's `float_roundtrip` feature if its text must fingerprint as
//! `JSON.parse` reads it: without it serde_json may round the last digit
//! of a long decimal differently.

use crate::canonical::{MAX_CANONICALIZE_DEPTH, TOO_DEEP_MESSAGE};
use crate::error::{Error, ErrorKind, Result};
use crate::fingerprint::{call_prefix, sha256_hex};
use crate::idiomatic::RoundNumber;
use crate::js_string::{cmp_wtf8_as_utf16, JsString};
use crate::json::{js_number, write_json_string, write_number, Object, Value};
use crate::monitor::{CallRecord, DoomLoopMonitor};
use crate::sort::sorted_indices;

type Json = serde_json::Value;

impl From<&Json> for Value {
    /// The value `JSON.parse` gives for the same JSON text.
    fn from(json: &Json) -> Value {
        match json {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(number(n)),
            Json::String(s) => Value::String(JsString::from(s.as_str())),
            Json::Array(items) => Value::Array(items.iter().map(Value::from).collect()),
            Json::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (JsString::from(k.as_str()), Value::from(v)))
                    .collect::<Object>(),
            ),
        }
    }
}

impl From<Json> for Value {
    fn from(json: Json) -> Value {
        Value::from(&json)
    }
}

impl TryFrom<&Value> for Json {
    type Error = Error;

    /// What `serde_json::from_str(&json::to_json(value))` gives: the
    /// `JSON.stringify` rules (`undefined` members dropped, holes and
    /// non-finite numbers as `null`), integers as integers.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a string or key holding a lone
    /// surrogate, which a Rust `String` cannot.
    fn try_from(value: &Value) -> Result<Json> {
        Ok(match value {
            Value::Null | Value::Undefined | Value::Hole | Value::BigInt | Value::Circular => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => json_number(*n),
            Value::String(s) => Json::String(utf8(s)?),
            Value::Array(items) => Json::Array(items.iter().map(Json::try_from).collect::<Result<_>>()?),
            Value::Object(object) => Json::Object(
                object
                    .iter()
                    .filter(|(_, v)| !matches!(v, Value::Undefined))
                    .map(|(k, v)| Ok((utf8(k)?, Json::try_from(v)?)))
                    .collect::<Result<_>>()?,
            ),
        })
    }
}

impl TryFrom<Value> for Json {
    type Error = Error;

    /// As `TryFrom<&Value>`.
    ///
    /// # Errors
    /// As `TryFrom<&Value>`.
    fn try_from(value: Value) -> Result<Json> {
        Json::try_from(&value)
    }
}

fn number(n: &serde_json::Number) -> f64 {
    // Without `arbitrary_precision` every serde_json number has an f64
    // reading; with it, the text is what JSON.parse would round.
    n.as_f64().or_else(|| n.to_string().parse().ok()).unwrap_or(f64::NAN)
}

/// The number serde_json reads from the JS text of `n`: an integer where
/// JS prints digits that fit one, a float otherwise (`null` if non-finite).
fn json_number(n: f64) -> Json {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        return Json::from(n as i64);
    }
    let text = js_number(n);
    if let Ok(i) = text.parse::<i64>() {
        Json::from(i)
    } else if let Ok(u) = text.parse::<u64>() {
        Json::from(u)
    } else {
        serde_json::Number::from_f64(n).map_or(Json::Null, Json::Number)
    }
}

fn utf8(s: &JsString) -> Result<String> {
    s.as_str().map(str::to_string).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidArgument,
            format!("string {s:?} holds a lone surrogate, which serde_json::Value cannot carry"),
        )
    })
}

/// Canonical JSON (RFC 8785, the reference's `canonicalizeKeyMaterial`) of
/// a `serde_json::Value`, written straight from it.
///
/// # Errors
/// [`ErrorKind::TooDeep`] past 64 levels of nesting, with the reference's
/// message (the only thing a `serde_json::Value` can hold that the
/// reference refuses).
///
/// ```
/// let args = serde_json::json!({"b": [1.0, 2.5e-7], "a": "\u{e9}"});
/// assert_eq!(doom_loop::interop::canonicalize_json(&args)?, r#"{"a":"é","b":[1,2.5e-7]}"#);
/// # Ok::<(), doom_loop::Error>(())
/// ```
pub fn canonicalize_json(value: &Json) -> Result<String> {
    let mut out = String::new();
    write_canonical(value, 0, &mut out)?;
    Ok(out)
}

/// [`crate::fingerprint_tool_call`] of a `serde_json::Value`.
///
/// # Errors
/// As [`canonicalize_json`].
///
/// ```
/// let fp = doom_loop::interop::fingerprint_json_tool_call("list_tasks", &serde_json::json!({}))?;
/// assert_eq!(fp, "b84a3e324e9dc95335f72cfee5e5898465349be72cb1348fe7927c49c8d65d92");
/// # Ok::<(), doom_loop::Error>(())
/// ```
pub fn fingerprint_json_tool_call(tool_name: impl Into<JsString>, key_material: &Json) -> Result<String> {
    let mut text = call_prefix(&tool_name.into(), 64);
    write_canonical(key_material, 0, &mut text)?;
    Ok(sha256_hex(text.as_bytes()))
}

/// [`crate::fingerprint_key_material`] of a `serde_json::Value`.
///
/// # Errors
/// As [`canonicalize_json`].
pub fn fingerprint_json_key_material(key_material: &Json) -> Result<String> {
    Ok(sha256_hex(canonicalize_json(key_material)?.as_bytes()))
}

impl DoomLoopMonitor {
    /// [`DoomLoopMonitor::record_call`] with `serde_json` key material.
    ///
    /// # Errors
    /// As [`canonicalize_json`]; the monitor's state is unchanged then.
    ///
    /// ```
    /// use doom_loop::{Action, DoomLoopMonitor};
    /// let mut monitor = DoomLoopMonitor::default();
    /// let args = serde_json::json!({"invoice_id": "INV-2291"});
    /// let actions: Vec<_> = (1..=3)
    ///     .map(|round| monitor.record_json_call("get_invoice", &args, round).map(|r| r.action()))
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(actions, [None, Some(Action::Observe), Some(Action::Block)]);
    /// # Ok::<(), doom_loop::Error>(())
    /// ```
    pub fn record_json_call(
        &mut self,
        tool_name: impl Into<JsString>,
        key_material: &Json,
        round: impl RoundNumber,
    ) -> Result<CallRecord> {
        self.record_call(tool_name, &Value::from(key_material), round)
    }
}

fn write_canonical(value: &Json, depth: usize, out: &mut String) -> Result<()> {
    if depth > MAX_CANONICALIZE_DEPTH {
        return Err(Error::new(ErrorKind::TooDeep, TOO_DEEP_MESSAGE));
    }
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => write_number(number(n), out),
        Json::String(s) => write_json_string(&JsString::from(s.as_str()), out),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, depth + 1, out)?;
            }
            out.push(']');
        }
        Json::Object(map) => {
            let entries: Vec<(&String, &Json)> = map.iter().collect();
            // Keys are unique: the sort gives the one order there is.
            let order = sorted_indices(entries.len(), &|a, b| {
                cmp_wtf8_as_utf16(entries[a].0.as_bytes(), entries[b].0.as_bytes())
            });
            out.push('{');
            for (i, (key, item)) in order.into_iter().map(|i| entries[i]).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(&JsString::from(key.as_str()), out);
                out.push(':');
                write_canonical(item, depth + 1, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}
