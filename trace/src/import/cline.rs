//! Cline and Roo Code task files: `ui_messages.json` (what the extension
//! shows) and `api_conversation_history.json` (what the model was sent).
//!
//! Written from their `ClineMessage` / `ClineSayTool` types and their
//! prompt formats:
//!
//! - **`ui_messages.json`**: `[{ts, type: "say" | "ask", say?, ask?, text?,
//!   partial?}]`. `say: "api_req_started"` opens a model turn. Calls are
//!   `tool` messages (`text` is JSON `{tool: "readFile" | "editedExistingFile"
//!   | …, path, …}`, the tool and its identity), `command` (the command
//!   line; tool `execute_command`), `use_mcp_server` (`{serverName,
//!   toolName, arguments}`) and `browser_action` / `browser_action_launch`.
//!   `command_output`, `mcp_server_response` and `browser_action_result`
//!   are the result of the call before them; the file tools' results are
//!   not in this file (they are in the conversation history). Streaming
//!   leftovers (`partial: true`) are skipped.
//! - **`api_conversation_history.json`**: Anthropic messages. Calls are
//!   `tool_use` blocks or, in the XML tool format, `<tool_name>` elements in
//!   the assistant's text with one child element per parameter. Results
//!   come back as user text blocks headed `[tool_name for '…'] Result:` (or
//!   `[tool_name] Result:`), the result text following the header in that
//!   block and the next ones; an `<error>` answer or "The tool execution
//!   failed" marks the call failed.

use doom_loop::error::Result;
use doom_loop::js_string::JsString;
use doom_loop::json::{parse_js, Object, Value};

use super::{array, at, call_from, get, string_field, Builder};
use crate::transcript::TranscriptRound;

/// `say` / `ask` values that are tool calls.
const CALLS: &[&str] = &[
    "tool",
    "command",
    "use_mcp_server",
    "browser_action",
    "browser_action_launch",
];

/// `say` / `ask` values that carry the result of the call before them.
const RESULTS: &[&str] = &["command_output", "mcp_server_response", "browser_action_result"];

/// The tool names of Cline's and Roo Code's XML tool format.
const XML_TOOLS: &[&str] = &[
    "read_file",
    "write_to_file",
    "replace_in_file",
    "apply_diff",
    "insert_content",
    "search_and_replace",
    "execute_command",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "codebase_search",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "ask_followup_question",
    "attempt_completion",
    "new_task",
    "plan_mode_respond",
    "switch_mode",
    "update_todo_list",
    "fetch_instructions",
    "web_fetch",
    "load_mcp_documentation",
    "new_rule",
    "condense",
    "report_bug",
];

/// True when a list is a `ui_messages.json`: every item a `say` / `ask`
/// message with a timestamp.
pub(crate) fn is_ui_messages(items: &[Value]) -> bool {
    !items.is_empty()
        && items.iter().all(|item| {
            get(item, "ts").is_some() && string_field(item, &["type"]).is_some_and(|t| t == "say" || t == "ask")
        })
}

/// True when a message list answers tools with Cline's `[tool] Result:`
/// text blocks.
pub(crate) fn is_history(messages: &[Value]) -> bool {
    messages.iter().any(|m| {
        string_field(m, &["role"]).is_some_and(|r| r == "user")
            && text_blocks(m).iter().any(|t| result_header(t).is_some())
    })
}

fn kind(message: &Value) -> Option<String> {
    let field = if string_field(message, &["type"]).is_some_and(|t| t == "ask") {
        "ask"
    } else {
        "say"
    };
    string_field(message, &[field]).map(|k| k.to_string())
}

/// The rounds of a `ui_messages.json`.
///
/// # Errors
/// Never for a list the importer recognises as a `ui_messages.json`
/// (every item a `say` / `ask` message with a timestamp); the signature
/// matches the other importers.
pub fn ui_rounds(items: &[Value]) -> Result<Vec<TranscriptRound>> {
    let mut builder = Builder::default();
    let mut pending_output: Option<JsString> = None;
    // Outputs answer the call just before them (the file tools' results are
    // not in this file, so "the oldest unanswered call" would be wrong).
    let mut last_call: Option<JsString> = None;
    for item in items {
        if matches!(get(item, "partial"), Some(Value::Bool(true))) {
            continue;
        }
        let Some(kind) = kind(item) else { continue };
        let text = string_field(item, &["text"]).unwrap_or_default();
        match kind.as_str() {
            "api_req_started" => {
                flush_output(&mut builder, &mut pending_output, last_call.as_ref());
                builder.end_turn();
                if let Ok(info) = parse_js(&text) {
                    let tokens = ["tokensIn", "tokensOut"]
                        .iter()
                        .filter_map(|k| get(&info, k).and_then(Value::as_f64))
                        .sum::<f64>();
                    builder.usage((tokens > 0.0).then_some(tokens));
                }
            }
            "text" if !text.is_empty() => builder.text(text),
            k if CALLS.contains(&k) => {
                flush_output(&mut builder, &mut pending_output, last_call.as_ref());
                let (name, args) = ui_call(k, &text);
                last_call = Some(name.clone());
                builder.call(call_from(name, Some(&args)), None);
            }
            k if RESULTS.contains(&k) => {
                let output = pending_output.get_or_insert_with(JsString::new);
                if !output.is_empty() {
                    output.push_str("\n");
                }
                output.push_js(&text);
            }
            _ => {}
        }
    }
    flush_output(&mut builder, &mut pending_output, last_call.as_ref());
    Ok(builder.finish())
}

fn flush_output(builder: &mut Builder, output: &mut Option<JsString>, tool: Option<&JsString>) {
    if let Some(text) = output.take() {
        builder.result_in_order(tool, Some(Value::String(text)), false);
    }
}

/// A UI call's tool and identity.
fn ui_call(kind: &str, text: &JsString) -> (JsString, Value) {
    let parsed = parse_js(text).ok().filter(|v| v.as_object().is_some());
    match (kind, parsed) {
        ("tool", Some(tool)) => {
            let name = string_field(&tool, &["tool"]).unwrap_or_else(|| JsString::from("tool"));
            (name, tool)
        }
        ("use_mcp_server", Some(request)) => {
            let name = string_field(&request, &["toolName", "uri"]).unwrap_or_else(|| JsString::from("use_mcp_server"));
            let args = match get(&request, "arguments") {
                Some(Value::String(raw)) => parse_js(raw).unwrap_or(Value::String(raw.clone())),
                Some(other) => other.clone(),
                None => request.clone(),
            };
            (name, args)
        }
        ("command", _) => (JsString::from("execute_command"), single("command", text)),
        (kind, Some(other)) => (JsString::from(kind), other),
        (kind, None) => (JsString::from(kind), single("text", text)),
    }
}

fn single(key: &str, value: &JsString) -> Value {
    let mut object = Object::new();
    object.insert(JsString::from(key), Value::String(value.clone()));
    Value::Object(object)
}

/// The text of a message's text blocks (a string content is one block).
fn text_blocks(message: &Value) -> Vec<JsString> {
    match get(message, "content") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| string_field(b, &["type"]).is_none_or(|t| t == "text"))
            .filter_map(|b| string_field(b, &["text"]))
            .collect(),
        _ => Vec::new(),
    }
}

/// `[read_file for 'a.ts'] Result:` → (`read_file`, the text after the header).
fn result_header(text: &JsString) -> Option<(String, String)> {
    let text = text.to_utf8_lossy();
    let rest = text.trim_start().strip_prefix('[')?;
    let close = rest.find(']')?;
    let inside = &rest[..close];
    let after = rest[close + 1..].trim_start().strip_prefix("Result:")?;
    let tool = inside.split(" for ").next()?.trim();
    (!tool.is_empty() && tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .then(|| (tool.to_string(), after.trim_start_matches([' ', '\n']).to_string()))
}

/// The rounds of an `api_conversation_history.json`.
///
/// # Errors
/// A `tool_use` block without `name`, named by its place.
pub fn history_rounds(messages: &[Value]) -> Result<Vec<TranscriptRound>> {
    let mut builder = Builder::default();
    for (i, message) in messages.iter().enumerate() {
        history_message_into(&mut builder, message).map_err(|e| at(&format!("messages[{i}]"), e))?;
    }
    Ok(builder.finish())
}

fn history_message_into(builder: &mut Builder, message: &Value) -> Result<()> {
    let role = string_field(message, &["role"])
        .map(|r| r.to_string())
        .unwrap_or_default();
    if role == "assistant" {
        builder.end_turn();
        let mut native = false;
        for (j, block) in array(message, "content").unwrap_or_default().iter().enumerate() {
            if string_field(block, &["type"]).is_some_and(|t| t == "tool_use") {
                native = true;
                let name = string_field(block, &["name"])
                    .ok_or_else(|| super::invalid(format!("content[{j}]: a tool_use block has no `name`")))?;
                builder.call(
                    call_from(name, get(block, "input")),
                    string_field(block, &["id"]).as_ref(),
                );
            }
        }
        for text in text_blocks(message) {
            builder.text(text.clone());
            if !native {
                for (name, args) in xml_calls(&text.to_utf8_lossy()) {
                    builder.call(call_from(JsString::from(name.as_str()), Some(&args)), None);
                }
            }
        }
        return Ok(());
    }
    // A user message: results, as `tool_result` blocks or as headed text.
    if let Some(Value::Array(blocks)) = get(message, "content") {
        for block in blocks {
            if string_field(block, &["type"]).is_some_and(|t| t == "tool_result") {
                let result = super::output_value(get(block, "content"));
                let failed = matches!(get(block, "is_error"), Some(Value::Bool(true)));
                let id = string_field(block, &["tool_use_id"]);
                if !id.is_some_and(|id| builder.result_by_id(&id, result.clone(), failed)) {
                    builder.result_in_order(None, result, failed);
                }
            }
        }
    }
    let mut current: Option<(String, String)> = None;
    for text in text_blocks(message) {
        if let Some(header) = result_header(&text) {
            finish_result(builder, current.take());
            current = Some(header);
        } else if let Some((_, body)) = current.as_mut() {
            if text.to_utf8_lossy().trim_start().starts_with("<environment_details>") {
                finish_result(builder, current.take());
                continue;
            }
            if !body.is_empty() {
                body.push('\n');
            }
            body.push_str(&text.to_utf8_lossy());
        }
    }
    finish_result(builder, current);
    Ok(())
}

fn finish_result(builder: &mut Builder, result: Option<(String, String)>) {
    let Some((tool, body)) = result else { return };
    let failed = body.trim_start().starts_with("<error>") || body.contains("The tool execution failed");
    let name = JsString::from(tool.as_str());
    let value = Some(Value::String(JsString::from(body.as_str())));
    if !builder.result_in_order(Some(&name), value.clone(), failed) {
        builder.result_in_order(None, value, failed);
    }
}

/// The XML tool calls in an assistant text: `<tool><param>value</param>…</tool>`
/// for the known tool names, in order.
fn xml_calls(text: &str) -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find('<').map(|i| from + i) {
        let Some(end) = text[open..].find('>').map(|i| open + i) else {
            break;
        };
        let tag = &text[open + 1..end];
        let closing = format!("</{tag}>");
        match XML_TOOLS
            .contains(&tag)
            .then(|| text[end + 1..].find(&closing))
            .flatten()
        {
            Some(length) => {
                let body = &text[end + 1..end + 1 + length];
                calls.push((tag.to_string(), xml_params(body)));
                from = end + 1 + length + closing.len();
            }
            None => from = open + 1,
        }
    }
    calls
}

/// `<path>a.ts</path><line>3</line>` → `{"path": "a.ts", "line": "3"}`.
fn xml_params(body: &str) -> Value {
    let mut params = Object::new();
    let mut from = 0;
    while let Some(open) = body[from..].find('<').map(|i| from + i) {
        let Some(end) = body[open..].find('>').map(|i| open + i) else {
            break;
        };
        let name = &body[open + 1..end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            from = open + 1;
            continue;
        }
        let closing = format!("</{name}>");
        match body[end + 1..].find(&closing) {
            Some(length) => {
                let value = body[end + 1..end + 1 + length].trim_matches('\n');
                params.insert(JsString::from(name), Value::String(JsString::from(value)));
                from = end + 1 + length + closing.len();
            }
            None => from = end + 1,
        }
    }
    Value::Object(params)
}
