//! Reading recorded agent runs in the formats agents and benchmarks write.
//!
//! Each format has its own module, written from that format's public
//! documentation; this module detects which one a document is and turns
//! every file shape into runs: one document, a list of runs, JSON Lines
//! (a message per line, or a run per line), gzip, files and directories.
//! A shape nothing here recognises is an error naming the shapes accepted —
//! never a silent empty replay — and every error names its place (file,
//! line, run id, and the path inside the document).
//!
//! Each call keeps its recorded result where the trace has one (a tool
//! message, a `tool_result` block, a `functionResponse`, an observation),
//! so outcome-aware detection and the evaluation can compare outputs.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use doom_loop::error::{Error, ErrorKind, Result};
use doom_loop::js_string::JsString;
use doom_loop::json::{parse_js, Object, Value};

use crate::transcript::{Transcript, TranscriptCall, TranscriptRound};
use effects::LogAgent;

pub mod anthropic;
pub mod chat;
pub mod cline;
pub mod effects;
mod foreign;
pub mod gemini;
pub mod gemini_cli;
pub mod lines;
pub mod mini_swe;
pub mod openhands;
pub mod pi;
pub mod responses;
pub mod rounds;
pub mod swe_agent;

pub use lines::{
    decode, for_each_file_run, for_each_file_run_in, for_each_run, gzip_limit_error, gzip_refused, import_bytes,
    import_file, import_one, import_path, import_single, import_text, trace_files, unreadable, walk, walk_in,
    ImportedRun, Skipped, Walk, MAX_DECOMPRESSED_BYTES,
};

/// The trace formats the importers read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The project's own `{rounds: [{text?, calls, results?}]}`.
    Rounds,
    /// OpenAI chat messages (`tool_calls` + `role: "tool"`).
    OpenAiChat,
    /// OpenAI Responses items (`function_call` + `function_call_output`).
    Responses,
    /// Anthropic Messages (`tool_use` / `tool_result` blocks).
    Anthropic,
    /// Gemini `contents` (`functionCall` / `functionResponse` parts).
    Gemini,
    /// SWE-agent `.traj` (`trajectory[].action` / `observation`).
    SweAgent,
    /// mini-swe-agent trajectories (`messages`, one bash block per turn).
    MiniSweAgent,
    /// Gemini CLI `--output-format stream-json` events.
    GeminiCli,
    /// Gemini CLI saved chats (`chats/session-*.json`).
    GeminiCliChat,
    /// OpenHands event lists (and `history` of its `output.jsonl`).
    OpenHands,
    /// Cline / Roo Code `ui_messages.json`.
    ClineUi,
    /// Cline / Roo Code `api_conversation_history.json`.
    ClineHistory,
    /// pi coding-agent sessions and `--mode json` events.
    Pi,
}

impl Format {
    /// A short stable name (`rounds`, `openai-chat`, `responses`,
    /// `anthropic`, `gemini`, `swe-agent`, `mini-swe-agent`, `gemini-cli`,
    /// `gemini-cli-chat`, `openhands`, `cline-ui`, `cline-history`, `pi`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Rounds => "rounds",
            Format::OpenAiChat => "openai-chat",
            Format::Responses => "responses",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::SweAgent => "swe-agent",
            Format::MiniSweAgent => "mini-swe-agent",
            Format::GeminiCli => "gemini-cli",
            Format::GeminiCliChat => "gemini-cli-chat",
            Format::OpenHands => "openhands",
            Format::ClineUi => "cline-ui",
            Format::ClineHistory => "cline-history",
            Format::Pi => "pi",
        }
    }
}

/// What the error for an unrecognised document lists.
pub const ACCEPTED_SHAPES: &str = "the rounds format {rounds: [{text?, calls: [{toolName, args, result?}]}]}; \
OpenAI chat messages (assistant `tool_calls` + `role: \"tool\"`); OpenAI Responses items \
(`function_call` + `function_call_output`; Codex rollouts); Anthropic Messages (`tool_use` / `tool_result` \
blocks; Claude Code sessions); Gemini `contents` (`functionCall` / `functionResponse` parts); Gemini CLI \
stream-json events (`tool_use` / `tool_result`) and chat files (`messages[].toolCalls`); OpenHands events \
(`action` / `observation`, or under `history`); Cline / Roo Code `ui_messages.json` and \
`api_conversation_history.json`; pi sessions (`toolCall` blocks, `toolResult` messages); a SWE-agent .traj \
(`trajectory[].action`); a mini-swe-agent trajectory (`messages` with one bash block per turn) — bare, or \
under `messages`/`input`/`output`/`contents`/`history`; or JSON Lines of any of these (a message or a run \
per line)";

pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidArgument, message)
}

/// Prefixes an error with where it happened (`messages[3]`, `line 7`).
pub(crate) fn at(place: &str, error: Error) -> Error {
    Error::new(error.kind(), format!("{place}: {}", error.message()))
}

pub(crate) fn get<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.as_object().and_then(|o| o.get(key))
}

pub(crate) fn string_field(value: &Value, keys: &[&str]) -> Option<JsString> {
    keys.iter()
        .find_map(|k| get(value, k).and_then(Value::as_js_string).cloned())
}

pub(crate) fn array<'a>(value: &'a Value, key: &str) -> Option<&'a [Value]> {
    match get(value, key) {
        Some(Value::Array(items)) => Some(items),
        _ => None,
    }
}

/// A call from a tool name and its arguments as recorded: a JSON string is
/// parsed (raw text that does not parse is malformed, identified by its
/// text, as in the reference), an object is taken as is, absent is `{}`.
pub(crate) fn call_from(tool_name: JsString, args: Option<&Value>) -> TranscriptCall {
    match args {
        Some(Value::String(raw)) => match parse_js(raw) {
            Ok(parsed) => TranscriptCall::new(tool_name, parsed, false),
            Err(_) => TranscriptCall::new(tool_name, Value::String(raw.clone()), true),
        },
        Some(Value::Null) | None => TranscriptCall::new(tool_name, Value::Object(Object::new()), false),
        Some(value) => TranscriptCall::new(tool_name, value.clone(), false),
    }
}

/// Text of a message `content`: a string, or the `text` of its parts.
pub(crate) fn content_text(content: Option<&Value>) -> Option<JsString> {
    match content {
        Some(Value::String(s)) => (!s.is_empty()).then(|| s.clone()),
        Some(Value::Array(parts)) => {
            let mut text = JsString::new();
            for part in parts {
                if let Some(t) = string_field(part, &["text"]) {
                    if !text.is_empty() {
                        text.push_str("\n");
                    }
                    text.push_js(&t);
                }
            }
            (!text.is_empty()).then_some(text)
        }
        _ => None,
    }
}

/// A recorded output as the result value: a string as is, a list of text
/// parts joined, anything else (images, objects) the JSON value itself.
pub(crate) fn output_value(output: Option<&Value>) -> Option<Value> {
    match output {
        None | Some(Value::Null) | Some(Value::Undefined) => None,
        Some(Value::Array(parts))
            if parts
                .iter()
                .all(|p| string_field(p, &["text"]).is_some() || matches!(p, Value::String(_))) =>
        {
            let mut text = JsString::new();
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    text.push_str("\n");
                }
                match part {
                    Value::String(s) => text.push_js(s),
                    other => text.push_js(&string_field(other, &["text"]).unwrap_or_default()),
                }
            }
            Some(Value::String(text))
        }
        Some(other) => Some(other.clone()),
    }
}

/// A conversation as an API request carries it: its turns, each marked
/// when a user message came before it, and whether the request ends with
/// a user message (a new turn, which lifts a halt).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conversation {
    /// The model turns, in order.
    pub rounds: Vec<TranscriptRound>,
    /// A user message came after the last turn.
    pub ends_with_user_turn: bool,
}

/// Where reading a request's messages stopped with nothing left waiting:
/// every call's result already given (by its id or in order), so no later
/// message can change a round read so far (a turn still open is counted
/// as read; a later message that adds to it makes reading on an error). Reading
/// the messages after them from here (each format's `conversation_from`)
/// gives the rounds that reading every message would give after these —
/// what lets a gateway keep the engine's state after an agent's previous
/// request and read only what its next request adds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resume {
    /// A user message came since the last turn.
    user_pending: bool,
    /// The last message's `id` (Anthropic: a message with the same id goes
    /// on with the turn).
    previous_id: Option<JsString>,
    /// A turn was under way (Anthropic: an assistant message's calls, all
    /// answered, ends only at the next assistant or user message).
    open: bool,
}

/// Where a call sits: (round index, call index).
type Slot = (usize, usize);

/// Builds rounds from a stream of turns, calls and results, matching each
/// result to its call by id, by tool name, or by order. Every lookup is
/// keyed (by id, by tool name, by slot), so matching N results to N calls
/// costs O(N log N) however many are still waiting.
#[derive(Default)]
pub(crate) struct Builder {
    rounds: Vec<TranscriptRound>,
    current: TranscriptRound,
    by_id: HashMap<Vec<u8>, Slot>,
    /// Calls still waiting for a result, in order, with their tool name.
    unmatched: BTreeMap<Slot, Vec<u8>>,
    /// The same calls by tool name, in order.
    unmatched_by_tool: HashMap<Vec<u8>, BTreeSet<Slot>>,
    /// A user message came since the last turn ([`Builder::user_turn`]).
    user_pending: bool,
    /// Going on from a [`Resume`] whose turn was open: that turn was read
    /// (and its round counted) already, so its end pushes nothing.
    resumed_open: bool,
    /// Something was added to that turn: reading on from the resume does
    /// not give what reading every message would.
    diverged: bool,
}

impl Builder {
    /// Adds assistant text to the current turn.
    pub fn text(&mut self, text: JsString) {
        self.touch();
        match &mut self.current.text {
            Some(existing) => {
                existing.push_str("\n");
                existing.push_js(&text);
            }
            None => self.current.text = Some(text),
        }
    }

    /// Appends a streamed chunk to the current turn's text (no separator).
    pub fn append_text(&mut self, chunk: JsString) {
        self.touch();
        match &mut self.current.text {
            Some(existing) => existing.push_js(&chunk),
            None => self.current.text = Some(chunk),
        }
    }

    /// Adds what the current turn cost in model tokens, where the log
    /// records it.
    pub fn usage(&mut self, tokens: Option<f64>) {
        if let Some(tokens) = tokens.filter(|t| t.is_finite() && *t > 0.0) {
            self.touch();
            *self.current.tokens.get_or_insert(0.0) += tokens;
        }
    }

    /// Adds a call to the current turn; `id` is what its result names.
    pub fn call(&mut self, mut call: TranscriptCall, id: Option<&JsString>) {
        self.touch();
        let slot = (self.rounds.len(), self.current.calls.len());
        if let Some(id) = id {
            self.by_id.insert(id.as_bytes().to_vec(), slot);
            call.id = Some(id.clone());
        }
        let name = call.tool_name.as_bytes().to_vec();
        self.unmatched_by_tool.entry(name.clone()).or_default().insert(slot);
        self.unmatched.insert(slot, name);
        self.current.calls.push(call);
    }

    /// Marks a change to the current turn: to a resumed open one, a
    /// divergence.
    fn touch(&mut self) {
        self.diverged |= self.resumed_open;
    }

    /// Ends the current turn (if it had anything).
    pub fn end_turn(&mut self) {
        if std::mem::take(&mut self.resumed_open) {
            // As pushing it would: the user message before it is taken.
            self.user_pending = false;
            return;
        }
        if self.current.text.is_some() || !self.current.calls.is_empty() {
            let mut round = std::mem::take(&mut self.current);
            round.after_user = std::mem::take(&mut self.user_pending);
            self.rounds.push(round);
        }
    }

    /// A user message: ends the current turn, and the next one follows a
    /// user turn ([`TranscriptRound::after_user`]).
    pub fn user_turn(&mut self) {
        self.end_turn();
        self.user_pending = true;
    }

    fn slot_mut(&mut self, (round, call): Slot) -> Option<&mut TranscriptCall> {
        if round == self.rounds.len() {
            self.current.calls.get_mut(call)
        } else {
            self.rounds.get_mut(round).and_then(|r| r.calls.get_mut(call))
        }
    }

    fn fill(&mut self, slot: Slot, result: Option<Value>, failed: bool) -> bool {
        if let Some(name) = self.unmatched.remove(&slot) {
            if let Some(slots) = self.unmatched_by_tool.get_mut(&name) {
                slots.remove(&slot);
                if slots.is_empty() {
                    self.unmatched_by_tool.remove(&name);
                }
            }
        }
        match self.slot_mut(slot) {
            Some(call) => {
                call.result = result;
                call.failed = failed;
                true
            }
            None => false,
        }
    }

    /// Gives the result to the call with this id; false when none has it.
    pub fn result_by_id(&mut self, id: &JsString, result: Option<Value>, failed: bool) -> bool {
        match self.by_id.remove(id.as_bytes()) {
            Some(slot) => self.fill(slot, result, failed),
            None => false,
        }
    }

    /// Gives the result to the oldest unanswered call of this tool (or, with
    /// no name, the oldest unanswered call).
    pub fn result_in_order(&mut self, name: Option<&JsString>, result: Option<Value>, failed: bool) -> bool {
        let found = match name {
            Some(name) => self
                .unmatched_by_tool
                .get(name.as_bytes())
                .and_then(|slots| slots.first().copied()),
            None => self.unmatched.keys().next().copied(),
        };
        match found {
            Some(slot) => self.fill(slot, result, failed),
            None => false,
        }
    }

    /// The rounds, the last turn included.
    pub fn finish(self) -> Vec<TranscriptRound> {
        self.finish_conversation().rounds
    }

    /// A builder going on from `resume` (its rounds not held again; an
    /// open turn's round not pushed again).
    pub fn resumed(resume: &Resume) -> Builder {
        Builder {
            user_pending: resume.user_pending,
            resumed_open: resume.open,
            ..Builder::default()
        }
    }

    /// Where reading stopped, when no call waits for its result (by id or
    /// in order) and no usage waits for its turn; an open turn (all its
    /// calls answered) is allowed: [`Builder::finish_conversation`] counts
    /// it as a round, so reading on must not add to it.
    pub fn resume(&self, previous_id: Option<JsString>) -> Option<Resume> {
        let open = self.resumed_open || self.current.text.is_some() || !self.current.calls.is_empty();
        let settled = !self.diverged
            && self.by_id.is_empty()
            && self.unmatched.is_empty()
            && (open || self.current.tokens.is_none());
        settled.then_some(Resume {
            user_pending: self.user_pending,
            previous_id,
            open,
        })
    }

    /// Reading on from a resume added to the turn it left open: an error
    /// (read every message instead).
    pub fn check_resumed(&self) -> Result<()> {
        if self.diverged {
            return Err(invalid("a message goes on with the turn the resumed reading counted"));
        }
        Ok(())
    }

    /// The rounds, and whether a user message came after the last of them.
    pub fn finish_conversation(mut self) -> Conversation {
        self.end_turn();
        Conversation {
            rounds: self.rounds,
            ends_with_user_turn: self.user_pending,
        }
    }
}

/// Which format a single-run document is, from its shape.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] naming the accepted shapes and what was
/// found, for anything not recognised (a list of runs is named as such).
pub fn detect(document: &Value) -> Result<Format> {
    if let Value::Object(object) = document {
        if matches!(object.get("rounds"), Some(Value::Array(_))) {
            return Ok(Format::Rounds);
        }
        if matches!(object.get("trajectory"), Some(Value::Array(_))) {
            return Ok(Format::SweAgent);
        }
        if let Some(Value::Array(history)) = object.get("history") {
            if openhands::is_events(history) {
                return Ok(Format::OpenHands);
            }
        }
        if let Some(found) = foreign::describe_value(document) {
            return Err(invalid(found));
        }
        if let Some(Value::Array(contents)) = object.get("contents") {
            return detect_list(contents).or(Ok(Format::Gemini));
        }
        let is_mini = object
            .get("trajectory_format")
            .and_then(Value::as_js_string)
            .is_some_and(|f| f.as_bytes().starts_with(b"mini-swe-agent"));
        if let Some(Value::Array(messages)) = object.get("messages") {
            if gemini_cli::is_chat(messages) {
                return Ok(Format::GeminiCliChat);
            }
            if is_mini && !mentions_tool_calls(messages) {
                return Ok(Format::MiniSweAgent);
            }
            return detect_list(messages);
        }
        if let Some(items) = ["input", "output"].iter().find_map(|k| match object.get(k) {
            Some(Value::Array(items)) => Some(items),
            _ => None,
        }) {
            return detect_list(items);
        }
        // A single response or message (an Anthropic Message, a chat
        // message, a Gemini candidate content) stands for a list of one.
        if object.get("role").is_some() || object.get("parts").is_some() {
            return detect_list(std::slice::from_ref(document));
        }
        return Err(unrecognised(document));
    }
    match document {
        Value::Array(items) => detect_list(items),
        _ => Err(unrecognised(document)),
    }
}

fn mentions_tool_calls(messages: &[Value]) -> bool {
    messages
        .iter()
        .any(|m| get(m, "tool_calls").is_some() || string_field(m, &["role"]).is_some_and(|r| r == "tool"))
}

fn has_block(item: &Value, suffix: &[u8]) -> bool {
    array(item, "content").is_some_and(|blocks| {
        blocks
            .iter()
            .any(|b| string_field(b, &["type"]).is_some_and(|t| t.as_bytes().ends_with(suffix)))
    })
}

fn is_type(item: &Value, kinds: &[&str]) -> bool {
    string_field(item, &["type"]).is_some_and(|t| kinds.iter().any(|k| t == *k))
}

/// Which format a message/item list is.
fn detect_list(items: &[Value]) -> Result<Format> {
    if openhands::is_events(items) {
        return Ok(Format::OpenHands);
    }
    if cline::is_ui_messages(items) {
        return Ok(Format::ClineUi);
    }
    if gemini_cli::is_stream(items) {
        return Ok(Format::GeminiCli);
    }
    if gemini_cli::is_chat(items) {
        return Ok(Format::GeminiCliChat);
    }
    if pi::is_pi(items) {
        return Ok(Format::Pi);
    }
    if cline::is_history(items) {
        return Ok(Format::ClineHistory);
    }
    if let Some(found) = foreign::describe_value(&Value::Array(items.to_vec())) {
        return Err(invalid(found));
    }
    if items.iter().any(|i| get(i, "parts").is_some()) {
        return Ok(Format::Gemini);
    }
    if items
        .iter()
        .any(|i| has_block(i, b"tool_use") || has_block(i, b"tool_result") || has_block(i, b"thinking"))
    {
        return Ok(Format::Anthropic);
    }
    if items
        .iter()
        .any(|i| get(i, "tool_calls").is_some() || get(i, "function_call").is_some_and(|f| f.as_object().is_some()))
    {
        return Ok(Format::OpenAiChat);
    }
    if items.iter().any(|i| is_type(i, responses::ITEM_TYPES)) {
        return Ok(Format::Responses);
    }
    let roles = items.iter().filter(|i| string_field(i, &["role"]).is_some()).count();
    if roles > 0 && roles == items.len() {
        if !mentions_tool_calls(items) && mini_swe::has_bash_blocks(items) {
            return Ok(Format::MiniSweAgent);
        }
        return Ok(Format::OpenAiChat);
    }
    Err(unrecognised(&Value::Array(items.to_vec())))
}

/// The format whose calls or results a message carries, if any.
fn call_format(item: &Value) -> Option<Format> {
    if array(item, "parts").is_some_and(|parts| {
        parts
            .iter()
            .any(|p| get(p, "functionCall").is_some() || get(p, "functionResponse").is_some())
    }) {
        return Some(Format::Gemini);
    }
    if has_block(item, b"tool_use") || has_block(item, b"tool_result") {
        return Some(Format::Anthropic);
    }
    if get(item, "tool_calls").is_some() || get(item, "function_call").is_some_and(|f| f.as_object().is_some()) {
        return Some(Format::OpenAiChat);
    }
    if is_type(item, responses::CALL_ITEM_TYPES) {
        return Some(Format::Responses);
    }
    None
}

/// A warning when a message list read as `chosen` also holds calls or
/// results of other formats, which that reading does not see: how many,
/// and where the first is (`place` of an item index).
pub(crate) fn mixed_formats(items: &[Value], chosen: Format, place: impl Fn(usize) -> String) -> Option<String> {
    let mut others = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| call_format(item).filter(|f| *f != chosen).map(|f| (i, f)));
    let (first, format) = others.next()?;
    let count = 1 + others.count();
    Some(format!(
        "read as {}, but {count} message(s) carry calls or results of another format (the first, {}, {}): they are not read",
        chosen.name(),
        place(first),
        format.name()
    ))
}

/// A short description of what a document looks like, for errors.
pub(crate) fn describe(value: &Value) -> String {
    let keys = |o: &Object| {
        let names: Vec<String> = o.iter().take(8).map(|(k, _)| k.to_string()).collect();
        if names.is_empty() {
            "no keys".to_string()
        } else {
            format!("keys {}", names.join(", "))
        }
    };
    match value {
        Value::Object(o) => format!("an object with {}", keys(o)),
        Value::Array(items) => match items.first() {
            None => "an empty array".to_string(),
            Some(Value::Object(o)) => format!("an array of {} items, the first with {}", items.len(), keys(o)),
            Some(first) => format!("an array of {} items, the first {}", items.len(), kind_of(first)),
        },
        other => kind_of(other).to_string(),
    }
}

/// What a value is, with its article, for messages: `null`, `an array`,
/// `an object`, `a string`, … (never JavaScript's `typeof`, which calls
/// null and arrays "object").
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Undefined => "undefined",
        _ => "a value JSON cannot hold",
    }
}

fn unrecognised(document: &Value) -> Error {
    if let Some(runs) = run_list(document) {
        return invalid(format!(
            "this is a list of {} runs, not one run: replay one of them, or evaluate them all",
            runs.len()
        ));
    }
    invalid(format!(
        "unrecognised trace shape ({}); accepted: {ACCEPTED_SHAPES}",
        describe(document)
    ))
}

/// The runs of a document that holds several (a tau-bench results file: an
/// array of `{task_id, reward, traj: [messages]}`; or an array of runs in
/// any accepted shape), if it is one.
pub(crate) fn run_list(document: &Value) -> Option<&[Value]> {
    let Value::Array(items) = document else {
        return None;
    };
    let is_run = |item: &Value| {
        matches!(get(item, "traj"), Some(Value::Array(_)))
            || matches!(get(item, "rounds"), Some(Value::Array(_)))
            || matches!(get(item, "trajectory"), Some(Value::Array(_)))
            || (matches!(get(item, "messages"), Some(Value::Array(_))) && get(item, "role").is_none())
            || (matches!(get(item, "contents"), Some(Value::Array(_))) && get(item, "role").is_none())
    };
    (!items.is_empty() && items.iter().all(is_run)).then_some(items)
}

/// Whether a document is a list of runs (a tau-bench results file, or an
/// array of runs in any accepted shape) rather than one run.
pub fn is_run_list(document: &Value) -> bool {
    run_list(document).is_some()
}

/// Reads one run in any accepted shape.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] naming what is malformed and where
/// (`messages[3].tool_calls[0]: …`), or, for a shape not recognised, the
/// shapes accepted.
pub fn import_value(document: &Value) -> Result<Transcript> {
    import_detected(document).map(|(_, transcript)| transcript)
}

/// [`import_value`], also telling which format the document was read as.
///
/// # Errors
/// As [`import_value`].
pub fn import_detected(document: &Value) -> Result<(Format, Transcript)> {
    import_by(document, None)
}

/// [`import_detected`] of a log whose lines named the agent that wrote it
/// ([`LogAgent::of_line`]): its built-in tools' effects are known.
pub(crate) fn import_by(document: &Value, agent: Option<LogAgent>) -> Result<(Format, Transcript)> {
    // A tau-bench run is its `traj` chat list.
    let document = match get(document, "traj") {
        Some(traj @ Value::Array(_)) if get(document, "rounds").is_none() => traj,
        _ => document,
    };
    let format = detect(document)?;
    let option = get(document, "doomLoop").cloned().unwrap_or(Value::Bool(true));
    let loop_keys = get(document, "loopKeys")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let rounds = match format {
        Format::Rounds => rounds::rounds(document)?,
        Format::OpenAiChat => chat::rounds(messages_of(document, &["messages", "input"]))?,
        Format::Responses => responses::rounds(messages_of(document, RESPONSES_KEYS))?,
        Format::Anthropic => anthropic::rounds(messages_of(document, &["messages"]))?,
        Format::Gemini => gemini::rounds(messages_of(document, &["contents"]))?,
        Format::SweAgent => swe_agent::rounds(document)?,
        Format::MiniSweAgent => mini_swe::rounds(messages_of(document, &["messages"]))?,
        Format::GeminiCli => gemini_cli::stream_rounds(messages_of(document, &["events"]))?,
        Format::GeminiCliChat => gemini_cli::chat_rounds(messages_of(document, &["messages"]))?,
        Format::OpenHands => openhands::rounds(messages_of(document, &["history", "events"]))?,
        Format::ClineUi => cline::ui_rounds(messages_of(document, &["messages"]))?,
        Format::ClineHistory => cline::history_rounds(messages_of(document, &["messages"]))?,
        Format::Pi => pi::rounds(messages_of(document, &["messages"]))?,
    };
    if format != Format::Rounds && rounds.is_empty() {
        return Err(invalid(format!(
            "no assistant turn in it ({}); looked for: {ACCEPTED_SHAPES}",
            describe(document)
        )));
    }
    let (loop_effects, warning) = effects::recorded(document, format, agent, &rounds);
    Ok((
        format,
        Transcript {
            option,
            loop_keys,
            loop_effects,
            rounds,
            warnings: warning.into_iter().collect(),
        },
    ))
}

/// Where a Responses document keeps its items.
const RESPONSES_KEYS: &[&str] = &["input", "output", "messages"];

/// Keys a message list may sit under (a list wrapped as `{doomLoop,
/// messages}` by a caller is read whatever its format).
const LIST_KEYS: &[&str] = &["messages", "input", "output", "contents", "history", "events"];

/// The message list of a document: the document itself when it is a list,
/// the list under one of `keys` (else any of [`LIST_KEYS`]), or a single
/// message as a list of one.
fn messages_of<'a>(document: &'a Value, keys: &[&str]) -> &'a [Value] {
    match document {
        Value::Array(items) => items,
        _ => keys
            .iter()
            .chain(LIST_KEYS)
            .find_map(|k| array(document, k))
            .unwrap_or(std::slice::from_ref(document)),
    }
}
