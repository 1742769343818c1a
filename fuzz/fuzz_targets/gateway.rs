//! The gateway's decision on an arbitrary request body, for each API.
//!
//! The first byte picks the API (mod 3: chat, Responses, Anthropic) and
//! the option (bit 2: the reference's `true`, else the recommended one);
//! the rest is the body. Invariants:
//! - never panics, whatever the body;
//! - the same body gets the same decision (a pure function of it);
//! - a rewritten body is JSON; a synthesized answer is one JSON body, or
//!   server-sent events whose every `data:` line is JSON (or `[DONE]`);
//! - a gateway with a prefix cache decides as a whole replay does: the body
//!   twice (a retry), then, when its message list reads as an array, the
//!   requests of its first 1, 2, … messages in turn (each an agent's next
//!   request), then the body again.
#![no_main]

use doom_loop::json::{parse, Value};
use doom_loop_gateway::{decide, Action, Api, Decision, Gateway, GatewayOptions};
use libfuzzer_sys::fuzz_target;
use serde_json::value::RawValue;

/// The body's messages (Responses: input items) as their JSON texts.
fn items(api: Api, body: &[u8]) -> Option<Vec<&RawValue>> {
    let object: std::collections::HashMap<String, &RawValue> = serde_json::from_slice(body).ok()?;
    let list = object.get(if api == Api::Responses { "input" } else { "messages" })?;
    serde_json::from_str(list.get()).ok()
}

fn check_cached(api: Api, body: &[u8], options: &GatewayOptions, whole: &Decision) {
    let mut gateway = Gateway::new(options.clone(), 4);
    assert_eq!(&gateway.decide(api, body), whole, "cached, first");
    assert_eq!(&gateway.decide(api, body), whole, "cached, a retry");
    let Some(items) = items(api, body) else {
        return;
    };
    let key = if api == Api::Responses { "input" } else { "messages" };
    for n in 1..=items.len().min(12) {
        let texts: Vec<&str> = items[..n].iter().map(|item| item.get()).collect();
        let request = format!(r#"{{"model":"m","{key}":[{}]}}"#, texts.join(","));
        assert_eq!(
            gateway.decide(api, request.as_bytes()),
            decide(api, request.as_bytes(), options),
            "cached, the first {n} messages"
        );
    }
    assert_eq!(&gateway.decide(api, body), whole, "cached, the body again");
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let api = [Api::ChatCompletions, Api::Responses, Api::AnthropicMessages][usize::from(selector % 3)];
    let mut options = GatewayOptions::default();
    if selector & 4 != 0 {
        options.option = Value::Bool(true);
    }
    let decision = decide(api, body, &options);
    assert_eq!(
        decide(api, body, &options),
        decision,
        "the same request, the same decision"
    );
    check_cached(api, body, &options, &decision);
    match &decision.action {
        Action::Forward => {}
        Action::Rewrite(text) => assert!(parse(text).is_ok(), "a rewritten body is JSON"),
        Action::Answer(answer) if answer.content_type == "application/json" => {
            assert!(parse(&answer.body).is_ok(), "the answer is JSON");
        }
        Action::Answer(answer) => {
            for data in answer.body.lines().filter_map(|line| line.strip_prefix("data: ")) {
                assert!(
                    data == "[DONE]" || parse(data).is_ok(),
                    "an event's data is JSON: {data}"
                );
            }
        }
    }
});
