//! **The opt-in detectors behind the monitor's seam**: [`BeyondConfig`] is
//! the [`RuleSet`] a configuration plugs in, and [`Beyond`] its running
//! state, the [`RuleState`] the monitor drives ([`crate::evidence`]).
//!
//! The monitor scores a call exactly as the reference does, then hands the
//! score here once; each rule that is configured may say that some of the
//! calls behind it were not loop evidence, and the lowest claim wins (each
//! rule counts the calls since its own latest restart, so the later
//! restart wins). The rules plugged in here: outcome-aware streaks
//! ([`crate::outcome`]), novelty-aware streaks ([`crate::novelty`]),
//! effect-aware streaks ([`crate::effects`]); and the rules that raise
//! findings of their own: cycles, the progress ledger, the failure streak,
//! in-response repetition ([`crate::repetition`]) and the budget
//! ([`crate::beyond`]). A new rule is one more line in [`Beyond::call`] (and,
//! if it reads results, in [`Beyond::result`]), not an edit of the monitor.

use std::sync::Arc;

use crate::beyond::{BeyondConfig, BeyondState, BUDGET, NO_PROGRESS, TOOL_CYCLE, TOOL_FAILURE};
use crate::detectors::{EvidenceKey, EVIDENCE_KEY_DIGITS};
use crate::error::Result;
use crate::evidence::{CallEvidence, Effect, Finding, ResultEvidence, RuleSet, RuleState, Rules, ScoredCall};
use crate::fingerprint::{fingerprint_key_material, fingerprint_string};
use crate::js_string::JsString;
use crate::json::{js_number, Value};
use crate::monitor::{TEXT_REPETITION, TEXT_STREAK, TOOL_FINGERPRINT};
use crate::repetition::{chanting, IN_RESPONSE_REPETITION};

/// The opt-in detectors' running state: their configuration and evidence.
#[derive(Debug)]
pub(crate) struct Beyond {
    config: BeyondConfig,
    state: BeyondState,
}

impl From<BeyondConfig> for Rules {
    /// The rules `config` turns on; none when it turns none on (the
    /// reference's behaviour, and state).
    fn from(config: BeyondConfig) -> Rules {
        if config.is_off() {
            Rules::none()
        } else {
            Rules::new(Arc::new(config))
        }
    }
}

impl RuleSet for BeyondConfig {
    fn start(&self, persisted: Option<&Value>) -> Box<dyn RuleState> {
        Box::new(Beyond {
            config: self.clone(),
            state: BeyondState::from_value(persisted),
        })
    }

    fn to_value(&self) -> Value {
        BeyondConfig::to_value(self)
    }

    fn reads_outcomes(&self) -> bool {
        BeyondConfig::reads_outcomes(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn same(&self, other: &dyn RuleSet) -> bool {
        other.as_any().downcast_ref::<BeyondConfig>() == Some(self)
    }
}

/// A result's [evidence key](EVIDENCE_KEY_DIGITS): its fingerprint as key
/// material, shortened.
fn result_key(outcome: &Value) -> Result<JsString> {
    let mut digest = fingerprint_key_material(outcome)?;
    digest.truncate(EVIDENCE_KEY_DIGITS);
    Ok(JsString::from(digest))
}

/// A tool's finding, its text after the reference's opening.
fn tool_finding(
    (detector, opt_in): (Option<&'static str>, &'static str),
    streak: f64,
    fingerprint: JsString,
    tool: &JsString,
    message: &str,
) -> Finding {
    let mut text = JsString::from("Doom loop suspected: tool \"");
    text.push_js(tool);
    text.push_str(message);
    Finding {
        opt_in,
        detector,
        streak,
        action: None,
        fingerprint,
        tool_name: Some(tool.clone()),
        message: text,
    }
}

impl RuleState for Beyond {
    fn call(&mut self, call: &ScoredCall<'_>) -> CallEvidence {
        let Beyond { config, state } = self;
        let (tool, reference, round) = (call.tool, call.reference, call.round);
        if let (Some(finished), Some(_)) = (call.closed_round, config.cycles) {
            // `tool` starts a new round: the cycle detector's history.
            state.close_round(tool, finished);
        }
        let key = EvidenceKey::of(call.fingerprint);
        let mut evidence = CallEvidence {
            streak: reference,
            written_since: false,
            finding: None,
        };
        if config.outcomes.is_some() {
            // Outcome-aware: the calls before the result last turned new do not count.
            evidence.streak = evidence.streak.min(state.outcomes.streak(tool, key, reference, round));
        }
        if config.novelty.is_some() {
            // Novelty-aware: nor do the calls before something new happened
            // while this call's own output was moving.
            evidence.streak = evidence.streak.min(state.novelty.streak(tool, key, reference, round));
        }
        if config.effects && call.effect != Effect::Write {
            // Effect-aware: nor do the calls before the latest new write (a
            // write's own repeats keep their streak).
            let effects = state.effects.streak(tool, key, reference, round);
            evidence.streak = evidence.streak.min(effects.streak);
            evidence.written_since = effects.written_since;
        }
        if let Some((period, repeats)) = config
            .cycles
            .and_then(|max_period| state.cycle(tool, call.round_set, max_period))
        {
            // Reported under the record's own kind: a cycle is repeated calls.
            evidence.finding = Some(tool_finding(
                (None, TOOL_CYCLE),
                repeats,
                call.fingerprint.clone(),
                tool,
                &format!(
                    "\" keeps cycling through the same {period} calls ({} times in a row). Repeating the cycle will not change the results. Take a different approach, or explain why repetition is required.",
                    js_number(repeats)
                ),
            ));
        }
        evidence
    }

    fn ran(&mut self, tool: &JsString, fingerprint: &JsString, effect: Effect, round: f64) {
        // A write is remembered until its result says whether it counts.
        if self.config.effects && effect == Effect::Write {
            self.state.effects.write(tool, fingerprint, round);
        }
    }

    fn result(
        &mut self,
        tool: &JsString,
        input: &JsString,
        outcome: Option<&Value>,
        failed: bool,
        round: f64,
    ) -> Result<ResultEvidence> {
        let Beyond { config, state } = self;
        // Every identity first: a result that cannot be fingerprinted leaves
        // the evidence as it was.
        let novelty = match (&config.novelty, outcome) {
            (Some(novelty), Some(outcome)) => Some(result_key(&novelty.comparable(outcome))?),
            _ => None,
        };
        let outcome_key = match (&config.outcomes, outcome) {
            (Some(outcomes), Some(outcome)) => Some((result_key(&outcomes.comparable(outcome))?, outcomes.recent)),
            _ => None,
        };
        let input_key = EvidenceKey::of(input);
        let mut evidence = ResultEvidence::default();
        if let Some((identity, recent)) = outcome_key {
            if state.outcomes.record(tool, input_key, identity, round, recent) {
                evidence.progress = true;
                state.progress(tool);
            }
        }
        if let Some(identity) = novelty {
            state.novelty.record(tool, input_key, identity, round);
        }
        if config.effects {
            state.effects.result(tool, input_key, failed, round);
        }
        if let (true, Some(outcome)) = (config.ledger, outcome) {
            let outcome = JsString::from(fingerprint_key_material(outcome)?);
            if let Some(streak) = state.record_outcome(tool, input, outcome.clone()) {
                evidence.findings.push(tool_finding(
                    (Some(TOOL_FINGERPRINT), NO_PROGRESS),
                    streak,
                    outcome,
                    tool,
                    &format!(
                        "\" returned the same result {} times in a row while its arguments changed. Changing the arguments is not making progress. Take a different approach, or explain why repetition is required.",
                        js_number(streak)
                    ),
                ));
            }
        }
        if config.failures {
            let streak = state.record_failure(tool, round, failed);
            evidence.findings.push(tool_finding(
                (Some(TOOL_FINGERPRINT), TOOL_FAILURE),
                streak,
                input.clone(),
                tool,
                &format!(
                    "\" failed in {} consecutive rounds. Retrying will not help; take a different approach, or report the failure.",
                    js_number(streak)
                ),
            ));
        }
        Ok(evidence)
    }

    /// In-response repetition: a chanting response scores as a repeat of
    /// itself, each following one that chants again adds one, one that
    /// does not resets the count.
    fn text(&mut self, text: &JsString) -> Option<Finding> {
        let config = self.config.repetition.as_ref()?;
        let Some(chant) = chanting(&text.to_utf8_lossy(), config) else {
            self.state.chanting = 0.0;
            return None;
        };
        self.state.chanting = (self.state.chanting + 1.0).min(1_000_000.0);
        let sample = JsString::from(chant.sample.as_str());
        let mut message = JsString::from("Doom loop suspected: the response repeats \"");
        message.push_js(&sample);
        message.push_str(&format!(
            "\" {} times. Stop repeating and take a different approach.",
            chant.repeats
        ));
        Some(Finding {
            opt_in: IN_RESPONSE_REPETITION,
            detector: Some(TEXT_REPETITION),
            streak: self.state.chanting + 1.0,
            action: None,
            fingerprint: JsString::from(fingerprint_string(&sample)),
            tool_name: None,
            message,
        })
    }

    /// The budget: a stop once the run has spent the configured limit while
    /// a loop was suspected (any verdict since the last spend record), or in
    /// all.
    fn spend(&mut self, amount: f64) -> Option<Finding> {
        let Beyond { config, state } = self;
        let budget = config.budget.as_ref()?;
        let amount = if amount.is_finite() && amount > 0.0 {
            amount
        } else {
            0.0
        };
        // Saturated, not overflowed to Infinity: persisted state must carry
        // the sum (JSON has no Infinity) or a resumed run forgets the spend.
        state.spent = (state.spent + amount).min(f64::MAX);
        if std::mem::take(&mut state.loop_suspected) {
            state.spent_while_looping = (state.spent_while_looping + amount).min(f64::MAX);
        }
        let (spent, limit, looping) = match (budget.max_spend_while_looping, budget.max_spend) {
            (Some(limit), _) if state.spent_while_looping >= limit => (state.spent_while_looping, limit, true),
            (_, Some(limit)) if state.spent >= limit => (state.spent, limit, false),
            _ => return None,
        };
        let mut message = format!("Budget guard: {} {} spent", js_number(spent), budget.unit);
        if looping {
            message.push_str(" while the run kept repeating itself");
        }
        message.push_str(&format!(
            " (limit {}). Stopping before the loop burns the rest of the budget.",
            js_number(limit)
        ));
        // Fed once per model response and naming no tool, like the text
        // detectors: reported under the cross-turn kind.
        Some(Finding {
            opt_in: BUDGET,
            detector: Some(TEXT_STREAK),
            streak: spent,
            action: Some(crate::ladder::Action::Stop),
            fingerprint: JsString::from(fingerprint_string(&JsString::from(BUDGET))),
            tool_name: None,
            message: JsString::from(message),
        })
    }

    fn suspected(&mut self) {
        self.state.loop_suspected = true;
    }

    fn to_value(&self) -> Option<Value> {
        self.state.to_value()
    }

    fn scratch_for(&self, tools: &[&JsString]) -> Box<dyn RuleState> {
        Box::new(Beyond {
            config: self.config.clone(),
            state: self.state.scratch_for(tools),
        })
    }

    /// Through the persisted form, as a resumed run builds it (as
    /// `scratch_for` does), plus the one flag it does not persist: a deep
    /// copy of every detector's evidence, reachable from the monitor's
    /// vtable, would weigh about 4 kB gzipped on the wasm module.
    fn clone_box(&self) -> Box<dyn RuleState> {
        let mut state = BeyondState::from_value(self.state.to_value().as_ref());
        state.loop_suspected = self.state.loop_suspected;
        Box::new(Beyond {
            config: self.config.clone(),
            state,
        })
    }
}
