//! The prefix cache changes nothing but the work: a gateway that goes on
//! from the longest cached prefix of each request decides exactly as a
//! replay of the whole conversation does, over random conversations that
//! grow a round per request (as an agent's do), repeat, branch and take new
//! user turns, under the reference's defaults and the recommended option;
//! and it keeps no more prefixes than its capacity.

use doom_loop::json::Value;
use doom_loop_gateway::{decide, Api, Gateway, GatewayOptions};

/// A small deterministic generator (no randomness in tests' verdicts either).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// One round of a chat conversation: an assistant message with 1–3 calls
/// and their results, or a user message.
fn round(rng: &mut Lcg, index: usize) -> Vec<String> {
    if rng.next(12) == 0 {
        return vec![r#"{"role":"user","content":"go on"}"#.to_string()];
    }
    let calls = 1 + rng.next(3) as usize;
    let mut messages = Vec::new();
    let mut tool_calls = Vec::new();
    for j in 0..calls {
        let tool = ["get_invoice", "read_page", "run_tests"][rng.next(3) as usize];
        let arg = rng.next(3);
        tool_calls.push(format!(
            r#"{{"id":"c{index}_{j}","type":"function","function":{{"name":"{tool}","arguments":"{{\"x\":{arg}}}"}}}}"#
        ));
        let result = if rng.next(2) == 0 {
            "same".to_string()
        } else {
            format!("out {}", rng.next(4))
        };
        messages.push(format!(
            r#"{{"role":"tool","tool_call_id":"c{index}_{j}","content":"{result}"}}"#
        ));
    }
    let mut out = vec![format!(
        r#"{{"role":"assistant","tool_calls":[{}]}}"#,
        tool_calls.join(",")
    )];
    out.extend(messages);
    out
}

fn body(messages: &[String]) -> String {
    format!(r#"{{"model":"m","messages":[{}]}}"#, messages.join(","))
}

#[test]
fn a_cached_gateway_decides_every_request_as_a_whole_replay_does() {
    for option in [Value::Bool(true), GatewayOptions::default().option] {
        let options = GatewayOptions {
            option,
            ..GatewayOptions::default()
        };
        let mut gateway = Gateway::new(options.clone(), 64);
        for seed in 0..40 {
            let mut rng = Lcg(seed);
            let mut messages = vec![r#"{"role":"user","content":"start"}"#.to_string()];
            for index in 0..14 {
                messages.extend(round(&mut rng, index));
                let request = body(&messages);
                let expected = decide(Api::ChatCompletions, request.as_bytes(), &options);
                assert_eq!(
                    gateway.decide(Api::ChatCompletions, request.as_bytes()),
                    expected,
                    "seed {seed}, round {index}"
                );
                // The same request again (a retry) is answered the same.
                assert_eq!(
                    gateway.decide(Api::ChatCompletions, request.as_bytes()),
                    expected,
                    "seed {seed}, retry"
                );
                // A branch: the last round replaced by another.
                if rng.next(4) == 0 {
                    let mut branch = messages.clone();
                    branch.truncate(messages.len().saturating_sub(2).max(1));
                    branch.extend(round(&mut rng, 100 + index));
                    let request = body(&branch);
                    assert_eq!(
                        gateway.decide(Api::ChatCompletions, request.as_bytes()),
                        decide(Api::ChatCompletions, request.as_bytes(), &options),
                        "seed {seed}, branch at {index}"
                    );
                }
            }
        }
        assert!(gateway.cached() <= 64);
    }
}

#[test]
fn the_cache_keeps_at_most_its_capacity() {
    let mut gateway = Gateway::new(GatewayOptions::default(), 3);
    for conversation in 0..10 {
        let mut messages = vec![format!(r#"{{"role":"user","content":"start {conversation}"}}"#)];
        let mut rng = Lcg(conversation);
        for index in 0..3 {
            messages.extend(round(&mut rng, index));
            gateway.decide(Api::ChatCompletions, body(&messages).as_bytes());
            assert!(gateway.cached() <= 3);
        }
    }
    assert_eq!(gateway.cached(), 3);
    assert_eq!(Gateway::new(GatewayOptions::default(), 0).cached(), 0);
}

#[test]
fn a_conversation_that_goes_on_is_kept_once_at_its_latest_state() {
    let mut gateway = Gateway::new(GatewayOptions::default(), 8);
    let mut messages = vec![r#"{"role":"user","content":"start"}"#.to_string()];
    let mut rng = Lcg(7);
    for index in 0..10 {
        messages.extend(round(&mut rng, index));
        gateway.decide(Api::ChatCompletions, body(&messages).as_bytes());
        assert_eq!(gateway.cached(), 1, "after round {index}");
    }
}

/// One turn of an Anthropic conversation as messages: an assistant message
/// (text, 1–3 `tool_use` blocks; sometimes split in two messages sharing
/// an id, which the reader joins into one turn), the user message with the
/// results (sometimes without `tool_use_id`: matched in order; sometimes an
/// error), or a user's text.
fn anthropic_turn(rng: &mut Lcg, index: usize) -> Vec<String> {
    if rng.next(10) == 0 {
        return vec![r#"{"role":"user","content":"go on"}"#.to_string()];
    }
    let mut blocks = Vec::new();
    let mut results = Vec::new();
    for j in 0..1 + rng.next(3) {
        let tool = ["get_invoice", "read_page"][rng.next(2) as usize];
        blocks.push(format!(
            r#"{{"type":"tool_use","id":"tu{index}_{j}","name":"{tool}","input":{{"x":{}}}}}"#,
            rng.next(3)
        ));
        let id = if rng.next(8) == 0 {
            String::new()
        } else {
            format!(r#""tool_use_id":"tu{index}_{j}","#)
        };
        results.push(format!(
            r#"{{"type":"tool_result",{id}"content":"out {}","is_error":{}}}"#,
            rng.next(3),
            rng.next(5) == 0
        ));
    }
    let mut out = Vec::new();
    if rng.next(5) == 0 {
        // The first part sometimes only text: a request cut after it ends
        // in an open turn whose continuation the next request brings.
        let (first, rest) = blocks.split_at(rng.next(2) as usize);
        let first: Vec<String> = std::iter::once(r#"{"type":"text","text":"Let me check."}"#.to_string())
            .chain(first.iter().cloned())
            .collect();
        out.push(format!(
            r#"{{"id":"msg{index}","role":"assistant","content":[{}]}}"#,
            first.join(",")
        ));
        out.push(format!(
            r#"{{"id":"msg{index}","role":"assistant","content":[{}]}}"#,
            rest.join(",")
        ));
    } else {
        out.push(format!(r#"{{"role":"assistant","content":[{}]}}"#, blocks.join(",")));
    }
    out.push(format!(r#"{{"role":"user","content":[{}]}}"#, results.join(",")));
    out
}

/// One turn of a Responses conversation as input items: assistant text,
/// 1–3 function calls and their outputs (sometimes without `call_id`), a
/// remote MCP call, or a user message.
fn responses_turn(rng: &mut Lcg, index: usize) -> Vec<String> {
    match rng.next(10) {
        0 => {
            return vec![
                r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"go on"}]}"#.to_string(),
            ]
        }
        1 => {
            return vec![format!(
                r#"{{"type":"mcp_call","id":"mcp{index}","name":"lookup","arguments":"{{\"q\":{}}}","output":"found"}}"#,
                rng.next(2)
            )]
        }
        _ => {}
    }
    let mut out = Vec::new();
    if rng.next(3) == 0 {
        out.push(
            r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking."}]}"#
                .to_string(),
        );
    }
    let calls = 1 + rng.next(3);
    for j in 0..calls {
        let tool = ["get_invoice", "run_tests"][rng.next(2) as usize];
        out.push(format!(
            r#"{{"type":"function_call","call_id":"fc{index}_{j}","name":"{tool}","arguments":"{{\"x\":{}}}"}}"#,
            rng.next(3)
        ));
    }
    for j in 0..calls {
        let id = if rng.next(8) == 0 {
            String::new()
        } else {
            format!(r#""call_id":"fc{index}_{j}","#)
        };
        out.push(format!(
            r#"{{"type":"function_call_output",{id}"output":"out {}"}}"#,
            rng.next(3)
        ));
    }
    out
}

fn request(api: Api, items: &[String]) -> String {
    match api {
        Api::Responses => format!(r#"{{"model":"m","stream":true,"input":[{}]}}"#, items.join(",")),
        _ => body(items),
    }
}

#[test]
fn requests_cut_anywhere_in_a_turn_are_decided_as_whole_replays_in_every_api() {
    // An agent's next request usually adds a whole turn; these add 1–3
    // messages at a time, so a request may end inside a turn (a call not
    // answered yet, an assistant message continued by the next one), where
    // the gateway cannot go on from what it read and reads the whole body.
    for api in [Api::ChatCompletions, Api::AnthropicMessages, Api::Responses] {
        for option in [Value::Bool(true), GatewayOptions::default().option] {
            let options = GatewayOptions {
                option,
                ..GatewayOptions::default()
            };
            let mut gateway = Gateway::new(options.clone(), 64);
            for seed in 0..25 {
                let mut rng = Lcg(seed);
                let mut stream = Vec::new();
                for index in 0..14 {
                    stream.extend(match api {
                        Api::ChatCompletions => round(&mut rng, index),
                        Api::AnthropicMessages => anthropic_turn(&mut rng, index),
                        Api::Responses => responses_turn(&mut rng, index),
                    });
                }
                let mut sent = 1;
                while sent < stream.len() {
                    sent = (sent + 1 + rng.next(3) as usize).min(stream.len());
                    let text = request(api, &stream[..sent]);
                    let expected = decide(api, text.as_bytes(), &options);
                    assert_eq!(
                        gateway.decide(api, text.as_bytes()),
                        expected,
                        "{api:?}, seed {seed}, {sent} messages"
                    );
                    assert_eq!(
                        gateway.decide(api, text.as_bytes()),
                        expected,
                        "{api:?}, seed {seed}, retry"
                    );
                }
            }
        }
    }
}

#[test]
fn a_client_that_writes_the_same_messages_differently_still_gets_the_same_decision() {
    // The cache knows a request's messages by their text as it appears in
    // the body: written with other spacing or another key order, they are a
    // conversation it has not seen, and get the whole replay's decision.
    let respaced = |m: &String| m.replace("\":", "\": ").replace(",\"", ", \"");
    let reordered = |m: &String| match m.strip_prefix(r#"{"role":"tool","tool_call_id":"#) {
        Some(rest) => {
            let (id, content) = rest.split_once(',').unwrap_or((rest, "}"));
            format!(
                r#"{{{},"role":"tool","tool_call_id":{id}}}"#,
                content.trim_end_matches('}')
            )
        }
        None => m.clone(),
    };
    for option in [Value::Bool(true), GatewayOptions::default().option] {
        let options = GatewayOptions {
            option,
            ..GatewayOptions::default()
        };
        let mut gateway = Gateway::new(options.clone(), 64);
        for seed in 0..20 {
            let mut rng = Lcg(seed);
            let mut messages = vec![r#"{"role":"user","content":"start"}"#.to_string()];
            for index in 0..12 {
                messages.extend(round(&mut rng, index));
                let written: Vec<String> = match rng.next(3) {
                    0 => messages.clone(),
                    1 => messages.iter().map(respaced).collect(),
                    _ => messages.iter().map(reordered).collect(),
                };
                let text = body(&written);
                let decision = gateway.decide(Api::ChatCompletions, text.as_bytes());
                assert_eq!(
                    decision,
                    decide(Api::ChatCompletions, text.as_bytes(), &options),
                    "seed {seed}, round {index}"
                );
                // The same verdicts as the messages written the first way.
                assert_eq!(
                    decision.headers,
                    decide(Api::ChatCompletions, body(&messages).as_bytes(), &options).headers,
                    "seed {seed}, round {index}"
                );
            }
        }
    }
}
