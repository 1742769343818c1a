//! The session engine: one agent run mapped onto the detector.
//!
//! A [`Session`] takes the events of a run — a model response (its text
//! and tool calls), a call's result, a server tool's record, a turn's
//! spend, a new user turn — and returns decisions: run or refuse each
//! call (with the text the model reads), halt the run with a reason,
//! guidance queued for the next request (steer), the next request on the
//! escalation model (escalate). Its [`Session::state`] is the reference's
//! persisted `doomLoop` object (plus the session's own bookkeeping under
//! the `session` key, which the reference ignores), and
//! [`Session::restore`] resumes it, failing open like the reference.
//!
//! Every host runs this one engine: the npm package's `DoomLoopSession`
//! and its framework adapters (through the wasm binding), the replay and
//! evaluation of recorded runs, the coding-agent hooks. The mapping it
//! implements is the `callModel` adapter's:
//!
//! - a response's tool calls are **one round**: declared as a set, then
//!   recorded in emission order; an identical call repeated within the
//!   round (a parallel fan-out) counts once and shares the first call's
//!   decision;
//! - each call's identity is its tool's `loopKey` (a field list or `false`
//!   from [`SessionOptions::loop_keys`], or key material the host resolved
//!   itself, e.g. with a JS function: [`CallKey::Material`], or the
//!   fingerprint of the full arguments it took: [`CallKey::Fingerprint`]); malformed
//!   arguments are identified by their raw text; an identity that cannot be
//!   fingerprinted falls back to the full arguments, then to no detection;
//! - `block` and `stop` verdicts refuse the call with the verdict's text;
//!   a `stop` halts the run ([`Session::halt`]): a later response's calls
//!   are all refused, unrecorded; a text `stop` halts before the response's
//!   own calls run;
//! - `steer` guidance is queued, deduplicated by exact text, for the next
//!   request ([`Session::next_request`]); `escalate` asks for the next
//!   request on the escalation model, within `maxEscalations`;
//! - results ([`Session::on_result`]) feed the opt-in outcome-aware
//!   streaks, progress ledger and failure streak; a second result for the
//!   same call is ignored.
//!
//! A host that cannot do a rung says so in [`Capabilities`]: the rung is
//! then skipped (verdicts fall through to weaker rungs, as the reference
//! does for an escalate rung without an escalation config) and
//! [`Session::take_warnings`] says so once.
//!
//! Pure: no I/O, no clocks, no randomness.
//!
//! ```
//! use doom_loop::json::parse;
//! use doom_loop::session::{Call, CallAction, Response, Session, SessionOptions};
//! use doom_loop::ResolvedConfig;
//!
//! let mut session = Session::new(ResolvedConfig::default(), SessionOptions::default());
//! let args = parse(r#"{"invoice_id":"INV-2291"}"#)?;
//! let mut actions = Vec::new();
//! for turn in 1..=6 {
//!     let call = Call::new(format!("call_{turn}"), "get_invoice", args.clone());
//!     let round = session.on_response(Response { text: None, calls: vec![call] });
//!     actions.push(round.decisions[0].action);
//! }
//! assert_eq!(actions[1], CallAction::Run); // observe
//! assert_eq!(actions[2], CallAction::Refuse); // block, with the verdict text
//! assert!(session.halt().is_some()); // stop at the 6th identical call
//! # Ok::<(), doom_loop::Error>(())
//! ```

mod lowered;
mod persist;

use crate::value::small_map::SmallMap;

use crate::beyond::BeyondConfig;
use crate::config::ResolvedConfig;
use crate::effects::Effect;
use crate::error::Result;
use crate::fingerprint::fingerprint_tool_call;
use crate::js_string::JsString;
use crate::json::{Object, Value};
use crate::ladder::{Action, Threshold};
use crate::loop_key::{resolve_loop_key_material, LoopKey, LoopKeyResolution};
use crate::monitor::{DoomLoopMonitor, RecordOptions, Verdict, TOOL_FINGERPRINT};

pub use lowered::answer_json;
pub use persist::{verdict_from_value, verdicts_json};

/// The key under which [`Session::state`] keeps the session's own
/// bookkeeping (a key the reference's restore never reads).
pub const SESSION_STATE_KEY: &str = "session";

/// The most warnings kept between two [`Session::take_warnings`] calls.
const MAX_PENDING_WARNINGS: usize = 256;

/// What the host can do. A rung the host cannot carry out is skipped,
/// with one warning ([`Session::take_warnings`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Refuse a tool call (the `block` rung).
    pub refuse: bool,
    /// Halt the run (the `stop` rung).
    pub stop: bool,
    /// Add guidance to the next request (the `steer` rung).
    pub steer: bool,
    /// Run the next request on another model (the `escalate` rung).
    pub escalate: bool,
}

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities {
            refuse: true,
            stop: true,
            steer: true,
            escalate: true,
        }
    }
}

/// How a session identifies calls and what its host can do.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionOptions {
    /// Per-tool `loopKey` declarations that are data, by tool name: a field
    /// list (`["command", "cwd"]`), `false` (exempt), or another value (the
    /// reference's unsupported-shape fallback). Function forms are resolved
    /// by the host and passed with the call ([`CallKey::Material`]).
    pub loop_keys: Object,
    /// Per-tool `loopEffect` declarations, by tool name: `"write"` (the
    /// tool changes what later calls observe: an edit) or `"read"`; read by
    /// the opt-in effect-aware streaks ([`crate::effects`]). Anything else
    /// is warned about once and leaves the tool's effect unknown.
    pub loop_effects: Object,
    /// What the host can do.
    pub capabilities: Capabilities,
}

/// How a call's identity is found.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum CallKey {
    /// From [`SessionOptions::loop_keys`] (absent: the full arguments).
    #[default]
    Declared,
    /// Key material the host resolved (e.g. a JS `loopKey` function's result).
    Material(Value),
    /// Not monitored (the host's `loopKey` exempted this call).
    Exempt,
    /// Identified by its full arguments, whose fingerprint the host has
    /// already taken (64 lowercase hex digits, as
    /// [`fingerprint_tool_call`]
    /// writes them): the arguments are not read. The npm package's session
    /// takes it from the arguments' text without building a tree when no
    /// `loopKey` applies, so the core never parses them. Anything but 64
    /// lowercase hex digits leaves the call unmonitored, with a warning.
    Fingerprint(JsString),
}

/// One tool call of a response.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The host's id of the call (unique within the run; results name it).
    pub id: JsString,
    /// The tool.
    pub tool_name: JsString,
    /// Parsed arguments, or the raw text when `malformed`.
    pub args: Value,
    /// The arguments did not parse: `args` is the raw text, the identity.
    pub malformed: bool,
    /// How the identity is found.
    pub key: CallKey,
}

impl Call {
    /// A well-formed call identified by its tool's declared `loopKey`.
    pub fn new(id: impl Into<JsString>, tool_name: impl Into<JsString>, args: Value) -> Call {
        Call {
            id: id.into(),
            tool_name: tool_name.into(),
            args,
            malformed: false,
            key: CallKey::Declared,
        }
    }

    /// A call whose arguments did not parse (`raw` is their text).
    pub fn malformed(id: impl Into<JsString>, tool_name: impl Into<JsString>, raw: impl Into<JsString>) -> Call {
        Call {
            id: id.into(),
            tool_name: tool_name.into(),
            args: Value::String(raw.into()),
            malformed: true,
            key: CallKey::Declared,
        }
    }
}

/// A model response: its assistant text and the tool calls it made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Response {
    /// The assistant text, if any.
    pub text: Option<JsString>,
    /// The tool calls, in emission order.
    pub calls: Vec<Call>,
}

/// What the host does with a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallAction {
    /// Execute it.
    Run,
    /// Do not execute it; the model reads [`Decision::message`] instead.
    Refuse,
}

impl CallAction {
    /// `"run"` or `"refuse"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CallAction::Run => "run",
            CallAction::Refuse => "refuse",
        }
    }
}

/// The decision for one call.
#[derive(Debug, PartialEq)]
pub struct Decision {
    /// The call's id.
    pub id: JsString,
    /// The tool.
    pub tool_name: JsString,
    /// Run or refuse.
    pub action: CallAction,
    /// The verdict behind it, if a rung was reached (an in-round duplicate
    /// carries its first call's).
    pub verdict: Option<Verdict>,
    /// What the model reads when the call is refused.
    pub message: Option<JsString>,
    /// The call's fingerprint (absent when exempt, unhashable, or halted).
    pub fingerprint: Option<JsString>,
    /// The effective streak the call was scored with.
    pub streak: f64,
    /// An identical call came earlier in the round: this one shares its decision.
    pub duplicate_in_round: bool,
    /// Not monitored (`loopKey: false`, or the host exempted it).
    pub exempt: bool,
    /// Identified by the raw text of its arguments.
    pub malformed: bool,
}

// By hand for `clone_from`, which fills a kept decision's strings in
// place (the session keeps each round's decisions: [`Spare`]).
impl Clone for Decision {
    fn clone(&self) -> Self {
        Decision {
            id: self.id.clone(),
            tool_name: self.tool_name.clone(),
            action: self.action,
            verdict: self.verdict.clone(),
            message: self.message.clone(),
            fingerprint: self.fingerprint.clone(),
            streak: self.streak,
            duplicate_in_round: self.duplicate_in_round,
            exempt: self.exempt,
            malformed: self.malformed,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.id.clone_from(&source.id);
        self.tool_name.clone_from(&source.tool_name);
        self.action = source.action;
        self.verdict.clone_from(&source.verdict);
        self.message.clone_from(&source.message);
        self.fingerprint.clone_from(&source.fingerprint);
        self.streak = source.streak;
        self.duplicate_in_round = source.duplicate_in_round;
        self.exempt = source.exempt;
        self.malformed = source.malformed;
    }
}

/// What one response did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoundOutcome {
    /// The round the calls were recorded in (every response opens one,
    /// calls or not; 0 when the run is halted).
    pub round: u64,
    /// The verdict on the response's text, if any.
    pub text_verdict: Option<Verdict>,
    /// One decision per call, in order.
    pub decisions: Vec<Decision>,
    /// The verdict that halts the run, once one has.
    pub halt: Option<Verdict>,
    /// Every verdict this response produced, in order (for `onDetected`).
    pub verdicts: Vec<Verdict>,
}

/// What the next model request must carry, consumed once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestPatch {
    /// Steer guidance to append to the request's instructions.
    pub guidance: Option<JsString>,
    /// Run the request on the escalation model.
    pub escalate: bool,
}

/// A recorded call still waiting for its result.
#[derive(Clone, Debug, Default, PartialEq)]
struct Inflight {
    tool_name: JsString,
    fingerprint: JsString,
    round: f64,
}

/// The most entries of a round's maps kept for the next round.
const SPARE_ENTRIES: usize = 16;

/// The entries of the last round's bookkeeping, kept to be filled again
/// (`clone_from`): a round of a few calls then allocates no key, decision
/// or pending call — most of what a one-call round used to allocate.
/// Nothing here is read as state.
#[derive(Clone, Debug, Default)]
struct Spare {
    decisions: Vec<(JsString, Decision)>,
    inflight: Vec<(JsString, Inflight)>,
    keys: Vec<JsString>,
}

/// Moves a map's entries into `spare` (up to [`SPARE_ENTRIES`]; the rest
/// are dropped), leaving it empty with its table.
fn recycle<V>(map: &mut SmallMap<V>, spare: &mut Vec<(JsString, V)>) {
    while let Some(entry) = map.pop() {
        if spare.len() < SPARE_ENTRIES {
            spare.push(entry);
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RoundState {
    /// Between rounds: a lone call opens a new round.
    Closed,
    /// Calls are recorded into the current round.
    Open,
    /// Halted before this round: every call is refused, none recorded.
    Sealed,
}

/// A call's identity, resolved once.
enum Identity {
    Skip,
    /// Keyed by its full arguments, fingerprinted by the host.
    Fingerprinted(JsString),
    /// Keyed by `material` — `None`: the call's own arguments, which most
    /// calls are keyed by, so they are neither copied nor compared — and
    /// with the full arguments to fall back to when `fallback` (the
    /// material is something else).
    Key {
        material: Option<Value>,
        fallback: bool,
    },
}

impl Identity {
    /// The fingerprint of the identity's key material (`None`: skipped);
    /// one the host took is moved out, not copied.
    fn fingerprint(&mut self, call: &Call) -> Option<Result<JsString>> {
        match self {
            Identity::Skip => None,
            Identity::Fingerprinted(fingerprint) => Some(Ok(std::mem::take(fingerprint))),
            Identity::Key { material, .. } => Some(
                fingerprint_tool_call(&call.tool_name, material.as_ref().unwrap_or(&call.args)).map(JsString::from),
            ),
        }
    }

    /// Whether a failed fingerprint falls back to the full arguments
    /// (`None`: the call is not monitored).
    fn fallback(&self) -> Option<bool> {
        match self {
            Identity::Skip => None,
            Identity::Fingerprinted(_) => Some(false),
            Identity::Key { fallback, .. } => Some(*fallback),
        }
    }
}

/// Whether `text` is a fingerprint as the crate writes it: 64 lowercase hex digits.
fn is_fingerprint(text: &JsString) -> bool {
    let digits = text.as_bytes();
    // Without a branch per digit: every call handed its fingerprint is checked.
    let hex = |b: u8| (b.wrapping_sub(b'0') < 10) | (b.wrapping_sub(b'a') < 6);
    digits.len() == 64 && digits.iter().fold(true, |all, &b| all & hex(b))
}

/// The session engine (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct Session {
    monitor: DoomLoopMonitor,
    options: SessionOptions,
    round: u64,
    round_state: RoundState,
    /// `name \n fingerprint` → what the current round decided for its
    /// first call (an in-round duplicate reuses it: [`first_decision`]).
    round_decisions: SmallMap<Decision>,
    /// The options every call is recorded with (built once: the default
    /// detector label is a string).
    record_options: RecordOptions,
    /// The current round's decisions by call id.
    decisions: SmallMap<Decision>,
    inflight: SmallMap<Inflight>,
    stop: Option<Verdict>,
    restored_stop: Option<Verdict>,
    steer: Vec<JsString>,
    /// An escalate verdict waits for the next request (persisted).
    escalation_pending: bool,
    verdicts: Vec<Verdict>,
    warnings: Vec<String>,
    dropped_warnings: usize,
    spare: Spare,
}

/// Why the calls of a halted run were not executed (what the model reads).
pub fn halt_text(verdict: Option<&Verdict>) -> JsString {
    let mut text = JsString::from("Not executed: this run was stopped by doom-loop detection.");
    if let Some(verdict) = verdict {
        text.push_str(" ");
        text.push_js(&verdict.message);
    }
    text
}

fn refusal_text(verdict: &Verdict, tool_name: &JsString) -> JsString {
    if !verdict.message.is_empty() {
        return verdict.message.clone();
    }
    let mut text = JsString::from("Doom loop suspected: this \"");
    text.push_js(tool_name);
    text.push_str("\" call keeps repeating and was refused. Try something different.");
    text
}

/// What a round keeps of the decision for the first call of a
/// fingerprint: what an in-round duplicate of it reuses — not its id, name
/// or fingerprint, which would be copied for every call of every round.
fn first_decision(action: CallAction, verdict: Option<Verdict>, message: Option<JsString>, streak: f64) -> Decision {
    Decision {
        id: JsString::new(),
        tool_name: JsString::new(),
        action,
        verdict,
        message,
        fingerprint: None,
        streak,
        duplicate_in_round: false,
        exempt: false,
        malformed: false,
    }
}

/// `name \n fingerprint`, written into `key`'s room when one is given.
fn decision_key(key: Option<JsString>, tool_name: &JsString, fingerprint: &JsString) -> JsString {
    let mut key = match key {
        Some(mut key) => {
            key.clone_from(tool_name);
            key
        }
        // One exact allocation (a clone of the name would grow twice).
        None => {
            let mut key = JsString::with_capacity(tool_name.as_bytes().len() + 1 + fingerprint.as_bytes().len());
            key.push_js(tool_name);
            key
        }
    };
    key.push_str("\n");
    key.push_js(fingerprint);
    key
}

/// The host cannot carry out `rung`: it is turned off, with the warning.
/// One warning per `loopEffect` declaration that is neither `"write"` nor
/// `"read"` (an `undefined` one declares nothing): the tool's effect is
/// then unknown, as if it had none.
fn warn_on_effect_declarations(declarations: &Object, warnings: &mut Vec<String>) {
    for (tool, declaration) in declarations.iter() {
        if matches!(declaration, Value::Undefined) || Effect::from_declaration(declaration).is_some() {
            continue;
        }
        warnings.push(format!(
            "[DoomLoop] loopEffect of \"{tool}\" must be \"write\" or \"read\", got {}; treating the tool's effect as unknown.",
            crate::json::to_json(declaration)
        ));
    }
}

/// Whether any tool is declared `write` (effect-aware streaks have
/// something to act on).
fn declares_a_write(declarations: &Object) -> bool {
    declarations
        .iter()
        .any(|(_, declaration)| Effect::from_declaration(declaration) == Some(Effect::Write))
}

fn drop_rung(config: &mut ResolvedConfig, rung: Action, what: &str, warnings: &mut Vec<String>) {
    let threshold = config.ladder.threshold(rung);
    let Threshold::At(at) = threshold else {
        return;
    };
    match rung {
        Action::Block => config.ladder.block = Threshold::Off,
        Action::Stop => config.ladder.stop = Threshold::Off,
        Action::Steer => config.ladder.steer = Threshold::Off,
        Action::Escalate => config.ladder.escalate = Threshold::Off,
        Action::Observe => config.ladder.observe = Threshold::Off,
    }
    warnings.push(format!(
        "[DoomLoop] this host cannot {what}: the ladder rung \"{}\" ({}) is skipped and its verdicts fall through to weaker rungs.",
        rung.as_str(),
        crate::json::js_number(at)
    ));
}

impl Session {
    /// A session for a fresh run. Warnings about rungs the host cannot
    /// carry out are waiting in [`Session::take_warnings`].
    #[inline(never)]
    pub fn new(config: ResolvedConfig, options: SessionOptions) -> Session {
        let mut config = config;
        let mut warnings = Vec::new();
        let caps = options.capabilities;
        if !caps.refuse {
            drop_rung(&mut config, Action::Block, "refuse a tool call", &mut warnings);
        }
        if !caps.stop {
            drop_rung(&mut config, Action::Stop, "halt the run", &mut warnings);
        }
        if !caps.steer {
            drop_rung(
                &mut config,
                Action::Steer,
                "add guidance to the next request",
                &mut warnings,
            );
        }
        if !caps.escalate && (config.escalation.is_some() || config.ladder.escalate != Threshold::Off) {
            drop_rung(
                &mut config,
                Action::Escalate,
                "switch the model of the next request",
                &mut warnings,
            );
            config.escalation = None;
        }
        warn_on_effect_declarations(&options.loop_effects, &mut warnings);
        if BeyondConfig::of(&config).effects && !declares_a_write(&options.loop_effects) {
            // Nothing can lift a streak: the rule would only grow the state.
            let mut beyond = BeyondConfig::of(&config).clone();
            beyond.effects = false;
            config.beyond = beyond.into();
        }
        Session {
            monitor: DoomLoopMonitor::new(config),
            options,
            round: 0,
            round_state: RoundState::Closed,
            round_decisions: SmallMap::default(),
            record_options: RecordOptions::default(),
            decisions: SmallMap::default(),
            inflight: SmallMap::default(),
            stop: None,
            restored_stop: None,
            steer: Vec::new(),
            escalation_pending: false,
            verdicts: Vec::new(),
            warnings,
            dropped_warnings: 0,
            spare: Spare::default(),
        }
    }

    /// A session resuming a persisted state (see [`Session::state`]; a
    /// reference `doomLoop` blob resumes too). Fails open like the
    /// reference: a malformed blob or part of one is dropped, with the
    /// reference's warning, and the session starts from what is left. A
    /// persisted halt is kept aside: [`Session::resume_halt`] re-arms it
    /// (a resume that only answers pending approvals), a new user turn
    /// does not.
    pub fn restore(config: ResolvedConfig, options: SessionOptions, state: &Value) -> Session {
        let mut session = Session::new(config, options);
        session.resume(state);
        session
    }

    /// Replaces this session's run with a persisted state, as
    /// [`Session::restore`] does (for hosts that load the state after the
    /// session is built): a value that is not a state starts the run over,
    /// with the reference's warning. The config, options and verdict
    /// history stay.
    #[inline(never)]
    pub fn resume(&mut self, state: &Value) {
        // A blob that is not a state (null, an array, a string) is ignored
        // by the detector, as the reference's `restore` ignores it; but the
        // session's rounds start over below, so keeping the detector's
        // streaks would score the next round against round numbers it has
        // already seen. The run starts over, as `Session::restore` of it.
        if !matches!(state, Value::Object(_)) {
            self.monitor = DoomLoopMonitor::new(self.monitor.config().clone());
        }
        for warning in self.monitor.restore(state) {
            self.warn(warning);
        }
        // The rounds start over: a declaration from before would score a
        // later round of the same number (found by the `session` fuzz
        // target; regression test in tests/session.rs).
        self.monitor.forget_declared_round();
        self.round = 0;
        self.round_state = RoundState::Closed;
        self.round_decisions.clear();
        self.decisions.clear();
        self.inflight.clear();
        self.stop = None;
        self.restored_stop = None;
        self.steer.clear();
        self.escalation_pending = false;
        if let Value::Object(object) = state {
            persist::restore_extras(self, object);
        }
    }

    /// The resolved configuration the session runs (rungs the host cannot
    /// carry out turned off, and effect-aware streaks when no tool is
    /// declared `write`).
    pub fn config(&self) -> &ResolvedConfig {
        self.monitor.config()
    }

    /// The detector underneath.
    pub fn monitor(&self) -> &DoomLoopMonitor {
        &self.monitor
    }

    /// Whether a call of `tool_name` that the host did not key
    /// ([`CallKey::Declared`]) is identified by its full arguments: no
    /// data-form loop key names the tool. Its identity is then the
    /// arguments' fingerprint alone, which a host may take itself and pass
    /// as [`CallKey::Fingerprint`] (the binding does, from the arguments'
    /// lowered text, never building them as a tree).
    pub fn keys_by_arguments(&self, tool_name: &JsString) -> bool {
        self.data_loop_key(tool_name).is_none()
    }

    /// The data-form loop key declared for `tool_name` (an `undefined` one
    /// declares none).
    fn data_loop_key(&self, tool_name: &JsString) -> Option<&Value> {
        self.options
            .loop_keys
            .get_js(tool_name)
            .filter(|declaration| !matches!(declaration, Value::Undefined))
    }

    /// The declared effect of `tool_name` ([`SessionOptions::loop_effects`]).
    fn effect(&self, tool_name: &JsString) -> Effect {
        self.options
            .loop_effects
            .get_js(tool_name)
            .and_then(Effect::from_declaration)
            .unwrap_or_default()
    }

    /// The current round number (0 before the first).
    pub fn round(&self) -> u64 {
        self.round
    }

    fn warn(&mut self, warning: String) {
        if self.warnings.len() < MAX_PENDING_WARNINGS {
            self.warnings.push(warning);
        } else {
            self.dropped_warnings += 1;
        }
    }

    /// The warnings since the last call (configuration, loop keys,
    /// fingerprint fallbacks), in order; a host prints them.
    pub fn take_warnings(&mut self) -> Vec<String> {
        let mut warnings = std::mem::take(&mut self.warnings);
        let dropped = std::mem::take(&mut self.dropped_warnings);
        if dropped > 0 {
            warnings.push(format!("[DoomLoop] {dropped} more warnings were dropped."));
        }
        warnings
    }

    // ------------------------------------------------------------ events

    /// A model response: its text is checked, then its calls are recorded
    /// as one new round. Halted already (or by this text): every call is
    /// refused with the halt text and none is recorded.
    // Kept out of line: the wasm build is -O3, and inlined copies of
    // the engine's steps in every entry point would weigh on the module.
    #[inline(never)]
    pub fn on_response(&mut self, mut response: Response) -> RoundOutcome {
        let first = self.verdicts.len();
        let text_verdict = response.text.as_ref().and_then(|text| self.on_text(text));
        let mut outcome = RoundOutcome {
            text_verdict,
            ..RoundOutcome::default()
        };
        if self.stop.is_some() {
            self.round_state = RoundState::Sealed;
            self.decisions.clear();
            for call in response.calls {
                let decision = self.sealed_decision(call);
                self.remember(&decision);
                outcome.decisions.push(decision);
            }
        } else {
            self.open_round();
            outcome.round = self.round;
            // Each call's fingerprint is taken once, for the round's
            // declaration and its record alike.
            let identified: Vec<(Identity, Option<Result<JsString>>)> = response
                .calls
                .iter_mut()
                .map(|call| {
                    let mut identity = self.identity(call);
                    let fingerprint = identity.fingerprint(call);
                    (identity, fingerprint)
                })
                .collect();
            let declared: Vec<_> = response
                .calls
                .iter()
                .zip(&identified)
                .filter_map(|(call, (_, fingerprint))| Some((&call.tool_name, fingerprint.as_ref()?.as_ref())))
                .collect();
            for warning in self.monitor.declare_fingerprinted_round(self.round as f64, &declared) {
                self.warn(warning);
            }
            outcome.decisions.reserve_exact(response.calls.len());
            for (call, (identity, fingerprint)) in response.calls.into_iter().zip(identified) {
                let decision = self.evaluate(call, identity, fingerprint);
                outcome.decisions.push(decision);
            }
        }
        outcome.halt = self.stop.clone();
        outcome.verdicts = self.verdicts[first..].to_vec();
        outcome
    }

    /// One call the host could not see with its response (it learns of
    /// calls one at a time): recorded into the current round, undeclared,
    /// opening a new round when none is open ([`Session::end_round`]). In
    /// a sealed round ([`Session::seal_round`], or a response that came
    /// after the halt) it is refused with the halt text, unrecorded; a halt
    /// alone does not refuse it (a call the user approved after the halt
    /// runs: check [`Session::halt`] to stop asking).
    #[inline(never)]
    pub fn on_call(&mut self, mut call: Call) -> Decision {
        match self.round_state {
            RoundState::Sealed => {
                let decision = self.sealed_decision(call);
                self.remember(&decision);
                return decision;
            }
            RoundState::Closed => self.open_round(),
            RoundState::Open => {}
        }
        let mut identity = self.identity(&mut call);
        let fingerprint = identity.fingerprint(&call);
        self.evaluate(call, identity, fingerprint)
    }

    /// Opens a new, empty round now (a host whose calls arrive one by one
    /// and whose round starts before the first of them): later
    /// [`Session::on_call`]s and [`Session::on_server_tool`]s record into it.
    pub fn begin_round(&mut self) {
        self.open_round();
    }

    /// The run is halted and the calls about to run must not: every call of
    /// this round is refused with the halt text until the next round. No-op
    /// when the run is not halted.
    pub fn seal_round(&mut self) {
        if self.stop.is_some() {
            self.round_state = RoundState::Sealed;
            self.decisions.clear();
        }
    }

    /// Closes the current round: the next [`Session::on_call`] opens a new
    /// one. ([`Session::on_response`] always opens a new round.)
    pub fn end_round(&mut self) {
        self.round_state = RoundState::Closed;
    }

    /// A model response's text alone (e.g. when its calls are recorded
    /// later with [`Session::on_response`], or a final answer).
    pub fn on_text(&mut self, text: &JsString) -> Option<Verdict> {
        let verdict = self.monitor.record_assistant_text(text)?;
        self.apply(&verdict);
        Some(verdict)
    }

    /// A server-side tool the provider ran (web search, …), recorded after
    /// the fact in the current round: never refused; its identity is what
    /// the host extracted from the output item.
    #[inline(never)]
    pub fn on_server_tool(&mut self, tool_name: &JsString, identity: &Value) -> Option<Verdict> {
        let options = RecordOptions::server_tool();
        let round = self.round as f64;
        let record = match self.monitor.record_tool_call(tool_name, identity, round, &options) {
            Ok(record) => record,
            Err(error) => {
                self.warn(format!(
                    "[DoomLoop] a \"{tool_name}\" call cannot be fingerprinted; not monitoring it: {error}"
                ));
                return None;
            }
        };
        let key = decision_key(None, tool_name, &record.fingerprint);
        if record.duplicate_in_round {
            return self.round_decisions.get(&key).and_then(|d| d.verdict.clone());
        }
        let first = first_decision(CallAction::Run, record.verdict.clone(), None, record.streak);
        self.round_decisions.insert(key, first);
        let verdict = record.verdict?;
        self.apply(&verdict);
        Some(verdict)
    }

    /// The result of a call the session let run: `outcome` is the result's
    /// identity (the tool's `loopOutputKey` material, `None` when it has
    /// none), `failed` whether it failed. Feeds the opt-in outcome-aware
    /// streaks, ledger and failure streak; a result for a call that was
    /// refused, unknown, or already answered is ignored. Returns the
    /// verdict it produced, if any (never a refusal: the call has run; a
    /// `stop` halts before the next round).
    #[inline(never)]
    pub fn on_result(&mut self, id: &JsString, outcome: Option<&Value>, failed: bool) -> Option<Verdict> {
        // `swap_remove`: O(1); `shift_remove` moved every later call, which
        // made a wide round's results quadratic (repro
        // import_result_matching_quadratic). The map is keyed by id; its
        // persisted order carries no meaning.
        let call = self.inflight.swap_remove(id)?;
        let recorded = self
            .monitor
            .record_tool_result(&call.tool_name, &call.fingerprint, outcome, failed, call.round);
        let verdict = match recorded {
            Ok(verdict) => verdict,
            Err(error) => {
                self.warn(format!(
                    "[DoomLoop] the result of a \"{}\" call cannot be fingerprinted; recording it without an outcome: {error}",
                    call.tool_name
                ));
                self.monitor
                    .record_tool_result(&call.tool_name, &call.fingerprint, None, failed, call.round)
                    .ok()
                    .flatten()
            }
        }?;
        self.apply(&verdict);
        Some(verdict)
    }

    /// One model response's spend (tokens, or cost), for the opt-in budget
    /// guard. Once the run is halted the spend is kept, not the verdicts.
    pub fn on_spend(&mut self, amount: f64) -> Option<Verdict> {
        let verdict = self.monitor.record_spend(amount)?;
        if self.stop.is_some() {
            return None;
        }
        self.apply(&verdict);
        Some(verdict)
    }

    /// A new user message: the run continues, so a halt is lifted (the
    /// evidence stays), the cross-turn text streak restarts, and a round
    /// in progress is closed.
    pub fn on_user_turn(&mut self) {
        self.stop = None;
        self.restored_stop = None;
        self.monitor.reset_text_streak();
        self.round_state = RoundState::Closed;
    }

    /// Re-arms the halt of the restored state, for a resume that only
    /// answers pending approvals (a halted run stays halted then).
    pub fn resume_halt(&mut self) {
        if let Some(verdict) = self.restored_stop.take() {
            self.stop = Some(verdict);
        }
    }

    // ------------------------------------------------------ the requests

    /// Would recording `calls` as the next round halt the run? Answered on
    /// a copy: the session is unchanged (a host that must decide to stop
    /// before the round runs asks this, then records the round).
    #[inline(never)]
    pub fn would_halt(&self, calls: &[Call]) -> bool {
        if self.stop.is_some() || calls.is_empty() {
            return self.stop.is_some();
        }
        // A scratch session over a copy of what the calls' round reads:
        // their tools' entries and the opt-in detectors' state
        // (`DoomLoopMonitor::scratch_for`), not the whole state.
        let mut scratch = Session::new(self.monitor.config().clone(), self.options.clone());
        let tools: Vec<&JsString> = calls.iter().map(|call| &call.tool_name).collect();
        scratch.monitor = self.monitor.scratch_for(&tools);
        scratch.round = self.round;
        scratch
            .on_response(Response {
                text: None,
                calls: calls.to_vec(),
            })
            .halt
            .is_some()
    }

    /// The queued steer guidance, joined by newlines, consumed.
    pub fn take_guidance(&mut self) -> Option<JsString> {
        if self.steer.is_empty() {
            return None;
        }
        let mut guidance = JsString::new();
        for (i, message) in self.steer.drain(..).enumerate() {
            if i > 0 {
                guidance.push_str("\n");
            }
            guidance.push_js(&message);
        }
        Some(guidance)
    }

    /// Takes a pending escalation: true when the next request must run on
    /// the escalation model (the budget is then spent). `apply: false`
    /// drops it unspent (e.g. the next request is the run's final answer).
    pub fn take_escalation(&mut self, apply: bool) -> bool {
        if !std::mem::take(&mut self.escalation_pending) || !apply || !self.monitor.can_escalate() {
            return false;
        }
        self.monitor.consume_escalation();
        true
    }

    /// What the next model request must carry, consumed once: the steer
    /// guidance and whether it runs on the escalation model.
    pub fn next_request(&mut self) -> RequestPatch {
        let escalate = self.take_escalation(self.stop.is_none());
        RequestPatch {
            guidance: self.take_guidance(),
            escalate,
        }
    }

    // ---------------------------------------------------------- read side

    /// The verdict that halted the run, if one has.
    pub fn halt(&self) -> Option<&Verdict> {
        self.stop.as_ref()
    }

    /// What the model reads for a call not executed because the run is
    /// halted (`None` when it is not).
    pub fn halt_text(&self) -> Option<JsString> {
        self.stop.as_ref().map(|stop| halt_text(Some(stop)))
    }

    /// Every verdict so far, in order.
    pub fn verdicts(&self) -> &[Verdict] {
        &self.verdicts
    }

    /// The decision for a call of the current round, by id.
    pub fn decision(&self, id: &JsString) -> Option<&Decision> {
        self.decisions.get(id)
    }

    /// The tool of a call that ran and awaits its result; `None` once
    /// answered (or refused, or of an earlier round).
    pub fn pending_tool(&self, id: &JsString) -> Option<&JsString> {
        self.inflight.get(id).map(|call| &call.tool_name)
    }

    /// Steer guidance waiting for the next request.
    pub fn pending_guidance(&self) -> &[JsString] {
        &self.steer
    }

    /// The state to persist: the reference's `doomLoop` object —
    /// `getState()` plus `stopVerdict` when halted and `pendingSteer` when
    /// guidance is waiting — and the session's round counter, calls
    /// awaiting results and a pending escalation under [`SESSION_STATE_KEY`].
    pub fn state(&self) -> Value {
        persist::state(self)
    }

    /// [`Session::state`] as JSON text.
    pub fn state_json(&self) -> String {
        persist::state_json(self)
    }

    // ----------------------------------------------------------- internal

    fn open_round(&mut self) {
        self.round += 1;
        self.round_state = RoundState::Open;
        while let Some((key, _)) = self.round_decisions.pop() {
            if self.spare.keys.len() < SPARE_ENTRIES {
                self.spare.keys.push(key);
            }
        }
        recycle(&mut self.decisions, &mut self.spare.decisions);
        // Calls that never reported (refused by a later hook, paused).
        recycle(&mut self.inflight, &mut self.spare.inflight);
    }

    #[inline(never)]
    fn sealed_decision(&self, call: Call) -> Decision {
        Decision {
            id: call.id,
            tool_name: call.tool_name,
            action: if self.options.capabilities.refuse {
                CallAction::Refuse
            } else {
                CallAction::Run
            },
            verdict: None,
            message: Some(halt_text(self.stop.as_ref())),
            fingerprint: None,
            streak: 0.0,
            duplicate_in_round: false,
            exempt: false,
            malformed: call.malformed,
        }
    }

    /// Resolves one call's identity once.
    #[inline(never)]
    fn identity(&mut self, call: &mut Call) -> Identity {
        const ARGS: Identity = Identity::Key {
            material: None,
            fallback: false,
        };
        if call.malformed {
            return ARGS;
        }
        let with_fallback = |material: Value| {
            let fallback = material != call.args;
            Identity::Key {
                material: Some(material),
                fallback,
            }
        };
        match &mut call.key {
            CallKey::Exempt => Identity::Skip,
            CallKey::Material(material) => with_fallback(material.clone()),
            // Moved out: the key is not read again.
            CallKey::Fingerprint(fingerprint) if is_fingerprint(fingerprint) => {
                Identity::Fingerprinted(std::mem::take(fingerprint))
            }
            CallKey::Fingerprint(_) => {
                self.warn(format!(
                    "[DoomLoop] a \"{}\" call cannot be fingerprinted; not monitoring it: the host's fingerprint is not 64 lowercase hex digits",
                    call.tool_name
                ));
                Identity::Skip
            }
            CallKey::Declared => {
                // No loop key: the arguments themselves (what
                // resolve_loop_key_material would copy).
                let Some(declaration) = self.data_loop_key(&call.tool_name).map(LoopKey::Declared) else {
                    return ARGS;
                };
                match resolve_loop_key_material(declaration, &call.args) {
                    Ok(LoopKeyResolution::Exempt) => Identity::Skip,
                    Ok(LoopKeyResolution::Key(material)) => with_fallback(material),
                    // A fallback is always to the full arguments.
                    Ok(LoopKeyResolution::Fallback { warning, .. }) => {
                        self.warn(format!("[DoomLoop] \"{}\": {warning}", call.tool_name));
                        ARGS
                    }
                    Err(error) => {
                        self.warn(format!(
                            "[DoomLoop] the loop identity of a \"{}\" call could not be resolved; not monitoring it: {error}",
                            call.tool_name
                        ));
                        Identity::Skip
                    }
                }
            }
        }
    }

    /// Records one call with the reference's fallback chain (the identity,
    /// then the full arguments, then no detection); an in-round duplicate
    /// reuses the first decision.
    #[inline(never)]
    fn evaluate(&mut self, call: Call, identity: Identity, fingerprint: Option<Result<JsString>>) -> Decision {
        let mut decision = Decision {
            id: call.id,
            tool_name: call.tool_name,
            action: CallAction::Run,
            verdict: None,
            message: None,
            fingerprint: None,
            streak: 0.0,
            duplicate_in_round: false,
            exempt: false,
            malformed: call.malformed,
        };
        let (Some(fallback), Some(fingerprint)) = (identity.fallback(), fingerprint) else {
            decision.exempt = true;
            self.remember(&decision);
            return decision;
        };
        let round = self.round as f64;
        let name = &decision.tool_name;
        self.record_options.effect = self.effect(name);
        let record = match fingerprint {
            Ok(fingerprint) => Some(
                self.monitor
                    .record_fingerprint(name, fingerprint, round, &self.record_options),
            ),
            Err(error) => match fallback {
                false => {
                    self.warn(format!(
                        "[DoomLoop] a \"{name}\" call cannot be fingerprinted; not monitoring it: {error}"
                    ));
                    None
                }
                true => {
                    self.warn(format!(
                        "[DoomLoop] the loop key of a \"{name}\" call cannot be fingerprinted; using its full arguments: {error}"
                    ));
                    match self
                        .monitor
                        .record_tool_call(name, &call.args, round, &self.record_options)
                    {
                        Ok(record) => Some(record),
                        Err(error) => {
                            self.warn(format!(
                                "[DoomLoop] the arguments of a \"{name}\" call cannot be fingerprinted either; not monitoring it: {error}"
                            ));
                            None
                        }
                    }
                }
            },
        };
        let Some(record) = record else {
            self.remember(&decision);
            return decision;
        };
        let key = decision_key(self.spare.keys.pop(), name, &record.fingerprint);
        decision.streak = record.streak;
        if record.duplicate_in_round {
            decision.duplicate_in_round = true;
            if let Some(first) = self.round_decisions.get(&key) {
                decision.action = first.action;
                decision.verdict = first.verdict.clone();
                decision.message = first.message.clone();
                decision.streak = first.streak;
            }
        } else {
            if let Some(verdict) = record.verdict {
                if matches!(verdict.action, Action::Block | Action::Stop) {
                    decision.action = CallAction::Refuse;
                    decision.message = Some(refusal_text(&verdict, &decision.tool_name));
                }
                self.apply(&verdict);
                decision.verdict = Some(verdict);
            }
            let first = first_decision(
                decision.action,
                decision.verdict.clone(),
                decision.message.clone(),
                decision.streak,
            );
            self.round_decisions.insert(key, first);
        }
        if decision.action == CallAction::Run {
            let (mut id, mut call) = self.spare.inflight.pop().unwrap_or_default();
            id.clone_from(&decision.id);
            call.tool_name.clone_from(&decision.tool_name);
            call.fingerprint.clone_from(&record.fingerprint);
            call.round = round;
            self.inflight.insert(id, call);
        }
        decision.fingerprint = Some(record.fingerprint);
        self.remember(&decision);
        decision
    }

    /// Keeps a copy of the decision of the current round's call, by id (in
    /// a kept entry's room when there is one).
    fn remember(&mut self, decision: &Decision) {
        let entry = match self.spare.decisions.pop() {
            Some((mut id, mut kept)) => {
                id.clone_from(&decision.id);
                kept.clone_from(decision);
                (id, kept)
            }
            None => (decision.id.clone(), decision.clone()),
        };
        self.decisions.insert(entry.0, entry.1);
    }

    /// A verdict's consequences: steer guidance, a pending escalation, a halt.
    #[inline(never)]
    fn apply(&mut self, verdict: &Verdict) {
        self.verdicts.push(verdict.clone());
        let mut action = verdict.action;
        let fingerprint_detector = matches!(&verdict.detector, Value::String(s) if *s == TOOL_FINGERPRINT);
        if action == Action::Block && !fingerprint_detector {
            action = Action::Observe;
        }
        match action {
            Action::Steer => self.queue_steer(verdict.message.clone()),
            Action::Escalate => {
                // The first escalation of a window wins; a second must not spend budget twice.
                if !self.escalation_pending {
                    self.escalation_pending = true;
                    let mut message = verdict.message.clone();
                    message.push_str(" The next turn runs on a stronger model: use it to change course.");
                    self.queue_steer(message);
                }
            }
            Action::Stop => self.stop = Some(verdict.clone()),
            Action::Observe | Action::Block => {}
        }
    }

    fn queue_steer(&mut self, message: JsString) {
        if !self.steer.contains(&message) {
            self.steer.push(message);
        }
    }
}
