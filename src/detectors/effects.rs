//! Effect-aware streaks (opt-in, the `effects` key of the `doomLoop` option).
//!
//! The reference counts a tool's identical calls in consecutive rounds of
//! that tool, whatever ran in between. A coding agent re-runs the same test
//! after every edit: when the first fix was not enough, the test fails the
//! same way again and the repeat counts toward the streak — although the
//! code it tests changed. Neither the repeated call's arguments nor its
//! output can tell an edit from a calculation; what the tool in between
//! *does* can, when the host says so.
//!
//! The rule: **an identical repeat is not loop evidence when, since the
//! previous identical call, a state-changing call with arguments new to its
//! tool has run (and did not fail, where its result is known).**
//!
//! - *State-changing*: the host declared the tool's effect `write` (a
//!   per-tool `loopEffect`, an MCP tool's annotations, the coding agents'
//!   edit tools in the hooks). `read` tools, and tools whose effect is not
//!   declared, change nothing here: the other rules apply to them as before.
//! - *Arguments new to its tool*: a write whose fingerprint the tool has not
//!   run before (among its [`MAX_SEEN`] most recent). The same edit applied
//!   again is no change, and a write that itself repeats identically keeps
//!   its own streak: this rule never lifts a `write` tool's calls.
//! - *Did not fail*: a write counts once its result says it did not fail,
//!   or, when no result comes, once a later round begins; a failed one, or
//!   one the monitor refused, never counts. A write of the same round as the
//!   repeat does not count for it (the two ran side by side).
//!
//! The streak the ladder sees is the reference's streak minus the calls
//! before the latest point where the rule restarted the run (as for the
//! other evidence rules; with several on, the later restart wins). A repeat
//! that still reaches a rung after writes that were not new says so in its
//! verdict instead of "will not change the result".
//!
//! State lives in the monitor's `beyond` blob under `effects`: two counters
//! (changes, and writes of any kind), the writes awaiting their result, the
//! arguments each write tool has run with, and per tool the counters at its
//! recent fingerprints' last calls. Bounded plain JSON; restore drops
//! anything malformed, never fails.

pub mod declared;

use crate::detectors::{evidence_key, restored_count as count, EvidenceKey, MAX_COUNT};
use crate::js_string::JsString;
use crate::json::{Object, Value};

/// Arguments remembered per write tool (least recently run go first).
pub const MAX_SEEN: usize = 64;
/// Fingerprints tracked per tool (least recently called go first).
pub const MAX_FINGERPRINTS: usize = 32;
/// Tools tracked, in each of the two lists (least recently active go
/// first): the bound every opt-in evidence shares ([`crate::detectors::MAX_TOOLS`]).
pub const MAX_TOOLS: usize = crate::detectors::MAX_TOOLS;
/// Writes awaiting their result (the oldest are counted first).
const MAX_PENDING: usize = 64;

/// A tool's declared effect (defined with the monitor's seam, which
/// carries it with each call: [`crate::evidence::Effect`]).
pub use crate::evidence::Effect;

/// A write recorded and not yet counted.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PendingWrite {
    pub(crate) tool: JsString,
    pub(crate) fingerprint: JsString,
    pub(crate) round: f64,
}

/// One fingerprint's evidence.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct EffectEntry {
    pub(crate) fingerprint: JsString,
    /// The change counter at this fingerprint's latest call.
    pub(crate) changes: f64,
    /// The write counter at this fingerprint's latest call.
    pub(crate) writes: f64,
    /// Reference streak of the call before the current run began.
    pub(crate) base: f64,
    /// Reference streak of the latest recorded call.
    pub(crate) last: f64,
    /// Round of the latest recorded call.
    pub(crate) round: Option<f64>,
}

/// What the rule makes of one call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct EffectStreak {
    /// The reference's streak minus the calls before the rule's restart.
    pub(crate) streak: f64,
    /// A write ran since the previous identical call (none of them new).
    pub(crate) written_since: bool,
}

/// Effect evidence of the run (persisted under `beyond.effects`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct EffectsState {
    /// Writes with new arguments counted so far.
    pub(crate) changes: f64,
    /// Writes of any arguments counted so far.
    pub(crate) writes: f64,
    /// Writes awaiting their result, oldest first.
    pub(crate) pending: Vec<PendingWrite>,
    /// Per write tool, the arguments it has run with, least recent first.
    pub(crate) seen: Vec<(JsString, Vec<JsString>)>,
    /// Per tool, least recently active first.
    pub(crate) calls: Vec<(JsString, Vec<EffectEntry>)>,
}

/// The entry list of `tool` in `list`, moved to the most recent place
/// (the least recently active tool evicted past [`MAX_TOOLS`]).
fn most_recent<'a, T: Default>(list: &'a mut Vec<(JsString, T)>, tool: &JsString) -> &'a mut T {
    match list.iter().position(|(name, _)| name == tool) {
        Some(i) => {
            let moved = list.remove(i);
            list.push(moved);
        }
        None => {
            if list.len() == MAX_TOOLS {
                list.remove(0);
            }
            list.push((tool.clone(), T::default()));
        }
    }
    let last = list.len() - 1;
    &mut list[last].1
}

impl EffectsState {
    /// Counts the writes of rounds before `round` that are still waiting
    /// (their result never came: success unknown).
    fn settle(&mut self, round: f64) {
        if !self.pending.iter().any(|p| p.round != round) {
            return;
        }
        let (earlier, current): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| p.round != round);
        self.pending = current;
        for write in earlier {
            self.count(&write.tool, write.fingerprint);
        }
    }

    /// One write that ran: a change when its arguments are new to its tool.
    fn count(&mut self, tool: &JsString, fingerprint: JsString) {
        self.writes = (self.writes + 1.0).min(MAX_COUNT);
        let seen = most_recent(&mut self.seen, tool);
        match seen.iter().position(|s| *s == fingerprint) {
            Some(i) => {
                let moved = seen.remove(i);
                seen.push(moved);
            }
            None => {
                if seen.len() == MAX_SEEN {
                    seen.remove(0);
                }
                seen.push(fingerprint);
                self.changes = (self.changes + 1.0).min(MAX_COUNT);
            }
        }
    }

    /// The effect streak of a call of a `read` or undeclared tool that the
    /// reference scored `streak`. `key` is the [evidence key](EvidenceKey)
    /// of the call's fingerprint.
    pub(crate) fn streak(&mut self, tool: &JsString, key: EvidenceKey<'_>, streak: f64, round: f64) -> EffectStreak {
        self.settle(round);
        let (changes, writes) = (self.changes, self.writes);
        let entries = most_recent(&mut self.calls, tool);
        let entry = match entries.iter().position(|e| key.is(&e.fingerprint)) {
            Some(i) => entries.remove(i),
            None => {
                if entries.len() == MAX_FINGERPRINTS {
                    entries.remove(0);
                }
                EffectEntry {
                    fingerprint: key.to_js_string(),
                    changes,
                    writes,
                    ..EffectEntry::default()
                }
            }
        };
        entries.push(entry);
        let Some(entry) = entries.last_mut() else {
            return EffectStreak {
                streak,
                written_since: false,
            };
        };
        let same_round = entry.round.is_some() && entry.round == Some(round);
        if streak <= entry.base || (!same_round && streak <= entry.last) {
            // The reference broke the run.
            entry.base = 0.0;
        }
        let mut written_since = false;
        if !same_round {
            if streak >= 2.0 && changes > entry.changes {
                // The world changed since the previous identical call: this
                // call starts a fresh run.
                entry.base = streak - 1.0;
            }
            written_since = writes > entry.writes;
            entry.changes = changes;
            entry.writes = writes;
        }
        entry.last = streak;
        entry.round = Some(round).filter(|r| r.is_finite());
        EffectStreak {
            streak: (streak - entry.base).max(1.0),
            written_since,
        }
    }

    /// A write of `tool` with `fingerprint` will run in `round` (the
    /// monitor did not refuse it): it counts once its result says it did
    /// not fail, or once a later round begins without one.
    pub(crate) fn write(&mut self, tool: &JsString, fingerprint: &JsString, round: f64) {
        let fingerprint = evidence_key(fingerprint);
        if self
            .pending
            .iter()
            .any(|p| p.round == round && p.tool == *tool && p.fingerprint == fingerprint)
        {
            return;
        }
        if self.pending.len() == MAX_PENDING {
            let oldest = self.pending.remove(0);
            self.count(&oldest.tool, oldest.fingerprint);
        }
        self.pending.push(PendingWrite {
            tool: tool.clone(),
            fingerprint,
            round,
        });
    }

    /// The result of a call of `tool` whose fingerprint is `key`, made in
    /// `round`: a waiting write counts now, or never when it failed.
    pub(crate) fn result(&mut self, tool: &JsString, key: EvidenceKey<'_>, failed: bool, round: f64) {
        let Some(i) = self
            .pending
            .iter()
            .position(|p| p.round == round && p.tool == *tool && key.is(&p.fingerprint))
        else {
            return;
        };
        let write = self.pending.remove(i);
        if !failed {
            self.count(&write.tool, write.fingerprint);
        }
    }

    /// The persisted form (`None` when there is no evidence).
    pub(crate) fn to_value(&self) -> Option<Value> {
        if *self == EffectsState::default() {
            return None;
        }
        let strings = |v: &[JsString]| Value::Array(v.iter().cloned().map(Value::String).collect());
        let pending = self
            .pending
            .iter()
            .map(|p| {
                Value::Array(vec![
                    Value::String(p.tool.clone()),
                    Value::String(p.fingerprint.clone()),
                    Value::Number(p.round),
                ])
            })
            .collect();
        let seen = self
            .seen
            .iter()
            .map(|(tool, seen)| (tool.clone(), strings(seen)))
            .collect();
        let calls = self
            .calls
            .iter()
            .map(|(tool, entries)| {
                let entries = entries
                    .iter()
                    .map(|e| {
                        let mut fields = vec![
                            (JsString::from("changes"), Value::Number(e.changes)),
                            (JsString::from("writes"), Value::Number(e.writes)),
                            (JsString::from("base"), Value::Number(e.base)),
                            (JsString::from("last"), Value::Number(e.last)),
                        ];
                        if let Some(round) = e.round {
                            fields.push((JsString::from("round"), Value::Number(round)));
                        }
                        (e.fingerprint.clone(), Value::Object(Object::from_entries(fields)))
                    })
                    .collect();
                (tool.clone(), Value::Object(Object::from_entries(entries)))
            })
            .collect();
        Some(Value::Object(Object::from_entries(vec![
            (JsString::from("changes"), Value::Number(self.changes)),
            (JsString::from("writes"), Value::Number(self.writes)),
            (JsString::from("pending"), Value::Array(pending)),
            (JsString::from("seen"), Value::Object(Object::from_entries(seen))),
            (JsString::from("calls"), Value::Object(Object::from_entries(calls))),
        ])))
    }

    /// Restores from a persisted `effects` object entry by entry; anything
    /// malformed is dropped, never fatal, and every list is bounded.
    pub(crate) fn from_value(value: Option<&Value>) -> EffectsState {
        let mut state = EffectsState::default();
        let Some(object) = value.and_then(Value::as_object) else {
            return state;
        };
        state.changes = count(object.get("changes")).unwrap_or(0.0);
        state.writes = count(object.get("writes")).unwrap_or(0.0).max(state.changes);
        if let Some(Value::Array(pending)) = object.get("pending") {
            for item in pending.iter().rev().take(MAX_PENDING).rev() {
                let Value::Array(fields) = item else { continue };
                if let [Value::String(tool), Value::String(fingerprint), Value::Number(round)] = fields.as_slice() {
                    if round.is_finite() {
                        state.pending.push(PendingWrite {
                            tool: tool.clone(),
                            fingerprint: evidence_key(fingerprint),
                            round: *round,
                        });
                    }
                }
            }
        }
        for (tool, seen) in object
            .get("seen")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(Object::iter)
        {
            let Value::Array(items) = seen else { continue };
            let keys: Vec<JsString> = items.iter().filter_map(Value::as_js_string).map(evidence_key).collect();
            let keep = keys.len().saturating_sub(MAX_SEEN);
            state.seen.retain(|(name, _)| name != tool);
            state.seen.push((tool.clone(), keys[keep..].to_vec()));
        }
        for (tool, entries) in object
            .get("calls")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(Object::iter)
        {
            let Some(entries) = entries.as_object() else { continue };
            let mut restored: Vec<EffectEntry> = entries
                .iter()
                .filter_map(|(fingerprint, entry)| restore_entry(fingerprint, entry, &state))
                .collect();
            let excess = restored.len().saturating_sub(MAX_FINGERPRINTS);
            restored.drain(..excess);
            state.calls.retain(|(name, _)| name != tool);
            state.calls.push((tool.clone(), restored));
        }
        let excess = state.seen.len().saturating_sub(MAX_TOOLS);
        state.seen.drain(..excess);
        let excess = state.calls.len().saturating_sub(MAX_TOOLS);
        state.calls.drain(..excess);
        state
    }
}

fn restore_entry(fingerprint: &JsString, entry: &Value, state: &EffectsState) -> Option<EffectEntry> {
    let object = entry.as_object()?;
    let last = count(object.get("last"))?;
    Some(EffectEntry {
        fingerprint: evidence_key(fingerprint),
        // A counter ahead of the run's would never see a change again.
        changes: count(object.get("changes"))?.min(state.changes),
        writes: count(object.get("writes"))?.min(state.writes),
        base: count(object.get("base"))?.min(last),
        last,
        round: object.get("round").and_then(Value::as_f64).filter(|n| n.is_finite()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> JsString {
        JsString::from(text)
    }

    #[test]
    fn declarations_read_write_and_read_only() {
        assert_eq!(
            Effect::from_declaration(&Value::String(s("write"))),
            Some(Effect::Write)
        );
        assert_eq!(Effect::from_declaration(&Value::String(s("read"))), Some(Effect::Read));
        for bad in [
            Value::String(s("Write")),
            Value::Bool(true),
            Value::Number(1.0),
            Value::Null,
        ] {
            assert_eq!(Effect::from_declaration(&bad), None);
        }
    }

    #[test]
    fn a_new_write_between_two_identical_calls_restarts_the_run_and_the_same_write_does_not() {
        let mut state = EffectsState::default();
        let (test, edit) = (s("Bash"), s("Edit"));
        let call = s("pytest");
        let key = || EvidenceKey::of(&call);
        assert_eq!(state.streak(&test, key(), 1.0, 1.0).streak, 1.0);
        state.write(&edit, &s("a->b"), 2.0);
        state.result(&edit, EvidenceKey::of(&s("a->b")), false, 2.0);
        assert_eq!(state.streak(&test, key(), 2.0, 3.0).streak, 1.0);
        // The same edit again is no change: the run goes on from round 3.
        state.write(&edit, &s("a->b"), 4.0);
        let again = state.streak(&test, key(), 3.0, 5.0);
        assert_eq!((again.streak, again.written_since), (2.0, true));
        // A failed write changes nothing.
        state.write(&edit, &s("b->c"), 6.0);
        state.result(&edit, EvidenceKey::of(&s("b->c")), true, 6.0);
        let failed = state.streak(&test, key(), 4.0, 7.0);
        assert_eq!((failed.streak, failed.written_since), (3.0, false));
        // A write whose result never comes counts once a later round begins.
        state.write(&edit, &s("c->d"), 8.0);
        assert_eq!(state.streak(&test, key(), 5.0, 9.0).streak, 1.0);
    }

    #[test]
    fn a_write_in_the_same_round_as_the_repeat_does_not_count_for_it() {
        let mut state = EffectsState::default();
        let (test, edit, call) = (s("Bash"), s("Edit"), s("pytest"));
        state.streak(&test, EvidenceKey::of(&call), 1.0, 1.0);
        state.write(&edit, &s("x"), 2.0);
        assert_eq!(state.streak(&test, EvidenceKey::of(&call), 2.0, 2.0).streak, 2.0);
    }

    #[test]
    fn state_round_trips_through_its_value_and_restore_bounds_it() {
        let mut state = EffectsState::default();
        let (test, edit, call) = (s("Bash"), s("Edit"), s("pytest"));
        state.streak(&test, EvidenceKey::of(&call), 1.0, 1.0);
        state.write(&edit, &s("x"), 1.0);
        state.streak(&test, EvidenceKey::of(&call), 2.0, 2.0);
        state.write(&edit, &s("y"), 2.0);
        let value = state.to_value().unwrap();
        assert_eq!(EffectsState::from_value(Some(&value)), state);
        assert_eq!(EffectsState::default().to_value(), None);
        let hostile = crate::json::parse(
            r#"{"changes":-1,"writes":"x","pending":[["a","b",1],["a"],[1,2,3],["a","b",null]],"seen":{"a":[1,"k"],"b":7},"calls":{"t":{"f":{"changes":9,"writes":9,"base":5,"last":2}},"u":3}}"#,
        )
        .unwrap();
        let restored = EffectsState::from_value(Some(&hostile));
        assert_eq!(
            (restored.changes, restored.writes, restored.pending.len()),
            (0.0, 0.0, 1)
        );
        assert_eq!(restored.seen, vec![(s("a"), vec![s("k")])]);
        let entry = &restored.calls[0].1[0];
        assert_eq!(
            (entry.changes, entry.writes, entry.base, entry.last),
            (0.0, 0.0, 2.0, 2.0)
        );
    }
}
