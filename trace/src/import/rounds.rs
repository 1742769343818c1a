//! The project's own rounds format: `{doomLoop?, loopKeys?, rounds: [{text?,
//! calls: [{toolName, args, result?, error?}], results?, tokens?}]}`.
//!
//! A call's `result` is any JSON value and `error: true` marks a failed
//! call; a round-level `results` array (the shared trajectory layout) gives
//! the results by position instead. `null` and absent both mean "not
//! recorded". `tokens` is what the turn cost in model tokens.

use doom_loop::error::Result;
use doom_loop::json::Value;

use super::{at, call_from, get, invalid, string_field};
use crate::transcript::TranscriptRound;

/// The rounds of a rounds-format document.
///
/// # Errors
/// A malformed round or call, named by its index (`rounds[3]: calls[0] has
/// no toolName`).
pub fn rounds(document: &Value) -> Result<Vec<TranscriptRound>> {
    match get(document, "rounds") {
        Some(Value::Array(rounds)) => rounds
            .iter()
            .enumerate()
            .map(|(i, r)| round(r).map_err(|e| at(&format!("rounds[{i}]"), e)))
            .collect(),
        _ => Err(invalid("`rounds` is not an array")),
    }
}

fn known(value: Option<&Value>) -> Option<Value> {
    value.filter(|v| !matches!(v, Value::Null | Value::Undefined)).cloned()
}

fn round(round: &Value) -> Result<TranscriptRound> {
    if round.as_object().is_none() {
        return Err(invalid(format!("a round is an object, not {}", super::kind_of(round))));
    }
    let text = string_field(round, &["text"]);
    let results = match get(round, "results") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(results)) => &results[..],
        Some(_) => return Err(invalid("`results` is not an array")),
    };
    let calls = match get(round, "calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let name = string_field(c, &["toolName", "name"])
                    .ok_or_else(|| invalid(format!("calls[{i}] has no `toolName`")))?;
                let mut call = call_from(name, get(c, "args").or_else(|| get(c, "arguments")));
                call.result = known(get(c, "result")).or_else(|| known(results.get(i)));
                call.failed = matches!(get(c, "error"), Some(Value::Bool(true)));
                Ok(call)
            })
            .collect::<Result<Vec<_>>>()?,
        Some(_) => return Err(invalid("`calls` is not an array")),
    };
    let tokens = get(round, "tokens")
        .and_then(Value::as_f64)
        .filter(|t| t.is_finite() && *t >= 0.0);
    Ok(TranscriptRound {
        text,
        calls,
        tokens,
        after_user: false,
    })
}
