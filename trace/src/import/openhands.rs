//! OpenHands event streams: a conversation's event list (`[{id, source,
//! action, args, tool_call_metadata?}, {id, source, observation, content,
//! extras, cause}]`), the same under `history` in an evaluation's
//! `output.jsonl` (one run per line, `{instance_id, history, …}`), and the
//! older `history` of `[action, observation]` pairs.
//!
//! Written from OpenHands' event types (`openhands/events/`): an **action**
//! of `source: "agent"` is a tool call — its tool is the function the model
//! called (`tool_call_metadata.function_name`), else the action's name
//! (`run`, `read`, `edit`, `browse`, `think`, `finish`, …). Its identity is
//! the arguments the model sent (the matching `tool_calls[]` of
//! `tool_call_metadata.model_response`), else `args` without the fields
//! OpenHands adds (`thought`, `confirmation_state`, `security_risk`, …).
//! Calls of one model response (the same `model_response.id`) are one
//! round; an action without metadata is a round of its own. An agent
//! `message` action is assistant text. An **observation** answers the
//! action it names in `cause`: `content` is the result; an `error`
//! observation, or an `exit_code` other than 0 in `extras`, is a failure.

use doom_loop::error::Result;
use doom_loop::js_string::JsString;
use doom_loop::json::{Object, Value};

use super::{array, at, call_from, get, string_field, Builder};
use crate::transcript::TranscriptRound;

/// Fields OpenHands adds to an action's `args` that the model did not send.
const ADDED_ARGS: &[&str] = &[
    "thought",
    "confirmation_state",
    "security_risk",
    "hidden",
    "impl_source",
    "blocking",
];

/// Actions that are not tool calls.
const NOT_CALLS: &[&str] = &[
    "message",
    "system",
    "recall",
    "change_agent_state",
    "null",
    "condensation",
    "condensation_request",
];

/// True when a list is OpenHands events: items with a `source` and an
/// `action` or `observation`, or `[action, observation]` pairs.
pub(crate) fn is_events(items: &[Value]) -> bool {
    let event = |item: &Value| {
        get(item, "source").is_some() && (get(item, "action").is_some() || get(item, "observation").is_some())
    };
    !items.is_empty()
        && items.iter().all(|item| match item {
            Value::Array(pair) => pair.iter().all(event),
            other => event(other),
        })
        && items
            .iter()
            .any(|item| !matches!(item, Value::Array(pair) if pair.is_empty()))
}

/// The events of a list, pairs flattened.
fn flatten(items: &[Value]) -> Vec<&Value> {
    items
        .iter()
        .flat_map(|item| match item {
            Value::Array(pair) => pair.iter().collect::<Vec<_>>(),
            other => vec![other],
        })
        .collect()
}

/// The rounds of an OpenHands event list.
///
/// # Errors
/// Never for a list the importer recognises as OpenHands events (items
/// with a `source` and an `action` or `observation`, or `[action,
/// observation]` pairs); the signature matches the other importers.
pub fn rounds(items: &[Value]) -> Result<Vec<TranscriptRound>> {
    let mut builder = Builder::default();
    let mut response: Option<JsString> = None;
    for (i, event) in flatten(items).into_iter().enumerate() {
        event_into(&mut builder, event, &mut response).map_err(|e| at(&format!("events[{i}]"), e))?;
    }
    Ok(builder.finish())
}

fn event_into(builder: &mut Builder, event: &Value, response: &mut Option<JsString>) -> Result<()> {
    if let Some(action) = string_field(event, &["action"]) {
        let from_agent = string_field(event, &["source"]).is_some_and(|s| s == "agent");
        if !from_agent {
            builder.end_turn();
            *response = None;
            return Ok(());
        }
        let action = action.to_string();
        if action == "message" {
            builder.end_turn();
            *response = None;
            if let Some(text) = get(event, "args")
                .and_then(|a| string_field(a, &["content"]))
                .filter(|t| !t.is_empty())
            {
                builder.text(text);
            }
            builder.end_turn();
            return Ok(());
        }
        if NOT_CALLS.contains(&action.as_str()) {
            return Ok(());
        }
        let metadata = get(event, "tool_call_metadata");
        let response_id = metadata
            .and_then(|m| get(m, "model_response"))
            .and_then(|r| string_field(r, &["id"]));
        if response_id.is_none() || response_id != *response {
            builder.end_turn();
        }
        *response = response_id;
        if let Some(thought) = get(event, "args")
            .and_then(|a| string_field(a, &["thought"]))
            .filter(|t| !t.is_empty())
        {
            builder.text(thought);
        }
        let name = metadata
            .and_then(|m| string_field(m, &["function_name"]))
            .unwrap_or_else(|| JsString::from(action.as_str()));
        let id = string_field(event, &["id"]).or_else(|| number_id(event));
        builder.call(
            call_from(name, model_arguments(metadata).or_else(|| model_args(event)).as_ref()),
            id.as_ref(),
        );
    } else if get(event, "observation").is_some() {
        let result = get(event, "content").cloned();
        let failed = string_field(event, &["observation"]).is_some_and(|o| o == "error")
            || exit_code(event).is_some_and(|code| code != 0.0);
        match get(event, "cause").and_then(as_id) {
            Some(id) => {
                builder.result_by_id(&id, result, failed);
            }
            // An observation that names no action answers the oldest open call.
            None if string_field(event, &["source"]).is_some_and(|s| s != "user") => {
                builder.result_in_order(None, result, failed);
            }
            None => {}
        }
    }
    Ok(())
}

/// An event id as the text observations' `cause` is compared with.
fn as_id(value: &Value) -> Option<JsString> {
    match value {
        Value::Number(n) => Some(JsString::from(doom_loop::json::js_number(*n).as_str())),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn number_id(event: &Value) -> Option<JsString> {
    get(event, "id").and_then(as_id)
}

fn exit_code(event: &Value) -> Option<f64> {
    let extras = get(event, "extras")?;
    get(extras, "exit_code")
        .or_else(|| get(extras, "metadata").and_then(|m| get(m, "exit_code")))
        .and_then(Value::as_f64)
}

/// The raw arguments of the model's tool call, from the response that made it.
fn model_arguments(metadata: Option<&Value>) -> Option<Value> {
    let metadata = metadata?;
    let call_id = string_field(metadata, &["tool_call_id"])?;
    let choices = array(get(metadata, "model_response")?, "choices")?;
    choices.iter().find_map(|choice| {
        let calls = array(get(choice, "message")?, "tool_calls")?;
        let call = calls
            .iter()
            .find(|c| string_field(c, &["id"]).as_ref() == Some(&call_id))?;
        get(call, "function").and_then(|f| get(f, "arguments")).cloned()
    })
}

/// `args` without the fields OpenHands adds.
fn model_args(event: &Value) -> Option<Value> {
    let args = get(event, "args")?.as_object()?;
    let mut kept = Object::new();
    for (key, value) in args.iter() {
        if !ADDED_ARGS.iter().any(|k| key == *k) {
            kept.insert(key.clone(), value.clone());
        }
    }
    Some(Value::Object(kept))
}
