//! Outcome-aware streaks (opt-in, the `outcomes` key of the `doomLoop` option).
//!
//! The reference counts how many consecutive rounds a tool was called with
//! the same fingerprint, whatever the calls returned. Real agents repeat an
//! identical call on purpose when its result moves: a no-argument
//! `scroll_down` shows the next page each time; a test run after every edit
//! (edit and test through different tools) returns a new failure each time;
//! a poller sees a job advance. Those are progress, not loops.
//!
//! The rule: a call's *outcome streak* counts the consecutive calls of one
//! fingerprint since its result last turned **new**. A result is new when it
//! is not among the last `recent` known results of that fingerprint (default
//! 2, so an A/B/A/B oscillation keeps counting while A/B/C/D restarts); the
//! call that returned it becomes the first of a fresh run. The streak the
//! ladder sees is the reference's streak minus the calls before that point,
//! so:
//!
//! - a call whose fingerprint has no known result behaves exactly as in the
//!   reference (nothing is subtracted);
//! - a run the reference breaks (another fingerprint of the tool in between)
//!   is broken here too (the fingerprint's recent results are kept: an
//!   output seen before the break is not new after it);
//! - the same call with the same output counts exactly as in the reference.
//!
//! Results are compared by their identity: the fingerprint of the outcome
//! value (the tool's `loopOutputKey` projection in the adapter), optionally
//! with every run of ASCII digits masked to `0` first (`maskDigits`) so
//! timings and ids do not make every output new.
//!
//! The verdict for a call is decided when the call is recorded, before its
//! result exists: a block at outcome streak 3 means the previous two results
//! were the same. A result that is new is also progress for the cross-turn
//! text streak and the tool's cycle evidence, which the monitor clears.
//!
//! State lives in the monitor's `beyond` blob under `outcomes` (a key the
//! reference's `restore` does not read): for the [`MAX_TOOLS`] most recently
//! active tools, each tool's [`MAX_FINGERPRINTS`] most recently called
//! fingerprints with their last [`MAX_RECENT`] result identities.

use indexmap::IndexMap;

use crate::detectors::{evidence_key, restored_count, EvidenceKey};
use crate::js_string::JsString;
use crate::json::{Object, Value};

/// Most recent results a fingerprint remembers.
pub const MAX_RECENT: usize = 8;
/// Fingerprints tracked per tool; the least recently called goes first.
pub const MAX_FINGERPRINTS: usize = 32;
/// Tools tracked; the least recently active goes first.
pub const MAX_TOOLS: usize = crate::detectors::MAX_TOOLS;

/// The outcome rule's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct OutcomeConfig {
    /// A result is new when it is not among this many latest known results
    /// of the fingerprint (1..=[`MAX_RECENT`]).
    pub recent: usize,
    /// Mask runs of ASCII digits in the outcome before comparing.
    pub mask_digits: bool,
}

impl Default for OutcomeConfig {
    fn default() -> Self {
        OutcomeConfig {
            recent: 2,
            mask_digits: false,
        }
    }
}

impl OutcomeConfig {
    /// Reads `outcomes: true | {recent?, maskDigits?}`; other values mean off.
    pub fn from_option(option: &Value) -> Option<OutcomeConfig> {
        let defaults = OutcomeConfig::default();
        match option {
            Value::Bool(true) => Some(defaults),
            Value::Object(o) => Some(OutcomeConfig {
                recent: o
                    .get("recent")
                    .and_then(Value::as_f64)
                    .filter(|n| n.is_finite() && *n >= 1.0)
                    .map_or(defaults.recent, |n| (n as usize).min(MAX_RECENT)),
                mask_digits: o.get("maskDigits").is_some_and(Value::is_truthy),
            }),
            _ => None,
        }
    }

    /// The resolved form, as a JSON value.
    pub fn to_value(&self) -> Value {
        Value::Object(Object::from_entries(vec![
            (JsString::from("recent"), Value::Number(self.recent as f64)),
            (JsString::from("maskDigits"), Value::Bool(self.mask_digits)),
        ]))
    }

    /// The value whose fingerprint identifies a result: `outcome` itself,
    /// or with digit runs masked.
    pub fn comparable(&self, outcome: &Value) -> Value {
        if self.mask_digits {
            mask_digits(outcome)
        } else {
            outcome.clone()
        }
    }
}

/// `outcome` with every run of ASCII digits in its strings and keys replaced
/// by one `0`, and every finite number by `0` (non-finite ones stay, so the
/// masked value is fingerprintable exactly when the original is).
pub fn mask_digits(outcome: &Value) -> Value {
    match outcome {
        Value::String(s) => Value::String(mask_string(s)),
        Value::Number(n) if n.is_finite() => Value::Number(0.0),
        Value::Array(items) => Value::Array(items.iter().map(mask_digits).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (mask_string(k), mask_digits(v))).collect()),
        other => other.clone(),
    }
}

fn mask_string(s: &JsString) -> JsString {
    let mut out = JsString::with_capacity(s.as_bytes().len());
    let mut in_digits = false;
    for unit in s.code_units() {
        let digit = (u16::from(b'0')..=u16::from(b'9')).contains(&unit);
        if !(digit && in_digits) {
            out.push_code_unit(if digit { u16::from(b'0') } else { unit });
        }
        in_digits = digit;
    }
    out
}

/// One fingerprint's outcome evidence.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct OutcomeEntry {
    pub(crate) fingerprint: JsString,
    /// Latest known result identities, oldest first (≤ [`MAX_RECENT`]).
    pub(crate) recent: Vec<JsString>,
    /// Reference streak of the call before the current run began.
    pub(crate) base: f64,
    /// Reference streak of the latest recorded call.
    pub(crate) last: f64,
    /// Round of the latest recorded call.
    pub(crate) round: Option<f64>,
    /// Round of the latest recorded result (a second result of that round is ignored).
    pub(crate) result_round: Option<f64>,
}

/// Outcome evidence of the [`MAX_TOOLS`] most recently active tools
/// (persisted under `beyond.outcomes`), keyed by tool name, least recently
/// active first: a call or a result costs one hash lookup and a move of at
/// most [`MAX_TOOLS`] slots (the entries of one tool are at most
/// [`MAX_FINGERPRINTS`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct OutcomeState {
    pub(crate) tools: IndexMap<JsString, Vec<OutcomeEntry>>,
}

impl OutcomeState {
    /// The entries of `tool`, now the most recently active (a new tool
    /// evicts the least recently active one once [`MAX_TOOLS`] are tracked).
    fn entries(&mut self, tool: &JsString) -> &mut Vec<OutcomeEntry> {
        let last = match self.tools.get_index_of(tool) {
            Some(index) => {
                let last = self.tools.len() - 1;
                self.tools.move_index(index, last);
                last
            }
            None => {
                if self.tools.len() >= MAX_TOOLS {
                    self.tools.shift_remove_index(0);
                }
                self.tools.insert_full(tool.clone(), Vec::new()).0
            }
        };
        &mut self.tools[last]
    }

    /// Whether `new_tools` tools not tracked yet would evict a tracked one.
    pub(crate) fn evicts_with(&self, new_tools: usize) -> bool {
        self.tools.len() + new_tools > MAX_TOOLS
    }

    /// Whether `tool` has evidence.
    pub(crate) fn tracks(&self, tool: &JsString) -> bool {
        self.tools.contains_key(tool)
    }

    /// The outcome streak of a call the reference scored `streak`: its
    /// streak minus the calls before the fingerprint's result last turned new.
    /// `key` is the [evidence key](EvidenceKey) of the call's fingerprint.
    pub(crate) fn streak(&mut self, tool: &JsString, key: EvidenceKey<'_>, streak: f64, round: f64) -> f64 {
        let entries = self.entries(tool);
        // Least recently called last out: a command the agent keeps coming
        // back to (paging between other commands) keeps its results.
        let entry = match entries.iter().position(|e| key.is(&e.fingerprint)) {
            Some(i) => entries.remove(i),
            None => {
                if entries.len() == MAX_FINGERPRINTS {
                    entries.remove(0);
                }
                OutcomeEntry {
                    fingerprint: key.to_js_string(),
                    ..OutcomeEntry::default()
                }
            }
        };
        entries.push(entry);
        let Some(entry) = entries.last_mut() else {
            return streak;
        };
        if streak <= entry.base || (entry.round != Some(round) && streak <= entry.last) {
            // The reference broke the run; the results stay, so an output
            // seen before the break is still not new after it.
            entry.base = 0.0;
        }
        entry.last = streak;
        // A non-finite round (NaN from a caller) equals no round, as in the
        // comparisons above; kept out so the state is what restore reads back.
        entry.round = Some(round).filter(|r| r.is_finite());
        (streak - entry.base).max(1.0)
    }

    /// Records the identity of a result of `fingerprint`'s call in `round`;
    /// a new result starts a fresh run at that call. Returns whether it was
    /// new (an earlier result of the fingerprint is known and differs).
    /// `key` is the [evidence key](EvidenceKey) of the call's fingerprint,
    /// `identity` the result's own.
    pub(crate) fn record(
        &mut self,
        tool: &JsString,
        key: EvidenceKey<'_>,
        identity: JsString,
        round: f64,
        recent: usize,
    ) -> bool {
        // Looked up without inserting: a tool whose call was never recorded
        // (exempt, or evicted) has no run to shape and leaves no empty entry.
        // A tracked tool's result is activity, as in the novelty evidence.
        let Some(index) = self.tools.get_index_of(tool) else {
            return false;
        };
        let last = self.tools.len() - 1;
        self.tools.move_index(index, last);
        let entry = self.tools[last].iter_mut().find(|e| key.is(&e.fingerprint));
        let Some(entry) = entry else {
            return false;
        };
        // One result per call: the same call's result delivered again (an
        // at-least-once bus, a retried hook, an in-round duplicate of it)
        // is not new evidence.
        if entry.result_round == Some(round) {
            return false;
        }
        entry.result_round = Some(round).filter(|r| r.is_finite());
        let window = &entry.recent[entry.recent.len().saturating_sub(recent)..];
        let new = !window.is_empty() && !window.contains(&identity);
        if new {
            // That call is the run's first; a result arriving after the next
            // call of the same fingerprint was recorded is one call older.
            let behind = if entry.round == Some(round) { 1.0 } else { 2.0 };
            entry.base = (entry.last - behind).max(0.0);
        }
        entry.recent.push(identity);
        if entry.recent.len() > MAX_RECENT {
            entry.recent.remove(0);
        }
        new
    }

    /// The persisted form of the evidence of the tools `keep` names, `None`
    /// when there is none.
    pub(crate) fn to_value_of(&self, keep: &dyn Fn(&JsString) -> bool) -> Option<Value> {
        if self.tools.is_empty() {
            return None;
        }
        let tools = self
            .tools
            .iter()
            .filter(|(tool, _)| keep(tool))
            .map(|(tool, entries)| {
                let entries = entries
                    .iter()
                    .map(|e| {
                        let recent = e.recent.iter().cloned().map(Value::String).collect();
                        let mut fields = vec![
                            (JsString::from("recent"), Value::Array(recent)),
                            (JsString::from("base"), Value::Number(e.base)),
                            (JsString::from("last"), Value::Number(e.last)),
                        ];
                        if let Some(round) = e.round {
                            fields.push((JsString::from("round"), Value::Number(round)));
                        }
                        if let Some(round) = e.result_round {
                            fields.push((JsString::from("resultRound"), Value::Number(round)));
                        }
                        (e.fingerprint.clone(), Value::Object(Object::from_entries(fields)))
                    })
                    .collect();
                (tool.clone(), Value::Object(Object::from_entries(entries)))
            })
            .collect();
        Some(Value::Object(Object::from_entries(tools)))
    }

    /// Restores from a persisted `outcomes` object entry by entry; anything
    /// malformed is dropped, never fatal, and every list is bounded.
    pub(crate) fn from_value(value: Option<&Value>) -> OutcomeState {
        let mut state = OutcomeState::default();
        let Some(tools) = value.and_then(Value::as_object) else {
            return state;
        };
        for (tool, entries) in tools.iter() {
            let Some(entries) = entries.as_object() else { continue };
            let mut restored: Vec<OutcomeEntry> = entries.iter().filter_map(|(f, e)| restore_entry(f, e)).collect();
            let excess = restored.len().saturating_sub(MAX_FINGERPRINTS);
            restored.drain(..excess);
            if !restored.is_empty() {
                // A key listed twice in a blob: the last one wins, as in JS.
                state.tools.insert(tool.clone(), restored);
            }
        }
        // Listed least recently active first (a state written before tools
        // were capped lists them first seen first, and resumes with its
        // last MAX_TOOLS).
        let excess = state.tools.len().saturating_sub(MAX_TOOLS);
        state.tools.drain(..excess);
        state
    }
}

fn restore_entry(fingerprint: &JsString, entry: &Value) -> Option<OutcomeEntry> {
    let object = entry.as_object()?;
    let count = |name: &str| restored_count(object.get(name));
    let Some(Value::Array(items)) = object.get("recent") else {
        return None;
    };
    let recent: Vec<JsString> = items.iter().filter_map(Value::as_js_string).map(evidence_key).collect();
    let keep = recent.len().saturating_sub(MAX_RECENT);
    let last = count("last")?;
    Some(OutcomeEntry {
        fingerprint: evidence_key(fingerprint),
        recent: recent[keep..].to_vec(),
        base: count("base")?.min(last),
        last,
        round: object.get("round").and_then(Value::as_f64).filter(|n| n.is_finite()),
        result_round: object
            .get("resultRound")
            .and_then(Value::as_f64)
            .filter(|n| n.is_finite()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, to_json};

    #[test]
    fn digit_runs_mask_to_one_zero_in_strings_keys_and_numbers() {
        let v = parse(r#"{"took 12ms":"pid 4411 at 0x7f3a","n":3.5,"list":["v1.2.10",true]}"#).unwrap();
        assert_eq!(
            to_json(&mask_digits(&v)),
            r#"{"took 0ms":"pid 0 at 0x0f0a","n":0,"list":["v0.0.0",true]}"#
        );
        // What canonicalization rejects stays rejected: masking never makes
        // a result fingerprintable that was not.
        assert!(matches!(mask_digits(&Value::Number(f64::INFINITY)), Value::Number(n) if n.is_infinite()));
        assert_eq!(mask_digits(&Value::BigInt), Value::BigInt);
    }

    #[test]
    fn options_read_true_objects_and_clamp_recent() {
        assert_eq!(
            OutcomeConfig::from_option(&Value::Bool(true)),
            Some(OutcomeConfig::default())
        );
        assert_eq!(OutcomeConfig::from_option(&Value::Bool(false)), None);
        assert_eq!(OutcomeConfig::from_option(&parse("1").unwrap()), None);
        let c = OutcomeConfig::from_option(&parse(r#"{"recent":99,"maskDigits":1}"#).unwrap()).unwrap();
        assert_eq!((c.recent, c.mask_digits), (MAX_RECENT, true));
        let c = OutcomeConfig::from_option(&parse(r#"{"recent":0}"#).unwrap()).unwrap();
        assert_eq!(c.recent, OutcomeConfig::default().recent);
    }

    #[test]
    fn a_late_result_restarts_the_run_at_its_own_call() {
        let mut s = OutcomeState::default();
        let (t, f) = (JsString::from("t"), JsString::from("f"));
        assert_eq!(s.streak(&t, EvidenceKey::of(&f), 1.0, 1.0), 1.0);
        s.record(&t, EvidenceKey::of(&f), JsString::from("A"), 1.0, 2);
        assert_eq!(s.streak(&t, EvidenceKey::of(&f), 2.0, 2.0), 2.0);
        assert_eq!(s.streak(&t, EvidenceKey::of(&f), 3.0, 3.0), 3.0);
        // Round 2's result arrives after round 3's call: round 2 is the first.
        assert!(s.record(&t, EvidenceKey::of(&f), JsString::from("B"), 2.0, 2));
        assert_eq!(s.streak(&t, EvidenceKey::of(&f), 4.0, 4.0), 3.0);
    }

    #[test]
    fn restore_bounds_lists_and_drops_malformed_entries() {
        let recent: Vec<String> = (0..20).map(|i| format!("\"r{i}\"")).collect();
        let mut tools = String::from("{\"t\":{");
        for i in 0..40 {
            tools.push_str(&format!(
                "\"f{i}\":{{\"recent\":[{}],\"base\":9,\"last\":4}},",
                recent.join(",")
            ));
        }
        tools
            .push_str("\"bad\":{\"recent\":\"x\",\"last\":1},\"neg\":{\"recent\":[],\"base\":0,\"last\":-1}},\"u\":7}");
        let s = OutcomeState::from_value(Some(&parse(&tools).unwrap()));
        assert_eq!(s.tools.len(), 1);
        let entries = &s.tools[0];
        assert_eq!(entries.len(), MAX_FINGERPRINTS);
        assert_eq!(
            entries[0].fingerprint,
            JsString::from("f8"),
            "the first listed go first"
        );
        assert!(entries
            .iter()
            .all(|e| e.recent.len() == MAX_RECENT && e.base == 4.0 && e.last == 4.0));
        assert_eq!(entries[0].recent[0], JsString::from("r12"));
    }

    #[test]
    fn a_fingerprint_called_again_is_not_evicted() {
        let mut s = OutcomeState::default();
        let t = JsString::from("t");
        let page = JsString::from("scroll_down");
        for round in 0..(3 * MAX_FINGERPRINTS) {
            let round = round as f64;
            s.streak(&t, EvidenceKey::of(&page), 1.0, round);
            s.record(
                &t,
                EvidenceKey::of(&page),
                JsString::from(format!("p{round}")),
                round,
                2,
            );
            s.streak(
                &t,
                EvidenceKey::of(&JsString::from(format!("other {round}"))),
                1.0,
                round + 0.5,
            );
        }
        let entries = &s.tools[0];
        assert_eq!(entries.len(), MAX_FINGERPRINTS);
        assert!(entries
            .iter()
            .any(|e| e.fingerprint == page && e.recent.len() == MAX_RECENT));
    }

    #[test]
    fn tools_past_the_cap_evict_the_least_recently_active_and_restore_keeps_the_latest() {
        let mut s = OutcomeState::default();
        let f = JsString::from("f");
        let tool = |i: usize| JsString::from(format!("tool{i}"));
        for i in 0..(MAX_TOOLS + 4) {
            s.streak(&tool(i), EvidenceKey::of(&f), 1.0, i as f64);
            s.record(&tool(i), EvidenceKey::of(&f), JsString::from("r"), i as f64, 2);
            // tool0 stays active: a result of it, late, keeps it too.
            s.record(&tool(0), EvidenceKey::of(&f), JsString::from("r"), i as f64, 2);
        }
        assert_eq!(s.tools.len(), MAX_TOOLS);
        assert!(s.tracks(&tool(0)), "an active tool is never the one evicted");
        assert!(!s.tracks(&tool(1)) && !s.tracks(&tool(4)) && s.tracks(&tool(5)));
        assert_eq!(s.tools.get_index(MAX_TOOLS - 1).map(|(k, _)| k), Some(&tool(0)));
        assert!(s.evicts_with(1) && !OutcomeState::default().evicts_with(MAX_TOOLS));
        // The persisted order is the recency order: it survives a restore.
        let value = s.to_value_of(&|_| true).unwrap();
        assert_eq!(OutcomeState::from_value(Some(&value)), s);
        // A state written before the cap (tools first seen first, any
        // number) resumes with its last MAX_TOOLS tools.
        let entry = r#"{"f":{"recent":["r"],"base":0,"last":1}}"#;
        let old: Vec<String> = (0..3 * MAX_TOOLS).map(|i| format!("\"tool{i}\":{entry}")).collect();
        let restored = OutcomeState::from_value(Some(&parse(&format!("{{{}}}", old.join(","))).unwrap()));
        assert_eq!(restored.tools.len(), MAX_TOOLS);
        assert_eq!(restored.tools.get_index(0).map(|(k, _)| k), Some(&tool(2 * MAX_TOOLS)));
    }

    #[test]
    fn state_round_trips_through_its_value() {
        let mut s = OutcomeState::default();
        let (t, f) = (JsString::from("t"), JsString::from("f"));
        s.streak(&t, EvidenceKey::of(&f), 1.0, 1.0);
        s.record(&t, EvidenceKey::of(&f), JsString::from("A"), 1.0, 2);
        s.streak(&t, EvidenceKey::of(&f), 2.0, 2.0);
        s.record(&t, EvidenceKey::of(&f), JsString::from("B"), 2.0, 2);
        let value = s.to_value_of(&|_| true).unwrap();
        assert_eq!(OutcomeState::from_value(Some(&value)), s);
        assert_eq!(OutcomeState::default().to_value_of(&|_| true), None);
    }
}
