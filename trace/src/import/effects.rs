//! What a log records about its tools' effects, as the `loopEffects` the
//! replay hands the session — so `doomloop replay` and `doomloop eval`
//! score a run as an agent with the same declarations would be scored.
//!
//! Three sources, the later winning for a tool:
//! 1. the coding agent that wrote the log: its built-in file-editing tools
//!    are writes, from the table the hooks use
//!    ([`doom_loop::effects::declared`]) — a Claude Code session log or
//!    stream (`sessionId` / `session_id` on its lines), a Codex rollout
//!    (`response_item` / `session_meta` lines), a Gemini CLI stream or chat;
//! 2. MCP tool annotations (`readOnlyHint`, `destructiveHint`) in a tools
//!    list the log holds — an OpenAI Responses `mcp_list_tools` item, or a
//!    request body's `tools` whose definitions carry `annotations` — with
//!    `doom-loop-wasm/mcp`'s rule. Hints that are not booleans are ignored
//!    with one warning; lists that disagree about a tool leave it unknown;
//!    only tools the run calls are kept;
//! 3. the document's own `loopEffects` (the rounds format), as written.
//!
//! Nothing here invents a declaration: a tool no source names keeps its
//! effect unknown, and the effect-aware streaks leave it alone.

use std::collections::{HashMap, HashSet};

use doom_loop::effects::declared::{self, from_annotations, invalid_hints_warning};
use doom_loop::effects::Effect;
use doom_loop::js_string::JsString;
use doom_loop::json::{Object, Value};

use super::{array, get, messages_of, string_field, Format, RESPONSES_KEYS};
use crate::transcript::TranscriptRound;

/// A coding agent whose logs the importers recognise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogAgent {
    /// Claude Code (a session log, or `--output-format stream-json`).
    ClaudeCode,
    /// Codex CLI (a rollout).
    Codex,
    /// Gemini CLI (a stream-json log, or a saved chat).
    GeminiCli,
}

impl LogAgent {
    /// The agent's built-in tools declared writes.
    fn writes(self) -> &'static [&'static str] {
        match self {
            LogAgent::ClaudeCode => declared::CLAUDE_CODE_WRITES,
            LogAgent::Codex => declared::CODEX_WRITES,
            LogAgent::GeminiCli => declared::GEMINI_CLI_WRITES,
        }
    }

    /// The agent a log line was written by, where the line says: a Claude
    /// Code line wraps a `user`/`assistant` `message` with its session id;
    /// a Codex rollout line is a `response_item` or `session_meta` with a
    /// `payload`.
    pub fn of_line(line: &Value) -> Option<LogAgent> {
        let kind = string_field(line, &["type"])?;
        let wraps = |key: &str| get(line, key).is_some_and(|v| v.as_object().is_some());
        if (kind == "user" || kind == "assistant")
            && wraps("message")
            && (get(line, "sessionId").is_some() || get(line, "session_id").is_some())
        {
            return Some(LogAgent::ClaudeCode);
        }
        if (kind == "response_item" || kind == "session_meta") && wraps("payload") {
            return Some(LogAgent::Codex);
        }
        None
    }

    /// The agent a format is written by only (Gemini CLI's own formats).
    fn of_format(format: Format) -> Option<LogAgent> {
        matches!(format, Format::GeminiCli | Format::GeminiCliChat).then_some(LogAgent::GeminiCli)
    }
}

/// The effects a document records and the warning its annotations gave, if
/// any. `agent` is the agent its lines named (see [`LogAgent::of_line`]).
pub(crate) fn recorded(
    document: &Value,
    format: Format,
    agent: Option<LogAgent>,
    rounds: &[TranscriptRound],
) -> (Object, Option<String>) {
    let mut entries: Vec<(JsString, Value)> = Vec::new();
    if let Some(agent) = agent.or(LogAgent::of_format(format)) {
        entries.extend(
            declared::writes(agent.writes())
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
    }
    let (annotated, warning) = annotated(document, format, rounds);
    entries.extend(annotated);
    if let Some(own) = get(document, "loopEffects").and_then(Value::as_object) {
        entries.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    (Object::from_entries(entries), warning)
}

/// A tool definition's name and annotations: `{name, annotations}` (MCP,
/// Anthropic, Responses) or `{function: {name, annotations}}` (chat).
fn definition(tool: &Value) -> Option<(JsString, &Value)> {
    let inner = get(tool, "function")
        .filter(|f| f.as_object().is_some())
        .unwrap_or(tool);
    let name = string_field(inner, &["name"])?;
    Some((name, get(inner, "annotations")?))
}

/// The tools lists of a document: its own `tools`, and for Responses items
/// each `mcp_list_tools` item's.
fn tools_lists(document: &Value, format: Format) -> Vec<&[Value]> {
    let mut lists: Vec<&[Value]> = array(document, "tools").into_iter().collect();
    if format == Format::Responses {
        lists.extend(
            messages_of(document, RESPONSES_KEYS)
                .iter()
                .filter(|item| string_field(item, &["type"]).is_some_and(|t| t == "mcp_list_tools"))
                .filter_map(|item| array(item, "tools")),
        );
    }
    lists
}

/// The annotated effects of the tools the run calls, and the one warning
/// for hints that are not booleans.
fn annotated(document: &Value, format: Format, rounds: &[TranscriptRound]) -> (Vec<(JsString, Value)>, Option<String>) {
    let lists = tools_lists(document, format);
    if lists.is_empty() {
        return (Vec::new(), None);
    }
    let called: HashSet<&[u8]> = rounds
        .iter()
        .flat_map(|round| &round.calls)
        .map(|call| call.tool_name.as_bytes())
        .collect();
    // Per tool: its effect, or `None` once two lists disagree.
    let mut effects: HashMap<JsString, Option<Effect>> = HashMap::new();
    let mut order: Vec<JsString> = Vec::new();
    let mut invalid: Vec<String> = Vec::new();
    let mut named: HashSet<String> = HashSet::new();
    for tool in lists.into_iter().flatten() {
        let Some((name, annotations)) = definition(tool) else {
            continue;
        };
        let effect = from_annotations(annotations, &mut |hint| {
            let place = format!("{name}.{hint}");
            if named.insert(place.clone()) {
                invalid.push(place);
            }
        });
        let Some(effect) = effect.filter(|_| called.contains(name.as_bytes())) else {
            continue;
        };
        match effects.get_mut(&name) {
            Some(known) if *known != Some(effect) => *known = None,
            Some(_) => {}
            None => {
                effects.insert(name.clone(), Some(effect));
                order.push(name);
            }
        }
    }
    let entries = order
        .into_iter()
        .filter_map(|name| {
            let effect = effects.get(&name).copied().flatten()?;
            Some((name, Value::String(JsString::from(effect.as_str()))))
        })
        .collect();
    (
        entries,
        (!invalid.is_empty()).then(|| invalid_hints_warning(&capped(invalid))),
    )
}

/// Places a warning names: the first few, then how many more.
const NAMED_HINTS: usize = 8;

fn capped(mut names: Vec<String>) -> Vec<String> {
    if names.len() > NAMED_HINTS {
        let more = names.len() - NAMED_HINTS;
        names.truncate(NAMED_HINTS);
        names.push(format!("and {more} more"));
    }
    names
}
