//! Files that are logs but not transcripts, recognised so that the error
//! says what the file is instead of listing every shape it is not.
//!
//! - Aider's `.aider.chat.history.md` is Markdown: Aider records no
//!   structured tool calls (its edits are SEARCH/REPLACE blocks inside the
//!   model's text), so there is nothing to replay.
//! - An OpenTelemetry span dump (OTLP JSON `{resourceSpans: …}`, or one span
//!   per line with `traceId`/`spanId` or `context.span_id`) holds spans, not
//!   a conversation.
//! - Gemini CLI's `logs.json` lists the user's prompts (`{sessionId,
//!   messageId, type, message}`); the sessions are its `chats/` files.

use doom_loop::json::Value;

use super::get;

/// What a text that is not JSON is, when it is a log we know.
pub(crate) fn describe_text(text: &str) -> Option<String> {
    let start = text.trim_start();
    if start.starts_with("# aider chat started at") {
        return Some(
            "an Aider chat history (Markdown): Aider logs no structured tool calls (its edits are \
             SEARCH/REPLACE blocks in the model's text), so there is nothing to replay"
                .to_string(),
        );
    }
    if start.starts_with('#') || start.starts_with("---\n") {
        return Some("Markdown, not JSON or JSON Lines: no tool calls to read".to_string());
    }
    None
}

/// What a parsed document or line is, when it is a span dump.
pub(crate) fn describe_value(value: &Value) -> Option<String> {
    let span = |v: &Value| {
        (get(v, "traceId").is_some() && get(v, "spanId").is_some())
            || get(v, "context").is_some_and(|c| get(c, "span_id").is_some())
    };
    let is_dump = get(value, "resourceSpans").is_some()
        || span(value)
        || matches!(value, Value::Array(items) if !items.is_empty() && items.iter().all(span));
    if is_dump {
        return Some(
            "an OpenTelemetry span dump: spans are not read as a transcript (export the conversation, \
             or the agent's own session log, instead)"
                .to_string(),
        );
    }
    let prompt = |v: &Value| get(v, "sessionId").is_some() && get(v, "messageId").is_some();
    matches!(value, Value::Array(items) if !items.is_empty() && items.iter().all(prompt)).then(|| {
        "a Gemini CLI prompt log (logs.json): it holds the user's prompts only; the sessions are the \
         chats/session-*.json files beside it"
            .to_string()
    })
}
