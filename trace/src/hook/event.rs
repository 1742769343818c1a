//! The hook events of Claude Code, Gemini CLI and Codex CLI, read into one
//! shape (GitHub Copilot CLI's, in two payload formats, in [`super::copilot`]).
//!
//! All three agents run a command with one JSON object on stdin per event. The
//! fields read here are the ones each agent's own source writes (Claude
//! Code 2.1: `session_id`, `transcript_path`, `hook_event_name`,
//! `tool_name`, `tool_input`, `tool_use_id`, `tool_response`, `error`;
//! `tool_calls` of `PostToolBatch`; Gemini CLI 0.61 `HookEventHandler`: `session_id`, `transcript_path`,
//! `hook_event_name`, `tool_name`, `tool_input`, `tool_response`; Codex
//! CLI 0.169 `codex-rs/hooks`: `session_id`, `turn_id`, `transcript_path`,
//! `hook_event_name`, `tool_name`, `tool_input`, `tool_use_id`,
//! `tool_response`); every other field is ignored, so newer versions that
//! add fields still read.

use doom_loop::json::Value;

/// The agent a hook answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    /// Anthropic's Claude Code (`@anthropic-ai/claude-code`).
    ClaudeCode,
    /// Google's Gemini CLI (`@google/gemini-cli`).
    GeminiCli,
    /// OpenAI's Codex CLI (`@openai/codex`).
    Codex,
    /// GitHub Copilot CLI (`@github/copilot`).
    Copilot,
}

impl Agent {
    /// The name used on the command line and in state file names.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::GeminiCli => "gemini-cli",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
        }
    }

    /// Parses a command-line name.
    pub fn from_name(name: &str) -> Option<Agent> {
        match name {
            "claude-code" => Some(Agent::ClaudeCode),
            "gemini-cli" => Some(Agent::GeminiCli),
            "codex" => Some(Agent::Codex),
            "copilot" => Some(Agent::Copilot),
            _ => None,
        }
    }
}

/// What happened, for the detector.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A session started (or resumed).
    SessionStart,
    /// The user sent a prompt: a new user turn.
    UserTurn,
    /// The agent is about to send a model request (Gemini CLI's
    /// `BeforeModel`, Codex's `PreModelRequest`): the calls so far were one
    /// response; those that follow belong to the next.
    ModelRequest,
    /// Claude Code's `PostToolBatch`: every call of one assistant message
    /// has resolved, before the next model request — the end of a round,
    /// with what each call returned.
    Batch {
        /// Per call: its `tool_use_id` and `tool_response` (what the model reads).
        results: Vec<(String, Value)>,
    },
    /// A tool call is about to run (`PreToolUse`, `BeforeTool`).
    BeforeTool {
        /// Claude Code's and Codex's `tool_use_id` (Gemini CLI sends none).
        id: Option<String>,
        /// The tool.
        tool: String,
        /// Its arguments.
        input: Value,
    },
    /// A tool call returned (`PostToolUse`, `PostToolUseFailure`, `AfterTool`).
    AfterTool {
        /// Claude Code's and Codex's `tool_use_id`.
        id: Option<String>,
        /// The tool.
        tool: String,
        /// Its arguments (to find the call when there is no id).
        input: Value,
        /// What it returned (`tool_response`, or the `error` text).
        output: Value,
        /// It failed.
        failed: bool,
    },
    /// Copilot's `permissionRequest`: it is about to ask whether a call
    /// may run (after `PreToolUse` allowed it) — where a stop can end the
    /// session.
    Permission {
        /// The tool (`bash`: Copilot's own names, lowercase).
        tool: String,
    },
    /// Any other event (`Stop`, `SessionEnd`, `Notification`, …): nothing to decide.
    Other(String),
}

/// One event.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The agent's session id (names the state file).
    pub session_id: String,
    /// The transcript the agent writes, when it names one.
    pub transcript_path: Option<String>,
    /// What happened.
    pub kind: Kind,
}

fn text(object: &doom_loop::json::Object, key: &str) -> Option<String> {
    object
        .get(key)
        .and_then(Value::as_js_string)
        .map(|s| s.to_utf8_lossy().into_owned())
}

/// Gemini CLI's shell tool ends its output with the process group id it
/// ran the command in (`Process Group PGID: 4711`, and `Background PIDs:`
/// for background processes): new at every call, so the same command with
/// the same output would never repeat an outcome. Those lines are dropped.
fn without_process_ids(output: &Value) -> Value {
    let Value::String(text) = output else {
        return output.clone();
    };
    let text = text.to_utf8_lossy();
    let kept: Vec<&str> = text
        .split('\n')
        .filter(|line| !line.starts_with("Process Group PGID: ") && !line.starts_with("Background PIDs: "))
        .collect();
    Value::String(kept.join("\n").as_str().into())
}

/// Reads an event.
///
/// # Errors
/// A message naming the missing or mistyped field.
pub fn parse_event(agent: Agent, value: &Value) -> Result<Event, String> {
    if agent == Agent::Copilot {
        return super::copilot::parse_event(value);
    }
    let object = value.as_object().ok_or("the event is not a JSON object")?;
    let session_id = text(object, "session_id").ok_or("the event has no string `session_id`")?;
    if session_id.is_empty() {
        return Err("the event's `session_id` is empty".into());
    }
    let name = text(object, "hook_event_name").ok_or("the event has no string `hook_event_name`")?;
    let transcript_path = text(object, "transcript_path").filter(|p| !p.is_empty());
    let tool = || text(object, "tool_name").ok_or_else(|| format!("the {name} event has no string `tool_name`"));
    let input = || object.get("tool_input").cloned().unwrap_or(Value::Null);
    let id = || text(object, "tool_use_id").filter(|id| !id.is_empty());
    let kind = match (agent, name.as_str()) {
        (_, "SessionStart") => Kind::SessionStart,
        (Agent::ClaudeCode | Agent::Codex, "UserPromptSubmit") | (Agent::GeminiCli, "BeforeAgent") => Kind::UserTurn,
        (Agent::GeminiCli, "BeforeModel") | (Agent::Codex, "PreModelRequest") => Kind::ModelRequest,
        (Agent::ClaudeCode, "PostToolBatch") => Kind::Batch {
            results: match object.get("tool_calls") {
                Some(Value::Array(calls)) => calls
                    .iter()
                    .filter_map(Value::as_object)
                    .filter_map(|c| {
                        let id = text(c, "tool_use_id")?;
                        Some((id, c.get("tool_response").cloned().unwrap_or(Value::Null)))
                    })
                    .collect(),
                _ => return Err("the PostToolBatch event has no `tool_calls` array".into()),
            },
        },
        (Agent::ClaudeCode | Agent::Codex, "PreToolUse") | (Agent::GeminiCli, "BeforeTool") => Kind::BeforeTool {
            id: id(),
            tool: tool()?,
            input: input(),
        },
        // Codex sends what the tool printed (its shell tool: the output
        // alone, no exit status), so a failure reads as its text.
        (Agent::ClaudeCode | Agent::Codex, "PostToolUse") => Kind::AfterTool {
            id: id(),
            tool: tool()?,
            input: input(),
            output: object.get("tool_response").cloned().unwrap_or(Value::Null),
            failed: false,
        },
        (Agent::ClaudeCode, "PostToolUseFailure") => Kind::AfterTool {
            id: id(),
            tool: tool()?,
            input: input(),
            output: object.get("error").cloned().unwrap_or(Value::Null),
            failed: true,
        },
        (Agent::GeminiCli, "AfterTool") => {
            let output = object.get("tool_response").cloned().unwrap_or(Value::Null);
            // Gemini CLI's ToolResult: `error` is set when the tool failed.
            let failed = output
                .as_object()
                .and_then(|o| o.get("error"))
                .is_some_and(|e| !matches!(e, Value::Null | Value::Undefined));
            // What the model reads is `llmContent`; `returnDisplay` is for the screen.
            let mut output = output
                .as_object()
                .and_then(|o| o.get("llmContent"))
                .cloned()
                .unwrap_or(output);
            if tool()? == "run_shell_command" {
                output = without_process_ids(&output);
            }
            Kind::AfterTool {
                id: None,
                tool: tool()?,
                input: input(),
                output,
                failed,
            }
        }
        (_, other) => Kind::Other(other.to_string()),
    };
    Ok(Event {
        session_id,
        transcript_path,
        kind,
    })
}
