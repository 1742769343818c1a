//! Gemini CLI logs: the `--output-format stream-json` event stream and the
//! chat files it saves under `~/.gemini/tmp/<project>/chats/`.
//!
//! Written from the CLI's headless-mode documentation and its
//! `ChatRecordingService` types:
//!
//! - **stream-json** (one event per line): `{type: "init", session_id,
//!   model}`, `{type: "message", role, content, delta?}`, `{type:
//!   "tool_use", tool_name, tool_id, parameters}`, `{type: "tool_result",
//!   tool_id, status: "success" | "error", output?, error?}`, `{type:
//!   "result", stats}`. The stream does not mark model turns, so a turn is
//!   what the model emits between two batches of tool results: assistant
//!   text and `tool_use` events up to the next `tool_result` (parallel calls
//!   of one response come before any of their results). A `tool_result`
//!   with `status: "error"` is a failed call.
//! - **chat file**: `{sessionId, projectHash, startTime, lastUpdated,
//!   messages: [{id, timestamp, type: "user" | "gemini" | "info" | …,
//!   content, toolCalls?: [{id, name, args, result?, status,
//!   resultDisplay?}], tokens?}]}`. Each `gemini` message is one turn: its
//!   `content` the text, its `toolCalls` the calls, each with its own
//!   result (the `functionResponse` parts of `result`, else
//!   `resultDisplay`); `status: "error"` marks a call failed.

use doom_loop::error::Result;
use doom_loop::json::Value;

use super::{array, at, call_from, content_text, get, invalid, output_value, string_field, Builder};
use crate::transcript::TranscriptRound;

/// Event `type`s of the stream-json output.
const STREAM_TYPES: &[&str] = &["init", "message", "tool_use", "tool_result", "result", "error"];

/// True when a list of events is Gemini CLI stream-json: every item is one
/// of its event types and a `tool_use` event names its tool the CLI's way.
pub(crate) fn is_stream(items: &[Value]) -> bool {
    let typed = |item: &Value| string_field(item, &["type"]).is_some_and(|t| STREAM_TYPES.iter().any(|k| t == *k));
    items.iter().all(typed)
        && items.iter().any(|item| {
            string_field(item, &["type"]).is_some_and(|t| t == "tool_use" || t == "init")
                && (get(item, "tool_name").is_some() || get(item, "session_id").is_some())
        })
}

/// True when a message list is a Gemini CLI chat file's: messages typed
/// `user` / `gemini` (no `role`), the model's under `gemini`.
pub(crate) fn is_chat(messages: &[Value]) -> bool {
    !messages.is_empty()
        && messages
            .iter()
            .all(|m| get(m, "role").is_none() && string_field(m, &["type"]).is_some())
        && messages
            .iter()
            .any(|m| string_field(m, &["type"]).is_some_and(|t| t == "gemini"))
}

/// The rounds of a stream-json event list.
///
/// # Errors
/// A `tool_use` event without `tool_name`, named by its place (`events[4]`).
pub fn stream_rounds(events: &[Value]) -> Result<Vec<TranscriptRound>> {
    let mut builder = Builder::default();
    let mut after_results = false;
    for (i, event) in events.iter().enumerate() {
        event_into(&mut builder, event, &mut after_results).map_err(|e| at(&format!("events[{i}]"), e))?;
    }
    Ok(builder.finish())
}

fn event_into(builder: &mut Builder, event: &Value, after_results: &mut bool) -> Result<()> {
    let kind = string_field(event, &["type"])
        .map(|t| t.to_string())
        .unwrap_or_default();
    let mut model_output = |builder: &mut Builder| {
        if std::mem::take(after_results) {
            builder.end_turn();
        }
    };
    match kind.as_str() {
        "message" => {
            let role = string_field(event, &["role"]);
            if role.as_ref().is_some_and(|r| r == "assistant") {
                model_output(builder);
                if let Some(text) = content_text(get(event, "content")) {
                    // `delta: true` events are chunks of one message.
                    if matches!(get(event, "delta"), Some(Value::Bool(true))) {
                        builder.append_text(text);
                    } else {
                        builder.text(text);
                    }
                }
            } else {
                builder.end_turn();
                *after_results = false;
            }
        }
        "tool_use" => {
            model_output(builder);
            let name =
                string_field(event, &["tool_name"]).ok_or_else(|| invalid("a tool_use event has no `tool_name`"))?;
            let id = string_field(event, &["tool_id"]);
            builder.call(call_from(name, get(event, "parameters")), id.as_ref());
        }
        "tool_result" => {
            *after_results = true;
            let failed = string_field(event, &["status"]).is_some_and(|s| s == "error");
            let result = output_value(get(event, "output")).or_else(|| get(event, "error").cloned());
            let matched = match string_field(event, &["tool_id"]) {
                Some(id) => builder.result_by_id(&id, result.clone(), failed),
                None => false,
            };
            if !matched {
                builder.result_in_order(None, result, failed);
            }
        }
        _ => {}
    }
    Ok(())
}

/// The rounds of a chat file's message list.
///
/// # Errors
/// A tool call without `name`, named by its place (`messages[3].toolCalls[0]`).
pub fn chat_rounds(messages: &[Value]) -> Result<Vec<TranscriptRound>> {
    let mut builder = Builder::default();
    for (i, message) in messages.iter().enumerate() {
        if string_field(message, &["type"]).is_none_or(|t| t != "gemini") {
            continue;
        }
        builder.end_turn();
        if let Some(text) = content_text(get(message, "content")) {
            builder.text(text);
        }
        for (j, call) in array(message, "toolCalls").unwrap_or_default().iter().enumerate() {
            let name = string_field(call, &["name"])
                .ok_or_else(|| invalid(format!("messages[{i}].toolCalls[{j}]: a tool call has no `name`")))?;
            let mut recorded = call_from(name, get(call, "args"));
            recorded.result = chat_result(call);
            recorded.failed = string_field(call, &["status"]).is_some_and(|s| s == "error");
            builder.call(recorded, None);
        }
        if let Some(tokens) = get(message, "tokens") {
            builder.usage(total_tokens(tokens));
        }
        builder.end_turn();
    }
    Ok(builder.finish())
}

/// A chat file's call result: the `response` of its `functionResponse`
/// parts (the output the model read), else what the CLI displayed.
fn chat_result(call: &Value) -> Option<Value> {
    let parts = match get(call, "result") {
        Some(Value::Array(parts)) => parts.as_slice(),
        Some(part @ Value::Object(_)) => std::slice::from_ref(part),
        _ => &[],
    };
    let responses: Vec<Value> = parts
        .iter()
        .filter_map(|p| get(p, "functionResponse").and_then(|r| get(r, "response")).cloned())
        .collect();
    match responses.len() {
        0 => output_value(get(call, "resultDisplay")),
        1 => responses.into_iter().next(),
        _ => Some(Value::Array(responses)),
    }
}

/// A message's token count: `total`, else input + output.
fn total_tokens(tokens: &Value) -> Option<f64> {
    let number = |k: &str| get(tokens, k).and_then(Value::as_f64);
    number("total").or_else(|| Some(number("input")? + number("output").unwrap_or(0.0)))
}
