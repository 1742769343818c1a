//! # doom-loop-guard
//!
//! `doomloop hook`: the detector in front of the coding agents people run
//! every day, through the hook command each one runs before and after a
//! tool call (docs/coding-agents.md has the install lines and limits).
//! This crate owns the guard as a whole — the hook's decisions, the
//! agents' event shapes, the installer that edits their settings, the
//! config files, the locked state store and the log read from it — and
//! nothing of the command line: `doom-loop-cli` parses `doomloop hook …`
//! and calls [`run`], [`install`], [`config`] and [`log`]. It does all its
//! I/O through `doom_loop_trace::host`, so the same guard runs natively and
//! under `npx` (wasm over Node's `fs`); it needs nothing else of the trace
//! crate, and no crate it depends on imports it.
//!
//! One invocation: read the event JSON from stdin, lock and load the
//! session's state file, find the round the call belongs to, let the
//! engine decide, save, answer in the agent's own hook output. It never
//! fails the agent: any error of its own, or input it cannot read, allows
//! the call and prints one line on stderr, with exit status 0.
//!
//! A round is one model response. Its calls reach the hook one process at
//! a time (in parallel for parallel calls), so the state keeps the engine
//! state from before the current round (`base`) and the round's calls so
//! far; each event replays the round from `base` through the engine, and a
//! call that arrives later (Claude Code starts a call as soon as its block
//! has streamed) joins its round instead of starting a new one. Parallel
//! identical calls of one message therefore count once. Where a round ends
//! each agent says: Claude Code's `PostToolBatch` (every call of the message
//! resolved, before the next model request), Gemini CLI's `BeforeModel`,
//! Codex's `PreModelRequest`; Copilot CLI says it nowhere, but stamps one
//! response's calls with one time ([`Event::batch`]).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod config;
pub mod copilot;
pub mod event;
pub mod install;
pub mod log;
pub mod store;

mod engine;

use std::path::PathBuf;

use doom_loop_trace::host::Host;

use doom_loop::config::recommended_doom_loop_option;
use doom_loop::effects::declared;
use doom_loop::json::{parse, to_json, write_json_string, Object, Value};
use doom_loop::{canonicalize, JsString};

pub use config::Effective;
pub use event::{parse_event, Agent, Event, Kind};

use engine::{Call, Decision, Engine, ToolDeclarations};

/// The state file's format version; a file of another version starts over.
pub const STATE_VERSION: f64 = 1.0;
/// Calls per round at most; a later call starts the next round (the state
/// stays bounded, whatever the agent sends).
pub const MAX_ROUND_CALLS: usize = 256;

/// How a hook runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookOptions {
    /// `--state-dir` (else the environment and the defaults of [`store::state_dir`]).
    pub state_dir: Option<PathBuf>,
    /// `--option JSON`: the `doomLoop` option (`None`: the recommended one).
    pub option: Option<Value>,
}

/// What the hook prints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookAnswer {
    /// For stdout: the agent's hook output JSON, or empty (allow).
    pub stdout: String,
    /// For stderr, one line each (prefixed `doomloop hook: `).
    pub warnings: Vec<String>,
}

/// The option a hook runs when none is given: `RECOMMENDED_DOOM_LOOP_OPTION`
/// — coding agents page through files and re-run tests after edits, which
/// the outcome- and novelty-aware streaks tell from a loop.
pub fn default_option() -> Value {
    recommended_doom_loop_option()
}

/// Warnings remembered per session (to print each once).
const MAX_WARNED: usize = 32;
/// Copilot: tools remembered as asking permission, per session.
const MAX_ASKED: usize = 32;

/// The hook's `loopKeys`: a shell call is identified by its command (and
/// where and how it runs), not by the `description` the model writes beside
/// it, which it rewords while repeating the same command.
pub fn default_loop_keys(agent: Agent) -> Object {
    let fields = |names: &[&str]| Value::Array(names.iter().map(|n| Value::String(s(n))).collect());
    let (tool, names): (&str, &[&str]) = match agent {
        Agent::ClaudeCode => ("Bash", &["command", "run_in_background"]),
        Agent::GeminiCli => ("run_shell_command", &["command", "dir_path", "is_background"]),
        // Codex 0.169 names every shell call `Bash` and sends `command`
        // alone; `workdir` is kept in case a later version sends it too
        // (the model's `justification` text never is identity).
        Agent::Codex => ("Bash", &["command", "workdir"]),
        Agent::Copilot => {
            return Object::from_entries(
                copilot::SHELL_TOOLS
                    .iter()
                    .map(|tool| (s(tool), fields(copilot::SHELL_KEYS)))
                    .collect(),
            )
        }
    };
    Object::from_entries(vec![(s(tool), fields(names))])
}

/// The hook's `loopEffects`: the agent's built-in edit tools change the
/// files the next test run reads (effect-aware streaks). The table lives
/// in the core ([`doom_loop::effects::declared`]), where the log importers
/// read it too: a replayed log of the agent is scored as the hook scores it.
pub fn default_loop_effects(agent: Agent) -> Object {
    declared::writes(match agent {
        Agent::ClaudeCode => declared::CLAUDE_CODE_WRITES,
        Agent::GeminiCli => declared::GEMINI_CLI_WRITES,
        Agent::Codex => declared::CODEX_WRITES,
        // As Copilot's model calls them (`edit`, `create`) and as its
        // PascalCase hook payloads name them (`Edit`, `Write`): measured
        // with the real CLI, tests/hooks/copilot.test.mjs.
        Agent::Copilot => declared::COPILOT_WRITES,
    })
}

/// One call of the current round, as persisted.
#[derive(Clone, Debug, PartialEq)]
struct RoundCall {
    id: String,
    tool: String,
    input: Value,
    output: Option<Value>,
    failed: bool,
    /// Refused by the hook: it will not run (and returns no result).
    refused: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Round {
    calls: Vec<RoundCall>,
    /// The agent said the round is over (`PostToolBatch`, `BeforeModel`).
    closed: bool,
    /// Guidance of this round was delivered.
    guided: bool,
    /// The agent's mark of the response ([`Event::batch`]).
    batch: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
struct HookState {
    base: Value,
    round: Option<Round>,
    /// The stop verdict's message, once the session halted (until the next user turn).
    halted: Option<String>,
    /// The detector's warnings already printed for this session (each is
    /// printed once per session, not at every call).
    warned: Vec<String>,
    /// Copilot: the tools its `permissionRequest` hook was seen for
    /// (lowercased), where a stop can end the session.
    asked: Vec<String>,
    /// The session id as the agent sent it (for `hook log`).
    session: Option<String>,
    /// The wall clock at the last event (ms; for `hook log` only).
    last_event_ms: u64,
    /// What the guard did, the latest [`log::MAX_ENTRIES`].
    log: Vec<log::Entry>,
    /// The agent sent an event that ends a round (`PostToolBatch`,
    /// `BeforeModel`, `PreModelRequest`) in this session.
    round_end_seen: bool,
    /// The agent sent a user-turn event in this session.
    user_turn_seen: bool,
    /// The settings lack the round-end event: rounds are inferred (the user
    /// was told once).
    round_end_missing: bool,
}

fn s(text: &str) -> JsString {
    JsString::from(text)
}

fn obj(entries: Vec<(&str, Value)>) -> Value {
    Value::Object(Object::from_entries(
        entries.into_iter().map(|(k, v)| (s(k), v)).collect(),
    ))
}

fn string(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_js_string)
        .map(|v| v.to_utf8_lossy().into_owned())
}

impl Default for HookState {
    fn default() -> Self {
        HookState {
            base: Value::Null,
            round: None,
            halted: None,
            warned: Vec::new(),
            asked: Vec::new(),
            session: None,
            last_event_ms: 0,
            log: Vec::new(),
            round_end_seen: false,
            user_turn_seen: false,
            round_end_missing: false,
        }
    }
}

impl HookState {
    fn to_value(&self, agent: Agent) -> Value {
        let round = self.round.as_ref().map_or(Value::Null, |r| {
            let batch = r.batch.as_deref().map(|b| ("batch", Value::String(s(b))));
            obj(batch
                .into_iter()
                .chain([
                    ("closed", Value::Bool(r.closed)),
                    ("guided", Value::Bool(r.guided)),
                    (
                        "calls",
                        Value::Array(
                            r.calls
                                .iter()
                                .map(|c| {
                                    obj(vec![
                                        ("id", Value::String(s(&c.id))),
                                        ("tool", Value::String(s(&c.tool))),
                                        ("input", c.input.clone()),
                                        ("output", c.output.clone().unwrap_or(Value::Null)),
                                        ("done", Value::Bool(c.output.is_some())),
                                        ("failed", Value::Bool(c.failed)),
                                        ("refused", Value::Bool(c.refused)),
                                    ])
                                })
                                .collect(),
                        ),
                    ),
                ])
                .collect())
        });
        let mut fields = vec![
            ("doomloopHook", Value::Number(STATE_VERSION)),
            ("agent", Value::String(s(agent.as_str()))),
            ("base", self.base.clone()),
            ("round", round),
            (
                "warned",
                Value::Array(self.warned.iter().map(|w| Value::String(s(w))).collect()),
            ),
            (
                "halted",
                self.halted.as_deref().map_or(Value::Null, |h| Value::String(s(h))),
            ),
            (
                "session",
                self.session.as_deref().map_or(Value::Null, |id| Value::String(s(id))),
            ),
            #[allow(clippy::cast_precision_loss)]
            ("lastEvent", Value::Number(self.last_event_ms as f64)),
            ("log", Value::Array(self.log.iter().map(log::Entry::to_value).collect())),
            ("roundEndSeen", Value::Bool(self.round_end_seen)),
            ("userTurnSeen", Value::Bool(self.user_turn_seen)),
            ("roundEndMissing", Value::Bool(self.round_end_missing)),
        ];
        if !self.asked.is_empty() {
            let asked = self.asked.iter().map(|t| Value::String(s(t))).collect();
            fields.push(("asked", Value::Array(asked)));
        }
        obj(fields)
    }

    /// The state in `text`; `Err` (start over) when it is not this version's.
    fn from_text(text: &str, agent: Agent) -> Result<HookState, String> {
        let value = parse(text).map_err(|e| format!("is not JSON ({e})"))?;
        let object = value.as_object().ok_or("is not a JSON object")?;
        match object.get("doomloopHook").and_then(Value::as_f64) {
            Some(v) if v == STATE_VERSION => {}
            Some(v) => return Err(format!("is of state version {v}, not {STATE_VERSION}")),
            None => return Err("is not a doomloop hook state".into()),
        }
        if string(object.get("agent")).as_deref() != Some(agent.as_str()) {
            return Err(format!("is not a {} state", agent.as_str()));
        }
        let round = object.get("round").and_then(Value::as_object).map(|r| Round {
            batch: string(r.get("batch")),
            closed: matches!(r.get("closed"), Some(Value::Bool(true))),
            guided: matches!(r.get("guided"), Some(Value::Bool(true))),
            calls: match r.get("calls") {
                Some(Value::Array(calls)) => calls
                    .iter()
                    .filter_map(Value::as_object)
                    .filter_map(|c| {
                        Some(RoundCall {
                            id: string(c.get("id"))?,
                            tool: string(c.get("tool"))?,
                            input: c.get("input").cloned().unwrap_or(Value::Null),
                            output: matches!(c.get("done"), Some(Value::Bool(true)))
                                .then(|| c.get("output").cloned().unwrap_or(Value::Null)),
                            failed: matches!(c.get("failed"), Some(Value::Bool(true))),
                            refused: matches!(c.get("refused"), Some(Value::Bool(true))),
                        })
                    })
                    .take(MAX_ROUND_CALLS)
                    .collect(),
                _ => Vec::new(),
            },
        });
        // Fields a state file written before them lacks read as their defaults.
        let flag = |key: &str| matches!(object.get(key), Some(Value::Bool(true)));
        Ok(HookState {
            session: string(object.get("session")),
            last_event_ms: log::millis(object.get("lastEvent")).unwrap_or(0),
            log: match object.get("log") {
                Some(Value::Array(items)) => {
                    let entries: Vec<log::Entry> = items.iter().filter_map(log::Entry::from_value).collect();
                    entries[entries.len().saturating_sub(log::MAX_ENTRIES)..].to_vec()
                }
                _ => Vec::new(),
            },
            round_end_seen: flag("roundEndSeen"),
            user_turn_seen: flag("userTurnSeen"),
            round_end_missing: flag("roundEndMissing"),
            base: object.get("base").cloned().unwrap_or(Value::Null),
            round,
            halted: string(object.get("halted")),
            warned: match object.get("warned") {
                Some(Value::Array(items)) => items.iter().filter_map(|w| string(Some(w))).take(MAX_WARNED).collect(),
                _ => Vec::new(),
            },
            asked: match object.get("asked") {
                Some(Value::Array(items)) => items.iter().filter_map(|t| string(Some(t))).take(MAX_ASKED).collect(),
                _ => Vec::new(),
            },
        })
    }
}

/// The engine run over `base` and `round`: its decisions for the round's
/// calls (in order) and the engine after the results known so far.
fn replay(
    option: &Value,
    tools: &ToolDeclarations,
    base: &Value,
    round: Option<&Round>,
    warnings: &mut Vec<String>,
) -> Result<(Engine, Vec<Decision>), String> {
    let (mut engine, restore_warnings) = Engine::restore(option, tools, base)?;
    warnings.extend(restore_warnings);
    let Some(round) = round else {
        return Ok((engine, Vec::new()));
    };
    let calls: Vec<Call> = round
        .calls
        .iter()
        .map(|c| Call {
            id: c.id.clone(),
            tool: c.tool.clone(),
            args: c.input.clone(),
        })
        .collect();
    let decisions = engine.on_response(&calls, warnings);
    for call in &round.calls {
        if let Some(output) = &call.output {
            engine.on_result(&call.id, output, call.failed, warnings);
        }
    }
    Ok((engine, decisions))
}

/// The canonical form of a call's arguments (to match Gemini CLI's results
/// to their calls, which carry no id).
fn same_input(a: &Value, b: &Value) -> bool {
    match (canonicalize(a), canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// What to answer.
#[derive(Debug, PartialEq)]
enum Reply {
    Allow,
    Refuse(String),
    Halt(String),
    Guide(String),
}

struct Context<'a> {
    agent: Agent,
    /// The event's [`Event::batch`].
    batch: Option<String>,
    option: &'a Value,
    tools: ToolDeclarations,
    warnings: Vec<String>,
    /// The wall clock at the event (for the log only).
    now_ms: u64,
    /// Said to the user once per session (the missing round-end event).
    notice: Option<String>,
}

impl Context<'_> {
    /// [`replay`] of the state's base and its current round.
    fn replay_round(&mut self, state: &HookState) -> Result<(Engine, Vec<Decision>), String> {
        replay(
            self.option,
            &self.tools,
            &state.base,
            state.round.as_ref(),
            &mut self.warnings,
        )
    }

    /// [`replay`] of the state's base alone.
    fn replay_base(&mut self, state: &HookState) -> Result<(Engine, Vec<Decision>), String> {
        replay(self.option, &self.tools, &state.base, None, &mut self.warnings)
    }

    /// Folds the current round into `base` (a new round or a user turn begins).
    fn fold(&mut self, state: &mut HookState) -> Result<(), String> {
        if state.round.is_some() {
            let (engine, _) = self.replay_round(state)?;
            state.base = engine.state();
            state.round = None;
        }
        Ok(())
    }

    /// Whether rounds are inferred: the agent's settings lack the event
    /// that ends a round, so without it every call would join one endless
    /// round and nothing would ever repeat. Gemini CLI and Codex send theirs
    /// before every model request, the first one too: none before a call
    /// means none is installed. Claude Code sends `PostToolBatch` only after
    /// a round; its installs register it beside `UserPromptSubmit`, so a
    /// session that sent a user turn is trusted to send it, until a user
    /// turn arrives after calls without one.
    /// (Copilot has no such event: its rounds are always inferred, by
    /// [`Context::same_response`].)
    fn inferring(&self, state: &HookState) -> bool {
        self.agent != Agent::Copilot
            && !state.round_end_seen
            && (self.agent != Agent::ClaudeCode || !state.user_turn_seen || state.round_end_missing)
    }

    /// Whether a call joins the current round: the agent has not said it
    /// ended ([`MAX_ROUND_CALLS`] bounds a round). When rounds are inferred
    /// each call is a round of its own (a call re-sent with its id stays in
    /// its round): identical parallel calls then count twice, and the result
    /// of a call that arrives after the next call started is not seen.
    fn joins(&self, state: &HookState, id: &str) -> bool {
        state.round.as_ref().is_some_and(|round| {
            !round.closed
                && round.calls.len() < MAX_ROUND_CALLS
                && (!self.inferring(state) || round.calls.iter().any(|c| c.id == id && self.agent != Agent::GeminiCli))
        })
    }

    /// The agent's settings lack the round-end event: say so, once per session.
    fn round_end_missing(&mut self, state: &mut HookState) {
        if !state.round_end_missing {
            state.round_end_missing = true;
            self.notice = Some(log::round_end_notice(self.agent));
        }
    }

    /// Records an intervention.
    fn note(&self, state: &mut HookState, tool: &str, input: &Value, rung: &str, text: &str) {
        log::push(&mut state.log, log::Entry::new(self.now_ms, tool, input, rung, text));
    }

    /// Records an intervention reached at a result: for the call `at` of
    /// the round, else its last call that returned (or its last call).
    fn note_round(&self, state: &mut HookState, at: Option<usize>, rung: &str, text: &str) {
        let call = state.round.as_ref().and_then(|r| match at {
            Some(i) => r.calls.get(i),
            None => r.calls.iter().rev().find(|c| c.output.is_some()).or(r.calls.last()),
        });
        let (tool, input) = call.map_or((String::new(), Value::Null), |c| (c.tool.clone(), c.input.clone()));
        self.note(state, &tool, &input, rung, text);
    }

    /// The session halts (first reached now, for the call `at` of the round).
    fn halt(&self, state: &mut HookState, message: String, at: Option<usize>) -> Reply {
        if state.halted.is_none() {
            self.note_round(state, at, "stop", &message);
        }
        state.halted = Some(message.clone());
        Reply::Halt(message)
    }

    /// Copilot says nowhere where a response's calls end: a call is of the
    /// round's response when it bears the round's mark ([`Event::batch`]);
    /// without marks, when a call of the round is still running (Copilot
    /// starts one response's calls before any of them returns).
    fn same_response(&self, state: &HookState) -> bool {
        match (
            self.batch.as_deref(),
            state.round.as_ref().and_then(|r| r.batch.as_deref()),
        ) {
            (Some(call), Some(round)) => call == round,
            _ => Self::running(state),
        }
    }

    /// Whether a call of the round is still running (started, not refused,
    /// no result yet).
    fn running(state: &HookState) -> bool {
        state
            .round
            .as_ref()
            .is_some_and(|round| round.calls.iter().any(|c| c.output.is_none() && !c.refused))
    }

    /// The agent says the round is over.
    fn close(state: &mut HookState) {
        if let Some(round) = &mut state.round {
            round.closed = true;
        }
    }

    fn before_tool(
        &mut self,
        state: &mut HookState,
        id: Option<&str>,
        tool: &str,
        input: &Value,
    ) -> Result<Reply, String> {
        if let Some(message) = state.halted.clone() {
            // Stopped: every call is refused until the user's next prompt.
            self.note(state, tool, input, "stop", &message);
            return Ok(Reply::Halt(message));
        }
        let id = match id {
            Some(id) => id.to_string(),
            None => format!("call-{}", state.round.as_ref().map_or(0, |r| r.calls.len())),
        };
        if self.inferring(state) && (self.agent != Agent::ClaudeCode || state.round.is_some()) {
            // Gemini CLI and Codex send the round-end event before the
            // first call; Claude Code's would have come by the second round.
            self.round_end_missing(state);
        }
        if !self.joins(state, &id) || (self.agent == Agent::Copilot && !self.same_response(state)) {
            self.fold(state)?;
            state.round = Some(Round {
                batch: self.batch.clone(),
                ..Round::default()
            });
        }
        let round = state.round.as_mut().ok_or("no round")?;
        let mut new_call = false;
        let index = match round
            .calls
            .iter()
            .position(|c| c.id == id && !matches!(self.agent, Agent::GeminiCli | Agent::Copilot))
        {
            Some(index) => index,
            None if round.calls.len() >= MAX_ROUND_CALLS => {
                self.warnings.push(format!(
                    "a round of more than {MAX_ROUND_CALLS} calls: this one is not tracked"
                ));
                return Ok(Reply::Allow);
            }
            None => {
                round.calls.push(RoundCall {
                    id: id.clone(),
                    tool: tool.to_string(),
                    input: input.clone(),
                    output: None,
                    failed: false,
                    refused: false,
                });
                new_call = true;
                round.calls.len() - 1
            }
        };
        let (engine, decisions) = self.replay_round(state)?;
        let reply = if let Some(halt) = engine.halt() {
            let message = halt.message.to_utf8_lossy().into_owned();
            self.halt(state, message, Some(index))
        } else {
            let decision = decisions.get(index);
            // Observe is recorded here; steer where its guidance is delivered.
            if let Some((rung, text)) = decision.and_then(|d| d.verdict.as_ref()) {
                if new_call && *rung == "observe" && !decision.is_some_and(|d| d.refuse) {
                    self.note(state, tool, input, rung, text);
                }
            }
            match decision {
                Some(Decision {
                    refuse: true,
                    message: Some(message),
                    ..
                }) => {
                    if new_call {
                        self.note(state, tool, input, "block", message);
                    }
                    Reply::Refuse(message.clone())
                }
                _ => Reply::Allow,
            }
        };
        if reply != Reply::Allow {
            if let Some(call) = state.round.as_mut().and_then(|r| r.calls.get_mut(index)) {
                call.refused = true;
            }
        }
        Ok(reply)
    }

    fn after_tool(
        &mut self,
        state: &mut HookState,
        id: Option<&str>,
        tool: &str,
        input: &Value,
        output: &Value,
        failed: bool,
    ) -> Result<Reply, String> {
        let Some(round) = state.round.as_mut() else {
            return Ok(Reply::Allow);
        };
        let found = round.calls.iter_mut().find(|c| match id {
            Some(id) => c.id == id,
            None => c.output.is_none() && c.tool == tool && same_input(&c.input, input),
        });
        let Some(call) = found else {
            return Ok(Reply::Allow);
        };
        if call.output.is_some() {
            // The same result twice counts once.
            return Ok(Reply::Allow);
        }
        call.output = Some(output.clone());
        call.failed = failed;
        if self.agent == Agent::ClaudeCode && !self.inferring(state) {
            // Guidance goes with PostToolBatch, once the whole message resolved.
            let (engine, _) = self.replay_round(state)?;
            if let Some(halt) = engine.halt() {
                let message = halt.message.to_utf8_lossy().into_owned();
                return Ok(self.halt(state, message, None));
            }
            return Ok(Reply::Allow);
        }
        self.outcome(state)
    }

    /// Claude Code's `PostToolBatch`: the results of the calls not yet
    /// recorded, then the round is over; guidance for the next request.
    fn batch(&mut self, state: &mut HookState, results: &[(String, Value)]) -> Result<Reply, String> {
        Self::close(state);
        let Some(round) = state.round.as_mut() else {
            return Ok(state.halted.clone().map_or(Reply::Allow, Reply::Halt));
        };
        for (id, output) in results {
            if let Some(call) = round
                .calls
                .iter_mut()
                .find(|c| c.id == *id && !c.refused && c.output.is_none())
            {
                call.output = Some(output.clone());
            }
        }
        self.outcome(state)
    }

    /// After a result: the halt, or the round's guidance once.
    fn outcome(&mut self, state: &mut HookState) -> Result<Reply, String> {
        let (mut engine, _) = self.replay_round(state)?;
        if let Some(halt) = engine.halt() {
            let message = halt.message.to_utf8_lossy().into_owned();
            return Ok(self.halt(state, message, None));
        }
        if let Some(message) = &state.halted {
            return Ok(Reply::Halt(message.clone()));
        }
        let round = state.round.as_mut().ok_or("no round")?;
        match engine.take_guidance() {
            Some(guidance) if !round.guided => {
                round.guided = true;
                self.note_round(state, None, "steer", &guidance);
                Ok(Reply::Guide(guidance))
            }
            _ => Ok(Reply::Allow),
        }
    }

    fn user_turn(&mut self, state: &mut HookState) -> Result<Reply, String> {
        if self.agent == Agent::ClaudeCode
            && !state.round_end_seen
            && state.round.as_ref().is_some_and(|r| !r.calls.is_empty())
        {
            // A turn with calls went by without PostToolBatch: it is not installed.
            self.round_end_missing(state);
        }
        state.user_turn_seen = true;
        self.fold(state)?;
        let (mut engine, _) = self.replay_base(state)?;
        engine.on_user_turn();
        state.base = engine.state();
        state.halted = None;
        Ok(Reply::Allow)
    }
}

fn push_field(out: &mut String, key: &str, value: &str) {
    write_json_string(&s(key), out);
    out.push(':');
    write_json_string(&s(value), out);
}

/// The agent's hook output for a reply (empty: allow, nothing to say).
fn render(agent: Agent, event_name: &str, reply: &Reply) -> String {
    let mut out = String::new();
    match (agent, reply) {
        (_, Reply::Allow) => return out,
        (Agent::ClaudeCode, Reply::Refuse(message)) => {
            out.push_str("{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",");
            push_field(&mut out, "permissionDecisionReason", message);
            out.push_str("}}");
        }
        (Agent::ClaudeCode, Reply::Halt(message)) => {
            out.push_str("{\"continue\":false,");
            push_field(&mut out, "stopReason", message);
            if event_name == "PreToolUse" {
                out.push_str(
                    ",\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",",
                );
                push_field(&mut out, "permissionDecisionReason", message);
                out.push('}');
            }
            out.push('}');
        }
        (Agent::ClaudeCode, Reply::Guide(message)) => {
            out.push_str("{\"hookSpecificOutput\":{");
            push_field(&mut out, "hookEventName", event_name);
            out.push(',');
            push_field(&mut out, "additionalContext", message);
            out.push_str("}}");
        }
        (Agent::GeminiCli, Reply::Refuse(message)) => {
            out.push_str("{\"decision\":\"deny\",");
            push_field(&mut out, "reason", message);
            out.push('}');
        }
        (Agent::GeminiCli, Reply::Halt(message)) => {
            out.push_str("{\"continue\":false,");
            push_field(&mut out, "stopReason", message);
            out.push(',');
            push_field(&mut out, "reason", message);
            out.push_str(",\"decision\":\"deny\"}");
        }
        (Agent::GeminiCli, Reply::Guide(message)) => {
            out.push_str("{\"hookSpecificOutput\":{");
            push_field(&mut out, "additionalContext", message);
            out.push_str("}}");
        }
        // Codex reads no answer at `PreModelRequest` and rejects
        // `continue: false` at `PreToolUse` (the call would then run): a
        // halt refuses each call before it runs, and at `PostToolUse`
        // replaces the result with the stop verdict (`continue: false`,
        // which in 0.169 does not end the turn — docs/limits.md).
        (Agent::Codex, _) if event_name == "PreModelRequest" || event_name == "UserPromptSubmit" => return out,
        (Agent::Codex, Reply::Refuse(message)) => {
            out.push_str("{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",");
            push_field(&mut out, "permissionDecisionReason", message);
            out.push_str("}}");
        }
        (Agent::Codex, Reply::Halt(message)) if event_name == "PreToolUse" => {
            out.push('{');
            push_field(&mut out, "systemMessage", message);
            out.push_str(",\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",");
            push_field(&mut out, "permissionDecisionReason", message);
            out.push_str("}}");
        }
        (Agent::Codex, Reply::Halt(message)) => {
            out.push_str("{\"continue\":false,");
            push_field(&mut out, "stopReason", message);
            out.push('}');
        }
        (Agent::Codex, Reply::Guide(message)) => {
            out.push_str("{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",");
            push_field(&mut out, "additionalContext", message);
            out.push_str("}}");
        }
        (Agent::Copilot, reply) => return render_copilot(event_name, reply),
    }
    out.push('\n');
    out
}

/// Copilot's answer: a refusal (or a stop where it cannot end the session)
/// denies the call at `PreToolUse`; a stop ends the session at
/// `PermissionRequest`; guidance (or a stop reached as a result came in)
/// is appended to the tool's result at `PostToolUse`.
fn render_copilot(event_name: &str, reply: &Reply) -> String {
    match (event_name, reply) {
        (_, Reply::Allow) => String::new(),
        ("PreToolUse", Reply::Refuse(message) | Reply::Halt(message)) => copilot::deny(message),
        ("PermissionRequest", Reply::Halt(message)) => copilot::interrupt(message),
        ("PostToolUse" | "PostToolUseFailure", Reply::Guide(message) | Reply::Halt(message)) => {
            copilot::context(message)
        }
        _ => String::new(),
    }
}

/// Runs one hook invocation over the event bytes `input`. Never fails:
/// errors become warnings and an allowing (empty) answer.
pub fn run(host: &mut dyn Host, agent: Agent, input: &[u8], options: &HookOptions) -> HookAnswer {
    let mut warnings = Vec::new();
    let stdout = match answer(host, agent, input, options, &mut warnings) {
        Ok(stdout) => stdout,
        Err(error) => {
            warnings.push(format!("{error}; allowing the call"));
            String::new()
        }
    };
    HookAnswer { stdout, warnings }
}

/// One event read from the bytes an agent sent.
#[derive(Clone, Debug, PartialEq)]
pub struct Incoming {
    /// The event.
    pub event: Event,
    /// Its `hook_event_name`, as sent.
    pub name: String,
    /// When it arrived (ms since the Unix epoch; 0: not known), for the log only.
    pub at_ms: u64,
    /// The agent's working directory (`cwd`), where the project's config file is looked up.
    pub cwd: Option<String>,
}

/// Reads the event bytes an agent sent.
///
/// # Errors
/// Not UTF-8, not JSON, or not an event (a message naming the field).
pub fn read_event(agent: Agent, input: &[u8]) -> Result<Incoming, String> {
    let text = std::str::from_utf8(input).map_err(|_| "the event on stdin is not UTF-8".to_string())?;
    let value = parse(text).map_err(|e| format!("the event on stdin is not JSON ({e})"))?;
    // Stored as the next call can read it back (see `Event::storable`).
    let event = parse_event(agent, &value)?.storable();
    let object = value.as_object();
    let name = match (agent, object) {
        // Copilot's camelCase payloads name no event: the one its fields make.
        (Agent::Copilot, Some(object)) => copilot::event_name(object),
        (_, object) => string(object.and_then(|o| o.get("hook_event_name"))).unwrap_or_default(),
    };
    Ok(Incoming {
        event,
        name,
        at_ms: 0,
        cwd: string(object.and_then(|o| o.get("cwd"))).filter(|cwd| !cwd.is_empty()),
    })
}

/// What one event does to a session's state, without touching a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The agent's hook output (empty: allow).
    pub stdout: String,
    /// The state file's new text.
    pub state: String,
    /// Warnings, one line each.
    pub warnings: Vec<String>,
}

/// Decides one event against a session's state file text (`None`: no file
/// yet; text that is not a state of this version starts over, with a
/// warning) under `option` and the hook's built-in loop keys.
///
/// # Errors
/// The option is invalid (nothing was decided; the caller allows the call).
pub fn step(agent: Agent, incoming: &Incoming, state: Option<&str>, option: &Value) -> Result<Step, String> {
    step_with(agent, incoming, state, &Effective::with_option(option.clone()))
}

/// [`step`] under the settings of the config files ([`config::load`]).
///
/// # Errors
/// The option is invalid (nothing was decided; the caller allows the call).
pub fn step_with(agent: Agent, incoming: &Incoming, state: Option<&str>, settings: &Effective) -> Result<Step, String> {
    let mut warnings = Vec::new();
    let mut state = match state {
        None => HookState::default(),
        Some(text) => HookState::from_text(text, agent).unwrap_or_else(|why| {
            warnings.push(format!("the state file {why}: starting this session's detection over"));
            HookState::default()
        }),
    };
    let mut context = Context {
        agent,
        batch: incoming.event.batch.clone(),
        option: &settings.option,
        tools: ToolDeclarations {
            loop_keys: settings.loop_keys(agent),
            loop_effects: settings.loop_effects(agent),
        },
        warnings: Vec::new(),
        now_ms: incoming.at_ms,
        notice: None,
    };
    state.session = Some(incoming.event.session_id.clone());
    state.last_event_ms = state.last_event_ms.max(incoming.at_ms);
    if matches!(incoming.event.kind, Kind::ModelRequest | Kind::Batch { .. }) {
        state.round_end_seen = true;
        state.round_end_missing = false;
    }
    let reply = match &incoming.event.kind {
        Kind::SessionStart | Kind::Other(_) => Ok(Reply::Allow),
        Kind::UserTurn => context.user_turn(&mut state),
        Kind::ModelRequest => {
            Context::close(&mut state);
            Ok(state.halted.clone().map_or(Reply::Allow, Reply::Halt))
        }
        Kind::Batch { results } => context.batch(&mut state, results),
        Kind::BeforeTool { id, tool, input } => match context.before_tool(&mut state, id.as_deref(), tool, input) {
            // Copilot: a stop ends the session at the call's permission
            // request, where its tool has one; let the call get there.
            Ok(Reply::Halt(_)) if agent == Agent::Copilot && copilot::asks_permission(&state.asked, tool) => {
                Ok(Reply::Allow)
            }
            reply => reply,
        },
        Kind::Permission { tool } => {
            let tool = tool.to_lowercase();
            if !state.asked.contains(&tool) && state.asked.len() < MAX_ASKED {
                state.asked.push(tool);
            }
            Ok(state.halted.clone().map_or(Reply::Allow, Reply::Halt))
        }
        Kind::AfterTool {
            id,
            tool,
            input,
            output,
            failed,
        } => context.after_tool(&mut state, id.as_deref(), tool, input, output, *failed),
    };
    // The detector's own warnings (config, fingerprints) once per session.
    for warning in context.warnings {
        if !state.warned.contains(&warning) {
            if state.warned.len() < MAX_WARNED {
                state.warned.push(warning.clone());
            }
            warnings.push(warning);
        }
    }
    let reply = reply?;
    let mut stdout = render(agent, &incoming.name, &reply);
    if let Some(notice) = context.notice {
        match agent {
            // Claude Code shows a hook's `systemMessage` to the user.
            Agent::ClaudeCode => stdout = with_system_message(&stdout, &format!("doomloop: {notice}")),
            Agent::GeminiCli | Agent::Codex | Agent::Copilot => warnings.push(notice),
        }
    }
    Ok(Step {
        stdout,
        state: to_json(&state.to_value(agent)),
        warnings,
    })
}

/// A Claude Code hook output with `systemMessage` added (the output alone
/// when it was empty).
fn with_system_message(stdout: &str, message: &str) -> String {
    let mut field = String::new();
    push_field(&mut field, "systemMessage", message);
    match stdout.trim_end().strip_prefix('{') {
        Some("}") | None => format!("{{{field}}}\n"),
        Some(rest) => format!("{{{field},{rest}\n"),
    }
}

fn answer(
    host: &mut dyn Host,
    agent: Agent,
    input: &[u8],
    options: &HookOptions,
    warnings: &mut Vec<String>,
) -> Result<String, String> {
    let mut incoming = read_event(agent, input)?;
    incoming.at_ms = host.now_ms();
    if let Kind::Other(other) = &incoming.event.kind {
        // The installer registers none of these: a settings entry to fix.
        warnings.push(format!("the {other} event is not one this hook answers; allowing"));
        return Ok(String::new());
    }
    let cwd = incoming.cwd.as_deref().map(std::path::Path::new);
    let settings = config::load(host, cwd, options.option.as_ref())?;
    if settings.is_off() {
        // `option = false`: the user turned the guard off.
        return Ok(String::new());
    }
    let dir = store::state_dir(host, options.state_dir.as_deref())?;
    store::ensure_dir(host, &dir)?;
    let file = store::session_file(&dir, agent, &incoming.event.session_id);
    store::locked(host, &file, |host| {
        let text = store::read(host, &file)?;
        let step = step_with(agent, &incoming, text.as_deref(), &settings)?;
        warnings.extend(
            step.warnings
                .into_iter()
                .map(|w| w.replacen("the state file", &format!("{}", file.display()), 1)),
        );
        store::write(host, &file, &step.state)?;
        Ok(step.stdout)
    })
}
