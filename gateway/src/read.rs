//! Reading a request body: the conversation it carries (through the same
//! importers `doomloop replay` runs on recorded logs), the model it names
//! and whether it asks for a stream.

use doom_loop::json::Value;
use doom_loop::JsString;
use doom_loop_trace::import::{anthropic, chat, responses, Conversation, Resume};

use crate::api::Api;

/// What the gateway reads of a request.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The conversation so far.
    pub conversation: Conversation,
    /// The `model` it asks for (echoed in a synthesized answer).
    pub model: Option<JsString>,
    /// `stream: true`: the client reads server-sent events.
    pub stream: bool,
}

fn field<'a>(body: &'a Value, key: &str) -> Option<&'a Value> {
    body.as_object().and_then(|o| o.get(key))
}

fn list<'a>(body: &'a Value, key: &str) -> Result<&'a [Value], String> {
    match field(body, key) {
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(format!("`{key}` is not an array")),
        None => Err(format!("no `{key}`")),
    }
}

/// Reads a parsed request body of `api`.
///
/// # Errors
/// A body the gateway cannot read (not an object, no message list, a
/// history kept upstream): the request passes through unguarded.
pub fn read(api: Api, body: &Value) -> Result<Request, String> {
    Ok(read_resumable(api, body)?.0)
}

/// [`read`], and where reading the conversation stopped with nothing left
/// waiting ([`Resume`]), to read a longer one on from there.
///
/// # Errors
/// As [`read`].
pub fn read_resumable(api: Api, body: &Value) -> Result<(Request, Option<Resume>), String> {
    if body.as_object().is_none() {
        return Err("the body is not a JSON object".into());
    }
    let conversation = match api {
        Api::Responses => {
            if field(body, "previous_response_id").is_some_and(|v| !matches!(v, Value::Null)) {
                return Err(
                    "it continues a stored response (`previous_response_id`): its history is kept upstream".into(),
                );
            }
            match field(body, "input") {
                Some(Value::String(_)) => Ok((
                    Conversation {
                        rounds: Vec::new(),
                        ends_with_user_turn: true,
                    },
                    None,
                )),
                _ => conversation_from(api, list(body, "input")?, &Resume::default()),
            }
        }
        _ => conversation_from(api, list(body, "messages")?, &Resume::default()),
    }
    .map_err(|e| e.message().to_string())?;
    let request = Request {
        conversation: conversation.0,
        model: field(body, "model").and_then(Value::as_js_string).cloned(),
        stream: matches!(field(body, "stream"), Some(Value::Bool(true))),
    };
    Ok((request, conversation.1))
}

/// The conversation of a message list of `api` (Responses: its input
/// items) read on from `from`, and where that reading stopped.
///
/// # Errors
/// A message the importer cannot read, or one that goes on with the turn
/// `from` left open.
pub fn conversation_from(
    api: Api,
    items: &[Value],
    from: &Resume,
) -> doom_loop::Result<(Conversation, Option<Resume>)> {
    match api {
        Api::ChatCompletions => chat::conversation_from(items, from),
        Api::AnthropicMessages => anthropic::conversation_from(items, from),
        Api::Responses => responses::conversation_from(items, from),
    }
}
