//! The action ladder: observe → steer → escalate → block → stop.
//!
//! Keeps the reference's `resolveLadderAction`: a streak maps onto the
//! strongest rung whose threshold it has reached (`>=`), `block` can be
//! withheld (text and server-tool verdicts: nothing left to block) and so
//! can `escalate` (no mechanism configured, or the budget spent), letting
//! the streak fall through to weaker rungs.

use crate::json::{write_number, Value};

/// One rung of the ladder, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// Report only.
    Observe,
    /// Inject a corrective message before the next turn.
    Steer,
    /// Throw more intelligence at the next turn (model swap / advisor).
    Escalate,
    /// Refuse the tool call with the verdict text as its output.
    Block,
    /// Halt the run before the next model request.
    Stop,
}

impl Action {
    /// Every rung, weakest first.
    pub const ALL: [Action; 5] = [
        Action::Observe,
        Action::Steer,
        Action::Escalate,
        Action::Block,
        Action::Stop,
    ];

    /// The reference's name for the rung.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Observe => "observe",
            Action::Steer => "steer",
            Action::Escalate => "escalate",
            Action::Block => "block",
            Action::Stop => "stop",
        }
    }

    /// Parses a rung name.
    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

/// A rung's threshold: off (`false`) or a streak count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Threshold {
    /// The rung is disabled.
    Off,
    /// The rung fires at streaks `>=` this number.
    At(f64),
}

impl Threshold {
    /// Whether `streak` reaches this rung (JS `streak >= threshold`; NaN never does).
    pub fn is_met(self, streak: f64) -> bool {
        match self {
            Threshold::Off => false,
            Threshold::At(t) => streak >= t,
        }
    }

    /// The JSON value of the threshold (`false` or the number).
    pub fn to_value(self) -> Value {
        match self {
            Threshold::Off => Value::Bool(false),
            Threshold::At(t) => Value::Number(t),
        }
    }

    /// A threshold from an arbitrary JS value as `resolveLadderAction`
    /// reads it: `false` is off, anything else compares through `ToNumber`.
    pub fn from_js(value: Option<&Value>) -> Threshold {
        match value {
            Some(Value::Bool(false)) => Threshold::Off,
            Some(v) => Threshold::At(v.to_number()),
            None => Threshold::At(f64::NAN),
        }
    }

    pub(crate) fn write(self, out: &mut String) {
        match self {
            Threshold::Off => out.push_str("false"),
            Threshold::At(t) => write_number(t, out),
        }
    }
}

/// Streak thresholds per rung.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ladder {
    /// `observe` rung.
    pub observe: Threshold,
    /// `steer` rung.
    pub steer: Threshold,
    /// `escalate` rung.
    pub escalate: Threshold,
    /// `block` rung.
    pub block: Threshold,
    /// `stop` rung.
    pub stop: Threshold,
}

/// The reference's `DEFAULT_DOOM_LOOP_LADDER`: observe 2, block 3, stop 6.
pub const DEFAULT_LADDER: Ladder = Ladder {
    observe: Threshold::At(2.0),
    steer: Threshold::Off,
    escalate: Threshold::Off,
    block: Threshold::At(3.0),
    stop: Threshold::At(6.0),
};

impl Default for Ladder {
    fn default() -> Self {
        DEFAULT_LADDER
    }
}

impl Ladder {
    /// The threshold of one rung.
    pub fn threshold(&self, action: Action) -> Threshold {
        match action {
            Action::Observe => self.observe,
            Action::Steer => self.steer,
            Action::Escalate => self.escalate,
            Action::Block => self.block,
            Action::Stop => self.stop,
        }
    }

    /// A ladder from an arbitrary JS object (the JS `resolveLadderAction`).
    pub fn from_js(value: &Value) -> Ladder {
        let rung = |name: &str| Threshold::from_js(value.as_object().and_then(|o| o.get(name)));
        Ladder {
            observe: rung("observe"),
            steer: rung("steer"),
            escalate: rung("escalate"),
            block: rung("block"),
            stop: rung("stop"),
        }
    }

    /// Writes the ladder as the reference's JSON object.
    pub fn write_json(&self, out: &mut String) {
        out.push('{');
        for (i, action) in Action::ALL.into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(action.as_str());
            out.push_str("\":");
            self.threshold(action).write(out);
        }
        out.push('}');
    }
}

/// Which rungs a resolution may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LadderOptions {
    /// False for text and server-tool verdicts.
    pub allow_block: bool,
    /// False when escalation is unconfigured or its budget is spent.
    pub allow_escalate: bool,
}

/// The strongest rung `streak` reaches (the reference's `resolveLadderAction`).
///
/// ```
/// use doom_loop::ladder::{resolve_ladder_action, Action, LadderOptions, DEFAULT_LADDER};
/// let opts = LadderOptions { allow_block: false, allow_escalate: true };
/// assert_eq!(resolve_ladder_action(&DEFAULT_LADDER, 4.0, opts), Some(Action::Observe));
/// assert_eq!(resolve_ladder_action(&DEFAULT_LADDER, 6.0, opts), Some(Action::Stop));
/// ```
pub fn resolve_ladder_action(ladder: &Ladder, streak: f64, options: LadderOptions) -> Option<Action> {
    Action::ALL.into_iter().rev().find(|&action| {
        let allowed = match action {
            Action::Block => options.allow_block,
            Action::Escalate => options.allow_escalate,
            _ => true,
        };
        allowed && ladder.threshold(action).is_met(streak)
    })
}
