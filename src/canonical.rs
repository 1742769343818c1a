//! RFC 8785 (JCS) canonical JSON, exactly as the reference builds it.
//!
//! The reference's `canonicalizeKeyMaterial` is a recursive walk: object
//! keys sorted by UTF-16 code units, `undefined`/function/symbol entries
//! dropped from objects and written `null` in arrays, strings and numbers
//! written as `JSON.stringify` writes them (`-0` → `0`, `1e21` → `1e+21`,
//! lone surrogates as `\udxxx`), and four failures with fixed messages:
//! non-finite numbers, bigints, cycles, and nesting past
//! [`MAX_CANONICALIZE_DEPTH`]. Failures surface in the reference's traversal
//! order (sorted keys, array order, depth checked first), so a value with
//! two problems fails with the same message here as there.
//!
//! One pass, one output buffer: each key is sorted once and written once,
//! never re-serialized or re-parsed, so the cost is linear in the input
//! (plus the key sorts).

use crate::error::{Error, ErrorKind, Result};
use crate::json::{sorted_indices, write_json_string, write_number, Value};

/// Deepest nesting canonicalization accepts (the reference's
/// `MAX_CANONICALIZE_DEPTH`).
pub const MAX_CANONICALIZE_DEPTH: usize = 64;

/// The reference's message for nesting past [`MAX_CANONICALIZE_DEPTH`].
pub const TOO_DEEP_MESSAGE: &str = "Cannot canonicalize key material nested deeper than 64 levels for doom-loop fingerprinting";
/// The reference's message for NaN and ±Infinity.
pub const NON_FINITE_MESSAGE: &str = "Cannot canonicalize non-finite number (NaN/Infinity) for doom-loop fingerprinting: RFC 8785 has no representation";
/// The reference's message for bigints.
pub const BIGINT_MESSAGE: &str = "Cannot canonicalize bigint for doom-loop fingerprinting: RFC 8785 has no representation (convert to string or number in loopKey)";
/// The reference's message for cycles.
pub const CIRCULAR_MESSAGE: &str =
    "Cannot canonicalize circular key material for doom-loop fingerprinting";

/// Canonical JSON of `value` (the reference's `canonicalizeKeyMaterial`).
///
/// # Errors
/// [`ErrorKind::NonFinite`], [`ErrorKind::BigInt`], [`ErrorKind::Circular`]
/// or [`ErrorKind::TooDeep`], with the reference's messages.
///
/// ```
/// use doom_loop::{canonicalize, json::parse};
/// let v = parse(r#"{"b":[1e21,-0],"a":"\ud800"}"#).unwrap();
/// assert_eq!(canonicalize(&v).unwrap(), r#"{"a":"\ud800","b":[1e+21,0]}"#);
/// ```
pub fn canonicalize(value: &Value) -> Result<String> {
    let mut out = String::new();
    canonicalize_into(value, &mut out)?;
    Ok(out)
}

/// Appends the canonical JSON of `value` to `out`. On error `out` holds a
/// partial write.
///
/// # Errors
/// As [`canonicalize`].
pub fn canonicalize_into(value: &Value, out: &mut String) -> Result<()> {
    write_canonical(value, 0, out)
}

fn write_canonical(value: &Value, depth: usize, out: &mut String) -> Result<()> {
    if depth > MAX_CANONICALIZE_DEPTH {
        return Err(Error::new(ErrorKind::TooDeep, TOO_DEEP_MESSAGE));
    }
    match value {
        Value::Null | Value::Undefined | Value::Hole => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if !n.is_finite() => {
            return Err(Error::new(ErrorKind::NonFinite, NON_FINITE_MESSAGE))
        }
        Value::Number(n) => write_number(*n, out),
        Value::String(s) => write_json_string(s, out),
        Value::BigInt => return Err(Error::new(ErrorKind::BigInt, BIGINT_MESSAGE)),
        Value::Circular => return Err(Error::new(ErrorKind::Circular, CIRCULAR_MESSAGE)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                // A hole is skipped by the reference's `map` and joins as
                // nothing: `[1,,3]` (a reference quirk kept for parity).
                if !matches!(item, Value::Hole) {
                    write_canonical(item, depth + 1, out)?;
                }
            }
            out.push(']');
        }
        Value::Object(object) => {
            let entries: Vec<_> = object
                .iter()
                .filter(|(_, v)| !matches!(v, Value::Undefined))
                .collect();
            // Keys are unique, so an unstable sort gives the one order there is.
            let order = sorted_indices(entries.len(), &|a, b| entries[a].0.cmp_utf16(entries[b].0));
            out.push('{');
            for (i, (key, item)) in order.into_iter().map(|i| entries[i]).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(key, out);
                out.push(':');
                write_canonical(item, depth + 1, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, parse_lowered};

    fn canon(text: &str) -> Result<String> {
        canonicalize(&parse_lowered(text).unwrap())
    }

    #[test]
    fn js_only_values_follow_the_reference() {
        assert_eq!(canon("[undefined,hole,1,hole]").unwrap(), "[null,,1,]");
        assert_eq!(canon("{\"a\":undefined,\"b\":1}").unwrap(), "{\"b\":1}");
        assert_eq!(canon("undefined").unwrap(), "null");
        assert_eq!(canon("{\"b\":NaN,\"a\":bigint}").unwrap_err().kind(), ErrorKind::BigInt);
        assert_eq!(canon("[circular]").unwrap_err().message(), CIRCULAR_MESSAGE);
    }

    #[test]
    fn depth_is_checked_before_the_value() {
        let at = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        assert!(canonicalize(&parse(&at(64)).unwrap()).is_ok());
        assert_eq!(canonicalize(&parse(&at(65)).unwrap()).unwrap_err().kind(), ErrorKind::TooDeep);
        let empty = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert!(canonicalize(&parse(&empty).unwrap()).is_ok());
    }
}
