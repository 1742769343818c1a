//! The hook events of Claude Code, Gemini CLI and Codex CLI, read into one
//! shape (GitHub Copilot CLI's, in two payload formats, in [`crate::copilot`]).
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

use doom_loop::json::{to_json, Object, Value, MAX_PARSE_DEPTH};

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
    /// The mark the agent gives every call of one model response, when it
    /// gives one (Copilot's `PreToolUse` `timestamp`, the same for all of a
    /// response's calls): its calls make one round.
    pub batch: Option<String>,
}

/// Levels the hook's state file puts above a call's input or output
/// (`{"round": {"calls": [{"input": …}]}}`).
const STATE_LEVELS: usize = 4;

/// How deep a call's input or output may nest to be stored as it came: the
/// state file holds it four levels deeper than itself, and a state
/// nested past the JSON parser's limit could not be read back (the session
/// would start its detection over at the next call).
pub const MAX_STORED_DEPTH: usize = MAX_PARSE_DEPTH - STATE_LEVELS;

impl Event {
    /// The event as the state file can store it and read it back: every
    /// part of a call's input or output nested deeper than
    /// [`MAX_STORED_DEPTH`] becomes its JSON text. Nothing a decision reads
    /// changes: the detector fingerprints no value nested past 64 levels
    /// (such a call is not monitored, with or without this), and a loop key
    /// picks fields near the top.
    pub fn storable(mut self) -> Event {
        match &mut self.kind {
            Kind::Batch { results } => {
                for (_, output) in results.iter_mut() {
                    bound_depth(output);
                }
            }
            Kind::BeforeTool { input, .. } => bound_depth(input),
            Kind::AfterTool { input, output, .. } => {
                bound_depth(input);
                bound_depth(output);
            }
            Kind::SessionStart | Kind::UserTurn | Kind::ModelRequest | Kind::Permission { .. } | Kind::Other(_) => {}
        }
        self
    }
}

/// Replaces `value` by its [`MAX_STORED_DEPTH`]-bounded form when it nests deeper.
fn bound_depth(value: &mut Value) {
    if nesting(value) > MAX_STORED_DEPTH {
        *value = cut(value, MAX_STORED_DEPTH);
    }
}

/// How many arrays and objects deep `value` nests (a parsed value: at most
/// the parser's limit, so the recursion is bounded).
fn nesting(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
        Value::Object(object) => 1 + object.iter().map(|(_, v)| nesting(v)).max().unwrap_or(0),
        _ => 0,
    }
}

/// `value` with its arrays and objects below `room` levels as JSON text.
fn cut(value: &Value, room: usize) -> Value {
    match value {
        Value::Array(_) | Value::Object(_) if room == 0 => Value::String(to_json(value).as_str().into()),
        Value::Array(items) => Value::Array(items.iter().map(|v| cut(v, room - 1)).collect()),
        Value::Object(object) => Value::Object(Object::from_entries(
            object.iter().map(|(k, v)| (k.clone(), cut(v, room - 1))).collect(),
        )),
        other => other.clone(),
    }
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
        return crate::copilot::parse_event(value);
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
        batch: None,
    })
}
