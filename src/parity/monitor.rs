//! The detector's state machine: feed it rounds, tool calls and assistant
//! texts, get verdicts back.
//!
//! Keeps the reference's `DoomLoopMonitor`:
//!
//! - **Round-set streak.** A tool's round identity is the sorted *set* of
//!   fingerprints it was called with in that round, declared up front by
//!   [`DoomLoopMonitor::declare_round`]; the streak counts consecutive rounds
//!   with the same set, measured against a baseline fixed at the round
//!   transition so arrival order never matters.
//! - **Per-call streak.** Alongside it, each exact call counts the
//!   consecutive rounds it was issued in, whatever its round-mates did; the
//!   stronger of the two decides.
//! - **In-round duplicates** share the first occurrence's decision
//!   (`duplicate_in_round`), and a non-member of a declared round can neither
//!   move nor inherit the round's counters.
//! - **Text**: within-response repetition and cross-turn identical text,
//!   the stronger verdict winning (ties to the within-response one).
//! - **Escalation budget**, counted here, consumed by the engine.
//!
//! Every message is built byte for byte as the reference builds it.
//! Numbers are JS doubles throughout: restored state may carry any finite
//! count, and the reference does its arithmetic in doubles.

use std::sync::Arc;

use indexmap::IndexMap;

use crate::error::Result;
use crate::evidence::{Effect, Finding, RuleState, ScoredCall};
use crate::fingerprint::{
    fingerprint_lowered_tool_call, fingerprint_lowered_tool_call_with_strings, fingerprint_string,
    fingerprint_tool_call,
};
use crate::js_string::JsString;
use crate::json::{js_number, sorted, write_json_string, Value};
use crate::ladder::{resolve_ladder_action, Action, LadderOptions};
use crate::parity::config::ResolvedConfig;
use crate::text::{detect_text_repetition, normalize_whitespace};
use crate::value::small_map::SmallMap;

/// Which detector produced a verdict.
pub const TOOL_FINGERPRINT: &str = "tool-fingerprint";
/// Detector label for server-side tool records.
pub const SERVER_TOOL_FINGERPRINT: &str = "server-tool-fingerprint";
/// Detector label for a block repeating within one response.
pub const TEXT_REPETITION: &str = "text-repetition";
/// Detector label for identical text across turns.
pub const TEXT_STREAK: &str = "text-streak";

/// A doom-loop detection event (the reference's `DoomLoopVerdict`).
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Detector label (a string unless a caller passed something else):
    /// always one of the reference's four kinds for the monitor's own
    /// verdicts, so a consumer validating against the reference accepts it.
    pub detector: Value,
    /// The opt-in detector that raised the verdict (`"tool-cycle"`, …), if
    /// one did; serialized as `optInDetector`, a key the reference lacks.
    pub opt_in_detector: Option<&'static str>,
    /// The rung reached.
    pub action: Action,
    /// The count that crossed the rung.
    pub streak: f64,
    /// Fingerprint of the repeated unit.
    pub fingerprint: JsString,
    /// The tool, for fingerprint verdicts.
    pub tool_name: Option<JsString>,
    /// The text for block outputs and steer messages.
    pub message: JsString,
}

impl Verdict {
    /// The verdict as the reference's JSON object.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    /// Appends the verdict's JSON to `out`.
    pub fn write_json(&self, out: &mut String) {
        out.push_str("{\"detector\":");
        out.push_str(&crate::json::to_json(&self.detector));
        if let Some(opt_in) = self.opt_in_detector {
            out.push_str(",\"optInDetector\":\"");
            out.push_str(opt_in);
            out.push('"');
        }
        out.push_str(",\"action\":\"");
        out.push_str(self.action.as_str());
        out.push_str("\",\"streak\":");
        crate::json::write_number(self.streak, out);
        out.push_str(",\"fingerprint\":");
        write_json_string(&self.fingerprint, out);
        if let Some(name) = &self.tool_name {
            out.push_str(",\"toolName\":");
            write_json_string(name, out);
        }
        out.push_str(",\"message\":");
        write_json_string(&self.message, out);
        out.push('}');
    }
}

/// The result of recording one tool call (the reference's `DoomLoopCallRecord`).
#[derive(Clone, Debug, PartialEq)]
pub struct CallRecord {
    /// The call's fingerprint.
    pub fingerprint: JsString,
    /// The effective streak (the stronger of round-set and per-call).
    pub streak: f64,
    /// The same call was already recorded this round: reuse its decision.
    pub duplicate_in_round: bool,
    /// The verdict, when a rung was reached.
    pub verdict: Option<Verdict>,
}

impl CallRecord {
    /// The record as the reference's JSON object.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"fingerprint\":");
        write_json_string(&self.fingerprint, &mut out);
        out.push_str(",\"streak\":");
        crate::json::write_number(self.streak, &mut out);
        out.push_str(",\"duplicateInRound\":");
        out.push_str(if self.duplicate_in_round { "true" } else { "false" });
        if let Some(verdict) = &self.verdict {
            out.push_str(",\"verdict\":");
            verdict.write_json(&mut out);
        }
        out.push('}');
        out
    }
}

/// Options of [`DoomLoopMonitor::record_tool_call`].
#[derive(Clone, Debug, PartialEq)]
pub struct RecordOptions {
    /// False for post-execution records (server tools): nothing to block.
    pub allow_block: bool,
    /// Verdict detector label; default `"tool-fingerprint"`.
    pub detector: Value,
    /// The tool's declared effect, handed to the evidence rules
    /// ([`crate::evidence`]); unknown by default.
    pub effect: Effect,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            allow_block: true,
            detector: Value::String(JsString::from(TOOL_FINGERPRINT)),
            effect: Effect::Unknown,
        }
    }
}

impl RecordOptions {
    /// Options from a JS options object: `allowBlock ?? true` (by
    /// truthiness), `detector ?? "tool-fingerprint"`.
    pub fn from_js(options: Option<&Value>) -> Self {
        let defaults = RecordOptions::default();
        let object = options.and_then(Value::as_object);
        let get = |name: &str| {
            object
                .and_then(|o| o.get(name))
                .filter(|v| !matches!(v, Value::Null | Value::Undefined))
        };
        RecordOptions {
            allow_block: get("allowBlock").map_or(defaults.allow_block, Value::is_truthy),
            detector: get("detector").cloned().unwrap_or(defaults.detector),
            effect: defaults.effect,
        }
    }
    /// Options for a server-side tool record (no block, server detector label).
    pub fn server_tool() -> Self {
        RecordOptions {
            allow_block: false,
            detector: Value::String(JsString::from(SERVER_TOOL_FINGERPRINT)),
            effect: Effect::Unknown,
        }
    }
}

/// One call to declare in a round.
#[derive(Clone, Debug, PartialEq)]
pub struct DeclaredCall {
    /// The tool.
    pub tool_name: JsString,
    /// Its resolved key material.
    pub key_material: Value,
}

/// Per-call counts: fingerprint → consecutive rounds, in insertion order
/// (the order `getState` persists, as the reference's object keeps it),
/// keyed so that a wide round or a large restored blob stays linear.
#[derive(Clone, Debug, Default)]
pub(crate) struct CallStreaks {
    entries: SmallMap<f64>,
}

impl CallStreaks {
    pub(crate) fn get(&self, fingerprint: &JsString) -> Option<f64> {
        self.entries.get(fingerprint).copied()
    }

    pub(crate) fn set(&mut self, fingerprint: &JsString, count: f64) {
        match self.entries.get_mut(fingerprint) {
            Some(slot) => *slot = count,
            None => self.entries.insert_new(fingerprint.clone(), count),
        }
    }

    pub(crate) fn contains(&self, fingerprint: &JsString) -> bool {
        self.entries.contains_key(fingerprint)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Emptied for a new round, its room kept when small (a round of a
    /// few calls then allocates no table; a wide round's is given back).
    fn recycled(mut self) -> CallStreaks {
        if self.entries.capacity() > RECYCLED_CALL_STREAKS {
            return CallStreaks::default();
        }
        self.entries.clear();
        self
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `(fingerprint, count)` in insertion order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&JsString, f64)> {
        self.entries.iter().map(|(k, v)| (k, *v))
    }
}

/// The most per-call counts whose table a new round reuses.
const RECYCLED_CALL_STREAKS: usize = 16;

/// The most tools a new round's declaration reuses the table of.
const RECYCLED_DECLARED_TOOLS: usize = 16;

/// A declared call's fingerprint, or the error that kept it out.
type DeclaredFingerprint<'a> = (&'a JsString, std::result::Result<&'a JsString, &'a crate::error::Error>);

fn fingerprint_of<'a>(&(_, fingerprint): &DeclaredFingerprint<'a>) -> Option<&'a JsString> {
    fingerprint.ok()
}

/// A declared round's set of one tool: sorted, each member once.
fn round_set(set: Vec<JsString>) -> Arc<[JsString]> {
    // Most tools make one call a round: nothing to sort.
    let mut set = if set.len() > 1 {
        sorted(&set, &JsString::cmp_utf16)
    } else {
        set
    };
    set.dedup();
    Arc::from(set)
}

/// True when the sorted set holds `fingerprint` (O(log n): a declared
/// round may be wide).
pub(crate) fn sorted_contains(set: &[JsString], fingerprint: &JsString) -> bool {
    set.binary_search_by(|member| member.cmp_utf16(fingerprint)).is_ok()
}

/// One tool's streak entry: the persisted shape plus the run-local round
/// bookkeeping the reference never serializes.
#[derive(Clone, Debug, Default)]
pub(crate) struct StreakEntry {
    pub(crate) fingerprint: JsString,
    pub(crate) streak: f64,
    /// The round's set, sorted (restored sets may repeat a member).
    pub(crate) round_fingerprints: Arc<[JsString]>,
    pub(crate) call_streaks: Option<CallStreaks>,
    round: Option<f64>,
    prior_round_fingerprints: Option<Arc<[JsString]>>,
    /// Whether the prior set equals a given (shared, wide) set: every call
    /// of a declared round compares against the same two sets, and
    /// comparing them per call would make the round quadratic.
    prior_match: Option<(Arc<[JsString]>, bool)>,
    prior_streak: f64,
    prior_call_streaks: CallStreaks,
}

impl StreakEntry {
    pub(crate) fn restored(
        fingerprint: JsString,
        streak: f64,
        round_fingerprints: Arc<[JsString]>,
        call_streaks: CallStreaks,
    ) -> Self {
        StreakEntry {
            fingerprint,
            streak,
            round_fingerprints,
            call_streaks: Some(call_streaks),
            ..StreakEntry::default()
        }
    }
}

/// The cross-turn text streak.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TextStreak {
    pub(crate) fingerprint: JsString,
    pub(crate) streak: f64,
}

#[derive(Clone, Debug)]
struct DeclaredRound {
    round: f64,
    /// Per tool, in declaration order.
    fingerprints: IndexMap<JsString, Arc<[JsString]>>,
}

/// The detector (the reference's `DoomLoopMonitor`).
///
/// ```
/// use doom_loop::{DoomLoopMonitor, ResolvedConfig, JsString, json::parse, ladder::Action};
/// let mut monitor = DoomLoopMonitor::new(ResolvedConfig::default());
/// let tool = JsString::from("get_invoice");
/// let args = parse(r#"{"invoice_id":"INV-2291"}"#).unwrap();
/// let mut last = None;
/// for round in 1..=3 {
///     last = monitor.record_tool_call(&tool, &args, round as f64, &Default::default()).unwrap().verdict;
/// }
/// assert_eq!(last.unwrap().action, Action::Block);
/// ```
#[derive(Clone, Debug)]
pub struct DoomLoopMonitor {
    pub(crate) config: ResolvedConfig,
    /// Per-tool entries in JS `Map` insertion order.
    pub(crate) tools: IndexMap<JsString, StreakEntry>,
    pub(crate) text: Option<TextStreak>,
    pub(crate) escalations_used: f64,
    declared_round: Option<DeclaredRound>,
    /// The running state of the evidence rules the configuration plugs in
    /// ([`crate::evidence`]); `None` without rules (the reference).
    pub(crate) rules: Option<Box<dyn RuleState>>,
}

impl DoomLoopMonitor {
    /// A monitor with empty state.
    pub fn new(config: ResolvedConfig) -> Self {
        let rules = config.beyond.start(None);
        DoomLoopMonitor::with_rules(config, rules)
    }

    /// A monitor with empty state running `rules` (the state of the
    /// configuration's evidence rules, as the caller started them).
    pub(crate) fn with_rules(config: ResolvedConfig, rules: Option<Box<dyn RuleState>>) -> Self {
        DoomLoopMonitor {
            config,
            tools: IndexMap::new(),
            text: None,
            escalations_used: 0.0,
            declared_round: None,
            rules,
        }
    }

    /// The configuration the monitor runs.
    pub fn config(&self) -> &ResolvedConfig {
        &self.config
    }

    /// Declares the complete set of calls a round will make, before any is
    /// recorded. Unhashable key material is left out of the round set; the
    /// returned warnings (the reference's `console.warn` text followed by
    /// the error message) say which.
    pub fn declare_round(&mut self, round: f64, calls: &[DeclaredCall]) -> Vec<String> {
        let fingerprints: Vec<Result<JsString>> = calls
            .iter()
            .map(|call| fingerprint_tool_call(&call.tool_name, &call.key_material).map(JsString::from))
            .collect();
        let calls: Vec<_> = calls
            .iter()
            .zip(&fingerprints)
            .map(|(call, fingerprint)| (&call.tool_name, fingerprint.as_ref()))
            .collect();
        self.declare_fingerprinted_round(round, &calls)
    }

    /// [`DoomLoopMonitor::declare_round`] over calls already fingerprinted
    /// (or that failed to be): the session engine takes each call's
    /// fingerprint once and hands the same one to the record, instead of
    /// canonicalizing and hashing its arguments a second time.
    pub(crate) fn declare_fingerprinted_round(&mut self, round: f64, calls: &[DeclaredFingerprint<'_>]) -> Vec<String> {
        let mut warnings = Vec::new();
        // Most rounds call one tool (most, once): its set is built
        // straight, without grouping.
        let mut tool: Option<&JsString> = None;
        let mut one_tool = true;
        let mut members = 0usize;
        for &(tool_name, fingerprint) in calls {
            match fingerprint {
                Ok(_) => {
                    members += 1;
                    match tool {
                        None => tool = Some(tool_name),
                        Some(first) => one_tool &= first == tool_name,
                    }
                }
                Err(error) => warnings.push(format!(
                    "[DoomLoop] could not fingerprint a \"{}\" call while declaring round {}; excluding it from the round set: {}",
                    tool_name,
                    js_number(round),
                    error
                )),
            }
        }
        // The last declaration's table, emptied: a round of a few tools
        // allocates no new one.
        let mut declared = self
            .declared_round
            .take()
            .map(|d| d.fingerprints)
            .filter(|map| map.capacity() <= RECYCLED_DECLARED_TOOLS)
            .unwrap_or_default();
        match tool {
            None => declared.clear(),
            Some(name) if one_tool => {
                let set: Arc<[JsString]> = match (members, calls.iter().find_map(fingerprint_of)) {
                    (1, Some(only)) => Arc::from(std::slice::from_ref(only)),
                    _ => round_set(calls.iter().filter_map(fingerprint_of).cloned().collect()),
                };
                // The tool's key kept when the last round declared it alone.
                declared.retain(|declared_tool, _| declared_tool == name);
                match declared.get_mut(name) {
                    Some(slot) => *slot = set,
                    None => {
                        declared.insert(name.clone(), set);
                    }
                }
            }
            Some(_) => {
                let mut sets: IndexMap<&JsString, Vec<JsString>> = IndexMap::new();
                for &(tool_name, fingerprint) in calls {
                    if let Ok(fingerprint) = fingerprint {
                        sets.entry(tool_name).or_default().push(fingerprint.clone());
                    }
                }
                declared.clear();
                declared.extend(sets.into_iter().map(|(tool, set)| (tool.clone(), round_set(set))));
            }
        }
        self.declared_round = Some(DeclaredRound {
            round,
            fingerprints: declared,
        });
        warnings
    }

    /// Drops the declaration of the current round (the session engine's
    /// `resume`: its rounds start over, so a declaration made before would
    /// apply to a later round that reuses its number). The reference's
    /// `restore` keeps it, and so does [`DoomLoopMonitor::restore`].
    pub(crate) fn forget_declared_round(&mut self) {
        self.declared_round = None;
    }

    /// True when the escalate rung can still fire.
    pub fn can_escalate(&self) -> bool {
        self.config
            .escalation
            .as_ref()
            .is_some_and(|e| self.escalations_used < e.max_escalations)
    }

    /// Consumes one escalation (the engine calls this when it applies one).
    pub fn consume_escalation(&mut self) {
        self.escalations_used += 1.0;
    }

    /// Clears the cross-turn text streak (a late tool result showed progress).
    pub fn reset_text_streak(&mut self) {
        self.text = None;
    }

    fn ladder_options(&self, allow_block: bool) -> LadderOptions {
        LadderOptions {
            allow_block,
            allow_escalate: self.can_escalate(),
        }
    }

    /// Records one tool call and returns its streak record and any verdict.
    ///
    /// # Errors
    /// Whatever canonicalization rejects in `key_material`; the monitor's
    /// state is unchanged then (callers fall back to another identity).
    pub fn record_tool_call(
        &mut self,
        tool_name: &JsString,
        key_material: &Value,
        round: f64,
        options: &RecordOptions,
    ) -> Result<CallRecord> {
        let fingerprint = JsString::from(fingerprint_tool_call(tool_name, key_material)?);
        Ok(self.record_fingerprint(tool_name, fingerprint, round, options))
    }

    /// [`DoomLoopMonitor::record_tool_call`] over key material in the
    /// lowered text form ([`crate::json::parse_lowered`]), fingerprinted
    /// without building a value tree (the wasm binding's record path).
    ///
    /// # Errors
    /// As [`crate::canonical::canonicalize_lowered`]; the monitor's state is
    /// unchanged then.
    pub fn record_lowered_call(
        &mut self,
        tool_name: &JsString,
        key_material: &str,
        round: f64,
        options: &RecordOptions,
    ) -> Result<CallRecord> {
        let fingerprint = JsString::from(fingerprint_lowered_tool_call(tool_name, key_material)?);
        Ok(self.record_fingerprint(tool_name, fingerprint, round, options))
    }

    /// [`DoomLoopMonitor::record_lowered_call`] over lowered text whose
    /// large strings cross raw (see
    /// [`crate::fingerprint::fingerprint_lowered_tool_call_with_strings`]).
    ///
    /// # Errors
    /// As that function; the monitor's state is unchanged then.
    pub fn record_lowered_call_with_strings<S: AsRef<[u8]>>(
        &mut self,
        tool_name: &JsString,
        key_material: &str,
        strings: &[S],
        round: f64,
        options: &RecordOptions,
    ) -> Result<CallRecord> {
        let fingerprint = JsString::from(fingerprint_lowered_tool_call_with_strings(
            tool_name,
            key_material,
            strings,
        )?);
        Ok(self.record_fingerprint(tool_name, fingerprint, round, options))
    }

    /// Records a call whose fingerprint is already taken (as
    /// [`DoomLoopMonitor::record_tool_call`] after its fingerprint).
    pub(crate) fn record_fingerprint(
        &mut self,
        tool_name: &JsString,
        fingerprint: JsString,
        round: f64,
        options: &RecordOptions,
    ) -> CallRecord {
        let slot = self.tools.get_index_of(tool_name);
        // Taken apart, not copied: `store_entry` replaces it below.
        let previous = slot.map(|i| &mut self.tools[i]);
        let is_same_round = previous.as_ref().is_some_and(|p| p.round.is_some_and(|r| r == round));

        let declared: Option<&Arc<[JsString]>> = self
            .declared_round
            .as_ref()
            .filter(|d| d.round == round)
            .and_then(|d| d.fingerprints.get(tool_name));
        let declared_member = declared.is_some_and(|set| sorted_contains(set, &fingerprint));

        // The calls recorded this round are the keys of its per-call counts
        // (every record sets its own): an in-round duplicate is one of them.
        let (prior_set, prior_streak, prior_call_streaks, mut current_calls, mut kept_fingerprint, mut prior_match) =
            match previous {
                Some(p) if is_same_round => (
                    p.prior_round_fingerprints.take(),
                    p.prior_streak,
                    std::mem::take(&mut p.prior_call_streaks),
                    p.call_streaks.take().unwrap_or_default(),
                    std::mem::take(&mut p.fingerprint),
                    p.prior_match.take(),
                ),
                Some(p) => (
                    Some(p.round_fingerprints.clone()),
                    p.streak,
                    p.call_streaks.take().unwrap_or_default(),
                    // The counts of two rounds ago are dropped here: their
                    // table holds this round's.
                    std::mem::take(&mut p.prior_call_streaks).recycled(),
                    std::mem::take(&mut p.fingerprint),
                    None,
                ),
                // Never read without a previous entry (`slot` is `None`).
                None => (
                    None,
                    0.0,
                    CallStreaks::default(),
                    CallStreaks::default(),
                    JsString::new(),
                    None,
                ),
            };
        let duplicate_in_round = current_calls.contains(&fingerprint);
        if let Some(set) = declared {
            if !prior_match.as_ref().is_some_and(|(cached, _)| Arc::ptr_eq(cached, set)) {
                let equal = prior_set.as_ref().is_some_and(|prior| **prior == **set);
                prior_match = Some((set.clone(), equal));
            }
        }
        let score = |set: &[JsString]| {
            let equal = match &prior_match {
                Some((cached, equal)) if std::ptr::eq(cached.as_ptr(), set.as_ptr()) && cached.len() == set.len() => {
                    *equal
                }
                _ => prior_set.as_ref().is_some_and(|prior| **prior == *set),
            };
            if equal {
                prior_streak + 1.0
            } else {
                1.0
            }
        };
        let call_streak = prior_call_streaks.get(&fingerprint).unwrap_or(0.0) + 1.0;

        let single = std::slice::from_ref(&fingerprint);
        let call_set: &[JsString] = match declared {
            Some(set) if declared_member => set,
            _ => single,
        };
        let streak = score(call_set);
        let round_set: Arc<[JsString]> = declared.cloned().unwrap_or_else(|| Arc::from(single));
        let round_streak = score(&round_set);
        let reference = streak.max(call_streak);
        // The one place the evidence rules read the call (without rules,
        // the reference's streak passes through).
        let scored = ScoredCall {
            tool: tool_name,
            fingerprint: &fingerprint,
            effect: options.effect,
            reference,
            round,
            round_set: &round_set,
            closed_round: prior_set.as_deref().filter(|_| !is_same_round),
        };
        let (effective, written_since, finding) = match self.rules.as_mut() {
            Some(rules) => {
                let evidence = rules.call(&scored);
                (evidence.streak, evidence.written_since, evidence.finding)
            }
            None => (reference, false, None),
        };
        let action = resolve_ladder_action(&self.config.ladder, effective, self.ladder_options(options.allow_block));
        let message = action.map(|_| {
            let shape = MessageShape {
                round_streak: streak,
                call_streak,
                round_declared: declared_member,
                written_since,
            };
            build_tool_verdict_message(tool_name, &fingerprint, call_set, shape)
        });
        if !(declared.is_some() && !declared_member && slot.is_some()) {
            // Into the kept string's room: no allocation.
            kept_fingerprint.clone_from(&fingerprint);
        }

        current_calls.set(&fingerprint, call_streak);
        let entry = StreakEntry {
            fingerprint: kept_fingerprint,
            streak: round_streak,
            round_fingerprints: round_set,
            call_streaks: Some(current_calls),
            round: Some(round),
            prior_round_fingerprints: prior_set,
            prior_match,
            prior_streak,
            prior_call_streaks,
        };
        self.store_entry(tool_name, slot, entry);

        let verdict = action.zip(message).map(|(action, message)| Verdict {
            detector: options.detector.clone(),
            opt_in_detector: None,
            action,
            streak: effective,
            fingerprint: fingerprint.clone(),
            tool_name: Some(tool_name.clone()),
            message,
        });
        let finding = finding.and_then(|finding| self.finding_verdict(finding, Some(options)));
        let verdict = self.noted(stronger_verdict(verdict, finding));
        let refused = verdict
            .as_ref()
            .is_some_and(|v| matches!(v.action, Action::Block | Action::Stop));
        if let (Some(rules), false) = (self.rules.as_mut(), refused) {
            rules.ran(tool_name, &fingerprint, options.effect, round);
        }
        CallRecord {
            verdict,
            fingerprint,
            streak: effective,
            duplicate_in_round,
        }
    }

    /// The verdict of an evidence rule's finding, if it reaches a rung: a
    /// call's finding is reported under the kind the call is recorded
    /// under (`record`), and may block when the call may; any other never
    /// blocks.
    fn finding_verdict(&self, finding: Finding, record: Option<&RecordOptions>) -> Option<Verdict> {
        let (detector, allow_block) = match (finding.detector, record) {
            (Some(kind), _) => (Value::String(JsString::from(kind)), false),
            (None, Some(record)) => (record.detector.clone(), record.allow_block),
            (None, None) => (Value::String(JsString::from(TOOL_FINGERPRINT)), false),
        };
        let action = match finding.action {
            Some(action) => action,
            None => resolve_ladder_action(&self.config.ladder, finding.streak, self.ladder_options(allow_block))?,
        };
        Some(Verdict {
            detector,
            opt_in_detector: Some(finding.opt_in),
            action,
            streak: finding.streak,
            fingerprint: finding.fingerprint,
            tool_name: finding.tool_name,
            message: finding.message,
        })
    }

    /// Tells the evidence rules that a loop is suspected (the spend guard
    /// counts the spend of such rounds) and passes the verdict through.
    fn noted(&mut self, verdict: Option<Verdict>) -> Option<Verdict> {
        if let (Some(rules), true) = (self.rules.as_mut(), verdict.is_some()) {
            rules.suspected();
        }
        verdict
    }

    /// Records the result of a call for the evidence rules (a no-op
    /// without rules: the reference has no results). `input` is the call's
    /// fingerprint from [`Self::record_tool_call`]; `outcome` is the
    /// result's identity (the tool's `loopOutputKey` material), if any.
    /// Post-execution, so the verdict never blocks; `stop` still stops.
    ///
    /// # Errors
    /// Whatever canonicalization rejects in `outcome`; state is unchanged then.
    pub fn record_tool_result(
        &mut self,
        tool_name: &JsString,
        input: &JsString,
        outcome: Option<&Value>,
        failed: bool,
        round: f64,
    ) -> Result<Option<Verdict>> {
        let Some(rules) = self.rules.as_mut() else {
            return Ok(None);
        };
        let evidence = rules.result(tool_name, input, outcome, failed, round)?;
        if evidence.progress {
            // A repeated call showing something new is progress: the
            // same words around it are not a loop (as the reference
            // clears the text streak when a late result is delivered).
            self.reset_text_streak();
        }
        let verdict = evidence.findings.into_iter().fold(None, |verdict, finding| {
            stronger_verdict(verdict, self.finding_verdict(finding, None))
        });
        Ok(self.noted(verdict))
    }

    /// Feeds one turn's spend (tokens or cost) to the evidence rules (the
    /// opt-in budget guard): a verdict once a rule says the run is over its
    /// budget; `None` otherwise, and always without rules.
    pub fn record_spend(&mut self, amount: f64) -> Option<Verdict> {
        let finding = self.rules.as_mut()?.spend(amount)?;
        self.finding_verdict(finding, None)
    }

    fn store_entry(&mut self, tool_name: &JsString, slot: Option<usize>, entry: StreakEntry) {
        match slot {
            Some(i) => self.tools[i] = entry,
            None => {
                self.tools.insert(tool_name.clone(), entry);
            }
        }
    }

    /// Records one turn's assistant text and returns the stronger verdict of
    /// the two text detectors. Whitespace-only text is a no-op.
    pub fn record_assistant_text(&mut self, text: &JsString) -> Option<Verdict> {
        if !self.config.text.is_enabled() {
            return None;
        }
        let normalized = normalize_whitespace(text);
        if normalized.is_empty() {
            return None;
        }
        let within_response = self.text_repetition_verdict(&normalized);
        let within_response = match self.rules.as_mut().and_then(|rules| rules.text(text)) {
            Some(finding) => stronger_verdict(within_response, self.finding_verdict(finding, None)),
            None => within_response,
        };

        let fingerprint = JsString::from(fingerprint_string(&normalized));
        let streak = match &self.text {
            Some(previous) if previous.fingerprint == fingerprint => previous.streak + 1.0,
            _ => 1.0,
        };
        self.text = Some(TextStreak {
            fingerprint: fingerprint.clone(),
            streak,
        });
        let cross_turn = resolve_ladder_action(&self.config.ladder, streak, self.ladder_options(false))
            .map(|action| Verdict {
                detector: Value::String(JsString::from(TEXT_STREAK)),
                opt_in_detector: None,
                action,
                streak,
                fingerprint,
                tool_name: None,
                message: JsString::from(format!(
                    "Doom loop suspected: the assistant produced identical text for {} consecutive turns. Stop repeating and take a different approach.",
                    js_number(streak)
                )),
            });
        let verdict = stronger_verdict(within_response, cross_turn);
        self.noted(verdict)
    }

    fn text_repetition_verdict(&self, normalized: &JsString) -> Option<Verdict> {
        let repetition = detect_text_repetition(normalized, &self.config.text.thresholds())?;
        let repeats = repetition.repeats as f64;
        let action = resolve_ladder_action(&self.config.ladder, repeats, self.ladder_options(false))?;
        let mut message = JsString::from("Doom loop suspected: the response repeats \"");
        message.push_js(&repetition.sample);
        message.push_str(&format!(
            "\" {} times in a row. Stop repeating and take a different approach.",
            repetition.repeats
        ));
        Some(Verdict {
            detector: Value::String(JsString::from(TEXT_REPETITION)),
            opt_in_detector: None,
            action,
            streak: repeats,
            fingerprint: JsString::from(fingerprint_string(&repetition.sample)),
            tool_name: None,
            message,
        })
    }
}

fn stronger_verdict(a: Option<Verdict>, b: Option<Verdict>) -> Option<Verdict> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.action > a.action { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// The first members' prefixes: one stable string per round set.
fn summarize_round(fingerprints: &[JsString]) -> String {
    let mut summary = String::new();
    for (i, member) in fingerprints.iter().take(3).enumerate() {
        if i > 0 {
            summary.push('+');
        }
        summary.push_str(&member.slice_utf16(0, 8).to_string());
    }
    if fingerprints.len() > 3 {
        summary.push_str(&format!("+{} more", fingerprints.len() - 3));
    }
    summary.push('…');
    summary
}

/// What a tool verdict's text is built from.
#[derive(Clone, Copy, Debug)]
struct MessageShape {
    round_streak: f64,
    call_streak: f64,
    round_declared: bool,
    /// Writes ran between the repeats, none of them new (effect-aware
    /// streaks): the text must not say the result cannot change.
    written_since: bool,
}

/// The reference's `buildToolVerdictMessage`: a per-call text free of
/// fingerprints and counts (so steer dedupe collapses a round to one
/// message), a round-set text, or a single-call text. With writes between
/// the repeats, its claim that repeating cannot change the result is
/// replaced by what is known: the changes repeat earlier ones.
fn build_tool_verdict_message(
    tool_name: &JsString,
    fingerprint: &JsString,
    call_set: &[JsString],
    shape: MessageShape,
) -> JsString {
    let MessageShape {
        round_streak,
        call_streak,
        round_declared,
        written_since,
    } = shape;
    let per_call = call_streak > round_streak || !round_declared;
    let mut message = JsString::from(if per_call {
        "Doom loop suspected: this exact \""
    } else {
        "Doom loop suspected: tool \""
    });
    message.push_js(tool_name);
    let claim = |reference: &'static str, repeating: &str| -> String {
        if written_since {
            format!(" The changes made in between repeat earlier ones, so {repeating} is not making progress.")
        } else {
            reference.to_string()
        }
    };
    if per_call {
        message.push_str(&format!(
            "\" call has been repeated across consecutive rounds.{} Take a different approach, or explain why repetition is required.",
            claim(" Repeating it will not change the result.", "repeating it")
        ));
    } else if call_set.len() > 1 {
        message.push_str(&format!(
            "\" was invoked in {} consecutive rounds with the same set of {} parallel calls (round identity {}).{} Take a different approach, or explain why repetition is required.",
            js_number(round_streak),
            call_set.len(),
            summarize_round(call_set),
            claim(" Reissuing the same fan-out will not change the results.", "reissuing the same fan-out")
        ));
    } else {
        message.push_str(&format!(
            "\" was invoked in {} consecutive rounds with identical arguments (fingerprint {}…).{} Take a different approach, or explain why repetition is required.",
            js_number(round_streak),
            fingerprint.slice_utf16(0, 16),
            claim(" Repeating the call will not change the result.", "repeating the call")
        ));
    }
    message
}
