//! One call per response through the session engine, natively, for
//! instruction counts (the same round as the `session_round` group of
//! benches/core.rs):
//!
//! ```text
//! cargo build --release --example session_round
//! valgrind --tool=callgrind target/release/examples/session_round 6400 [recommended]
//! valgrind --tool=callgrind target/release/examples/session_round 12800 [recommended]
//! ```
//!
//! The difference of the two totals over 6,400 is the cost of one response
//! (a fresh session every 64 responses included), the setup cancelled.

use std::hint::black_box;

use doom_loop::config::{recommended_doom_loop_option, resolve_doom_loop_option};
use doom_loop::json::{parse, Value};
use doom_loop::session::{Call, CallKey, Response, Session, SessionOptions};
use doom_loop::{fingerprint_tool_call, JsString};

/// Responses per session.
const RUN: usize = 64;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let responses: usize = args.next().map_or(Ok(12_800), |n| n.parse())?;
    let option = match args.next().as_deref() {
        Some("recommended") => recommended_doom_loop_option(),
        _ => Value::Bool(true),
    };
    let config = resolve_doom_loop_option(Some(&option))
        .result?
        .ok_or("detection is off")?;
    let tool = JsString::from("bash");
    // Distinct arguments every response, fingerprinted as the shim hands them over.
    let fingerprints = (0..RUN)
        .map(|i| {
            let args = parse(&format!(
                r#"{{"command":"grep -rn TODO src/","cwd":"/home/user/project-{i}","timeout_ms":30000,"env":{{"LANG":"C","TERM":"dumb"}},"flags":["-i","--color=never"],"dry_run":false}}"#
            ))?;
            Ok(JsString::from(fingerprint_tool_call(&tool, &args)?))
        })
        .collect::<Result<Vec<_>, doom_loop::Error>>()?;
    let mut session = Session::new(config.clone(), SessionOptions::default());
    for i in 0..responses {
        if i % RUN == 0 {
            session = Session::new(config.clone(), SessionOptions::default());
        }
        let call = Call {
            id: JsString::from(format!("c{i}")),
            tool_name: tool.clone(),
            args: Value::Null,
            malformed: false,
            key: CallKey::Fingerprint(fingerprints[i % RUN].clone()),
        };
        black_box(session.on_response(Response {
            text: None,
            calls: vec![call],
        }));
    }
    Ok(())
}
