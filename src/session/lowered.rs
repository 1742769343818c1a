//! A session's events and options read from the lowered value model
//! ([`crate::json::parse_lowered`]): the one mapping every binding uses
//! (the wasm shim's `DoomLoopSession`, the Python package), so what a host
//! hands over as `{id, toolName, args, malformed?, key?}` means the same
//! in every language.

use super::{Call, CallKey, Capabilities, Response, SessionOptions};
use crate::json::{to_json, Object, Value};
use crate::monitor::DeclaredCall;
use crate::{Error, ErrorKind, JsString};

fn invalid(message: &str) -> Error {
    Error::new(ErrorKind::Type, message)
}

fn field<'a>(object: &'a Object, name: &str) -> Option<&'a Value> {
    object
        .get(name)
        .filter(|v| !matches!(v, Value::Undefined | Value::Null))
}

impl SessionOptions {
    /// Options from `{loopKeys, loopEffects, capabilities}` (anything
    /// else: the defaults). A capability is there unless the host says
    /// `false`.
    pub fn from_value(value: &Value) -> SessionOptions {
        let Some(object) = value.as_object() else {
            return SessionOptions::default();
        };
        let loop_keys = field(object, "loopKeys")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let caps = field(object, "capabilities").and_then(Value::as_object);
        let has = |name: &str| !matches!(caps.and_then(|c| c.get(name)), Some(Value::Bool(false)));
        let loop_effects = field(object, "loopEffects")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        SessionOptions {
            loop_keys,
            loop_effects,
            capabilities: Capabilities {
                refuse: has("refuse"),
                stop: has("stop"),
                steer: has("steer"),
                escalate: has("escalate"),
            },
        }
    }
}

impl Call {
    /// A call from `{id, toolName, args, malformed?, key?}`: `key` is
    /// `"exempt"`, `{material}` when the host resolved the identity, or
    /// `{fingerprint}` when it fingerprinted the arguments itself.
    pub fn from_value(value: Value) -> Result<Call, Error> {
        // Taken apart, not copied: the arguments move into the call.
        let Value::Object(mut object) = value else {
            return Err(invalid("a session call must be an object"));
        };
        let string = |name: &str| match object.get(name) {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        let tool_name = string("toolName").ok_or_else(|| invalid("a session call needs a string toolName"))?;
        let id = string("id").unwrap_or_default();
        let key = match object.get("key") {
            Some(Value::String(s)) if *s == "exempt" => CallKey::Exempt,
            Some(Value::Object(key)) => match key.get("fingerprint") {
                Some(Value::String(fingerprint)) => CallKey::Fingerprint(fingerprint.clone()),
                _ => CallKey::Material(key.get("material").cloned().unwrap_or(Value::Undefined)),
            },
            _ => CallKey::Declared,
        };
        let malformed = object.get("malformed").is_some_and(Value::is_truthy);
        Ok(Call {
            id,
            tool_name,
            args: object.remove("args").unwrap_or(Value::Undefined),
            malformed,
            key,
        })
    }

    /// Calls from an array of them (`undefined` / `null`: none).
    pub fn list_from_value(value: Value) -> Result<Vec<Call>, Error> {
        match value {
            Value::Array(items) => items.into_iter().map(Call::from_value).collect(),
            Value::Undefined | Value::Null => Ok(Vec::new()),
            _ => Err(invalid("session calls must be an array")),
        }
    }
}

impl Response {
    /// A response from `{text, calls}` (a text that is not a string: none).
    pub fn from_value(value: Value) -> Result<Response, Error> {
        let Value::Object(mut object) = value else {
            return Err(invalid("a response must be an object"));
        };
        let text = match object.remove("text") {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        let calls = Call::list_from_value(object.remove("calls").unwrap_or(Value::Undefined))?;
        Ok(Response { text, calls })
    }
}

impl DeclaredCall {
    /// A declared call from `{toolName, keyMaterial}` (a tool name that is
    /// not a string is `"undefined"`, as the reference's template reads it).
    pub fn from_value(item: &Value) -> DeclaredCall {
        let get = |name: &str| item.as_object().and_then(|o| o.get(name)).cloned();
        DeclaredCall {
            tool_name: match get("toolName") {
                Some(Value::String(s)) => s,
                _ => JsString::from("undefined"),
            },
            key_material: get("keyMaterial").unwrap_or(Value::Undefined),
        }
    }
}

/// A binding's answer: `{"value": body, "warnings": [...]}` (no `warnings`
/// when there are none; the host prints them).
pub fn answer_json(body: &str, warnings: &[String]) -> String {
    let mut out = String::with_capacity(body.len() + 16);
    out.push_str("{\"value\":");
    out.push_str(body);
    if !warnings.is_empty() {
        out.push_str(",\"warnings\":");
        let items: Vec<Value> = warnings
            .iter()
            .map(|w| Value::String(JsString::from(w.as_str())))
            .collect();
        out.push_str(&to_json(&Value::Array(items)));
    }
    out.push('}');
    out
}
