//! A request body read without building its values: the texts of its
//! message list's items as they appear in the body, and the two fields a
//! decision echoes. What lets the prefix cache know an agent's previous
//! request in its next one, and build values only for what is new.
//!
//! This reading is strict JSON (serde_json, nesting up to 128 levels):
//! whatever it accepts, the gateway's own reading accepts too; anything
//! else (a duplicated field, a list that is not an array, deeper nesting)
//! is `None`, and the gateway reads the whole body as it always does.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::api::Api;

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default)]
    input: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default)]
    model: Option<&'a RawValue>,
    #[serde(borrow, default)]
    stream: Option<&'a RawValue>,
    #[serde(borrow, default)]
    previous_response_id: Option<&'a RawValue>,
}

/// What the cache reads of a body.
pub(crate) struct Raw<'a> {
    /// Each message's (Responses: each input item's) JSON text.
    pub items: Vec<&'a str>,
    /// The `model` field's JSON text (not `null`).
    pub model: Option<&'a str>,
    /// `stream: true`.
    pub stream: bool,
}

/// The message list of a body of `api` as raw texts, or `None` when the
/// body is not one the cache reads (see the module's doc).
pub(crate) fn read(api: Api, text: &str) -> Option<Raw<'_>> {
    let body: Body<'_> = serde_json::from_str(text).ok()?;
    let list = match api {
        Api::ChatCompletions | Api::AnthropicMessages => body.messages?,
        Api::Responses if body.previous_response_id.is_none() => body.input?,
        Api::Responses => return None,
    };
    Some(Raw {
        items: list.into_iter().map(RawValue::get).collect(),
        model: body.model.map(RawValue::get),
        stream: body.stream.is_some_and(|s| s.get() == "true"),
    })
}
