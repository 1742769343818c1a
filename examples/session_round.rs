//! One call per response through the session engine, natively, for
//! instruction counts (the run of the `session_round` group of
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

use doom_loop::config::recommended_doom_loop_option;
use doom_loop::json::Value;

#[path = "../benches/support/session_round.rs"]
mod session_round;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let responses: usize = args.next().map_or(Ok(12_800), |n| n.parse())?;
    let option = match args.next().as_deref() {
        Some("recommended") => recommended_doom_loop_option(),
        _ => Value::Bool(true),
    };
    let mut run = session_round::OneCallRun::new(&option)?;
    for _ in 0..responses {
        black_box(run.respond());
    }
    Ok(())
}
