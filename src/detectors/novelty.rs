//! Novelty-aware streaks (opt-in, the `novelty` key of the `doomLoop` option).
//!
//! The reference counts a tool's identical calls in consecutive rounds *of
//! that tool*: calls of other tools in between do not break the streak. An
//! agent with separate edit and test tools re-runs the same test after every
//! edit; when the test prints a failure it printed before (the edit did not
//! fix it yet), the repeat counts toward the streak — and, with outcome-aware
//! streaks ([`crate::outcome`]), a failure seen two runs ago is not "new"
//! either — although the run did something new in between.
//!
//! The rule: **an identical repeat is not loop evidence when, since the
//! previous identical call, some call returned a result new to its tool —
//! unless the repeated call's own last two results were the same.**
//!
//! - *New to its tool*: a result identity the tool has not returned before
//!   in the run (among its [`MAX_SEEN`] most recent distinct results). A
//!   tool's **first** result is never new: there is nothing it could differ
//!   from. So a tool whose output never varies — a `think` tool that returns
//!   nothing, a `calculate` asked the same sum — is never progress, however
//!   new its arguments; new arguments alone are not novelty (tau-bench's
//!   `book_reservation → think → book_reservation` keeps its streak).
//! - *Unless the repeated call's own last two results were the same*: the
//!   same call returning the same output twice in a row is a loop whatever
//!   happened around it (`book → calculate → book`, the booking error
//!   unchanged, is still blocked at the third booking). Novelty only lifts
//!   the evidence of a call whose own output is moving (`f1, f2, f1`: the
//!   test printing an earlier failure again after an edit).
//! - A new result of the repeated call itself counts like any other (its
//!   output moved since the previous identical call): paging stays quiet.
//! - Calls whose results are not known behave exactly as in the reference:
//!   without results nothing is ever new.
//!
//! The streak the ladder sees is the reference's streak minus the calls
//! before the latest point where the rule restarted the run (as for
//! outcome-aware streaks; with both on, the later restart wins).
//!
//! State lives in the monitor's `beyond` blob under `novelty` (a key the
//! reference's `restore` does not read): a counter of new results, and per
//! tool its recent distinct results and, for its [`MAX_FINGERPRINTS`] most
//! recently called fingerprints, the counter at their last call and their
//! last two result identities. Bounded plain JSON; restore drops anything
//! malformed, never fails.

use crate::detectors::{evidence_key, restored_count as count, EvidenceKey, MAX_COUNT};
use crate::js_string::JsString;
use crate::json::{Object, Value};
use crate::outcome::mask_digits;

/// Distinct results remembered per tool (least recently seen go first).
pub const MAX_SEEN: usize = 64;
/// Fingerprints tracked per tool (least recently called go first).
pub const MAX_FINGERPRINTS: usize = 32;
/// Tools tracked (least recently active go first).
pub const MAX_TOOLS: usize = crate::detectors::MAX_TOOLS;

/// The novelty rule's parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NoveltyConfig {
    /// Mask runs of ASCII digits in results before comparing.
    pub mask_digits: bool,
}

impl NoveltyConfig {
    /// Reads `novelty: true | {maskDigits?}`; other values mean off.
    pub fn from_option(option: &Value) -> Option<NoveltyConfig> {
        match option {
            Value::Bool(true) => Some(NoveltyConfig::default()),
            Value::Object(o) => Some(NoveltyConfig {
                mask_digits: o.get("maskDigits").is_some_and(Value::is_truthy),
            }),
            _ => None,
        }
    }

    /// The resolved form, as a JSON value.
    pub fn to_value(&self) -> Value {
        Value::Object(Object::from_entries(vec![(
            JsString::from("maskDigits"),
            Value::Bool(self.mask_digits),
        )]))
    }

    /// The value whose fingerprint identifies a result.
    pub fn comparable(&self, outcome: &Value) -> Value {
        if self.mask_digits {
            mask_digits(outcome)
        } else {
            outcome.clone()
        }
    }
}

/// One fingerprint's novelty evidence.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct NoveltyEntry {
    pub(crate) fingerprint: JsString,
    /// The run's novelty counter at this fingerprint's latest call.
    pub(crate) epoch: f64,
    /// Its latest result identities, oldest first (≤ 2).
    pub(crate) results: Vec<JsString>,
    /// Reference streak of the call before the current run began.
    pub(crate) base: f64,
    /// Reference streak of the latest recorded call.
    pub(crate) last: f64,
    /// Round of the latest recorded call.
    pub(crate) round: Option<f64>,
    /// Round of the latest result recorded for it: the same call's result
    /// delivered again (an at-least-once bus, a retried hook) is not new
    /// evidence, as in the outcome state.
    pub(crate) result_round: Option<f64>,
}

/// One tool's evidence.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct NoveltyTool {
    /// Distinct result identities, least recently seen first (≤ [`MAX_SEEN`]).
    pub(crate) seen: Vec<JsString>,
    /// Least recently called first (≤ [`MAX_FINGERPRINTS`]).
    pub(crate) entries: Vec<NoveltyEntry>,
}

/// Novelty evidence of the run (persisted under `beyond.novelty`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct NoveltyState {
    /// How many results so far were new to their tool.
    pub(crate) epoch: f64,
    /// Per tool, least recently active first (≤ [`MAX_TOOLS`]).
    pub(crate) tools: Vec<(JsString, NoveltyTool)>,
}

impl NoveltyState {
    fn tool(&mut self, tool: &JsString) -> &mut NoveltyTool {
        let index = match self.tools.iter().position(|(name, _)| name == tool) {
            Some(i) => {
                let moved = self.tools.remove(i);
                self.tools.push(moved);
                self.tools.len() - 1
            }
            None => {
                if self.tools.len() == MAX_TOOLS {
                    self.tools.remove(0);
                }
                self.tools.push((tool.clone(), NoveltyTool::default()));
                self.tools.len() - 1
            }
        };
        &mut self.tools[index].1
    }

    /// The novelty streak of a call the reference scored `streak`: its
    /// streak minus the calls before the run last restarted. `key` is the
    /// [evidence key](EvidenceKey) of the call's fingerprint.
    pub(crate) fn streak(&mut self, tool: &JsString, key: EvidenceKey<'_>, streak: f64, round: f64) -> f64 {
        let epoch = self.epoch;
        let entries = &mut self.tool(tool).entries;
        let entry = match entries.iter().position(|e| key.is(&e.fingerprint)) {
            Some(i) => entries.remove(i),
            None => {
                if entries.len() == MAX_FINGERPRINTS {
                    entries.remove(0);
                }
                NoveltyEntry {
                    fingerprint: key.to_js_string(),
                    epoch,
                    ..NoveltyEntry::default()
                }
            }
        };
        entries.push(entry);
        let Some(entry) = entries.last_mut() else {
            return streak;
        };
        let same_round = entry.round.is_some() && entry.round == Some(round);
        if streak <= entry.base || (!same_round && streak <= entry.last) {
            // The reference broke the run.
            entry.base = 0.0;
        }
        if !same_round && streak >= 2.0 {
            // The call's own output was the same at its last two calls (both
            // in the reference's run): a loop whatever happened around it —
            // the run reaches back over those two calls.
            let repeating = streak >= 3.0 && entry.results.len() == 2 && entry.results[0] == entry.results[1];
            if repeating {
                entry.base = entry.base.min(streak - 3.0);
            } else if epoch > entry.epoch {
                // Something new since the previous identical call: this
                // call starts a fresh run.
                entry.base = streak - 1.0;
            }
        }
        entry.epoch = epoch;
        entry.last = streak;
        entry.round = Some(round).filter(|r| r.is_finite());
        (streak - entry.base).max(1.0)
    }

    /// Records the identity of a result of `fingerprint`'s call; returns
    /// whether it was new to its tool (the tool returned something before,
    /// never this). `key` is the [evidence key](EvidenceKey) of the call's
    /// fingerprint, `identity` the result's own.
    pub(crate) fn record(&mut self, tool: &JsString, key: EvidenceKey<'_>, identity: JsString, round: f64) -> bool {
        let before = self.epoch;
        let state = self.tool(tool);
        if let Some(entry) = state.entries.iter_mut().find(|e| key.is(&e.fingerprint)) {
            if round.is_finite() && entry.result_round == Some(round) {
                return false;
            }
            entry.result_round = Some(round).filter(|r| r.is_finite());
        }
        let new = match state.seen.iter().position(|s| *s == identity) {
            Some(i) => {
                let moved = state.seen.remove(i);
                state.seen.push(moved);
                false
            }
            None => {
                let new = !state.seen.is_empty();
                if state.seen.len() == MAX_SEEN {
                    state.seen.remove(0);
                }
                state.seen.push(identity.clone());
                new
            }
        };
        let after = if new { (before + 1.0).min(MAX_COUNT) } else { before };
        if let Some(entry) = state.entries.iter_mut().find(|e| key.is(&e.fingerprint)) {
            // The call's own first result is the baseline its repeats are
            // compared with, not progress for it (for other calls it is):
            // its own result counts only when its output moved.
            let moved = entry.results.last().is_some_and(|r| *r != identity);
            if new && !moved && entry.epoch == before {
                entry.epoch = after;
            }
            entry.results.push(identity);
            if entry.results.len() > 2 {
                entry.results.remove(0);
            }
        }
        self.epoch = after;
        new
    }

    /// Whether `new_tools` tools not tracked yet would evict a tracked one
    /// (each past [`MAX_TOOLS`] evicts the least recently active).
    pub(crate) fn evicts_with(&self, new_tools: usize) -> bool {
        self.tools.len() + new_tools > MAX_TOOLS
    }

    /// Whether `tool` has evidence.
    pub(crate) fn tracks(&self, tool: &JsString) -> bool {
        self.tools.iter().any(|(name, _)| name == tool)
    }

    /// The persisted form of the evidence of the tools `keep` names (and
    /// the run's novelty counter), `None` when empty.
    pub(crate) fn to_value_of(&self, keep: &dyn Fn(&JsString) -> bool) -> Option<Value> {
        if self.tools.is_empty() && self.epoch == 0.0 {
            return None;
        }
        let strings = |v: &[JsString]| Value::Array(v.iter().cloned().map(Value::String).collect());
        let tools = self
            .tools
            .iter()
            .filter(|(name, _)| keep(name))
            .map(|(name, tool)| {
                let entries = tool
                    .entries
                    .iter()
                    .map(|e| {
                        let mut fields = vec![
                            (JsString::from("epoch"), Value::Number(e.epoch)),
                            (JsString::from("results"), strings(&e.results)),
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
                let fields = vec![
                    (JsString::from("seen"), strings(&tool.seen)),
                    (JsString::from("calls"), Value::Object(Object::from_entries(entries))),
                ];
                (name.clone(), Value::Object(Object::from_entries(fields)))
            })
            .collect();
        Some(Value::Object(Object::from_entries(vec![
            (JsString::from("epoch"), Value::Number(self.epoch)),
            (JsString::from("tools"), Value::Object(Object::from_entries(tools))),
        ])))
    }

    /// Restores from a persisted `novelty` object entry by entry; anything
    /// malformed is dropped, never fatal, and every list is bounded.
    pub(crate) fn from_value(value: Option<&Value>) -> NoveltyState {
        let mut state = NoveltyState::default();
        let Some(object) = value.and_then(Value::as_object) else {
            return state;
        };
        state.epoch = count(object.get("epoch")).unwrap_or(0.0);
        let Some(tools) = object.get("tools").and_then(Value::as_object) else {
            return state;
        };
        for (name, tool) in tools.iter() {
            let Some(tool) = tool.as_object() else { continue };
            let Some(Value::Array(seen)) = tool.get("seen") else {
                continue;
            };
            let mut restored = NoveltyTool {
                seen: bounded_strings(seen, MAX_SEEN),
                entries: Vec::new(),
            };
            restored.seen.dedup();
            for (fingerprint, entry) in tool
                .get("calls")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(Object::iter)
            {
                if let Some(entry) = restore_entry(fingerprint, entry, state.epoch) {
                    restored.entries.push(entry);
                }
            }
            let excess = restored.entries.len().saturating_sub(MAX_FINGERPRINTS);
            restored.entries.drain(..excess);
            state.tools.push((name.clone(), restored));
        }
        let excess = state.tools.len().saturating_sub(MAX_TOOLS);
        state.tools.drain(..excess);
        state
    }
}

fn bounded_strings(items: &[Value], max: usize) -> Vec<JsString> {
    let strings: Vec<JsString> = items.iter().filter_map(Value::as_js_string).map(evidence_key).collect();
    let keep = strings.len().saturating_sub(max);
    strings[keep..].to_vec()
}

fn restore_entry(fingerprint: &JsString, entry: &Value, epoch: f64) -> Option<NoveltyEntry> {
    let object = entry.as_object()?;
    let Some(Value::Array(results)) = object.get("results") else {
        return None;
    };
    let last = count(object.get("last"))?;
    Some(NoveltyEntry {
        fingerprint: evidence_key(fingerprint),
        // An entry cannot have seen more novelty than the run has.
        epoch: count(object.get("epoch"))?.min(epoch),
        results: bounded_strings(results, 2),
        base: count(object.get("base"))?.min(last),
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
    use crate::json::parse;

    fn s(text: &str) -> JsString {
        JsString::from(text)
    }

    #[test]
    fn a_tools_first_result_is_not_new_and_a_repeat_is_not() {
        let mut n = NoveltyState::default();
        assert!(!n.record(&s("think"), EvidenceKey::of(&s("f1")), s(""), f64::NAN));
        assert!(!n.record(&s("think"), EvidenceKey::of(&s("f2")), s(""), f64::NAN));
        assert!(!n.record(&s("edit"), EvidenceKey::of(&s("e1")), s("a"), f64::NAN));
        assert!(n.record(&s("edit"), EvidenceKey::of(&s("e2")), s("b"), f64::NAN));
        assert!(!n.record(&s("edit"), EvidenceKey::of(&s("e3")), s("a"), f64::NAN));
        assert_eq!(n.epoch, 1.0);
    }

    #[test]
    fn novelty_restarts_a_moving_call_but_not_a_repeating_one() {
        let (test, edit) = (s("run_tests"), s("edit"));
        let f = s("tests");
        // Moving: f1, f2, then an edit with a new output.
        let mut n = NoveltyState::default();
        assert_eq!(n.streak(&test, EvidenceKey::of(&f), 1.0, 1.0), 1.0);
        n.record(&test, EvidenceKey::of(&f), s("f1"), f64::NAN);
        n.streak(&edit, EvidenceKey::of(&s("e1")), 1.0, 1.5);
        n.record(&edit, EvidenceKey::of(&s("e1")), s("edited 1"), f64::NAN);
        assert_eq!(
            n.streak(&test, EvidenceKey::of(&f), 2.0, 2.0),
            2.0,
            "the edit's first result is not new"
        );
        n.record(&test, EvidenceKey::of(&f), s("f2"), f64::NAN);
        n.streak(&edit, EvidenceKey::of(&s("e2")), 1.0, 2.5);
        n.record(&edit, EvidenceKey::of(&s("e2")), s("edited 2"), f64::NAN);
        assert_eq!(n.streak(&test, EvidenceKey::of(&f), 3.0, 3.0), 1.0);
        // Repeating: f, f, then the same.
        let mut n = NoveltyState::default();
        n.streak(&test, EvidenceKey::of(&f), 1.0, 1.0);
        n.record(&test, EvidenceKey::of(&f), s("f"), f64::NAN);
        n.streak(&edit, EvidenceKey::of(&s("e1")), 1.0, 1.5);
        n.record(&edit, EvidenceKey::of(&s("e1")), s("edited 1"), f64::NAN);
        n.streak(&test, EvidenceKey::of(&f), 2.0, 2.0);
        n.record(&test, EvidenceKey::of(&f), s("f"), f64::NAN);
        n.streak(&edit, EvidenceKey::of(&s("e2")), 1.0, 2.5);
        n.record(&edit, EvidenceKey::of(&s("e2")), s("edited 2"), f64::NAN);
        assert_eq!(n.streak(&test, EvidenceKey::of(&f), 3.0, 3.0), 3.0);
    }

    #[test]
    fn restore_bounds_lists_and_drops_malformed_entries() {
        let seen: Vec<String> = (0..100).map(|i| format!("\"r{i}\"")).collect();
        let blob = format!(
            r#"{{"epoch":5,"tools":{{"t":{{"seen":[{}],"calls":{{"f":{{"epoch":9,"results":["a","b","c"],"base":4,"last":2}},"bad":{{"results":"x","last":1}}}}}},"u":7}}}}"#,
            seen.join(",")
        );
        let n = NoveltyState::from_value(Some(&parse(&blob).unwrap()));
        assert_eq!(n.epoch, 5.0);
        assert_eq!(n.tools.len(), 1);
        let tool = &n.tools[0].1;
        assert_eq!(tool.seen.len(), MAX_SEEN);
        assert_eq!(tool.entries.len(), 1);
        let e = &tool.entries[0];
        assert_eq!((e.epoch, e.base, e.last, e.results.len()), (5.0, 2.0, 2.0, 2));
        assert_eq!(NoveltyState::from_value(Some(&n.to_value_of(&|_| true).unwrap())), n);
    }
}
