//! OpenAI Responses API items: `[{type: "function_call", call_id, name,
//! arguments}, {type: "function_call_output", call_id, output}, {type:
//! "message", role: "assistant", content: [{type: "output_text", text}]},
//! …]` — bare, or under `input` / `output`.
//!
//! A model turn is the run of output items (assistant messages, reasoning,
//! function calls) between input items; a `function_call_output` (or any
//! user/system/developer message) ends it. Outputs are matched to calls by
//! `call_id`. `custom_tool_call` (free-form `input`) and its
//! `custom_tool_call_output` are read the same way. A Codex rollout's
//! `token_count` event gives the tokens of the turn before it.
//!
//! A remote MCP tool's call (`mcp_call`: `name`, `arguments`, and its
//! `output`, or its `error` when it failed) is a call with its result in
//! one item; the API runs it and samples the model again with its output,
//! so each `mcp_call` ends its turn. The `mcp_list_tools` items before them
//! carry the tools' annotations, read by [`super::effects`].

use doom_loop::error::Result;
use doom_loop::json::Value;

use super::{at, call_from, content_text, get, invalid, output_value, string_field, Builder, Conversation, Resume};
use crate::transcript::TranscriptRound;

/// Item `type`s that mark a list as Responses items.
pub(crate) const ITEM_TYPES: &[&str] = &[
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "mcp_call",
    "mcp_list_tools",
    "reasoning",
    "message",
];

/// Of [`ITEM_TYPES`], those that carry a call or its result. A `message`
/// or `reasoning` item carries neither, and an Anthropic message object is
/// `"type": "message"` too (a Claude Code log line holding only a thinking
/// block): a list read as another format loses nothing to such an item.
pub(crate) const CALL_ITEM_TYPES: &[&str] = &[
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "mcp_call",
];

/// The rounds of a Responses item list.
///
/// # Errors
/// A `function_call` without `name`, named by its place (`items[5]`).
pub fn rounds(items: &[Value]) -> Result<Vec<TranscriptRound>> {
    Ok(conversation(items)?.rounds)
}

/// The rounds of a Responses item list with its user turns (a `role:
/// "user"` message item), as a gateway reads a request's `input`.
///
/// # Errors
/// As [`rounds`].
pub fn conversation(items: &[Value]) -> Result<Conversation> {
    Ok(conversation_from(items, &Resume::default())?.0)
}

/// [`conversation`] of the items that follow those read up to `from`,
/// and where reading them stopped (when nothing is left open).
///
/// # Errors
/// As [`conversation`], naming items by their place in `items`.
pub fn conversation_from(items: &[Value], from: &Resume) -> Result<(Conversation, Option<Resume>)> {
    let mut builder = Builder::resumed(from);
    for (i, item) in items.iter().enumerate() {
        item_into(&mut builder, item).map_err(|e| at(&format!("items[{i}]"), e))?;
    }
    builder.check_resumed()?;
    let resume = builder.resume(None);
    Ok((builder.finish_conversation(), resume))
}

fn item_into(builder: &mut Builder, item: &Value) -> Result<()> {
    let kind = string_field(item, &["type"]);
    let role = string_field(item, &["role"]);
    match kind.as_ref().map(|k| k.as_bytes()) {
        Some(b"function_call") | Some(b"custom_tool_call") => {
            let name = string_field(item, &["name"]).ok_or_else(|| invalid("a function_call has no `name`"))?;
            let args = get(item, "arguments").or_else(|| get(item, "input"));
            let id = string_field(item, &["call_id", "id"]);
            builder.call(call_from(name, args), id.as_ref());
        }
        Some(b"token_count") => {
            // Codex rollouts log each response's usage as an event after it.
            let last = get(item, "info").and_then(|info| get(info, "last_token_usage"));
            let number = |k: &str| last.and_then(|l| get(l, k)).and_then(Value::as_f64);
            builder.usage(
                number("total_tokens")
                    .or_else(|| Some(number("input_tokens")? + number("output_tokens").unwrap_or(0.0))),
            );
        }
        Some(b"function_call_output") | Some(b"custom_tool_call_output") => {
            builder.end_turn();
            let result = output_value(get(item, "output"));
            let matched = match string_field(item, &["call_id"]) {
                Some(id) => builder.result_by_id(&id, result.clone(), false),
                None => false,
            };
            if !matched {
                builder.result_in_order(None, result, false);
            }
        }
        Some(b"mcp_call") => mcp_call_into(builder, item)?,
        Some(b"reasoning") | Some(b"mcp_list_tools") => {}
        _ if role.as_ref().is_some_and(|r| r == "assistant") => {
            if let Some(text) = content_text(get(item, "content")) {
                builder.text(text);
            }
        }
        _ if role.as_ref().is_some_and(|r| r == "user") => builder.user_turn(),
        _ => builder.end_turn(),
    }
    Ok(())
}

/// A remote MCP call: the call with its output — or its `error`, a
/// failed call — and its turn's end (the API samples the model again with
/// the output).
fn mcp_call_into(builder: &mut Builder, item: &Value) -> Result<()> {
    let name = string_field(item, &["name"]).ok_or_else(|| invalid("an mcp_call has no `name`"))?;
    let mut call = call_from(name, get(item, "arguments"));
    match output_value(get(item, "error")) {
        Some(error) => {
            call.result = Some(error);
            call.failed = true;
        }
        None => call.result = output_value(get(item, "output")),
    }
    builder.call(call, string_field(item, &["id"]).as_ref());
    builder.end_turn();
    Ok(())
}
