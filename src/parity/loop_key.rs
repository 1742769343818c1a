//! Resolving a tool's `loopKey` declaration into key material.
//!
//! Keeps the reference's `resolveLoopKeyMaterial` for every form that is
//! data: absent (the full arguments), `false` (the tool is exempt), a field
//! list, and unsupported shapes. A field list reads `field in args` and
//! `args[field]` as JS does on parsed JSON, prototype included — so
//! `"constructor"` selects a function (which canonicalization drops) and
//! `"__proto__"` selects `Object.prototype` (canonically `{}`) unless the
//! arguments have an own `"__proto__"`. Degenerate lists (empty, or every
//! field absent) would give every call one identity and fall back to the
//! full arguments with the reference's warnings. The function form runs in
//! the caller's language ([`LoopKey::Function`] here, the JS shim there)
//! and follows the same rules for its result.

use crate::error::{Error, ErrorKind, Result};
use crate::js_string::JsString;
use crate::json::{Object, Value};

/// A tool's `loopKey` declaration.
pub enum LoopKey<'a> {
    /// No declaration: the full arguments identify the call.
    Absent,
    /// Any other JS value: `false`, a field list, or an unsupported shape.
    Declared(&'a Value),
    /// A function of the arguments. `Ok(None)` is `undefined`, `Ok(Some(Null))` exempts this call, `Err` is a throw (its message).
    Function(&'a dyn Fn(&Value) -> std::result::Result<Option<Value>, String>),
}

/// The outcome of resolving a `loopKey` (the reference's `LoopKeyResolution`).
#[derive(Clone, Debug, PartialEq)]
pub enum LoopKeyResolution {
    /// The call is exempt from detection.
    Exempt,
    /// Identity is this key material.
    Key(Value),
    /// The declaration was degenerate; identity falls back to the full arguments.
    Fallback {
        /// The full arguments.
        key_material: Value,
        /// Why (the reference's text).
        warning: String,
    },
}

impl LoopKeyResolution {
    /// The key material to fingerprint, unless exempt.
    pub fn key_material(&self) -> Option<&Value> {
        match self {
            LoopKeyResolution::Exempt => None,
            LoopKeyResolution::Key(v) => Some(v),
            LoopKeyResolution::Fallback { key_material, .. } => Some(key_material),
        }
    }

    /// The resolution as the reference's JSON object.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        match self {
            LoopKeyResolution::Exempt => out.push_str("{\"kind\":\"exempt\"}"),
            LoopKeyResolution::Key(v) => {
                out.push_str("{\"kind\":\"key\"");
                push_key_material(v, &mut out);
                out.push('}');
            }
            LoopKeyResolution::Fallback { key_material, warning } => {
                out.push_str("{\"kind\":\"fallback\"");
                push_key_material(key_material, &mut out);
                out.push_str(",\"warning\":");
                crate::json::write_json_string(&JsString::from(warning.as_str()), &mut out);
                out.push('}');
            }
        }
        out
    }
}

fn push_key_material(value: &Value, out: &mut String) {
    // JSON.stringify drops an `undefined` property.
    if !matches!(value, Value::Undefined) {
        out.push_str(",\"keyMaterial\":");
        out.push_str(&crate::json::to_json(value));
    }
}

const EMPTY_LIST_WARNING: &str = "loopKey is an empty field list, which would give every call to this tool the same identity; falling back to full arguments. Use `false` to exempt the tool.";
const UNDEFINED_RESULT_WARNING: &str = "loopKey returned undefined; falling back to full arguments. Return null to exempt a call, or a value to use as identity.";

/// The reference's `resolveLoopKeyMaterial`.
///
/// # Errors
/// [`ErrorKind::Type`] where the reference throws: a field list applied to
/// arguments that are not an object (`'in' operator` on a primitive).
///
/// ```
/// use doom_loop::{json::parse, loop_key::{resolve_loop_key_material, LoopKey, LoopKeyResolution}};
/// let args = parse(r#"{"id":"INV-1","ts":7}"#).unwrap();
/// let fields = parse(r#"["id"]"#).unwrap();
/// let r = resolve_loop_key_material(LoopKey::Declared(&fields), &args).unwrap();
/// assert_eq!(r, LoopKeyResolution::Key(parse(r#"{"id":"INV-1"}"#).unwrap()));
/// ```
pub fn resolve_loop_key_material(loop_key: LoopKey<'_>, args: &Value) -> Result<LoopKeyResolution> {
    let fallback = |warning: String| LoopKeyResolution::Fallback {
        key_material: args.clone(),
        warning,
    };
    match loop_key {
        LoopKey::Absent | LoopKey::Declared(Value::Undefined) => Ok(LoopKeyResolution::Key(args.clone())),
        LoopKey::Declared(Value::Bool(false)) => Ok(LoopKeyResolution::Exempt),
        LoopKey::Declared(Value::Array(fields)) => resolve_field_list(fields, args),
        LoopKey::Declared(other) => Ok(fallback(format!(
            "loopKey has unsupported shape ({}); falling back to full arguments",
            other.type_of()
        ))),
        LoopKey::Function(f) => Ok(match f(args) {
            Err(message) => fallback(format!("loopKey threw ({message}); falling back to full arguments")),
            Ok(Some(Value::Null)) => LoopKeyResolution::Exempt,
            Ok(None | Some(Value::Undefined)) => fallback(UNDEFINED_RESULT_WARNING.to_string()),
            Ok(Some(key)) => LoopKeyResolution::Key(key),
        }),
    }
}

fn resolve_field_list(fields: &[Value], args: &Value) -> Result<LoopKeyResolution> {
    if fields.is_empty() {
        return Ok(LoopKeyResolution::Fallback {
            key_material: args.clone(),
            warning: EMPTY_LIST_WARNING.to_string(),
        });
    }
    let names: Vec<&JsString> = fields.iter().filter_map(Value::as_js_string).collect();
    let mut subset = Object::new();
    for &name in &names {
        if !matches!(args, Value::Object(_) | Value::Array(_)) {
            return Err(Error::new(
                ErrorKind::Type,
                format!(
                    "Cannot use 'in' operator to search for '{name}' in {}",
                    js_string_form(args)
                ),
            ));
        }
        if let Some(value) = args.get_property(name) {
            subset.insert(name.clone(), value);
        }
    }
    if subset.is_empty() {
        let mut listed = String::new();
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                listed.push_str(", ");
            }
            listed.push_str(&name.to_utf8_lossy());
        }
        return Ok(LoopKeyResolution::Fallback {
            key_material: args.clone(),
            warning: format!(
                "loopKey fields [{}] are all absent from the arguments, which would give every call the same identity; falling back to full arguments.",
                listed
            ),
        });
    }
    Ok(LoopKeyResolution::Key(Value::Object(subset)))
}

/// `String(value)` for the primitives a TypeError message names.
fn js_string_form(value: &Value) -> String {
    match value {
        Value::String(s) => s.to_string(),
        Value::Number(n) => crate::json::js_number(*n),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_string(),
        _ => "undefined".to_string(),
    }
}
