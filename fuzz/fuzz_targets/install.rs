//! `doomloop hook install`'s edit of a settings file on arbitrary bytes.
//!
//! The first byte's low two bits pick the agent (Claude Code, Gemini CLI,
//! Codex CLI, Copilot CLI) and its bit 2 the command (a
//! `doomloop hook AGENT` one, or the npm CLI's, which lacks the word
//! `doomloop`); the rest, as text, is the settings file. Invariants:
//! - never panics, whatever the file;
//! - an edit is idempotent: editing its own output changes nothing (a
//!   second install writes nothing and keeps the backup);
//! - an edit loses nothing: the file and the edit, each without the
//!   installer's own entries (and the empty `hooks` members they leave),
//!   hold the same values — same keys in the same order, duplicates
//!   included, numbers and strings as written;
//! - the edit holds exactly one entry of ours per event the agent registers.
#![no_main]

use doom_loop_guard::install::{edit, events, is_ours, parse_options};
use doom_loop_guard::Agent;
use jsonc_parser::cst::{CstNode, CstRootNode};
use libfuzzer_sys::fuzz_target;

/// A value as text without trivia: object members in order, duplicates
/// kept, number and string literals as written; the installer's entries
/// left out, and an event or `hooks` left empty (or `null`) by that
/// dropped, so "absent" and "holds only ours" compare equal.
fn canon(node: &CstNode, agent: Agent, command: &str, path: &[String], out: &mut String) {
    let ours = |event: &str| events(agent).iter().any(|(e, _)| *e == event);
    if let Some(object) = node.as_object() {
        out.push('{');
        for prop in object.properties() {
            let name = prop.name().and_then(|n| n.decoded_value().ok()).unwrap_or_default();
            let Some(value) = prop.value() else { continue };
            let mut inner = String::new();
            let mut deeper = path.to_vec();
            deeper.push(name.clone());
            canon(&value, agent, command, &deeper, &mut inner);
            let ours_member = match deeper.as_slice() {
                // Copilot's `version: 1`, added when missing.
                [version] if version == "version" && agent == Agent::Copilot => inner == "1",
                [hooks] => hooks == "hooks",
                [hooks, event] => hooks == "hooks" && ours(event),
                _ => false,
            };
            if ours_member && (inner == "null" || inner == "[]" || inner == "{}" || inner == "1") {
                continue;
            }
            out.push_str(&format!("{name:?}:{inner},"));
        }
        out.push('}');
    } else if let Some(array) = node.as_array() {
        let events_array = matches!(path, [hooks, event] if hooks == "hooks" && ours(event));
        let mut deeper = path.to_vec();
        deeper.push("[]".into());
        out.push('[');
        for element in array.elements() {
            if events_array && is_ours(&element, agent, command) {
                continue;
            }
            canon(&element, agent, command, &deeper, out);
            out.push(',');
        }
        out.push(']');
    } else {
        // A leaf as written (a string's escapes, a number's digits).
        out.push_str(node.to_string().trim());
    }
}

fn canonical(text: &str, agent: Agent, command: &str) -> String {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let root = CstRootNode::parse(body, &parse_options()).expect("the edit parses");
    let mut out = String::new();
    match root.value() {
        Some(value) => canon(&value, agent, command, &[], &mut out),
        None => out.push_str("{}"),
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let first = data.first().copied().unwrap_or(0);
    let agent = match first & 3 {
        0 => Agent::ClaudeCode,
        1 => Agent::GeminiCli,
        2 => Agent::Codex,
        _ => Agent::Copilot,
    };
    let command = if first & 4 == 0 {
        format!("/usr/bin/doomloop hook {}", agent.as_str())
    } else {
        format!("node /opt/pkg/cli.mjs hook {}", agent.as_str())
    };
    let text = String::from_utf8_lossy(data.get(1..).unwrap_or_default());
    let Ok(once) = edit(agent, Some(&text), &command) else {
        return;
    };
    let twice = edit(agent, Some(&once), &command).expect("its own output edits");
    assert_eq!(twice, once, "not idempotent on {text:?}");
    assert_eq!(
        canonical(&once, agent, &command),
        canonical(&text, agent, &command),
        "something besides the hook changed: {text:?} became {once:?}"
    );
    let root = CstRootNode::parse(once.strip_prefix('\u{feff}').unwrap_or(&once), &parse_options()).unwrap();
    let hooks = root
        .object_value()
        .and_then(|o| o.object_value("hooks"))
        .expect("hooks");
    for (event, _) in events(agent) {
        let entries = hooks.array_value(event).expect("an event array");
        let ours = entries
            .elements()
            .iter()
            .filter(|e| is_ours(e, agent, &command))
            .count();
        assert_eq!(ours, 1, "{event} in {once:?}");
    }
});
