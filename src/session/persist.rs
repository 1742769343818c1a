//! The session's persisted state and its JSON answers (for the wasm
//! binding and the trace tooling).

use crate::beyond::{BUDGET, NO_PROGRESS, TOOL_CYCLE, TOOL_FAILURE};
use crate::js_string::JsString;
use crate::json::{to_json, write_json_string, write_number, Object, Value};
use crate::ladder::Action;
use crate::monitor::Verdict;

use super::{Decision, Inflight, RequestPatch, RoundOutcome, Session, SESSION_STATE_KEY};

/// The most calls awaiting results a restored state brings back.
const MAX_RESTORED_INFLIGHT: usize = 10_000;
/// The most pending guidance messages a restored state brings back.
const MAX_RESTORED_STEER: usize = 64;

fn verdict_value(verdict: &Verdict) -> Option<Value> {
    crate::json::parse(&verdict.to_json()).ok()
}

/// A verdict from its JSON object (a persisted `stopVerdict`); `None`
/// when the object is not one (the persisted halt is then dropped).
#[inline(never)]
pub fn verdict_from_value(value: &Value) -> Option<Verdict> {
    let object = value.as_object()?;
    let string = |name: &str| object.get(name).and_then(Value::as_js_string).cloned();
    let action = Action::from_name(&string("action")?.to_string())?;
    let streak = object.get("streak").and_then(Value::as_f64).filter(|n| n.is_finite())?;
    let opt_in_detector = match object.get("optInDetector").and_then(Value::as_js_string) {
        None => None,
        Some(name) => [TOOL_CYCLE, NO_PROGRESS, TOOL_FAILURE, BUDGET]
            .into_iter()
            .find(|known| *name == **known),
    };
    Some(Verdict {
        detector: object.get("detector").cloned().unwrap_or(Value::Undefined),
        opt_in_detector,
        action,
        streak,
        fingerprint: string("fingerprint")?,
        tool_name: string("toolName"),
        message: string("message")?,
    })
}

#[inline(never)]
pub(super) fn state(session: &Session) -> Value {
    let Value::Object(mut object) = session.monitor.get_state() else {
        return session.monitor.get_state();
    };
    if let Some(stop) = session.stop.as_ref().and_then(verdict_value) {
        object.insert(JsString::from("stopVerdict"), stop);
    }
    if !session.steer.is_empty() {
        let steer = session.steer.iter().cloned().map(Value::String).collect();
        object.insert(JsString::from("pendingSteer"), Value::Array(steer));
    }
    if session.round > 0 || !session.inflight.is_empty() || session.escalation_pending {
        let mut extras = Object::new();
        extras.insert(JsString::from("round"), Value::Number(session.round as f64));
        if session.escalation_pending {
            extras.insert(JsString::from("escalate"), Value::Bool(true));
        }
        if !session.inflight.is_empty() {
            let inflight = session
                .inflight
                .iter()
                .map(|(id, call)| {
                    Value::Object(Object::from_entries(vec![
                        (JsString::from("id"), Value::String(id.clone())),
                        (JsString::from("toolName"), Value::String(call.tool_name.clone())),
                        (JsString::from("fingerprint"), Value::String(call.fingerprint.clone())),
                        (JsString::from("round"), Value::Number(call.round)),
                    ]))
                })
                .collect();
            extras.insert(JsString::from("inflight"), Value::Array(inflight));
        }
        object.insert(JsString::from(SESSION_STATE_KEY), Value::Object(extras));
    }
    Value::Object(object)
}

/// What the session keeps beyond the monitor's state, read fail-open:
/// anything malformed is dropped.
#[inline(never)]
pub(super) fn restore_extras(session: &mut Session, object: &Object) {
    if let Some(Value::Array(steer)) = object.get("pendingSteer") {
        for message in steer.iter().filter_map(Value::as_js_string).take(MAX_RESTORED_STEER) {
            session.queue_steer(message.clone());
        }
    }
    session.restored_stop = object.get("stopVerdict").and_then(verdict_from_value);
    let Some(extras) = object.get(SESSION_STATE_KEY).and_then(Value::as_object) else {
        return;
    };
    if let Some(round) = extras
        .get("round")
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite() && *n >= 0.0 && *n <= 9.0e15)
    {
        session.round = round.floor() as u64;
    }
    // Its guidance is in `pendingSteer`; without this the next request
    // would say "runs on a stronger model" and not.
    session.escalation_pending = extras.get("escalate") == Some(&Value::Bool(true));
    if let Some(Value::Array(calls)) = extras.get("inflight") {
        for call in calls.iter().take(MAX_RESTORED_INFLIGHT) {
            let Some(call) = call.as_object() else { continue };
            let string = |name: &str| call.get(name).and_then(Value::as_js_string).cloned();
            let round = call.get("round").and_then(Value::as_f64).filter(|n| n.is_finite());
            if let (Some(id), Some(tool_name), Some(fingerprint), Some(round)) =
                (string("id"), string("toolName"), string("fingerprint"), round)
            {
                session.inflight.insert(
                    id,
                    Inflight {
                        tool_name,
                        fingerprint,
                        round,
                    },
                );
            }
        }
    }
}

fn push_verdict(verdict: Option<&Verdict>, out: &mut String) {
    match verdict {
        Some(verdict) => verdict.write_json(out),
        None => out.push_str("null"),
    }
}

fn push_optional_string(value: Option<&JsString>, out: &mut String) {
    match value {
        Some(value) => write_json_string(value, out),
        None => out.push_str("null"),
    }
}

/// Verdicts as a JSON array.
pub fn verdicts_json(verdicts: &[Verdict]) -> String {
    let mut out = String::from("[");
    for (i, verdict) in verdicts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        verdict.write_json(&mut out);
    }
    out.push(']');
    out
}

impl Decision {
    /// The decision as JSON: `{id, toolName, action: "run" | "refuse",
    /// message, verdict, fingerprint, streak, duplicateInRound, exempt,
    /// malformed}` (absent values as `null`).
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    /// Appends [`Decision::to_json`] to `out`.
    #[inline(never)]
    pub fn write_json(&self, out: &mut String) {
        out.push_str("{\"id\":");
        write_json_string(&self.id, out);
        out.push_str(",\"toolName\":");
        write_json_string(&self.tool_name, out);
        out.push_str(",\"action\":\"");
        out.push_str(self.action.as_str());
        out.push_str("\",\"message\":");
        push_optional_string(self.message.as_ref(), out);
        out.push_str(",\"verdict\":");
        push_verdict(self.verdict.as_ref(), out);
        out.push_str(",\"fingerprint\":");
        push_optional_string(self.fingerprint.as_ref(), out);
        out.push_str(",\"streak\":");
        write_number(self.streak, out);
        out.push_str(&format!(
            ",\"duplicateInRound\":{},\"exempt\":{},\"malformed\":{}}}",
            self.duplicate_in_round, self.exempt, self.malformed
        ));
    }
}

impl RoundOutcome {
    /// The outcome as JSON: `{round, textVerdict, decisions, halt, verdicts}`.
    pub fn to_json(&self) -> String {
        let mut out = format!("{{\"round\":{},\"textVerdict\":", self.round);
        push_verdict(self.text_verdict.as_ref(), &mut out);
        out.push_str(",\"decisions\":[");
        for (i, decision) in self.decisions.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            decision.write_json(&mut out);
        }
        out.push_str("],\"halt\":");
        push_verdict(self.halt.as_ref(), &mut out);
        out.push_str(",\"verdicts\":");
        out.push_str(&verdicts_json(&self.verdicts));
        out.push('}');
        out
    }
}

impl RequestPatch {
    /// The patch as JSON: `{guidance, escalate}`.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"guidance\":");
        push_optional_string(self.guidance.as_ref(), &mut out);
        out.push_str(&format!(",\"escalate\":{}}}", self.escalate));
        out
    }
}

/// The state as JSON text.
pub(super) fn state_json(session: &Session) -> String {
    to_json(&state(session))
}
