//! SWE-agent trajectories (`.traj`): `{trajectory: [{response, thought,
//! action, observation, state, …}], history, info}`.
//!
//! Each step is one model turn with one shell call: `bash` with `{"command":
//! <action>}` (the action as the agent ran it, SWE-agent's own commands
//! such as `scroll_down` included, surrounding whitespace stripped — the
//! agent writes `"ls -F\n"`), its `observation` the result, its
//! `thought` (else `response`) the turn's text. A step with an empty action
//! ran nothing: text only.

use doom_loop::error::Result;
use doom_loop::js_string::JsString;
use doom_loop::json::{Object, Value};

use super::{array, at, invalid, string_field};
use crate::transcript::{TranscriptCall, TranscriptRound};

/// The rounds of a SWE-agent trajectory document.
///
/// # Errors
/// A step that is not an object, or an `action` that is not a string,
/// named by its place (`trajectory[7]`).
pub fn rounds(document: &Value) -> Result<Vec<TranscriptRound>> {
    let steps = array(document, "trajectory").ok_or_else(|| invalid("`trajectory` is not an array"))?;
    steps
        .iter()
        .enumerate()
        .map(|(i, step)| step_round(step).map_err(|e| at(&format!("trajectory[{i}]"), e)))
        .collect()
}

/// A one-call shell round, shared with mini-swe-agent.
pub(crate) fn bash_call(command: JsString, result: Option<Value>) -> TranscriptCall {
    let mut args = Object::new();
    args.insert(JsString::from("command"), Value::String(command));
    let mut call = TranscriptCall::new(JsString::from("bash"), Value::Object(args), false);
    call.result = result;
    call
}

fn step_round(step: &Value) -> Result<TranscriptRound> {
    let Value::Object(fields) = step else {
        return Err(invalid(format!("a step is an object, not {}", super::kind_of(step))));
    };
    let action = match fields.get("action") {
        None | Some(Value::Null) => None,
        Some(Value::String(a)) => Some(a.clone()),
        Some(other) => return Err(invalid(format!("`action` is {}, not a string", super::kind_of(other)))),
    };
    let text = string_field(step, &["thought", "response"]).filter(|t| !t.is_empty());
    let result = fields.get("observation").filter(|o| !matches!(o, Value::Null)).cloned();
    let calls = action
        .map(|a| a.to_utf8_lossy().trim().to_string())
        .filter(|a| !a.is_empty())
        .map(|a| vec![bash_call(JsString::from(a), result)])
        .unwrap_or_default();
    Ok(TranscriptRound {
        text,
        calls,
        ..TranscriptRound::default()
    })
}
