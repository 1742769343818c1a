//! The `doomloop` command over an in-memory host: everything it reads and
//! writes goes through `Host` (so `npx doomloop`, the same code over Node's
//! `fs`, can do it too); code that reached behind the host's back would
//! find nothing here.

use std::path::PathBuf;

use doom_loop_cli::command::{main, main_lossy, EXIT_ERROR, VERSION};
use doom_loop_trace::host::MemoryHost;

const LOOP: &str = r#"{"rounds":[{"calls":[{"toolName":"t","args":{}}]},{"calls":[{"toolName":"t","args":{}}]},{"calls":[{"toolName":"t","args":{}}]}]}"#;

fn run(host: &mut MemoryHost, args: &[&str]) -> u8 {
    main(std::iter::once("doomloop").chain(args.iter().copied()), host)
}

#[test]
fn help_version_and_usage_errors_come_from_clap() {
    let mut host = MemoryHost::default();
    assert_eq!(run(&mut host, &["--version"]), 0);
    assert_eq!(host.stdout, format!("doomloop {VERSION}\n"));
    let mut host = MemoryHost::default();
    assert_eq!(run(&mut host, &["which"]), 0);
    assert_eq!(host.stdout, "/bin/doomloop\n");
    let mut host = MemoryHost::default();
    assert_eq!(run(&mut host, &["eval", "x", "--compar"]), EXIT_ERROR);
    assert!(
        host.stderr.contains("tip: a similar argument exists: '--compare'"),
        "{}",
        host.stderr
    );
    let mut host = MemoryHost::default();
    assert_eq!(run(&mut host, &["hook", "--help"]), 0);
    assert!(host.stdout.contains("claude-code"), "{}", host.stdout);
}

#[test]
fn a_lossy_argument_is_claps_invalid_utf8_error_with_the_subcommands_usage() {
    let mut host = MemoryHost::default();
    assert_eq!(
        main_lossy(&["replay".into(), "a\u{FFFD}".into()], &mut host),
        EXIT_ERROR
    );
    assert!(
        host.stderr
            .starts_with("error: invalid UTF-8 was detected in one or more arguments"),
        "{}",
        host.stderr
    );
    assert!(host.stderr.contains("Usage: doomloop replay"), "{}", host.stderr);
    // A hook never answers exit 2 (the agent would read "block").
    let mut host = MemoryHost::default();
    assert_eq!(
        main_lossy(&["hook".into(), "claude-code".into(), "\u{FFFD}".into()], &mut host),
        0
    );
    assert!(host.stderr.contains("allowing the call"), "{}", host.stderr);
}

#[test]
fn eval_walks_a_folder_reads_stdin_and_writes_html_through_the_host() {
    let mut host = MemoryHost::default();
    host.dirs.insert(PathBuf::from("/runs"));
    host.dirs.insert(PathBuf::from("/runs/sub"));
    host.files.insert(PathBuf::from("/runs/a.json"), LOOP.into());
    host.files
        .insert(PathBuf::from("/runs/sub/b.jsonl"), format!("{LOOP}\n{LOOP}\n").into());
    host.files
        .insert(PathBuf::from("/runs/notes.txt"), b"not a trace".to_vec());
    host.stdin = LOOP.into();
    let status = run(&mut host, &["eval", "/runs", "-", "--json", "--html", "/out.html"]);
    assert_eq!(status, 0, "{}", host.stderr);
    assert!(host.stdout.contains("\"runs\":4"), "{}", host.stdout);
    let page = String::from_utf8(host.files[&PathBuf::from("/out.html")].clone()).unwrap();
    assert!(
        page.starts_with("<!doctype html>") || page.starts_with("<!DOCTYPE html>"),
        "{}",
        &page[..40]
    );
    let mut host = MemoryHost::default();
    assert_eq!(run(&mut host, &["eval", "/nowhere"]), EXIT_ERROR);
    assert_eq!(
        host.stderr,
        "doomloop: /nowhere: No such file or directory (os error 2)\n"
    );
}

#[test]
fn the_hook_keeps_its_locked_state_in_the_hosts_files_and_refuses_the_third_call() {
    let mut host = MemoryHost::default();
    let pre = |id: &str| {
        format!(
            r#"{{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"cat missing.txt"}},"tool_use_id":"{id}"}}"#
        )
    };
    let batch = |id: &str| {
        format!(
            r#"{{"session_id":"s","hook_event_name":"PostToolBatch","tool_calls":[{{"tool_name":"Bash","tool_input":{{"command":"cat missing.txt"}},"tool_use_id":"{id}","tool_response":"Exit code 1"}}]}}"#
        )
    };
    let mut answers = Vec::new();
    for call in 1..=3 {
        let id = format!("c{call}");
        for event in [pre(&id), batch(&id)] {
            host.stdin = event.into_bytes();
            host.stdout.clear();
            assert_eq!(run(&mut host, &["hook", "claude-code", "--state-dir", "/state"]), 0);
            assert_eq!(host.stderr, "");
            if host.stdout.contains("permissionDecision") || host.stdout.is_empty() {
                answers.push(if host.stdout.contains("deny") { "deny" } else { "allow" });
            }
        }
    }
    assert_eq!(&answers[..1], ["allow"]);
    assert!(answers.contains(&"deny"), "{answers:?}");
    let names: Vec<_> = host.files.keys().map(|p| p.display().to_string()).collect();
    assert_eq!(names, ["/state/claude-code-s.json"]);
    // A live holder's lock: waited for (on the host's clock), then allowed.
    host.files
        .insert(PathBuf::from("/state/claude-code-s.json.lock"), b"4242".to_vec());
    host.stdin = pre("c4").into_bytes();
    assert_eq!(run(&mut host, &["hook", "claude-code", "--state-dir", "/state"]), 0);
    assert!(
        host.stderr.contains("is held by another process; allowing the call"),
        "{}",
        host.stderr
    );
}
