//! One warm decision, for profiling (`cargo run --release -p
//! doom-loop-gateway --example warm -- ROUNDS [prime|warm|cold]`): a chat
//! request of ROUNDS rounds (each a distinct `bash` call with its result, as
//! `benches/js/gateway.mjs` sends), decided after the same conversation one
//! round shorter (`warm`), alone (`cold`), or only that shorter one
//! (`prime`: subtract its instruction count from `warm`'s to get the warm
//! decision's own).

use doom_loop_gateway::{Api, Gateway, GatewayOptions};

fn body(rounds: usize) -> String {
    let mut messages = vec![
        r#"{"role":"system","content":"You are a coding agent."}"#.to_string(),
        r#"{"role":"user","content":"Fix the failing test (1)."}"#.to_string(),
    ];
    for i in 0..rounds {
        let args = format!(r#"{{"command":"grep -rn \"symbol_{i}\" src/","cwd":"/home/user/project-1"}}"#);
        let args = args.replace('\\', "\\\\").replace('"', "\\\"");
        messages.push(format!(
            r#"{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_{i}","type":"function","function":{{"name":"bash","arguments":"{args}"}}}}]}}"#
        ));
        messages.push(format!(
            r#"{{"role":"tool","tool_call_id":"call_{i}","content":"src/mod_{i}.rs:{i}: fn symbol_{i}() {{}}"}}"#
        ));
    }
    format!(r#"{{"model":"gpt-test","messages":[{}]}}"#, messages.join(","))
}

/// The decision measured (`valgrind --tool=callgrind --toggle-collect=warm::measured`).
#[inline(never)]
fn measured(gateway: &mut Gateway, body: &str) -> doom_loop_gateway::Decision {
    gateway.decide(Api::ChatCompletions, body.as_bytes())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(100);
    let mode = args.next().unwrap_or_else(|| "warm".into());
    let shorter = body(rounds.saturating_sub(1));
    let full = body(rounds);
    let mut gateway = Gateway::new(GatewayOptions::default(), 256);
    if mode != "cold" {
        std::hint::black_box(gateway.decide(Api::ChatCompletions, shorter.as_bytes()));
    }
    if mode != "prime" {
        let decision = measured(&mut gateway, &full);
        println!("{} bytes: {:?}", full.len(), decision.headers);
    }
}
