//! The gateway's decision on an arbitrary request body, for each API.
//!
//! The first byte picks the API (mod 3: chat, Responses, Anthropic) and
//! the option (bit 2: the reference's `true`, else the recommended one);
//! the rest is the body. Invariants:
//! - never panics, whatever the body;
//! - the same body gets the same decision (a pure function of it);
//! - a rewritten body is JSON; a synthesized answer is one JSON body, or
//!   server-sent events whose every `data:` line is JSON (or `[DONE]`).
#![no_main]

use doom_loop::json::{parse, Value};
use doom_loop_gateway::{decide, Action, Api, GatewayOptions};
use libfuzzer_sys::fuzz_target;

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
