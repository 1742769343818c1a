//! One warm decision, for profiling (`cargo run --release -p
//! doom-loop-gateway --example warm -- ROUNDS [prime|warm|cold]`): a chat
//! request of ROUNDS rounds (each a distinct `bash` call with its result, as
//! `benches/js/gateway.mjs` sends), decided after the same conversation one
//! round shorter (`warm`), alone (`cold`), or only that shorter one
//! (`prime`: subtract its instruction count from `warm`'s to get the warm
//! decision's own).

use doom_loop::json::Value;
use doom_loop_gateway::{Api, Gateway, GatewayOptions};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

/// The system allocator, counting the bytes allocated and not yet freed.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        LIVE.fetch_add(size as isize - layout.size() as isize, Ordering::Relaxed);
        System.realloc(ptr, layout, size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes held per cached conversation of `rounds` rounds (256 of them).
fn memory(rounds: usize, options: GatewayOptions) -> f64 {
    let mut gateway = Gateway::new(options, 256);
    let bodies: Vec<String> = (0..256).map(|c| body_of(rounds, c)).collect();
    let before = LIVE.load(Ordering::Relaxed);
    for text in &bodies {
        std::hint::black_box(gateway.decide(Api::ChatCompletions, text.as_bytes()));
    }
    let held = LIVE.load(Ordering::Relaxed) - before;
    assert_eq!(gateway.cached(), 256);
    held as f64 / 256.0
}

fn body(rounds: usize) -> String {
    body_of(rounds, 1)
}

/// Conversation `c`: its calls name it, so conversations differ.
fn body_of(rounds: usize, c: usize) -> String {
    let mut messages = vec![
        r#"{"role":"system","content":"You are a coding agent."}"#.to_string(),
        format!(r#"{{"role":"user","content":"Fix the failing test ({c})."}}"#),
    ];
    for i in 0..rounds {
        let args = format!(r#"{{"command":"grep -rn \"symbol_{i}\" src/","cwd":"/home/user/project-{c}"}}"#);
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
    if mode == "memory" {
        let reference = GatewayOptions {
            option: Value::Bool(true),
            ..GatewayOptions::default()
        };
        println!(
            "{rounds} rounds: {:.0} bytes per cached conversation under the reference's defaults, {:.0} under the recommended option",
            memory(rounds, reference),
            memory(rounds, GatewayOptions::default())
        );
        return;
    }
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
