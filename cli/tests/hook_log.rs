//! `doomloop hook log`: what the guard did, from the state files the hook
//! keeps — through the whole command (`main`) over an in-memory host, as
//! a user runs it after a session.

use doom_loop::json::{parse, Value};
use doom_loop_cli::command::main;
use doom_loop_guard::log::MAX_ENTRIES;
use doom_loop_trace::host::MemoryHost;

fn doomloop(host: &mut MemoryHost, args: &[&str], stdin: &str) -> (u8, String, String) {
    host.stdin = stdin.as_bytes().to_vec();
    host.stdout.clear();
    host.stderr.clear();
    let code = main(std::iter::once("doomloop").chain(args.iter().copied()), host);
    (code, host.stdout.clone(), host.stderr.clone())
}

fn pre(session: &str, id: &str) -> String {
    format!(
        r#"{{"session_id":"{session}","cwd":"/work","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"cat missing.txt","description":"show it"}},"tool_use_id":"{id}"}}"#
    )
}

fn batch(session: &str, id: &str) -> String {
    format!(
        r#"{{"session_id":"{session}","hook_event_name":"PostToolBatch","tool_calls":[{{"tool_name":"Bash","tool_input":{{}},"tool_use_id":"{id}","tool_response":"cat: missing.txt: No such file or directory"}}]}}"#
    )
}

/// The loop scenario under the reference ladder: six identical failing
/// calls, one per round; the clock moves a second per event.
fn loop_session(host: &mut MemoryHost, session: &str, calls: usize) {
    for i in 1..=calls {
        let id = format!("t{i}");
        host.now_ms += 1000;
        let (code, _, stderr) = doomloop(host, &["hook", "claude-code", "--option", "true"], &pre(session, &id));
        assert_eq!((code, stderr.as_str()), (0, ""));
        host.now_ms += 1000;
        doomloop(host, &["hook", "claude-code", "--option", "true"], &batch(session, &id));
    }
}

fn host() -> MemoryHost {
    let mut host = MemoryHost::default();
    host.env.insert("DOOMLOOP_STATE_DIR".into(), "/state".into());
    host.now_ms = 1_796_558_400_000; // 2026-12-06 12:00:00 UTC
    host
}

#[test]
fn hook_log_lists_the_refusals_and_the_stop_with_their_verdict_texts_and_times() {
    let mut host = host();
    loop_session(&mut host, "loop-1", 6);
    let (code, text, stderr) = doomloop(&mut host, &["hook", "log"], "");
    assert_eq!((code, stderr.as_str()), (0, ""), "{text}");
    assert!(
        text.starts_with("claude-code session loop-1 (last event 2026-12-06 12:00:"),
        "{text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    let rungs: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("  2026-"))
        .map(|l| l.split_whitespace().nth(3).unwrap_or(""))
        .collect();
    // Observe at the second call, block at the third to fifth, stop at the sixth.
    assert_eq!(rungs, ["observe", "block", "block", "block", "stop"], "{text}");
    assert!(text.contains("  2026-12-06 12:00:05 UTC  block    Bash cat missing.txt\n      Doom loop suspected: tool \"Bash\" was invoked in 3 consecutive rounds"), "{text}");
    assert!(text.contains("stop     Bash cat missing.txt\n      Doom loop suspected: tool \"Bash\" was invoked in 6 consecutive rounds"), "{text}");
    assert!(text.contains("stopped until the next prompt: "), "{text}");

    let (code, json, _) = doomloop(
        &mut host,
        &["hook", "log", "claude-code", "--session", "loop-1", "--json"],
        "",
    );
    assert_eq!(code, 0);
    let value = parse(json.trim()).unwrap();
    let session = &value.as_object().unwrap().get("sessions").unwrap();
    let Value::Array(sessions) = session else {
        panic!("{json}")
    };
    let interventions = sessions[0].as_object().unwrap().get("interventions").unwrap();
    let Value::Array(items) = interventions else {
        panic!("{json}")
    };
    let field = |i: usize, k: &str| items[i].as_object().unwrap().get(k).unwrap().clone();
    assert_eq!(items.len(), 5);
    assert_eq!(field(4, "rung"), Value::String("stop".into()));
    assert_eq!(field(1, "input"), Value::String("cat missing.txt".into()));
    assert_eq!(field(1, "at"), Value::Number(1_796_558_405_000.0));
    assert!(field(4, "text")
        .as_js_string()
        .unwrap()
        .to_string()
        .contains("6 consecutive rounds"));
}

#[test]
fn hook_log_shows_the_latest_sessions_and_a_session_by_id_and_says_when_none_is_there() {
    let mut host = host();
    for i in 0..7 {
        loop_session(&mut host, &format!("s{i}"), 1);
    }
    // A session id that is not a plain name is stored under its hash, shown as sent.
    loop_session(&mut host, "a/b c", 1);
    let (_, text, _) = doomloop(&mut host, &["hook", "log"], "");
    let headers: Vec<&str> = text.lines().filter(|l| l.starts_with("claude-code session")).collect();
    assert_eq!(headers.len(), 5, "{text}");
    assert!(headers[4].starts_with("claude-code session a/b c "), "{text}");
    assert!(text.contains("  no interventions\n"), "{text}");
    let (code, text, _) = doomloop(&mut host, &["hook", "log", "--session", "s1"], "");
    assert_eq!(code, 0);
    assert!(text.starts_with("claude-code session s1 "), "{text}");
    let (code, _, stderr) = doomloop(&mut host, &["hook", "log", "--session", "nope"], "");
    assert_eq!(code, 2);
    assert!(stderr.contains("no hook state of session nope in /state"), "{stderr}");
    let (code, _, _) = doomloop(&mut host, &["hook", "log", "gemini-cli"], "");
    assert_eq!(code, 0);
}

#[test]
fn the_log_is_bounded_and_a_state_file_from_before_it_still_reads() {
    let mut host = host();
    loop_session(&mut host, "long", 200);
    let state =
        String::from_utf8(host.files[&std::path::PathBuf::from("/state/claude-code-long.json")].clone()).unwrap();
    let value = parse(&state).unwrap();
    let Some(Value::Array(log)) = value.as_object().unwrap().get("log") else {
        panic!("{state}")
    };
    assert_eq!(log.len(), MAX_ENTRIES);

    // A state file written before the log: read, and the session goes on.
    let mut host = self::host();
    let old = r#"{"doomloopHook":1,"agent":"claude-code","base":null,"round":null,"warned":[],"halted":null}"#;
    host.files
        .insert("/state/claude-code-old.json".into(), old.as_bytes().to_vec());
    host.dirs.insert("/state".into());
    let (code, _, stderr) = doomloop(&mut host, &["hook", "claude-code"], &pre("old", "t1"));
    assert_eq!((code, stderr.as_str()), (0, ""));
    let (_, text, _) = doomloop(&mut host, &["hook", "log", "--session", "old"], "");
    assert!(text.contains("no interventions"), "{text}");
}

#[test]
fn hook_log_says_when_the_sessions_settings_lack_the_round_end_event() {
    let mut host = host();
    for i in 1..=3 {
        doomloop(
            &mut host,
            &["hook", "claude-code", "--option", "true"],
            &pre("manual", &format!("t{i}")),
        );
    }
    let (_, text, _) = doomloop(&mut host, &["hook", "log"], "");
    assert!(
        text.contains("note: this claude-code session's hooks lack the PostToolBatch event"),
        "{text}"
    );
    assert!(text.contains("block    Bash cat missing.txt"), "{text}");
}
