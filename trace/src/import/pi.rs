//! pi coding-agent sessions (`~/.pi/agent/sessions/<dir>/<time>_<id>.jsonl`)
//! and pi's `--mode json` event stream.
//!
//! Written from pi's session-format documentation: a session file is JSON
//! Lines, a header `{type: "session", version, id, cwd}` then entries
//! `{type, id, parentId, …}`; `{type: "message", message}` entries hold the
//! conversation. Entries form a tree (a user can branch a session in
//! place), so the run is the path from the last entry back to the root —
//! the branch the session ended on — and abandoned branches are left out.
//! Version 1 files have no ids and are read in order.
//!
//! Messages: `{role: "assistant", content: [{type: "text", text} |
//! {type: "thinking"} | {type: "toolCall", id, name, arguments}], usage?}`
//! is one model turn; `{role: "toolResult", toolCallId, toolName, content,
//! isError}` answers the call with that id (`isError: true` = failed).
//! In the `--mode json` stream the same messages arrive in
//! `message_end` events (`message_start` / `message_update` repeat them
//! while streaming and are skipped).

use std::collections::HashMap;

use doom_loop::error::Result;
use doom_loop::json::Value;

use super::{array, at, call_from, content_text, get, invalid, output_value, string_field, Builder};
use crate::transcript::TranscriptRound;

/// True when a parsed line is a pi session header.
pub(crate) fn is_session_header(line: &Value) -> bool {
    string_field(line, &["type"]).is_some_and(|t| t == "session") && get(line, "cwd").is_some()
}

/// True when a message list has pi's shapes: a `toolCall` content block
/// or a `toolResult` message.
pub(crate) fn is_pi(messages: &[Value]) -> bool {
    messages.iter().any(|m| {
        string_field(m, &["role"]).is_some_and(|r| r == "toolResult")
            || array(m, "content").is_some_and(|blocks| {
                blocks
                    .iter()
                    .any(|b| string_field(b, &["type"]).is_some_and(|t| t == "toolCall"))
            })
    })
}

/// The messages of a session file's lines, on the branch it ended on.
pub(crate) fn session_messages(lines: &[Value]) -> Vec<Value> {
    let entries: Vec<&Value> = lines.iter().filter(|l| !is_session_header(l)).collect();
    let branch = active_branch(&entries);
    branch.into_iter().filter_map(entry_message).collect()
}

/// The message an entry or stream event carries (`message` entries and
/// `message_end` events; the streaming repeats are skipped).
pub(crate) fn entry_message(entry: &Value) -> Option<Value> {
    let kind = string_field(entry, &["type"])?;
    (kind == "message" || kind == "message_end")
        .then(|| get(entry, "message").filter(|m| get(m, "role").is_some()).cloned())
        .flatten()
}

/// The entries from the root to the last entry, following `parentId`;
/// every entry, in order, when the file has no ids (version 1).
fn active_branch<'a>(entries: &[&'a Value]) -> Vec<&'a Value> {
    let id_of = |e: &Value| string_field(e, &["id"]).map(|id| id.as_bytes().to_vec());
    let by_id: HashMap<Vec<u8>, &Value> = entries.iter().filter_map(|e| Some((id_of(e)?, *e))).collect();
    let Some(mut current) = entries.last().copied().filter(|e| id_of(e).is_some()) else {
        return entries.to_vec();
    };
    let mut path = vec![current];
    // Bounded by the number of entries: a parent cycle cannot loop.
    while path.len() <= entries.len() {
        let parent = string_field(current, &["parentId"]).and_then(|p| by_id.get(p.as_bytes()).copied());
        match parent {
            Some(parent) => {
                path.push(parent);
                current = parent;
            }
            None => break,
        }
    }
    path.reverse();
    path
}

/// The rounds of a pi message list.
///
/// # Errors
/// A `toolCall` block without `name`, named by its place
/// (`messages[2].content[1]`).
pub fn rounds(messages: &[Value]) -> Result<Vec<TranscriptRound>> {
    let mut builder = Builder::default();
    for (i, message) in messages.iter().enumerate() {
        message_into(&mut builder, message).map_err(|e| at(&format!("messages[{i}]"), e))?;
    }
    Ok(builder.finish())
}

fn message_into(builder: &mut Builder, message: &Value) -> Result<()> {
    let role = string_field(message, &["role"])
        .map(|r| r.to_string())
        .unwrap_or_default();
    match role.as_str() {
        "assistant" => {
            builder.end_turn();
            for (j, block) in array(message, "content").unwrap_or_default().iter().enumerate() {
                match string_field(block, &["type"]).map(|t| t.to_string()).as_deref() {
                    Some("toolCall") => {
                        let name = string_field(block, &["name"])
                            .ok_or_else(|| invalid(format!("content[{j}]: a toolCall block has no `name`")))?;
                        let id = string_field(block, &["id"]);
                        builder.call(call_from(name, get(block, "arguments")), id.as_ref());
                    }
                    Some("text") => {
                        if let Some(text) = string_field(block, &["text"]).filter(|t| !t.is_empty()) {
                            builder.text(text);
                        }
                    }
                    _ => {}
                }
            }
            if let Some(Value::String(text)) = get(message, "content") {
                if !text.is_empty() {
                    builder.text(text.clone());
                }
            }
            if let Some(usage) = get(message, "usage") {
                let tokens = ["totalTokens", "total"]
                    .iter()
                    .find_map(|k| get(usage, k).and_then(Value::as_f64));
                builder.usage(tokens.or_else(|| {
                    Some(get(usage, "input")?.as_f64()? + get(usage, "output").and_then(Value::as_f64).unwrap_or(0.0))
                }));
            }
        }
        "toolResult" => {
            let result = output_value(get(message, "content"))
                .or_else(|| content_text(get(message, "content")).map(Value::String));
            let failed = matches!(get(message, "isError"), Some(Value::Bool(true)));
            let matched = match string_field(message, &["toolCallId"]) {
                Some(id) => builder.result_by_id(&id, result.clone(), failed),
                None => false,
            };
            if !matched {
                let name = string_field(message, &["toolName"]);
                builder.result_in_order(name.as_ref(), result, failed);
            }
        }
        _ => builder.end_turn(),
    }
    Ok(())
}
