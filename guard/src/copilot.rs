//! GitHub Copilot CLI (`@github/copilot`): its hook events read into the
//! one [`Event`] shape, its answers, and its hooks file.
//!
//! Copilot runs the commands of every `*.json` file in `.github/hooks/`
//! (the repository's, in a folder the user trusts) and in
//! `$COPILOT_HOME/hooks/` (else `~/.copilot/hooks/`, the user's), each of
//! the shape `{"version": 1, "hooks": {EVENT: [{"type": "command", "bash":
//! COMMAND}]}}`. An event configured by its PascalCase name (`PreToolUse`)
//! gets the "VS Code compatible" payload — `hook_event_name`, `session_id`,
//! `tool_name` (`Bash`), `tool_input`, `tool_result.text_result_for_llm` —
//! and one configured in camelCase (`preToolUse`) gets `sessionId`,
//! `toolName` (`bash`), `toolArgs`, `toolResult.textResultForLlm` and no
//! event name; `permissionRequest` always gets the camelCase one, with
//! `hookName`. The installer writes the PascalCase names; both are read
//! (the camelCase events told apart by their fields), as Copilot CLI 1.0.102
//! sends them. No event carries a call id.
//!
//! What Copilot lacks, and how the hook makes do (docs/coding-agents.md):
//! no event marks the end of a model response, so a round is the calls
//! stamped with one `timestamp` (Copilot gives every `PreToolUse` of one
//! response the same), else — a payload without one — the calls that run
//! together; and `PreToolUse` cannot end a session, but
//! a `permissionRequest` answer of `interrupt: true` does — so a stop is
//! delivered there for the tools Copilot asks permission for, and refused
//! at `PreToolUse` for the others.

use std::path::{Path, PathBuf};

use doom_loop::json::{parse, Object, Value};
use doom_loop::JsString;

use crate::event::{Event, Kind};
use crate::install::Scope;

/// The events the installer registers: the calls, their results (a failed
/// call has its own event), where a stop can end the session, and the
/// user's prompts (a new turn lifts a stop).
pub const EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "UserPromptSubmit",
];

/// The file the installer writes (its own file: Copilot reads every
/// `*.json` of the hooks directory).
pub const HOOKS_FILE: &str = "doom-loop.json";

/// Copilot's shell tools (`Bash` in PascalCase payloads, `bash` in
/// camelCase ones, `powershell` on Windows) and the arguments that make a
/// shell call what it is: its command and how it runs — not the
/// `description` the model rewords, the `shellId` it names, or how long it
/// waits for output (`initial_wait`).
pub const SHELL_TOOLS: &[&str] = &["Bash", "bash", "powershell"];
/// See [`SHELL_TOOLS`].
pub const SHELL_KEYS: &[&str] = &["command", "mode", "detach"];

fn text(object: &Object, key: &str) -> Option<String> {
    object
        .get(key)
        .and_then(Value::as_js_string)
        .map(|s| s.to_utf8_lossy().into_owned())
}

/// The event's name: `hook_event_name` when Copilot sends one, else the
/// PascalCase name of the camelCase event its fields make it.
pub fn event_name(object: &Object) -> String {
    if let Some(name) = text(object, "hook_event_name") {
        return name;
    }
    if text(object, "hookName").as_deref() == Some("permissionRequest") {
        return "PermissionRequest".into();
    }
    let has = |key: &str| object.get(key).is_some();
    let name = if has("toolResult") {
        "PostToolUse"
    } else if has("toolName") && has("error") {
        "PostToolUseFailure"
    } else if has("toolName") {
        "PreToolUse"
    } else if has("prompt") {
        "UserPromptSubmit"
    } else if has("source") {
        "SessionStart"
    } else {
        "unknown"
    };
    name.into()
}

/// Copilot's shell tool ends its output with the shell it ran in
/// (`<shellId: 3 completed with exit code 1>`), a new one at every call, so
/// the same command with the same output would never repeat an outcome:
/// the id is dropped, the exit code kept.
pub fn without_shell_ids(output: &Value) -> Value {
    let Value::String(text) = output else {
        return output.clone();
    };
    let text = text.to_utf8_lossy();
    if !text.contains("<shellId: ") {
        return output.clone();
    }
    let kept: Vec<String> = text
        .split('\n')
        .map(|line| match line.strip_prefix("<shellId: ") {
            Some(rest) => format!("<{}", rest.split_once(' ').map_or("", |(_, after)| after)),
            None => line.to_string(),
        })
        .collect();
    Value::String(kept.join("\n").as_str().into())
}

/// Reads an event of either payload format.
///
/// # Errors
/// A message naming the missing or mistyped field.
pub fn parse_event(value: &Value) -> Result<Event, String> {
    let object = value.as_object().ok_or("the event is not a JSON object")?;
    let pascal = object.get("hook_event_name").is_some();
    let field = |snake: &'static str, camel: &'static str| if pascal { snake } else { camel };
    let session_id = text(object, "session_id")
        .or_else(|| text(object, "sessionId"))
        .ok_or("the event has no string `session_id` (or `sessionId`)")?;
    if session_id.is_empty() {
        return Err("the event's session id is empty".into());
    }
    let name = event_name(object);
    let tool_key = field("tool_name", "toolName");
    let tool = || text(object, tool_key).ok_or_else(|| format!("the {name} event has no string `{tool_key}`"));
    let input = |key: &str| match object.get(key) {
        // Older versions sent the arguments as a JSON string.
        Some(Value::String(args)) => parse(&args.to_utf8_lossy()).unwrap_or_else(|_| Value::String(args.clone())),
        Some(args) => args.clone(),
        None => Value::Null,
    };
    let kind = match name.as_str() {
        "SessionStart" => Kind::SessionStart,
        "UserPromptSubmit" => Kind::UserTurn,
        "PreToolUse" => Kind::BeforeTool {
            id: None,
            tool: tool()?,
            input: input(field("tool_input", "toolArgs")),
        },
        "PostToolUse" => {
            let result = object
                .get(field("tool_result", "toolResult"))
                .and_then(Value::as_object);
            let result_type = result.and_then(|r| text(r, field("result_type", "resultType")));
            let output = result
                .and_then(|r| r.get(field("text_result_for_llm", "textResultForLlm")))
                .cloned()
                .unwrap_or(Value::Null);
            Kind::AfterTool {
                id: None,
                tool: tool()?,
                input: input(field("tool_input", "toolArgs")),
                output: without_shell_ids(&output),
                failed: matches!(result_type.as_deref(), Some("failure" | "error" | "denied")),
            }
        }
        "PostToolUseFailure" => Kind::AfterTool {
            id: None,
            tool: tool()?,
            input: input(field("tool_input", "toolArgs")),
            output: object.get("error").cloned().unwrap_or(Value::Null),
            failed: true,
        },
        "PermissionRequest" => Kind::Permission {
            tool: text(object, "toolName").ok_or("the permissionRequest event has no string `toolName`")?,
        },
        other => Kind::Other(other.to_string()),
    };
    // Copilot stamps every call of one response with the same time (to the
    // millisecond, also when their hooks run one after the other): the
    // response's mark.
    let batch = match (&kind, object.get("timestamp")) {
        (Kind::BeforeTool { .. }, Some(Value::String(t))) => Some(t.to_utf8_lossy().into_owned()),
        (Kind::BeforeTool { .. }, Some(Value::Number(t))) => Some(doom_loop::json::to_json(&Value::Number(*t))),
        _ => None,
    };
    Ok(Event {
        session_id,
        transcript_path: text(object, "transcript_path").filter(|p| !p.is_empty()),
        kind,
        batch,
    })
}

/// Whether Copilot asks permission for `tool` (its `permissionRequest`
/// hook was seen for it in this session), so a stop can end the session
/// there: `asked` holds those tools' names, lowercased (Copilot names its
/// shell `Bash` in one payload format and `bash` in the other).
pub fn asks_permission(asked: &[String], tool: &str) -> bool {
    let tool = tool.to_lowercase();
    asked.contains(&tool)
}

fn push_json(out: &mut String, key: &str, value: &str) {
    doom_loop::json::write_json_string(&JsString::from(key), out);
    out.push(':');
    doom_loop::json::write_json_string(&JsString::from(value), out);
}

/// `PreToolUse`: the call does not run; the model reads
/// `Denied by preToolUse hook: MESSAGE`.
pub fn deny(message: &str) -> String {
    let mut out = String::from("{\"permissionDecision\":\"deny\",");
    push_json(&mut out, "permissionDecisionReason", message);
    out.push_str("}\n");
    out
}

/// `PermissionRequest`: the call does not run and the session stops.
pub fn interrupt(message: &str) -> String {
    let mut out = String::from("{\"behavior\":\"deny\",");
    push_json(&mut out, "message", message);
    out.push_str(",\"interrupt\":true}\n");
    out
}

/// `PostToolUse`: text appended to the tool's result (`Additional guidance
/// from postToolUse hooks:`).
pub fn context(message: &str) -> String {
    let mut out = String::from("{");
    push_json(&mut out, "additionalContext", message);
    out.push_str("}\n");
    out
}

/// The hooks file: `.github/hooks/doom-loop.json` of the project, else the
/// user's in `copilot_home` (`$COPILOT_HOME`) or `~/.copilot`.
pub fn hooks_path(scope: Scope, home: &Path, copilot_home: Option<&Path>, cwd: &Path) -> PathBuf {
    match (scope, copilot_home) {
        (Scope::Project, _) => cwd.join(".github").join("hooks").join(HOOKS_FILE),
        (Scope::User, Some(dir)) => dir.join("hooks").join(HOOKS_FILE),
        (Scope::User, None) => home.join(".copilot").join("hooks").join(HOOKS_FILE),
    }
}
