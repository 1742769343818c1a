//! The forwarded body: a refused call's result replaced by the verdict's
//! text (the model reads the refusal as it would in-process; the tool has
//! already run), and steer guidance added the way each API carries
//! instructions. Only what changes is touched; the rest of the body is
//! re-serialized as read.

use doom_loop::json::{Object, Value};
use doom_loop::JsString;

use crate::api::Api;

/// A refused call's result to replace: the id its result names, and the text.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// `tool_call_id` / `tool_use_id` / `call_id`.
    pub id: JsString,
    /// What the model reads instead of the result.
    pub text: JsString,
}

fn s(text: &str) -> JsString {
    JsString::from(text)
}

fn string_of(object: &Object, key: &str) -> Option<JsString> {
    object.get(key).and_then(Value::as_js_string).cloned()
}

/// `object[key]` replaced by `f` of its value (absent: `Value::Undefined`;
/// an `Undefined` answer leaves the object as it was).
fn update(object: &mut Object, key: &str, f: impl FnOnce(Value) -> Value) {
    let old = object.get(key).cloned().unwrap_or(Value::Undefined);
    match f(old) {
        Value::Undefined => {}
        new => object.insert(s(key), new),
    }
}

fn refusal_for(refusals: &[Refusal], id: Option<JsString>) -> Option<&Refusal> {
    let id = id?;
    refusals.iter().find(|r| r.id == id)
}

/// Replaces the results of `refusals` in a message or item list.
fn replace_results(api: Api, items: Vec<Value>, refusals: &[Refusal]) -> Vec<Value> {
    items
        .into_iter()
        .map(|item| match item {
            Value::Object(mut object) => {
                match api {
                    Api::ChatCompletions => {
                        let is_tool = string_of(&object, "role").is_some_and(|r| r == "tool");
                        if let Some(r) = refusal_for(refusals, string_of(&object, "tool_call_id")).filter(|_| is_tool) {
                            object.insert(s("content"), Value::String(r.text.clone()));
                        }
                    }
                    Api::Responses => {
                        let is_output =
                            string_of(&object, "type").is_some_and(|t| t.as_bytes().ends_with(b"_call_output"));
                        if let Some(r) = refusal_for(refusals, string_of(&object, "call_id")).filter(|_| is_output) {
                            object.insert(s("output"), Value::String(r.text.clone()));
                        }
                    }
                    Api::AnthropicMessages => {
                        update(&mut object, "content", |content| match content {
                            Value::Array(blocks) => {
                                Value::Array(blocks.into_iter().map(|b| anthropic_block(b, refusals)).collect())
                            }
                            other => other,
                        });
                    }
                }
                Value::Object(object)
            }
            other => other,
        })
        .collect()
}

fn anthropic_block(block: Value, refusals: &[Refusal]) -> Value {
    let Value::Object(mut object) = block else {
        return block;
    };
    let is_result = string_of(&object, "type").is_some_and(|t| t.as_bytes().ends_with(b"tool_result"));
    if let Some(r) = refusal_for(refusals, string_of(&object, "tool_use_id")).filter(|_| is_result) {
        object.insert(s("content"), Value::String(r.text.clone()));
    }
    Value::Object(object)
}

/// Adds `guidance` as instructions: a trailing system message (chat), the
/// `system` prompt (Anthropic), the `instructions` (Responses).
fn add_guidance(api: Api, body: &mut Object, guidance: &JsString) {
    let appended = |old: &JsString| {
        let mut text = old.clone();
        text.push_str("\n\n");
        text.push_js(guidance);
        text
    };
    match api {
        Api::ChatCompletions => update(body, "messages", |messages| match messages {
            Value::Array(mut items) => {
                items.push(Value::Object(Object::from_entries(vec![
                    (s("role"), Value::String(s("system"))),
                    (s("content"), Value::String(guidance.clone())),
                ])));
                Value::Array(items)
            }
            other => other,
        }),
        Api::AnthropicMessages => update(body, "system", |system| match system {
            Value::String(text) => Value::String(appended(&text)),
            Value::Array(mut blocks) => {
                blocks.push(Value::Object(Object::from_entries(vec![
                    (s("type"), Value::String(s("text"))),
                    (s("text"), Value::String(guidance.clone())),
                ])));
                Value::Array(blocks)
            }
            _ => Value::String(guidance.clone()),
        }),
        Api::Responses => update(body, "instructions", |instructions| match instructions {
            Value::String(text) if !text.is_empty() => Value::String(appended(&text)),
            _ => Value::String(guidance.clone()),
        }),
    }
}

/// The body to forward: `body` with the refused results replaced and the
/// guidance added.
pub fn rewrite(api: Api, body: Value, refusals: &[Refusal], guidance: Option<&JsString>) -> Value {
    let Value::Object(mut object) = body else {
        return body;
    };
    if !refusals.is_empty() {
        let key = if api == Api::Responses { "input" } else { "messages" };
        update(&mut object, key, |items| match items {
            Value::Array(items) => Value::Array(replace_results(api, items, refusals)),
            other => other,
        });
    }
    if let Some(guidance) = guidance {
        add_guidance(api, &mut object, guidance);
    }
    Value::Object(object)
}
