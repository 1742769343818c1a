//! Gemini `contents`: `[{role: "user" | "model", parts: [{text} |
//! {functionCall: {name, args, id?}} | {functionResponse: {name, response,
//! id?}}]}]` — bare, or under `contents` (a `generateContent` request).
//!
//! Each `model` content is one turn: its `text` parts (thoughts excluded)
//! are the turn's text and its `functionCall` parts the calls. A
//! `functionResponse` answers the call with the same `id`, or else the
//! oldest unanswered call of the same `name` (responses come back in call
//! order). Its `response` object is the result; per the API, a response
//! holding `error` (and no `output`) is a failed call. The SDKs'
//! snake_case spellings (`function_call`, `function_response`) are read too.

use doom_loop::error::Result;
use doom_loop::json::Value;

use super::{array, at, call_from, get, invalid, string_field, Builder};
use crate::transcript::TranscriptRound;

/// The rounds of a Gemini content list.
///
/// # Errors
/// A `functionCall` without `name`, named by its place
/// (`contents[3].parts[0]`).
pub fn rounds(contents: &[Value]) -> Result<Vec<TranscriptRound>> {
    let mut builder = Builder::default();
    for (i, content) in contents.iter().enumerate() {
        content_into(&mut builder, content).map_err(|e| at(&format!("contents[{i}]"), e))?;
    }
    Ok(builder.finish())
}

fn content_into(builder: &mut Builder, content: &Value) -> Result<()> {
    let model = string_field(content, &["role"]).is_some_and(|r| r == "model" || r == "assistant");
    if model {
        builder.end_turn();
    }
    for (j, part) in array(content, "parts").unwrap_or_default().iter().enumerate() {
        if let Some(call) = get(part, "functionCall").or_else(|| get(part, "function_call")) {
            let name = string_field(call, &["name"])
                .ok_or_else(|| invalid(format!("parts[{j}]: a functionCall has no `name`")))?;
            let id = string_field(call, &["id"]);
            builder.call(call_from(name, get(call, "args")), id.as_ref());
        } else if let Some(response) = get(part, "functionResponse").or_else(|| get(part, "function_response")) {
            let result = get(response, "response").filter(|r| !matches!(r, Value::Null)).cloned();
            let failed = result
                .as_ref()
                .is_some_and(|r| get(r, "error").is_some() && get(r, "output").is_none());
            let matched = match string_field(response, &["id"]) {
                Some(id) => builder.result_by_id(&id, result.clone(), failed),
                None => false,
            };
            if !matched {
                let name = string_field(response, &["name"]);
                builder.result_in_order(name.as_ref(), result, failed);
            }
        } else if model && !matches!(get(part, "thought"), Some(Value::Bool(true))) {
            if let Some(text) = string_field(part, &["text"]).filter(|t| !t.is_empty()) {
                builder.text(text);
            }
        }
    }
    if model {
        builder.end_turn();
    }
    Ok(())
}
