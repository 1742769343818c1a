//! The gateway's own answer when the run is halted: a final assistant
//! message carrying the stop verdict and no tool calls, in the client's
//! format — a JSON body, or server-sent events when the request streamed —
//! so the agent's loop ends the way it always ends. Ids are derived from
//! the request (no clock, no randomness: the same request gets the same
//! answer).

use doom_loop::fingerprint::sha256_hex;
use doom_loop::json::write_json_string;
use doom_loop::JsString;

use crate::api::Api;

/// A synthesized response.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// `application/json` or `text/event-stream`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

fn json_string(text: &JsString) -> String {
    let mut out = String::new();
    write_json_string(text, &mut out);
    out
}

/// An id of the request: the first 24 hex digits of its body's SHA-256.
pub fn request_id(body: &[u8]) -> String {
    sha256_hex(body)[..24].to_string()
}

/// The answer carrying `text` for a request of `api` (`model` echoed,
/// `stream` choosing events over one JSON body).
pub fn answer(api: Api, text: &JsString, model: Option<&JsString>, stream: bool, id: &str) -> Answer {
    let text = json_string(text);
    let model = json_string(&model.cloned().unwrap_or_else(|| JsString::from("doomloop")));
    let (content_type, body) = match (api, stream) {
        (Api::ChatCompletions, false) => ("application/json", chat_json(&text, &model, id)),
        (Api::ChatCompletions, true) => ("text/event-stream", chat_events(&text, &model, id)),
        (Api::AnthropicMessages, false) => ("application/json", anthropic_json(&text, &model, id)),
        (Api::AnthropicMessages, true) => ("text/event-stream", anthropic_events(&text, &model, id)),
        (Api::Responses, false) => ("application/json", responses_json(&text, &model, id)),
        (Api::Responses, true) => ("text/event-stream", responses_events(&text, &model, id)),
    };
    Answer { content_type, body }
}

fn chat_json(text: &str, model: &str, id: &str) -> String {
    format!(
        r#"{{"id":"chatcmpl-doomloop-{id}","object":"chat.completion","created":0,"model":{model},"choices":[{{"index":0,"message":{{"role":"assistant","content":{text},"refusal":null}},"logprobs":null,"finish_reason":"stop"}}],"usage":{{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}}}"#
    )
}

fn chat_events(text: &str, model: &str, id: &str) -> String {
    let chunk = |delta: &str, finish: &str| {
        format!(
            r#"data: {{"id":"chatcmpl-doomloop-{id}","object":"chat.completion.chunk","created":0,"model":{model},"choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}}}]}}"#
        ) + "\n\n"
    };
    let mut out = chunk(&format!(r#"{{"role":"assistant","content":{text}}}"#), "null");
    out.push_str(&chunk("{}", r#""stop""#));
    out.push_str(&format!(
        r#"data: {{"id":"chatcmpl-doomloop-{id}","object":"chat.completion.chunk","created":0,"model":{model},"choices":[],"usage":{{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}}}"#
    ));
    out.push_str("\n\ndata: [DONE]\n\n");
    out
}

fn anthropic_message(text_blocks: &str, model: &str, id: &str, stop: &str) -> String {
    format!(
        r#"{{"id":"msg_doomloop_{id}","type":"message","role":"assistant","model":{model},"content":{text_blocks},"stop_reason":{stop},"stop_sequence":null,"usage":{{"input_tokens":0,"output_tokens":0}}}}"#
    )
}

fn anthropic_json(text: &str, model: &str, id: &str) -> String {
    anthropic_message(
        &format!(r#"[{{"type":"text","text":{text}}}]"#),
        model,
        id,
        r#""end_turn""#,
    )
}

fn event(name: &str, data: &str) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn anthropic_events(text: &str, model: &str, id: &str) -> String {
    let mut out = event(
        "message_start",
        &format!(
            r#"{{"type":"message_start","message":{}}}"#,
            anthropic_message("[]", model, id, "null")
        ),
    );
    out.push_str(&event(
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    ));
    out.push_str(&event(
        "content_block_delta",
        &format!(r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{text}}}}}"#),
    ));
    out.push_str(&event(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#,
    ));
    out.push_str(&event(
        "message_delta",
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":0}}"#,
    ));
    out.push_str(&event("message_stop", r#"{"type":"message_stop"}"#));
    out
}

fn responses_item(text: &str, id: &str) -> String {
    format!(
        r#"{{"type":"message","id":"msg_doomloop_{id}","status":"completed","role":"assistant","content":[{{"type":"output_text","text":{text},"annotations":[]}}]}}"#
    )
}

fn responses_object(status: &str, output: &str, model: &str, id: &str) -> String {
    format!(
        r#"{{"id":"resp_doomloop_{id}","object":"response","created_at":0,"status":"{status}","model":{model},"output":{output},"usage":{{"input_tokens":0,"input_tokens_details":{{"cached_tokens":0}},"output_tokens":0,"output_tokens_details":{{"reasoning_tokens":0}},"total_tokens":0}}}}"#
    )
}

fn responses_json(text: &str, model: &str, id: &str) -> String {
    responses_object("completed", &format!("[{}]", responses_item(text, id)), model, id)
}

fn responses_events(text: &str, model: &str, id: &str) -> String {
    let item = responses_item(text, id);
    let part = format!(r#"{{"type":"output_text","text":{text},"annotations":[]}}"#);
    let mut n = 0;
    let mut next = |name: &str, fields: String| {
        n += 1;
        event(name, &format!(r#"{{"type":"{name}","sequence_number":{n},{fields}}}"#))
    };
    let mut out = next(
        "response.created",
        format!(r#""response":{}"#, responses_object("in_progress", "[]", model, id)),
    );
    out.push_str(&next(
        "response.in_progress",
        format!(r#""response":{}"#, responses_object("in_progress", "[]", model, id)),
    ));
    out.push_str(&next(
        "response.output_item.added",
        format!(r#""output_index":0,"item":{{"type":"message","id":"msg_doomloop_{id}","status":"in_progress","role":"assistant","content":[]}}"#),
    ));
    out.push_str(&next(
        "response.content_part.added",
        format!(r#""item_id":"msg_doomloop_{id}","output_index":0,"content_index":0,"part":{{"type":"output_text","text":"","annotations":[]}}"#),
    ));
    out.push_str(&next(
        "response.output_text.delta",
        format!(r#""item_id":"msg_doomloop_{id}","output_index":0,"content_index":0,"delta":{text}"#),
    ));
    out.push_str(&next(
        "response.output_text.done",
        format!(r#""item_id":"msg_doomloop_{id}","output_index":0,"content_index":0,"text":{text}"#),
    ));
    out.push_str(&next(
        "response.content_part.done",
        format!(r#""item_id":"msg_doomloop_{id}","output_index":0,"content_index":0,"part":{part}"#),
    ));
    out.push_str(&next(
        "response.output_item.done",
        format!(r#""output_index":0,"item":{item}"#),
    ));
    out.push_str(&next(
        "response.completed",
        format!(
            r#""response":{}"#,
            responses_object("completed", &format!("[{item}]"), model, id)
        ),
    ));
    out
}
