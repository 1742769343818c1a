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
    let mut messages = vec![r#"{"role":"user","content":"start"}"#.to_string()];
    let mut rng = Lcg(7);
    for index in 0..10 {
        messages.extend(round(&mut rng, index));
        gateway.decide(Api::ChatCompletions, body(&messages).as_bytes());
        assert!(gateway.cached() <= 3);
    }
    assert_eq!(gateway.cached(), 3);
    assert_eq!(Gateway::new(GatewayOptions::default(), 0).cached(), 0);
}
