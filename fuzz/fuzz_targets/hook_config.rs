//! The guard's config file (`.doomloop.toml`, `~/.config/doomloop/config.toml`)
//! on arbitrary text. Invariants:
//! - reading it never panics;
//! - a rejected file is one line naming the file and a line number in it
//!   (what the hook prints before allowing the call);
//! - an accepted file gives settings the hook decides a call under, for
//!   each agent, without panicking.
#![no_main]

use std::path::Path;

use doom_loop_guard::config::{parse_file, Effective, Origin};
use doom_loop_guard::{read_event, step_with, Agent};
use libfuzzer_sys::fuzz_target;

const FILE: &str = "/p/.doomloop.toml";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let config = match parse_file(&text, Path::new(FILE)) {
        Ok(config) => config,
        Err(error) => {
            assert!(!error.contains('\n'), "more than one line: {error:?}");
            let line = error
                .strip_prefix(FILE)
                .and_then(|rest| rest.strip_prefix(':'))
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse::<usize>().ok());
            assert!(
                line.is_some_and(|n| n >= 1 && n <= text.lines().count().max(1) + 1),
                "no line of the file: {error:?}"
            );
            return;
        }
    };
    let mut settings = Effective::default();
    settings.apply(config, &Origin::Project(FILE.into()));
    let event = r#"{"session_id":"f","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1"}"#;
    for agent in [Agent::ClaudeCode, Agent::Codex] {
        let incoming = read_event(agent, event.as_bytes()).expect("the event reads");
        let _ = step_with(agent, &incoming, None, &settings);
    }
});
