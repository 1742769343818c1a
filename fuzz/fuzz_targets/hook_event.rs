//! `doomloop hook`'s decision on arbitrary input: an event (any bytes) and
//! a state file (any bytes), for each agent.
//!
//! The input is split at the first NUL: before it the event, after it the
//! state file's text (none when there is no NUL); the first byte's low
//! three bits pick the agent (5: GitHub Copilot CLI, as a leading `\r`
//! has; else odd: Gemini CLI, as a leading `{` or tab has; else bit 1:
//! Codex CLI, as a leading `\n` has; else Claude Code, as a leading space
//! has). Invariants:
//! - never panics, whatever the event or the state file;
//! - an event that reads is decided, and the state it leaves loads again
//!   without a "starting over" warning (a hook never writes a state file
//!   the next hook cannot read), and a second event on it decides too;
//! - the answer is empty or one JSON object (the agent parses it).
#![no_main]

use doom_loop::json::{parse, Value};
use doom_loop_guard::{default_option, read_event, step, Agent};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let agent = match data.first().map_or(0, |b| b & 7) {
        5 => Agent::Copilot,
        1 | 3 | 7 => Agent::GeminiCli,
        2 | 6 => Agent::Codex,
        _ => Agent::ClaudeCode,
    };
    let (event, state) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], Some(String::from_utf8_lossy(&data[at + 1..]).into_owned())),
        None => (data, None),
    };
    let Ok(incoming) = read_event(agent, event) else { return };
    let option = default_option();
    let Ok(first) = step(agent, &incoming, state.as_deref(), &option) else {
        return;
    };
    if !first.stdout.is_empty() {
        let answer =
            parse(first.stdout.trim_end()).unwrap_or_else(|e| panic!("answer is not JSON: {e}: {}", first.stdout));
        assert!(
            matches!(answer, Value::Object(_)),
            "answer is not an object: {}",
            first.stdout
        );
    }
    let second = step(agent, &incoming, Some(&first.state), &option).expect("decides on its own state");
    assert!(
        !second
            .warnings
            .iter()
            .any(|w| w.contains("starting this session's detection over")),
        "own state does not load: {:?}: {}",
        second.warnings,
        first.state
    );
});
