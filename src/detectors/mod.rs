//! **The opt-in detectors** — what goes beyond the reference.
//!
//! Off by default, so the defaults stay byte-for-byte the reference's:
//! [`outcome`] (outcome-aware streaks: the same call with the same result),
//! [`effects`] (effect-aware streaks: a repeat after a new write),
//! [`novelty`] (novelty-aware streaks: a repeat while the run does something
//! new), [`repetition`] (one response chanting a sentence) and [`beyond`]
//! (cycles, the progress ledger, the failure streak, the budget, and the
//! configuration of them all). They plug into the monitor at its one seam,
//! [`crate::evidence`]: `rules` implements its traits over them (the
//! monitor hands it the reference's score of a call, of a result, of a
//! text, once). New detectors belong here, behind that seam.
//!
//! Imports [`crate::value`], [`crate::error`] and [`crate::parity`] (the
//! seam's traits, fingerprints, the verdict kinds): the layer sits above
//! the parity core, which names no detector. Which detectors a `doomLoop`
//! option turns on is wired above both (`doom_loop::config`). Each module
//! is also reachable at the crate root (`doom_loop::beyond`,
//! `doom_loop::outcome`, `doom_loop::novelty`, `doom_loop::effects`,
//! `doom_loop::repetition`).

pub mod beyond;
pub mod effects;
pub mod novelty;
pub mod outcome;
pub mod repetition;
mod rules;

use crate::js_string::JsString;

/// Tools whose outcome, novelty and effect evidence is kept (each detector
/// its own, the least recently active tool evicted first). The evidence is per
/// tool and bounded per tool, so this bounds it in total: a tool at every
/// per-tool cap persists about 7.5 kB of outcome and 5.5 kB of novelty
/// evidence, and a run under `RECOMMENDED_DOOM_LOOP_OPTION` reads, replays
/// and writes all of it at each of the coding-agent hook's calls. An evicted
/// tool's next call is scored as the reference scores it (nothing is
/// subtracted from its streak): less forgiveness for a tool unused while
/// this many others were active, never a missed loop.
pub const MAX_TOOLS: usize = 16;

/// Hex digits an opt-in detector keeps of a SHA-256 fingerprint or result
/// identity: 64 bits. The evidence is compared within one tool (at most a
/// few dozen fingerprints and results): two different hashes sharing 64 bits
/// somewhere in a million results, each compared with at most 64 others, is
/// a chance of about 2^-38. The persisted evidence is well under half the
/// size it was with all 64 digits.
pub const EVIDENCE_KEY_DIGITS: usize = 16;

/// Largest count a restored evidence entry keeps (as the reference's streaks).
pub(crate) const MAX_COUNT: f64 = 1_000_000.0;

/// A count read back from persisted evidence: a finite number ≥ 0, floored
/// and clamped to [`MAX_COUNT`]; anything else is no count.
pub(crate) fn restored_count(value: Option<&crate::json::Value>) -> Option<f64> {
    value
        .and_then(crate::json::Value::as_f64)
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(|n| n.floor().min(MAX_COUNT))
}

/// The key under which the opt-in evidence stores a string: the first
/// [`EVIDENCE_KEY_DIGITS`] digits of a SHA-256 hex digest (a call's
/// fingerprint, a result's identity, or one read back from a state written
/// before keys were shortened, so such a state resumes as it was); any other
/// string whole (a host's own identity, a test's label). Borrowed: a call is
/// looked up on every record and result, copied only into a new entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EvidenceKey<'a> {
    of: &'a JsString,
    bytes: &'a [u8],
}

impl<'a> EvidenceKey<'a> {
    /// The key of `text`.
    pub(crate) fn of(text: &'a JsString) -> Self {
        let whole = text.as_bytes();
        let bytes = match whole.get(..EVIDENCE_KEY_DIGITS) {
            Some(prefix) if is_digest(whole) => prefix,
            _ => whole,
        };
        EvidenceKey { of: text, bytes }
    }

    /// Whether `stored` (a key of the evidence) is this key.
    pub(crate) fn is(&self, stored: &JsString) -> bool {
        stored.as_bytes() == self.bytes
    }

    /// The key as a string of its own.
    pub(crate) fn to_js_string(self) -> JsString {
        match std::str::from_utf8(self.bytes) {
            Ok(digits) if self.bytes.len() < self.of.as_bytes().len() => JsString::from(digits),
            _ => self.of.clone(),
        }
    }
}

/// [`EvidenceKey::of`] `text`, as a string of its own.
pub(crate) fn evidence_key(text: &JsString) -> JsString {
    EvidenceKey::of(text).to_js_string()
}

/// 64 lowercase hex digits. Every call and result is checked, so without
/// an early exit: the compiler checks the 64 bytes a vector at a time.
fn is_digest(bytes: &[u8]) -> bool {
    bytes.len() == 64
        && bytes.iter().fold(true, |hex, b| {
            hex & ((b.wrapping_sub(b'0') < 10) | (b.wrapping_sub(b'a') < 6))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_keeps_its_first_sixteen_digits_and_anything_else_stays_whole() {
        let digest = JsString::from("8810586fd3b42a153c0770a7813befb4c781dc8bfc36ebb30d01492daf4792bd");
        assert_eq!(evidence_key(&digest), JsString::from("8810586fd3b42a15"));
        assert!(EvidenceKey::of(&digest).is(&JsString::from("8810586fd3b42a15")));
        // Idempotent: a key read back from a new state is itself.
        assert_eq!(evidence_key(&evidence_key(&digest)), JsString::from("8810586fd3b42a15"));
        for other in [
            "f",
            "8810586FD3B42A153C0770A7813BEFB4C781DC8BFC36EBB30D01492DAF4792BD",
            "8810586fd3b42a153c0770a7813befb4c781dc8bfc36ebb30d01492daf4792b",
        ] {
            assert_eq!(evidence_key(&JsString::from(other)), JsString::from(other));
            assert!(EvidenceKey::of(&JsString::from(other)).is(&JsString::from(other)));
        }
    }
}
