//! Anthropic Messages: `[{role, content}]`, `content` a string or blocks.
//!
//! Each assistant message is one model turn: its `text` blocks are the
//! turn's text and its `tool_use` blocks (`{id, name, input}`) the calls —
//! `server_tool_use` and `mcp_tool_use` too. A user message's `tool_result`
//! block (`{tool_use_id, content, is_error?}`) answers the call with that
//! id: `content` (a string or text blocks) is the result and `is_error:
//! true` marks the call failed. A whole request body (`{model, messages}`)
//! or a single response Message is read as well. Consecutive assistant
//! messages with the same `id` are one turn (session logs such as Claude
//! Code's write one line per content block of a streamed message). A
//! message's `usage` (input, cache and output tokens) is the turn's tokens.

use doom_loop::error::Result;
use doom_loop::json::Value;

use super::{at, call_from, content_text, get, invalid, output_value, string_field, Builder, Conversation, Resume};
use crate::transcript::TranscriptRound;

/// The rounds of an Anthropic message list.
///
/// # Errors
/// A `tool_use` block without `name`, named by its place
/// (`messages[2].content[1]`).
pub fn rounds(messages: &[Value]) -> Result<Vec<TranscriptRound>> {
    Ok(conversation(messages)?.rounds)
}

/// The rounds of an Anthropic message list with its user turns (a user
/// message that answers no call: text, no `tool_result` block), as a
/// gateway reads a request.
///
/// # Errors
/// As [`rounds`].
pub fn conversation(messages: &[Value]) -> Result<Conversation> {
    Ok(conversation_from(messages, &Resume::default())?.0)
}

/// [`conversation`] of the messages that follow those read up to `from`,
/// and where reading them stopped (when nothing is left open).
///
/// # Errors
/// As [`conversation`], naming messages by their place in `messages`.
pub fn conversation_from(messages: &[Value], from: &Resume) -> Result<(Conversation, Option<Resume>)> {
    let mut builder = Builder::resumed(from);
    let mut previous_id = from.previous_id.clone();
    for (i, message) in messages.iter().enumerate() {
        let id = string_field(message, &["id"]);
        let continues = id.is_some() && id == previous_id;
        if is_user_turn(message) {
            builder.user_turn();
        }
        message_into(&mut builder, message, continues).map_err(|e| at(&format!("messages[{i}]"), e))?;
        previous_id = id;
    }
    builder.check_resumed()?;
    let resume = builder.resume(previous_id);
    Ok((builder.finish_conversation(), resume))
}

/// A user message that is the person's, not the tools': it answers no
/// call (agents such as Claude Code put reminders as text beside
/// `tool_result` blocks; those messages are the tools').
fn is_user_turn(message: &Value) -> bool {
    if !string_field(message, &["role"]).is_some_and(|r| r == "user") {
        return false;
    }
    match get(message, "content") {
        Some(Value::Array(blocks)) => {
            !blocks.is_empty() && !blocks.iter().any(|b| block_type(b).ends_with(b"tool_result"))
        }
        Some(Value::String(_)) => true,
        _ => false,
    }
}

fn block_type(block: &Value) -> Vec<u8> {
    string_field(block, &["type"])
        .map(|t| t.as_bytes().to_vec())
        .unwrap_or_default()
}

fn message_into(builder: &mut Builder, message: &Value, continues: bool) -> Result<()> {
    let assistant = string_field(message, &["role"]).is_some_and(|r| r == "assistant");
    let content = get(message, "content");
    if assistant && !continues {
        builder.end_turn();
        // A streamed message repeats its usage on every line: count it once.
        builder.usage(usage_tokens(get(message, "usage")));
    }
    let Some(Value::Array(blocks)) = content else {
        if assistant {
            if let Some(text) = content_text(content) {
                builder.text(text);
            }
        }
        return Ok(());
    };
    for (j, block) in blocks.iter().enumerate() {
        let kind = block_type(block);
        if kind.ends_with(b"tool_use") {
            let name = string_field(block, &["name"])
                .ok_or_else(|| invalid(format!("content[{j}]: a tool_use block has no `name`")))?;
            let id = string_field(block, &["id"]);
            builder.call(call_from(name, get(block, "input")), id.as_ref());
        } else if kind.ends_with(b"tool_result") {
            let result = output_value(get(block, "content"));
            let failed = matches!(get(block, "is_error"), Some(Value::Bool(true)));
            let matched = match string_field(block, &["tool_use_id"]) {
                Some(id) => builder.result_by_id(&id, result.clone(), failed),
                None => false,
            };
            if !matched {
                builder.result_in_order(None, result, failed);
            }
        } else if assistant && kind == b"text" {
            if let Some(text) = string_field(block, &["text"]).filter(|t| !t.is_empty()) {
                builder.text(text);
            }
        }
    }
    Ok(())
}

/// A message's tokens: input (cache reads and writes included) + output.
fn usage_tokens(usage: Option<&Value>) -> Option<f64> {
    let usage = usage?;
    let keys = [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    ];
    let counts: Vec<f64> = keys
        .iter()
        .filter_map(|k| get(usage, k).and_then(Value::as_f64))
        .collect();
    (!counts.is_empty()).then(|| counts.iter().sum())
}
