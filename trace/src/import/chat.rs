//! OpenAI chat messages: `[{role, content, tool_calls?}]`.
//!
//! Each assistant message is one model turn: its `content` is the turn's
//! text and its `tool_calls[]` (`{id, type: "function", function: {name,
//! arguments}}`, `arguments` a JSON string) the calls. A `role: "tool"`
//! message answers the call whose `id` is its `tool_call_id`; its `content`
//! (a string or text parts) is that call's result. The legacy single
//! `function_call` and its `role: "function"` answer (matched by `name`)
//! are read too. Chat results carry no error flag: `failed` stays false.

use doom_loop::error::Result;
use doom_loop::json::Value;

use super::{
    array, at, call_from, content_text, get, invalid, output_value, string_field, Builder, Conversation, Resume,
};
use crate::transcript::TranscriptRound;

/// The rounds of a chat message list.
///
/// # Errors
/// A tool call without a function name, named by its place
/// (`messages[4].tool_calls[1]`).
pub fn rounds(messages: &[Value]) -> Result<Vec<TranscriptRound>> {
    Ok(conversation(messages)?.rounds)
}

/// The rounds of a chat message list with its user turns (a `role:
/// "user"` message), as a gateway reads a request.
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
/// As [`rounds`], naming messages by their place in `messages`.
pub fn conversation_from(messages: &[Value], from: &Resume) -> Result<(Conversation, Option<Resume>)> {
    let mut builder = Builder::resumed(from);
    for (i, message) in messages.iter().enumerate() {
        message_into(&mut builder, message).map_err(|e| at(&format!("messages[{i}]"), e))?;
    }
    builder.check_resumed()?;
    let resume = builder.resume(None);
    Ok((builder.finish_conversation(), resume))
}

fn message_into(builder: &mut Builder, message: &Value) -> Result<()> {
    let role = string_field(message, &["role"]);
    match role.as_ref().map(|r| r.as_bytes()) {
        Some(b"assistant") => {
            builder.end_turn();
            if let Some(text) = content_text(get(message, "content")) {
                builder.text(text);
            }
            for (j, call) in array(message, "tool_calls").unwrap_or_default().iter().enumerate() {
                let function = get(call, "function").unwrap_or(call);
                let name = string_field(function, &["name"])
                    .ok_or_else(|| invalid(format!("tool_calls[{j}] has no function `name`")))?;
                let id = string_field(call, &["id"]);
                builder.call(call_from(name, get(function, "arguments")), id.as_ref());
            }
            if let Some(function) = get(message, "function_call").filter(|f| f.as_object().is_some()) {
                let name = string_field(function, &["name"]).ok_or_else(|| invalid("function_call has no `name`"))?;
                builder.call(call_from(name, get(function, "arguments")), None);
            }
            builder.end_turn();
        }
        Some(b"tool") => {
            let result = output_value(get(message, "content"));
            let matched = match string_field(message, &["tool_call_id"]) {
                Some(id) => builder.result_by_id(&id, result.clone(), false),
                None => false,
            };
            if !matched {
                builder.result_in_order(None, result, false);
            }
        }
        Some(b"function") => {
            let name = string_field(message, &["name"]);
            builder.result_in_order(name.as_ref(), output_value(get(message, "content")), false);
        }
        Some(b"user") => builder.user_turn(),
        _ => builder.end_turn(),
    }
    Ok(())
}
