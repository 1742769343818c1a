//! **The seam where evidence rules plug into the monitor** — the one place
//! the port hands anything to what goes beyond the reference.
//!
//! The monitor scores every call, result and text exactly as the reference
//! does. When a configuration plugs rules in ([`Rules`], the `beyond` field
//! of [`crate::config::ResolvedConfig`]), the monitor hands each score to
//! their running state ([`RuleState`]) once and reads back evidence: the
//! streak its ladder sees for a call (the reference's, or less), whether a
//! write ran between the repeats (a verdict then must not claim the result
//! cannot change), and findings of the rules' own (a cycle, a failure
//! streak, spend over a budget) that it puts through its ladder as
//! verdicts. It persists the rules' state under the `beyond` key of its
//! state, a key the reference ignores, without reading it.
//!
//! With no rules plugged in (every configuration the reference can
//! express), the monitor calls nothing here: the reference's streak passes
//! through untouched and nothing is recorded.
//!
//! The rules themselves live above the parity core (`crate::detectors`
//! implements these traits); which rules an option turns on is wired above
//! both. This module names no rule.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::error::Result;
use crate::js_string::JsString;
use crate::json::Value;
use crate::ladder::Action;

/// A tool's declared effect on the world its calls observe (a per-tool
/// `loopEffect`): carried with each call to the evidence rules, which may
/// read it (the opt-in effect-aware streaks do).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Effect {
    /// Not declared: the rules leave the tool alone.
    #[default]
    Unknown,
    /// Changes nothing (a read, a search, a calculation).
    Read,
    /// Changes what later calls observe (an edit, a write).
    Write,
}

impl Effect {
    /// A `loopEffect` declaration: `"write"` or `"read"`; `None` for
    /// anything else (the caller warns and treats the tool as unknown).
    pub fn from_declaration(value: &Value) -> Option<Effect> {
        match value.as_js_string().map(JsString::to_string).as_deref() {
            Some("write") => Some(Effect::Write),
            Some("read") => Some(Effect::Read),
            _ => None,
        }
    }

    /// The declaration's text (`"unknown"` for no declaration).
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Unknown => "unknown",
            Effect::Read => "read",
            Effect::Write => "write",
        }
    }
}

/// One call as the reference scored it, handed to the rules.
#[derive(Clone, Copy, Debug)]
pub struct ScoredCall<'a> {
    /// The tool.
    pub tool: &'a JsString,
    /// The call's fingerprint.
    pub fingerprint: &'a JsString,
    /// The tool's declared effect.
    pub effect: Effect,
    /// The reference's streak for the call.
    pub reference: f64,
    /// The round it was recorded in.
    pub round: f64,
    /// The tool's round set this call belongs to (sorted).
    pub round_set: &'a [JsString],
    /// The tool's previous round set, when this call opened a new round of
    /// the tool (its previous round is then finished).
    pub closed_round: Option<&'a [JsString]>,
}

/// A verdict an evidence rule raises on its own, before the ladder: the
/// monitor resolves its rung (unless the rule fixes it) and reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The rule that raised it (a verdict's `optInDetector`).
    pub opt_in: &'static str,
    /// The reference kind it is reported under (a verdict's `detector`);
    /// `None` for a call's finding: the kind the call is recorded under.
    pub detector: Option<&'static str>,
    /// The count the ladder compares with its rungs.
    pub streak: f64,
    /// The rung, when the rule fixes it (the spend guard stops); otherwise
    /// the ladder's rung for `streak`.
    pub action: Option<Action>,
    /// Fingerprint of the repeated unit.
    pub fingerprint: JsString,
    /// The tool, for a tool's finding.
    pub tool_name: Option<JsString>,
    /// The verdict's text.
    pub message: JsString,
}

/// What the rules make of one call the reference scored.
#[derive(Clone, Debug, PartialEq)]
pub struct CallEvidence {
    /// The streak the ladder sees: the reference's, or less.
    pub streak: f64,
    /// A write ran since the previous identical call, though none changed
    /// anything new: a verdict must not claim that repeating the call
    /// cannot change its result.
    pub written_since: bool,
    /// A finding of the rules' own about the call (a cycle).
    pub finding: Option<Finding>,
}

/// What the rules make of one result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultEvidence {
    /// A repeated call showed something new: the run is moving, so the
    /// monitor clears its cross-turn text streak (as the reference does
    /// when a late result is delivered).
    pub progress: bool,
    /// Findings about the result, in order (the stronger wins, ties to the
    /// first).
    pub findings: Vec<Finding>,
}

/// A configured set of evidence rules: what a resolved configuration
/// holds, opaquely, and what starts their state for a monitor.
// Neither trait requires `Debug`: every method of a trait object's vtable
// is linked in, and derived `Debug` of the rules' state (float formatting
// included) would weigh on the wasm module though nothing prints it. The
// handles print the rules' persisted form instead.
pub trait RuleSet: Send + Sync + 'static {
    /// The rules' running state: fresh, or restored from the persisted
    /// `beyond` value (anything malformed dropped, never fatal).
    fn start(&self, persisted: Option<&Value>) -> Box<dyn RuleState>;
    /// The rules' resolved form, written under the configuration's
    /// `beyond` key.
    fn to_value(&self) -> Value;
    /// Whether a rule reads what a result showed (otherwise a result counts
    /// only as failed or not, and a host need not hand its outcome over).
    fn reads_outcomes(&self) -> bool;
    /// The set as [`Any`], for the wiring above to read its own type back.
    fn as_any(&self) -> &dyn Any;
    /// Whether `other` is the same configuration.
    fn same(&self, other: &dyn RuleSet) -> bool;
}

/// The running state of a set of evidence rules, driven by the monitor.
pub trait RuleState: Send + Sync {
    /// A call the reference scored: the streak the ladder sees, and any
    /// finding of the rules' own.
    fn call(&mut self, call: &ScoredCall<'_>) -> CallEvidence;
    /// The call of `tool` with `fingerprint` (declared `effect`) that the
    /// monitor just scored in `round` will run: it was not refused.
    fn ran(&mut self, tool: &JsString, fingerprint: &JsString, effect: Effect, round: f64);
    /// The result of a call of `tool` whose fingerprint is `input`, made
    /// in `round`: `outcome` is its identity (if any), `failed` whether it
    /// failed.
    ///
    /// # Errors
    /// Whatever canonicalization rejects in `outcome`; the evidence is
    /// unchanged then.
    fn result(
        &mut self,
        tool: &JsString,
        input: &JsString,
        outcome: Option<&Value>,
        failed: bool,
        round: f64,
    ) -> Result<ResultEvidence>;
    /// One response's assistant text (not whitespace only): a finding about
    /// it, if any.
    fn text(&mut self, text: &JsString) -> Option<Finding>;
    /// One turn's spend: a finding when the run is over a budget.
    fn spend(&mut self, amount: f64) -> Option<Finding>;
    /// The monitor issued a verdict (a loop is suspected).
    fn suspected(&mut self);
    /// The persisted form, `None` when there is nothing to persist.
    fn to_value(&self) -> Option<Value>;
    /// What restoring the persisted form would build, for a next round of
    /// calls of `tools` only (the session previews rounds on such a copy).
    fn scratch_for(&self, tools: &[&JsString]) -> Box<dyn RuleState>;
    /// A copy (the monitor's `Clone`): at least what restoring the
    /// persisted form would build, as a resumed run sees it.
    fn clone_box(&self) -> Box<dyn RuleState>;
}

impl Clone for Box<dyn RuleState> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl fmt::Debug for dyn RuleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RuleState").field(&self.to_value()).finish()
    }
}

/// The evidence rules a configuration plugs into the monitor: none by
/// default (the reference's behaviour), or a [`RuleSet`].
#[derive(Clone, Default)]
pub struct Rules(Option<Arc<dyn RuleSet>>);

impl fmt::Debug for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Rules").field(&self.to_value()).finish()
    }
}

impl Rules {
    /// No rules: the reference's behaviour.
    pub fn none() -> Rules {
        Rules(None)
    }

    /// `set` plugged in.
    pub fn new(set: Arc<dyn RuleSet>) -> Rules {
        Rules(Some(set))
    }

    /// True when no rule is plugged in.
    pub fn is_off(&self) -> bool {
        self.0.is_none()
    }

    /// True when a rule reads what a result showed.
    pub fn reads_outcomes(&self) -> bool {
        self.0.as_ref().is_some_and(|set| set.reads_outcomes())
    }

    /// The rules' resolved form (`None` when none is plugged in).
    pub fn to_value(&self) -> Option<Value> {
        self.0.as_ref().map(|set| set.to_value())
    }

    /// The plugged-in set as its own type, if it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.as_ref().and_then(|set| set.as_any().downcast_ref())
    }

    /// The rules' running state for a monitor (`None`: no rules).
    pub(crate) fn start(&self, persisted: Option<&Value>) -> Option<Box<dyn RuleState>> {
        self.0.as_ref().map(|set| set.start(persisted))
    }
}

impl PartialEq for Rules {
    fn eq(&self, other: &Rules) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => a.same(b.as_ref()),
            _ => false,
        }
    }
}
