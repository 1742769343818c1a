//! The `doomloop` command over an in-memory host: everything it reads and
//! writes goes through `Host` (so `npx doomloop`, the same code over Node's
//! `fs`, can do it too); code that reached behind the host's back would
//! find nothing here.

use std::ffi::OsString;
use std::path::PathBuf;

use doom_loop_cli::command::{main, main_lossy, EXIT_ERROR, VERSION};
use doom_loop_cli::hook::{plain_run, HookCommand};
use doom_loop_guard::event::Agent;
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

/// The words `hook` takes after it, as clap reads them: `hook`'s own
/// subcommand enum under a bare parser.
#[derive(clap::Parser)]
struct HookLine {
    #[command(subcommand)]
    command: HookCommand,
}

/// What clap reads from `hook WORDS…`, when it reads an agent's event.
fn clap_reading(words: &[&str]) -> Option<String> {
    use clap::Parser;
    let parsed = HookLine::try_parse_from(std::iter::once("hook").chain(words.iter().copied())).ok()?;
    let (agent, args) = match parsed.command {
        HookCommand::ClaudeCode(args) => (Agent::ClaudeCode, args),
        HookCommand::GeminiCli(args) => (Agent::GeminiCli, args),
        HookCommand::Codex(args) => (Agent::Codex, args),
        HookCommand::Copilot(args) => (Agent::Copilot, args),
        _ => return None,
    };
    Some(format!("{agent:?} {args:?}"))
}

#[test]
fn the_hook_line_read_without_clap_is_read_as_clap_reads_it() {
    // Every line of up to three words from these after `hook AGENT`: each
    // one read without clap must be what clap reads; the lines agents run
    // must be among them.
    let pool = [
        "--state-dir",
        "--state-dir=/s",
        "/s",
        "/t",
        "--option",
        "--option={}",
        "{}",
        "-1",
        "--option=-1",
        "",
        "--",
        "--help",
        "--state-dir=",
        "=",
        "x=y",
        "install",
        "codex",
    ];
    let mut lines: Vec<Vec<&str>> = vec![vec![]];
    for _ in 0..3 {
        let longer: Vec<Vec<&str>> = lines
            .iter()
            .filter(|l| l.len() == lines.last().map_or(0, Vec::len))
            .flat_map(|l| pool.iter().map(move |w| [l.clone(), vec![*w]].concat()))
            .collect();
        lines.extend(longer);
    }
    let mut taken = 0;
    for agent in ["claude-code", "gemini-cli", "codex", "copilot", "install", "nope"] {
        for rest in &lines {
            let words: Vec<&str> = [vec![agent], rest.clone()].concat();
            let argv: Vec<OsString> = std::iter::once("hook")
                .chain(words.iter().copied())
                .map(OsString::from)
                .collect();
            if let Some((agent, args)) = plain_run(&argv) {
                taken += 1;
                assert_eq!(Some(format!("{agent:?} {args:?}")), clap_reading(&words), "{words:?}");
            }
        }
    }
    assert!(taken > 100, "{taken}");
    for line in [
        &["claude-code"][..],
        &["codex", "--state-dir", "/s"],
        &["gemini-cli", "--state-dir=/s", "--option", "{}"],
        &["copilot", "--option={\"a\":1}", "--state-dir", "/s"],
    ] {
        let argv: Vec<OsString> = std::iter::once("hook")
            .chain(line.iter().copied())
            .map(OsString::from)
            .collect();
        assert!(plain_run(&argv).is_some(), "{line:?}");
    }
}

#[test]
fn a_bad_hook_command_line_allows_the_call_for_every_agent() {
    // Exit 2 reads as "block" (Copilot CLI denies the call on any non-zero
    // exit): a hook line clap rejects allows it, with one line.
    for agent in ["claude-code", "gemini-cli", "codex", "copilot"] {
        let mut host = MemoryHost::default();
        assert_eq!(run(&mut host, &["hook", agent, "--bogus"]), 0, "{agent}");
        assert!(
            host.stderr.ends_with("; allowing the call\n"),
            "{agent}: {}",
            host.stderr
        );
        assert_eq!(host.stderr.lines().count(), 1, "{agent}: {}", host.stderr);
    }
}
