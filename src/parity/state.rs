//! Persisted detector state: `getState` and `restore`.
//!
//! Keeps the reference's `ConversationState.doomLoop` shape exactly, so a
//! blob written by either implementation resumes in the other:
//! `{tools: {name: {fingerprint, streak, roundFingerprints?, callStreaks?}},
//! text?, escalationsUsed?}` — `roundFingerprints` only for multi-call
//! rounds, `callStreaks` only when they cannot be rebuilt from the set and
//! streak, `escalationsUsed` only when positive.
//!
//! `restore` never fails: the blob is caller-writable JSON, so a non-object
//! is ignored with the reference's warning, each entry is validated on its
//! own (one bad entry does not poison the rest), streaks are clamped to
//! 1..=1,000,000, sets are re-sorted, and hostile names such as
//! `"__proto__"` are plain data (a Rust map has no prototype to pollute).

use std::borrow::Cow;
use std::sync::Arc;

use crate::js_string::JsString;
use crate::json::{Object, Value};
use crate::monitor::{sorted_contains, CallStreaks, DoomLoopMonitor, StreakEntry, TextStreak};

/// The reference's warning for a blob that is not an object.
pub const INVALID_STATE_WARNING: &str = "[DoomLoop] Ignoring invalid persisted doom-loop state";

/// Largest streak a restored tool entry keeps.
const MAX_RESTORED_STREAK: f64 = 1_000_000.0;

impl DoomLoopMonitor {
    /// A snapshot of the serializable state (the reference's `getState`).
    ///
    /// ```
    /// use doom_loop::{DoomLoopMonitor, ResolvedConfig, json::to_json};
    /// let monitor = DoomLoopMonitor::new(ResolvedConfig::default());
    /// assert_eq!(to_json(&monitor.get_state()), r#"{"tools":{}}"#);
    /// ```
    pub fn get_state(&self) -> Value {
        let tools: Vec<(JsString, Value)> = self
            .tools
            .iter()
            .map(|(name, entry)| (name.clone(), entry_state(entry)))
            .collect();
        let mut state = vec![(JsString::from("tools"), Value::Object(Object::from_entries(tools)))];
        if let Some(text) = &self.text {
            state.push((JsString::from("text"), streak_value(&text.fingerprint, text.streak)));
        }
        if let Some(beyond) = self.rules.as_ref().and_then(|rules| rules.to_value()) {
            state.push((JsString::from("beyond"), beyond));
        }
        if self.escalations_used > 0.0 {
            state.push((JsString::from("escalationsUsed"), Value::Number(self.escalations_used)));
        }
        Value::Object(Object::from_entries(state))
    }

    /// Replaces the state with a persisted blob (the reference's `restore`).
    /// Returns the warnings the reference would print; never fails.
    pub fn restore(&mut self, state: &Value) -> Vec<String> {
        let Value::Object(candidate) = state else {
            return vec![INVALID_STATE_WARNING.to_string()];
        };
        // Names are unique: they are the own keys of one object (or array).
        self.tools = own_entries(candidate.get("tools"))
            .into_iter()
            .filter_map(|(name, entry)| restore_entry(entry).map(|restored| (name.into_owned(), restored)))
            .collect();
        self.text = candidate.get("text").and_then(valid_streak).map(|(f, s)| TextStreak {
            fingerprint: f.clone(),
            streak: s,
        });
        // Only a monitor running evidence rules reads their state, so a
        // default monitor's state stays exactly the reference's.
        self.rules = self.config.beyond.start(candidate.get("beyond"));
        self.escalations_used = match candidate.get("escalationsUsed") {
            Some(Value::Number(n)) if n.is_finite() && *n >= 0.0 => n.floor(),
            _ => 0.0,
        };
        Vec::new()
    }
}

impl DoomLoopMonitor {
    /// A scratch monitor that scores a next round of calls of `tools` as
    /// this one would, in time that does not grow with the rest of its
    /// tools (the session's `would_halt` asks it before every previewed
    /// round): the entries of `tools` only — and of the evidence rules'
    /// state, theirs — each as `restore(&get_state())` would build it.
    /// Replaces a full `get_state` → `restore`, whose cost grew with the
    /// run (docs/performance.md).
    #[inline(never)]
    pub(crate) fn scratch_for(&self, tools: &[&JsString]) -> DoomLoopMonitor {
        let rules = self.rules.as_ref().map(|rules| rules.scratch_for(tools));
        let mut scratch = DoomLoopMonitor::with_rules(self.config.clone(), rules);
        // Each tool once, looked up (a wide round stays linear); the
        // scratch's order of entries scores nothing.
        for &name in tools {
            let Some(entry) = self.tools.get(name).filter(|_| !scratch.tools.contains_key(name)) else {
                continue;
            };
            // Through its persisted form, as the full snapshot takes it
            // (clamps, re-sorted sets, reconstructed counts).
            if let Some(restored) = restore_entry(&entry_state(entry)) {
                scratch.tools.insert(name.clone(), restored);
            }
        }
        scratch.text = self.text.clone();
        scratch.escalations_used = self.escalations_used;
        scratch
    }
}

fn streak_value(fingerprint: &JsString, streak: f64) -> Value {
    Value::Object(Object::from_entries(vec![
        (JsString::from("fingerprint"), Value::String(fingerprint.clone())),
        (JsString::from("streak"), Value::Number(streak)),
    ]))
}

// Out of line: the full and the partial snapshot share one copy (module size).
#[inline(never)]
fn entry_state(entry: &StreakEntry) -> Value {
    let Value::Object(mut object) = streak_value(&entry.fingerprint, entry.streak) else {
        unreachable!("streak_value builds an object")
    };
    if entry.round_fingerprints.len() > 1 {
        let set = entry
            .round_fingerprints
            .iter()
            .map(|f| Value::String(f.clone()))
            .collect();
        object.insert(JsString::from("roundFingerprints"), Value::Array(set));
    }
    if let Some(counts) = entry.call_streaks.as_ref().filter(|c| !reconstructible(entry, c)) {
        let counts = counts.iter().map(|(f, n)| (f.clone(), Value::Number(n))).collect();
        object.insert(
            JsString::from("callStreaks"),
            Value::Object(Object::from_entries(counts)),
        );
    }
    Value::Object(object)
}

/// True when the per-call counts say nothing the set and streak do not:
/// exactly the set's members, each at the round streak.
fn reconstructible(entry: &StreakEntry, counts: &CallStreaks) -> bool {
    counts.len() == entry.round_fingerprints.len()
        && counts
            .iter()
            .all(|(f, n)| sorted_contains(&entry.round_fingerprints, f) && n == entry.streak)
}

/// `Object.entries(value)` for an object or array (`typeof` object), empty
/// otherwise. An object's keys are borrowed: a restored state's 100k call
/// counts are copied once, into the streak table, not twice.
fn own_entries(value: Option<&Value>) -> Vec<(Cow<'_, JsString>, &Value)> {
    match value {
        Some(Value::Object(o)) => o.iter().map(|(k, v)| (Cow::Borrowed(k), v)).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter(|(_, v)| !matches!(v, Value::Hole))
            .map(|(i, v)| (Cow::Owned(JsString::from(i.to_string())), v))
            .collect(),
        _ => Vec::new(),
    }
}

/// The reference's `isValidStreak`: a string fingerprint and a finite streak.
fn valid_streak(value: &Value) -> Option<(&JsString, f64)> {
    let object = value.as_object()?;
    let fingerprint = object.get("fingerprint")?.as_js_string()?;
    let streak = object.get("streak")?.as_f64().filter(|s| s.is_finite())?;
    Some((fingerprint, streak))
}

#[inline(never)]
fn restore_entry(value: &Value) -> Option<StreakEntry> {
    let (fingerprint, raw_streak) = valid_streak(value)?;
    let object = value.as_object()?;
    let set = restored_set(object.get("roundFingerprints"), fingerprint);
    let streak = raw_streak.floor().clamp(1.0, MAX_RESTORED_STREAK);
    let mut counts = CallStreaks::default();
    for (call, count) in own_entries(object.get("callStreaks")) {
        if let Value::Number(n) = count {
            if n.is_finite() && *n >= 1.0 {
                counts.set(&call, n.floor());
            }
        }
    }
    if counts.is_empty() {
        // Omitted counts were reconstructible: every member at the round streak.
        for member in set.iter() {
            counts.set(member, streak);
        }
    }
    Some(StreakEntry::restored(fingerprint.clone(), streak, set, counts))
}

/// A persisted multi-call set, re-sorted; anything else is the lone fingerprint.
fn restored_set(value: Option<&Value>, fingerprint: &JsString) -> Arc<[JsString]> {
    if let Some(Value::Array(items)) = value {
        let members: Option<Vec<JsString>> = items.iter().map(|v| v.as_js_string().cloned()).collect();
        if let Some(members) = members.filter(|m| m.len() > 1) {
            // Equal members are identical: unstable sorting loses nothing.
            return Arc::from(crate::json::sorted(&members, &JsString::cmp_utf16));
        }
    }
    Arc::from(vec![fingerprint.clone()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, to_json};
    use crate::ResolvedConfig;

    #[test]
    fn hostile_names_are_plain_data() {
        let mut m = DoomLoopMonitor::new(ResolvedConfig::default());
        let warnings = m.restore(
            &parse(r#"{"tools":{"__proto__":{"fingerprint":"x","streak":999},"constructor":{"fingerprint":"y","streak":-5}}}"#)
                .unwrap(),
        );
        assert!(warnings.is_empty());
        assert_eq!(
            to_json(&m.get_state()),
            r#"{"tools":{"__proto__":{"fingerprint":"x","streak":999},"constructor":{"fingerprint":"y","streak":1}}}"#
        );
    }

    #[test]
    fn non_objects_are_ignored_with_the_reference_warning() {
        let mut m = DoomLoopMonitor::new(ResolvedConfig::default());
        m.consume_escalation();
        for blob in ["[]", "5", "null", "\"str\""] {
            assert_eq!(
                m.restore(&parse(blob).unwrap()),
                vec![INVALID_STATE_WARNING.to_string()]
            );
        }
        assert_eq!(to_json(&m.get_state()), r#"{"tools":{},"escalationsUsed":1}"#);
    }
}
