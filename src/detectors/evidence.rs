//! **The seam between the reference's streaks and the opt-in evidence
//! rules.** The monitor scores a call exactly as the reference does, then
//! hands the score here once; each rule that is configured may say that
//! some of the calls behind it were not loop evidence, and the lowest
//! claim wins (each rule counts the calls since its own latest restart, so
//! the later restart wins). With no rule configured, the reference's
//! streak passes through untouched and nothing is recorded.
//!
//! The rules plugged in here: outcome-aware streaks ([`crate::outcome`]),
//! novelty-aware streaks ([`crate::novelty`]), effect-aware streaks
//! ([`crate::effects`]), and cycles (which raise a verdict of their own
//! rather than adjust a streak). A new rule is one
//! more line in [`BeyondState::call`] (and, if it reads results, in
//! [`BeyondState::result`]), not an edit of the monitor.

use crate::beyond::{BeyondConfig, BeyondState};
use crate::detectors::EvidenceKey;
use crate::effects::Effect;
use crate::error::Result;
use crate::js_string::JsString;
use crate::json::Value;

/// What the evidence rules make of one call the reference scored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CallEvidence {
    /// The streak the ladder sees: the reference's, or less.
    pub(crate) streak: f64,
    /// A write ran since the previous identical call, though none changed
    /// anything new (effect-aware streaks): a verdict must not claim that
    /// repeating the call cannot change its result.
    pub(crate) written_since: bool,
}

/// What the evidence rules make of one result.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ResultEvidence {
    /// A repeated call showed something new (outcome-aware streaks): the
    /// run is moving, so a text streak around it is not a loop either.
    pub(crate) progress: bool,
}

/// How the monitor identifies a result: its fingerprint as key material,
/// shortened (the fingerprint lives in the parity core, which sits above
/// this module).
pub(crate) type ResultKey<'a> = &'a dyn Fn(&Value) -> Result<JsString>;

impl BeyondState {
    /// A call of `tool` (whose declared effect is `effect`) with
    /// `fingerprint` in `round`, which the reference scored `reference`:
    /// the streak the ladder sees.
    pub(crate) fn call(
        &mut self,
        config: &BeyondConfig,
        tool: &JsString,
        fingerprint: &JsString,
        effect: Effect,
        (reference, round): (f64, f64),
    ) -> CallEvidence {
        let key = EvidenceKey::of(fingerprint);
        let mut evidence = CallEvidence {
            streak: reference,
            written_since: false,
        };
        if config.outcomes.is_some() {
            // Outcome-aware: the calls before the result last turned new do not count.
            evidence.streak = evidence.streak.min(self.outcomes.streak(tool, key, reference, round));
        }
        if config.novelty.is_some() {
            // Novelty-aware: nor do the calls before something new happened
            // while this call's own output was moving.
            evidence.streak = evidence.streak.min(self.novelty.streak(tool, key, reference, round));
        }
        if config.effects && effect != Effect::Write {
            // Effect-aware: nor do the calls before the latest new write (a
            // write's own repeats keep their streak).
            let effects = self.effects.streak(tool, key, reference, round);
            evidence.streak = evidence.streak.min(effects.streak);
            evidence.written_since = effects.written_since;
        }
        evidence
    }

    /// The call the monitor just scored will run (it was not refused): a
    /// write is remembered until its result says whether it counts.
    pub(crate) fn ran(
        &mut self,
        config: &BeyondConfig,
        tool: &JsString,
        fingerprint: &JsString,
        effect: Effect,
        round: f64,
    ) {
        if config.effects && effect == Effect::Write {
            self.effects.write(tool, fingerprint, round);
        }
    }

    /// `tool` starts a new round, its previous one having been `finished`
    /// (the cycle detector's history).
    pub(crate) fn round_closed(&mut self, config: &BeyondConfig, tool: &JsString, finished: &[JsString]) {
        if config.cycles.is_some() {
            self.close_round(tool, finished);
        }
    }

    /// The cycle `tool` is in, counting its current round `current`:
    /// `(period, repeats)`, when cycle detection is on.
    pub(crate) fn cycle_of(
        &self,
        config: &BeyondConfig,
        tool: &JsString,
        current: &[JsString],
    ) -> Option<(usize, f64)> {
        config
            .cycles
            .and_then(|max_period| self.cycle(tool, current, max_period))
    }

    /// The result of a call of `tool` whose fingerprint is `input`, made in
    /// `round`: `outcome` is its identity (if any) and `failed` whether it
    /// failed, `key` how the monitor fingerprints an identity.
    ///
    /// # Errors
    /// Whatever `key` rejects in `outcome`; the evidence is unchanged then.
    pub(crate) fn result(
        &mut self,
        config: &BeyondConfig,
        tool: &JsString,
        input: &JsString,
        (outcome, failed): (Option<&Value>, bool),
        round: f64,
        key: ResultKey<'_>,
    ) -> Result<ResultEvidence> {
        // Every identity first: a result that cannot be fingerprinted leaves
        // the evidence as it was.
        let novelty = match (&config.novelty, outcome) {
            (Some(novelty), Some(outcome)) => Some(key(&novelty.comparable(outcome))?),
            _ => None,
        };
        let outcome_key = match (&config.outcomes, outcome) {
            (Some(outcomes), Some(outcome)) => Some((key(&outcomes.comparable(outcome))?, outcomes.recent)),
            _ => None,
        };
        let input_key = EvidenceKey::of(input);
        let mut evidence = ResultEvidence::default();
        if let Some((identity, recent)) = outcome_key {
            if self.outcomes.record(tool, input_key, identity, round, recent) {
                evidence.progress = true;
                self.progress(tool);
            }
        }
        if let Some(identity) = novelty {
            self.novelty.record(tool, input_key, identity, round);
        }
        if config.effects {
            self.effects.result(tool, input_key, failed, round);
        }
        Ok(evidence)
    }
}
