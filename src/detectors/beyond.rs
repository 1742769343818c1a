//! Opt-in detectors for the loops the reference misses.
//!
//! - **Cycles** — a tool whose round identities repeat with period 2..=4
//!   (`A,B,A,B`; `A,B,C,A,B,C`): the reference's streak resets every round,
//!   so a model alternating `INV-2291` / `inv-2291` is never flagged. The
//!   streak is the number of times the cycle has been issued in a row.
//! - **Progress ledger** — consecutive results of a tool whose outcome
//!   (its `loopOutputKey` material) never changes while its inputs do: a
//!   nonce or timestamp in the arguments defeats fingerprints, not this.
//! - **Failure streak** — consecutive rounds in which a tool failed,
//!   whatever its arguments.
//! - **Budget** — spend fed per turn (tokens or cost); a stop once the run
//!   has spent `maxSpendWhileLooping` while a loop was suspected, or
//!   `maxSpend` in all.
//!
//! Each is off unless its option key is present (`cycles`, `ledger`,
//! `failures`, `budget` — keys the reference ignores), so the default
//! configuration, its verdicts and its persisted state stay byte-identical
//! to the reference's. All verdicts feed the same ladder and verdict shape,
//! with their own `detector` labels; their state persists under `beyond`,
//! a key the reference ignores on restore, bounded and validated like the
//! rest of the blob.

use crate::config::ResolvedConfig;
use crate::effects::EffectsState;
use crate::js_string::JsString;
use crate::json::{Object, Value};
use crate::novelty::{NoveltyConfig, NoveltyState};
use crate::outcome::{OutcomeConfig, OutcomeState};
use crate::repetition::RepetitionConfig;

/// Detector label for a repeating cycle of calls.
pub const TOOL_CYCLE: &str = "tool-cycle";
/// Detector label for unchanged outcomes under changing inputs.
pub const NO_PROGRESS: &str = "no-progress";
/// Detector label for a tool failing round after round.
pub const TOOL_FAILURE: &str = "tool-failure";
/// Detector label for the spend guard.
pub const BUDGET: &str = "budget";

/// Round identities kept per tool: enough to compare with the longest
/// period; how long each period has held is counted, not re-derived.
const CYCLE_HISTORY: usize = 4;
/// Longest period searched for.
const MAX_PERIOD: usize = 4;

/// Which opt-in detectors run, and their parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BeyondConfig {
    /// Longest cycle period searched for (2..=4), when cycle detection is on.
    pub cycles: Option<usize>,
    /// The progress ledger is on.
    pub ledger: bool,
    /// The failure streak is on.
    pub failures: bool,
    /// The spend guard, when configured.
    pub budget: Option<BudgetConfig>,
    /// Outcome-aware streaks ([`crate::outcome`]), when configured.
    pub outcomes: Option<OutcomeConfig>,
    /// Novelty-aware streaks ([`crate::novelty`]), when configured.
    pub novelty: Option<NoveltyConfig>,
    /// In-response repetition ([`crate::repetition`]), when configured.
    pub repetition: Option<RepetitionConfig>,
    /// Effect-aware streaks ([`crate::effects`]) are on.
    pub effects: bool,
}

/// Spend limits (in whatever unit the caller feeds: tokens or cost).
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetConfig {
    /// Stop once this much was spent in rounds where a loop was suspected.
    pub max_spend_while_looping: Option<f64>,
    /// Stop once this much was spent in all.
    pub max_spend: Option<f64>,
    /// The unit named in messages (default `"tokens"`).
    pub unit: JsString,
}

/// No opt-in detector: what a configuration without any runs.
static OFF: BeyondConfig = BeyondConfig {
    cycles: None,
    ledger: false,
    failures: false,
    budget: None,
    outcomes: None,
    novelty: None,
    repetition: None,
    effects: false,
};

impl BeyondConfig {
    /// The opt-in detectors `config` runs (all off when it plugs in none).
    ///
    /// ```
    /// use doom_loop::{beyond::BeyondConfig, config::resolve_doom_loop_option, json::parse};
    /// let option = parse(r#"{"cycles":true,"ladder":{"stop":8}}"#).unwrap();
    /// let config = resolve_doom_loop_option(Some(&option)).result.unwrap().unwrap();
    /// assert_eq!(BeyondConfig::of(&config).cycles, Some(4));
    /// assert!(BeyondConfig::of(&Default::default()).is_off());
    /// ```
    pub fn of(config: &ResolvedConfig) -> &BeyondConfig {
        config.beyond.get::<BeyondConfig>().unwrap_or(&OFF)
    }

    /// True when no opt-in detector is configured (the reference's behaviour).
    pub fn is_off(&self) -> bool {
        *self == BeyondConfig::default()
    }

    /// True when a detector reads what a result showed (novelty- and
    /// outcome-aware streaks, the progress ledger). Otherwise a result counts
    /// only as failed or not, and a caller need not read, lower or hand its
    /// outcome over — tool results (a file read, a test log) are often the
    /// largest values of a run.
    pub fn reads_outcomes(&self) -> bool {
        self.ledger || self.outcomes.is_some() || self.novelty.is_some()
    }

    /// Reads the opt-in keys of a `doomLoop` option (or of a resolved
    /// config's `beyond` object, which has the same shape).
    pub fn from_option(option: Option<&Value>) -> BeyondConfig {
        let get = |name: &str| {
            option
                .and_then(Value::as_object)
                .and_then(|o| o.get(name))
                .filter(|v| !matches!(v, Value::Null | Value::Undefined | Value::Bool(false)))
        };
        let number = |v: Option<&Value>, name: &str| {
            v.and_then(Value::as_object)
                .and_then(|o| o.get(name))
                .and_then(Value::as_f64)
                .filter(|n| n.is_finite() && *n > 0.0)
        };
        BeyondConfig {
            cycles: get("cycles").map(|c| number(Some(c), "maxPeriod").map_or(4, |p| (p as usize).clamp(2, 4))),
            ledger: get("ledger").is_some(),
            failures: get("failures").is_some(),
            budget: get("budget").map(|b| BudgetConfig {
                max_spend_while_looping: number(Some(b), "maxSpendWhileLooping"),
                max_spend: number(Some(b), "maxSpend"),
                unit: b
                    .as_object()
                    .and_then(|o| o.get("unit"))
                    .and_then(Value::as_js_string)
                    .cloned()
                    .unwrap_or_else(|| JsString::from("tokens")),
            }),
            outcomes: get("outcomes").and_then(OutcomeConfig::from_option),
            novelty: get("novelty").and_then(NoveltyConfig::from_option),
            repetition: get("repetition").and_then(RepetitionConfig::from_option),
            effects: get("effects").is_some(),
        }
    }

    /// The resolved form, as a JSON value.
    pub fn to_value(&self) -> Value {
        let mut out = Object::new();
        if let Some(period) = self.cycles {
            let mut cycles = Object::new();
            cycles.insert(JsString::from("maxPeriod"), Value::Number(period as f64));
            out.insert(JsString::from("cycles"), Value::Object(cycles));
        }
        if self.ledger {
            out.insert(JsString::from("ledger"), Value::Bool(true));
        }
        if self.failures {
            out.insert(JsString::from("failures"), Value::Bool(true));
        }
        if let Some(budget) = &self.budget {
            let mut b = Object::new();
            if let Some(n) = budget.max_spend_while_looping {
                b.insert(JsString::from("maxSpendWhileLooping"), Value::Number(n));
            }
            if let Some(n) = budget.max_spend {
                b.insert(JsString::from("maxSpend"), Value::Number(n));
            }
            b.insert(JsString::from("unit"), Value::String(budget.unit.clone()));
            out.insert(JsString::from("budget"), Value::Object(b));
        }
        if let Some(outcomes) = &self.outcomes {
            out.insert(JsString::from("outcomes"), outcomes.to_value());
        }
        if let Some(novelty) = &self.novelty {
            out.insert(JsString::from("novelty"), novelty.to_value());
        }
        if let Some(repetition) = &self.repetition {
            out.insert(JsString::from("repetition"), repetition.to_value());
        }
        if self.effects {
            out.insert(JsString::from("effects"), Value::Bool(true));
        }
        Value::Object(out)
    }
}

/// One tool's cycle evidence.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct CycleEntry {
    /// Identities of its last completed rounds, oldest first.
    pub(crate) history: Vec<JsString>,
    /// For periods 2, 3, 4: how many trailing rounds of `history` equal the
    /// round that period before them.
    pub(crate) runs: [f64; 3],
}

impl CycleEntry {
    /// The run for `period` if `identity` were the next round.
    fn extended_run(&self, period: usize, identity: &JsString) -> f64 {
        let n = self.history.len();
        if n >= period && self.history[n - period] == *identity {
            self.runs[period - 2] + 1.0
        } else {
            0.0
        }
    }

    fn push(&mut self, identity: JsString) {
        for period in 2..=MAX_PERIOD {
            self.runs[period - 2] = self.extended_run(period, &identity);
        }
        self.history.push(identity);
        if self.history.len() > CYCLE_HISTORY {
            self.history.remove(0);
        }
    }

    /// The strongest non-constant cycle ending in `current`: `(period, repeats)`.
    fn cycle(&self, current: &JsString, max_period: usize) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64)> = None;
        for period in 2..=max_period.min(MAX_PERIOD) {
            let n = self.history.len();
            if n < period {
                continue;
            }
            // A constant cycle is the plain streak's business.
            let recent = &self.history[n + 1 - period..];
            if recent.iter().all(|id| id == current) {
                continue;
            }
            let repeats = ((self.extended_run(period, current) + period as f64) / period as f64).floor();
            if repeats >= 2.0 && best.is_none_or(|(_, r)| repeats > r) {
                best = Some((period, repeats));
            }
        }
        best
    }
}

/// One tool's ledger: the last outcome and how long it has held.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LedgerEntry {
    pub(crate) outcome: JsString,
    pub(crate) input: JsString,
    pub(crate) streak: f64,
    pub(crate) inputs_varied: bool,
}

/// One tool's failure streak.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FailureEntry {
    pub(crate) streak: f64,
    pub(crate) round: Option<f64>,
}

/// The opt-in detectors' state (persisted under `beyond`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct BeyondState {
    /// Per tool, in first-seen order (keyed: tool names are input, and a
    /// linear scan per record would make a run quadratic in its tools).
    pub(crate) cycles: ToolMap<CycleEntry>,
    pub(crate) ledger: ToolMap<LedgerEntry>,
    pub(crate) failures: ToolMap<FailureEntry>,
    pub(crate) spent: f64,
    pub(crate) spent_while_looping: f64,
    /// A verdict was issued since the last spend record.
    pub(crate) loop_suspected: bool,
    /// Outcome-aware streak evidence.
    pub(crate) outcomes: OutcomeState,
    /// Novelty-aware streak evidence.
    pub(crate) novelty: NoveltyState,
    /// Consecutive responses that chanted (in-response repetition).
    pub(crate) chanting: f64,
    /// Effect-aware streak evidence.
    pub(crate) effects: EffectsState,
}

/// Per-tool state in insertion order, O(1) by name.
pub(crate) type ToolMap<T> = indexmap::IndexMap<JsString, T>;

fn slot<'a, T: Default>(map: &'a mut ToolMap<T>, tool: &JsString) -> &'a mut T {
    let index = match map.get_index_of(tool) {
        Some(index) => index,
        None => map.insert_full(tool.clone(), T::default()).0,
    };
    &mut map[index]
}

impl Default for LedgerEntry {
    fn default() -> Self {
        LedgerEntry {
            outcome: JsString::new(),
            input: JsString::new(),
            streak: 0.0,
            inputs_varied: false,
        }
    }
}

impl Default for FailureEntry {
    fn default() -> Self {
        FailureEntry {
            streak: 0.0,
            round: None,
        }
    }
}

/// A round's identity: its sorted fingerprint set, joined.
pub(crate) fn round_identity(set: &[JsString]) -> JsString {
    let mut identity = JsString::new();
    for (i, member) in set.iter().enumerate() {
        if i > 0 {
            identity.push_str(",");
        }
        identity.push_js(member);
    }
    identity
}

impl BeyondState {
    /// Records that `tool` starts a new round, its previous round being `finished`.
    pub(crate) fn close_round(&mut self, tool: &JsString, finished: &[JsString]) {
        slot(&mut self.cycles, tool).push(round_identity(finished));
    }

    /// A result of `tool` was new (outcome-aware streaks): a cycle through
    /// calls whose results move is progress, so its evidence restarts.
    pub(crate) fn progress(&mut self, tool: &JsString) {
        self.cycles.retain(|name, _| name != tool);
    }

    /// The cycle `tool` is in, counting the current round `current`.
    pub(crate) fn cycle(&self, tool: &JsString, current: &[JsString], max_period: usize) -> Option<(usize, f64)> {
        let entry = self.cycles.get(tool)?;
        entry.cycle(&round_identity(current), max_period)
    }

    /// Updates the ledger with one result; returns the unchanged-outcome
    /// streak when the inputs varied along it.
    pub(crate) fn record_outcome(&mut self, tool: &JsString, input: &JsString, outcome: JsString) -> Option<f64> {
        let entry = slot(&mut self.ledger, tool);
        if entry.streak > 0.0 && entry.outcome == outcome {
            if entry.input == *input {
                // The same call again: the fingerprint detector's evidence.
                return entry.inputs_varied.then_some(entry.streak);
            }
            entry.streak += 1.0;
            entry.inputs_varied = true;
        } else {
            entry.outcome = outcome;
            entry.streak = 1.0;
            entry.inputs_varied = false;
        }
        entry.input = input.clone();
        entry.inputs_varied.then_some(entry.streak)
    }

    /// Updates the failure streak with one result of `round`.
    pub(crate) fn record_failure(&mut self, tool: &JsString, round: f64, failed: bool) -> f64 {
        let entry = slot(&mut self.failures, tool);
        if !failed {
            entry.streak = 0.0;
        } else if entry.round != Some(round) {
            entry.streak += 1.0;
        }
        entry.round = Some(round);
        entry.streak
    }

    /// The persisted form, `None` when there is nothing to persist.
    pub(crate) fn to_value(&self) -> Option<Value> {
        self.to_value_of(&|_| true, &|_| true)
    }

    /// What [`BeyondState::from_value`] of the persisted form would build,
    /// for the tools of `tools` only (and the run's totals): what a round of
    /// calls of those tools reads, each detector's evidence being per tool.
    /// The one exception: a tool new to the outcome or novelty evidence
    /// evicts its least recently active tool once
    /// [`crate::detectors::MAX_TOOLS`] are tracked — possibly one of these
    /// calls' own — so when the round's new tools would evict any, that
    /// evidence is kept whole.
    pub(crate) fn scratch_for(&self, tools: &[&JsString]) -> BeyondState {
        let named: std::collections::HashSet<&JsString> = tools.iter().copied().collect();
        let keep = |tool: &JsString| named.contains(tool);
        let untracked = |tracks: &dyn Fn(&JsString) -> bool| named.iter().filter(|tool| !tracks(tool)).count();
        let evicts = self.novelty.evicts_with(untracked(&|tool| self.novelty.tracks(tool)))
            || self.outcomes.evicts_with(untracked(&|tool| self.outcomes.tracks(tool)));
        let value = if evicts {
            self.to_value_of(&keep, &|_| true)
        } else {
            self.to_value_of(&keep, &keep)
        };
        BeyondState::from_value(value.as_ref())
    }

    /// The persisted form of the evidence of the tools `keep` names (the
    /// outcome and novelty evidence: `keep_evidence`), and the run's totals.
    fn to_value_of(
        &self,
        keep: &dyn Fn(&JsString) -> bool,
        keep_evidence: &dyn Fn(&JsString) -> bool,
    ) -> Option<Value> {
        let mut out = Object::new();
        let strings = |v: &[JsString]| Value::Array(v.iter().cloned().map(Value::String).collect());
        if !self.cycles.is_empty() {
            let cycles = self
                .cycles
                .iter()
                .filter(|(k, _)| keep(k))
                .map(|(k, e)| {
                    let runs = Value::Array(e.runs.iter().map(|r| Value::Number(*r)).collect());
                    let entry = Object::from_entries(vec![
                        (JsString::from("history"), strings(&e.history)),
                        (JsString::from("runs"), runs),
                    ]);
                    (k.clone(), Value::Object(entry))
                })
                .collect();
            out.insert(JsString::from("cycles"), Value::Object(Object::from_entries(cycles)));
        }
        if !self.ledger.is_empty() {
            let ledger = self
                .ledger
                .iter()
                .filter(|(k, _)| keep(k))
                .map(|(k, e)| {
                    let entry = Object::from_entries(vec![
                        (JsString::from("outcome"), Value::String(e.outcome.clone())),
                        (JsString::from("input"), Value::String(e.input.clone())),
                        (JsString::from("streak"), Value::Number(e.streak)),
                        (JsString::from("inputsVaried"), Value::Bool(e.inputs_varied)),
                    ]);
                    (k.clone(), Value::Object(entry))
                })
                .collect();
            out.insert(JsString::from("ledger"), Value::Object(Object::from_entries(ledger)));
        }
        if !self.failures.is_empty() {
            let failures = self
                .failures
                .iter()
                .filter(|(k, _)| keep(k))
                .map(|(k, e)| (k.clone(), Value::Number(e.streak)))
                .collect();
            out.insert(
                JsString::from("failures"),
                Value::Object(Object::from_entries(failures)),
            );
            // The round of each tool's last result: a state restored in the
            // middle of a round must not count that round's next failure again.
            let rounds: Vec<(JsString, Value)> = self
                .failures
                .iter()
                .filter(|(k, _)| keep(k))
                .filter_map(|(k, e)| e.round.filter(|r| r.is_finite()).map(|r| (k.clone(), Value::Number(r))))
                .collect();
            if !rounds.is_empty() {
                out.insert(
                    JsString::from("failureRounds"),
                    Value::Object(Object::from_entries(rounds)),
                );
            }
        }
        if self.spent > 0.0 {
            out.insert(JsString::from("spent"), Value::Number(self.spent));
            out.insert(
                JsString::from("spentWhileLooping"),
                Value::Number(self.spent_while_looping),
            );
        }
        if let Some(outcomes) = self.outcomes.to_value_of(keep_evidence) {
            out.insert(JsString::from("outcomes"), outcomes);
        }
        if let Some(novelty) = self.novelty.to_value_of(keep_evidence) {
            out.insert(JsString::from("novelty"), novelty);
        }
        if self.chanting > 0.0 {
            out.insert(JsString::from("repetition"), Value::Number(self.chanting));
        }
        // Whole in a partial copy too: a write of any tool is evidence for
        // every other tool's calls.
        if let Some(effects) = self.effects.to_value() {
            out.insert(JsString::from("effects"), effects);
        }
        (!out.is_empty()).then_some(Value::Object(out))
    }

    /// Restores from a persisted `beyond` object, entry by entry; anything
    /// malformed is dropped, never fatal. Bounded like the rest of the blob.
    pub(crate) fn from_value(value: Option<&Value>) -> BeyondState {
        let mut state = BeyondState::default();
        let Some(object) = value.and_then(Value::as_object) else {
            return state;
        };
        let section = |name: &str| object.get(name).and_then(Value::as_object);
        let finite = |v: Option<&Value>| {
            v.and_then(Value::as_f64)
                .filter(|n| n.is_finite() && *n >= 0.0)
                .map(|n| n.floor().min(1_000_000.0))
        };
        for (tool, entry) in section("cycles").into_iter().flat_map(Object::iter) {
            let field = |name: &str| entry.as_object().and_then(|o| o.get(name));
            if let (Some(Value::Array(items)), Some(Value::Array(runs))) = (field("history"), field("runs")) {
                let ids: Vec<JsString> = items.iter().filter_map(Value::as_js_string).cloned().collect();
                let keep = ids.len().saturating_sub(CYCLE_HISTORY);
                let mut entry = CycleEntry {
                    history: ids[keep..].to_vec(),
                    runs: [0.0; 3],
                };
                for (slot, run) in entry.runs.iter_mut().zip(runs) {
                    *slot = finite(Some(run)).unwrap_or(0.0);
                }
                state.cycles.insert(tool.clone(), entry);
            }
        }
        for (tool, entry) in section("ledger").into_iter().flat_map(Object::iter) {
            let field = |name: &str| entry.as_object().and_then(|o| o.get(name));
            if let (Some(outcome), Some(input), Some(streak)) = (
                field("outcome").and_then(Value::as_js_string),
                field("input").and_then(Value::as_js_string),
                finite(field("streak")).filter(|s| *s >= 1.0),
            ) {
                state.ledger.insert(
                    tool.clone(),
                    LedgerEntry {
                        outcome: outcome.clone(),
                        input: input.clone(),
                        streak,
                        inputs_varied: field("inputsVaried").is_some_and(Value::is_truthy),
                    },
                );
            }
        }
        let failure_rounds = section("failureRounds");
        for (tool, streak) in section("failures").into_iter().flat_map(Object::iter) {
            if let Some(streak) = finite(Some(streak)) {
                let round = failure_rounds
                    .and_then(|rounds| rounds.get_js(tool))
                    .and_then(Value::as_f64)
                    .filter(|r| r.is_finite());
                state.failures.insert(tool.clone(), FailureEntry { streak, round });
            }
        }
        state.spent = object
            .get("spent")
            .and_then(Value::as_f64)
            .filter(|n| n.is_finite() && *n >= 0.0)
            .unwrap_or(0.0);
        state.spent_while_looping = object
            .get("spentWhileLooping")
            .and_then(Value::as_f64)
            .filter(|n| n.is_finite() && *n >= 0.0)
            .unwrap_or(0.0)
            .min(state.spent);
        state.outcomes = OutcomeState::from_value(object.get("outcomes"));
        state.novelty = NoveltyState::from_value(object.get("novelty"));
        state.chanting = finite(object.get("repetition")).unwrap_or(0.0);
        state.effects = EffectsState::from_value(object.get("effects"));
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(s: &str) -> Vec<JsString> {
        s.chars().map(|c| JsString::from(c.to_string())).collect()
    }

    fn trailing_cycle(sequence: &[JsString], max_period: usize) -> Option<(usize, f64)> {
        let (last, done) = sequence.split_last()?;
        let mut entry = CycleEntry::default();
        for id in done {
            entry.push(id.clone());
        }
        entry.cycle(last, max_period)
    }

    #[test]
    fn cycles_count_whole_repeats_and_skip_constant_runs() {
        assert_eq!(trailing_cycle(&ids("ABAB"), 4), Some((2, 2.0)));
        assert_eq!(trailing_cycle(&ids("ABABAB"), 4), Some((2, 3.0)));
        assert_eq!(trailing_cycle(&ids("ABABABABABABABABABAB"), 4), Some((2, 10.0)));
        assert_eq!(trailing_cycle(&ids("ABCABC"), 4), Some((3, 2.0)));
        assert_eq!(trailing_cycle(&ids("ABA"), 4), None);
        assert_eq!(trailing_cycle(&ids("AAAA"), 4), None);
        assert_eq!(trailing_cycle(&ids("ABCD"), 4), None);
        assert_eq!(trailing_cycle(&ids("ABCDABCD"), 3), None);
    }

    #[test]
    fn the_ledger_counts_only_when_inputs_vary() {
        let mut s = BeyondState::default();
        let tool = JsString::from("t");
        let same = JsString::from("out");
        assert_eq!(s.record_outcome(&tool, &JsString::from("a"), same.clone()), None);
        assert_eq!(s.record_outcome(&tool, &JsString::from("a"), same.clone()), None);
        assert_eq!(s.record_outcome(&tool, &JsString::from("b"), same.clone()), Some(2.0));
        assert_eq!(s.record_outcome(&tool, &JsString::from("c"), same.clone()), Some(3.0));
        assert_eq!(
            s.record_outcome(&tool, &JsString::from("d"), JsString::from("new")),
            None
        );
    }

    #[test]
    fn failures_count_once_per_round_and_reset_on_success() {
        let mut s = BeyondState::default();
        let tool = JsString::from("t");
        assert_eq!(s.record_failure(&tool, 1.0, true), 1.0);
        assert_eq!(s.record_failure(&tool, 1.0, true), 1.0);
        assert_eq!(s.record_failure(&tool, 2.0, true), 2.0);
        assert_eq!(s.record_failure(&tool, 3.0, false), 0.0);
    }

    #[test]
    fn restore_drops_malformed_entries_and_bounds_history() {
        let blob = crate::json::parse(
            r#"{"cycles":{"t":["1","2","3","4","5","6","7","8","9","10"],"u":5},"ledger":{"t":{"outcome":"o","input":"i","streak":-3}},"failures":{"t":2.5,"u":"x"},"spent":-1}"#,
        )
        .unwrap();
        let s = BeyondState::from_value(Some(&blob));
        assert!(s.cycles.is_empty(), "entries need history and runs");
        assert!(s.ledger.is_empty());
        assert_eq!(
            s.failures.into_iter().collect::<Vec<_>>(),
            vec![(
                JsString::from("t"),
                FailureEntry {
                    streak: 2.0,
                    round: None
                }
            )]
        );
        assert_eq!(s.spent, 0.0);
    }
}
