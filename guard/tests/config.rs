//! The guard's config files (`~/.config/doomloop/config.toml`,
//! `.doomloop.toml`): which file wins, what loop keys and exempt tools do
//! to the decisions, and that a wrong file allows the call with one line —
//! through the whole hook ([`run`]) over an in-memory host.

use std::path::{Path, PathBuf};

use doom_loop::json::parse;
use doom_loop_guard::config::{self, Origin};
use doom_loop_guard::{run, Agent, HookAnswer, HookOptions};
use doom_loop_trace::host::MemoryHost;

const USER_FILE: &str = "/home/u/.config/doomloop/config.toml";

fn host() -> MemoryHost {
    let mut host = MemoryHost::default();
    host.env.insert("HOME".into(), "/home/u".into());
    host
}

fn put(host: &mut MemoryHost, path: &str, text: &str) {
    host.files.insert(PathBuf::from(path), text.as_bytes().to_vec());
}

fn options() -> HookOptions {
    HookOptions {
        state_dir: Some(PathBuf::from("/state")),
        option: None,
    }
}

/// One Claude Code round: the call (refused or run), then its batch.
fn round(host: &mut MemoryHost, i: usize, tool: &str, input: &str, cwd: &str) -> HookAnswer {
    let id = format!("t{i}");
    let pre = format!(
        r#"{{"session_id":"s","cwd":"{cwd}","hook_event_name":"PreToolUse","tool_name":"{tool}","tool_input":{input},"tool_use_id":"{id}"}}"#
    );
    let answer = run(host, Agent::ClaudeCode, pre.as_bytes(), &options());
    let batch = format!(
        r#"{{"session_id":"s","cwd":"{cwd}","hook_event_name":"PostToolBatch","tool_calls":[{{"tool_name":"{tool}","tool_input":{input},"tool_use_id":"{id}","tool_response":"not found"}}]}}"#
    );
    let after = run(host, Agent::ClaudeCode, batch.as_bytes(), &options());
    assert!(after.warnings.is_empty(), "{:?}", after.warnings);
    answer
}

fn refused(answer: &HookAnswer) -> bool {
    answer.stdout.contains("\"permissionDecision\":\"deny\"")
}

#[test]
fn a_project_file_overrides_the_user_file_key_by_key() {
    let mut host = host();
    put(&mut host, USER_FILE, "option = false\nexempt = [\"poll_job\"]\n");
    put(&mut host, "/repo/.doomloop.toml", "option = true\n");
    let settings = config::load(&mut host, Some(Path::new("/repo/src/deep")), None).unwrap();
    assert_eq!(settings.option, parse("true").unwrap());
    assert_eq!(
        settings.option_from,
        Origin::Project(PathBuf::from("/repo/.doomloop.toml"))
    );
    // The user's `exempt` stands: the project file does not set it.
    assert_eq!(settings.exempt, ["poll_job"]);
    assert_eq!(settings.exempt_from, Origin::User(PathBuf::from(USER_FILE)));

    // Through the hook: the user's `option = false` would let everything
    // run; the project's `true` refuses the third identical call.
    let answers: Vec<HookAnswer> = (1..=3)
        .map(|i| round(&mut host, i, "Bash", r#"{"command":"cat missing.txt"}"#, "/repo/src"))
        .collect();
    assert!(!refused(&answers[1]) && refused(&answers[2]), "{answers:?}");
    // Outside the project the user's file alone decides: the guard is off.
    let mut elsewhere = host.clone();
    elsewhere.files.retain(|p, _| !p.starts_with("/state"));
    let answers: Vec<HookAnswer> = (1..=3)
        .map(|i| round(&mut elsewhere, i, "Bash", r#"{"command":"cat missing.txt"}"#, "/tmp"))
        .collect();
    assert!(
        answers.iter().all(|a| a.stdout.is_empty() && a.warnings.is_empty()),
        "{answers:?}"
    );
}

#[test]
fn doomloop_config_names_the_user_file_and_the_command_lines_option_wins_over_both() {
    let mut host = host();
    put(&mut host, "/etc/guard.toml", "option = \"recommended\"\n");
    put(&mut host, USER_FILE, "option = false\n");
    host.env.insert("DOOMLOOP_CONFIG".into(), "/etc/guard.toml".into());
    let settings = config::load(&mut host, None, None).unwrap();
    assert_eq!(settings.option_from, Origin::User(PathBuf::from("/etc/guard.toml")));
    assert_eq!(settings.option, doom_loop_guard::default_option());
    let true_option = parse("true").unwrap();
    let settings = config::load(&mut host, None, Some(&true_option)).unwrap();
    assert_eq!(
        (settings.option, settings.option_from),
        (true_option, Origin::CommandLine)
    );
    // Named but missing: an error, not a silent default.
    host.env.insert("DOOMLOOP_CONFIG".into(), "/etc/none.toml".into());
    let error = config::load(&mut host, None, None).unwrap_err();
    assert!(error.starts_with("/etc/none.toml: DOOMLOOP_CONFIG names"), "{error}");
}

#[test]
fn an_mcp_tools_loop_key_makes_two_calls_that_differ_in_an_ignored_field_one_call() {
    let issue = |i: usize| format!(r#"{{"owner":"o","repo":"r","issue_number":7,"request_id":"req-{i}"}}"#);
    let run_three = |host: &mut MemoryHost| -> Vec<HookAnswer> {
        host.files.retain(|p, _| !p.starts_with("/state"));
        (1..=3)
            .map(|i| round(host, i, "mcp__github__get_issue", &issue(i), "/repo"))
            .collect()
    };
    let mut host = host();
    put(&mut host, "/repo/.doomloop.toml", "option = true\n");
    // Without a loop key every call differs (its request id): none refused.
    assert!(run_three(&mut host).iter().all(|a| !refused(a)));
    put(
        &mut host,
        "/repo/.doomloop.toml",
        "option = true\n[loop_keys]\n\"mcp__github__get_issue\" = [\"owner\", \"repo\", \"issue_number\"]\n",
    );
    let answers = run_three(&mut host);
    assert!(!refused(&answers[1]) && refused(&answers[2]), "{answers:?}");
}

#[test]
fn an_exempt_tool_is_never_counted_and_the_built_in_shell_keys_stay() {
    let mut host = host();
    put(&mut host, USER_FILE, "option = true\nexempt = [\"poll_job\"]\n");
    let answers: Vec<HookAnswer> = (1..=6)
        .map(|i| round(&mut host, i, "poll_job", r#"{"job":"j1"}"#, "/repo"))
        .collect();
    assert!(answers.iter().all(|a| a.stdout.is_empty()), "{answers:?}");
    let settings = config::load(&mut host, None, None).unwrap();
    let keys = settings.loop_keys(Agent::ClaudeCode);
    assert_eq!(keys.get("poll_job"), Some(&parse("false").unwrap()));
    assert_eq!(
        keys.get("Bash"),
        Some(&parse(r#"["command","run_in_background"]"#).unwrap())
    );
}

/// One Claude Code call in /repo with its output, then its batch; the answer to the call.
fn call(host: &mut MemoryHost, id: &str, tool: &str, input: &str, output: &str) -> HookAnswer {
    let pre = format!(
        r#"{{"session_id":"s","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"{tool}","tool_input":{input},"tool_use_id":"{id}"}}"#
    );
    let answer = run(host, Agent::ClaudeCode, pre.as_bytes(), &options());
    let batch = format!(
        r#"{{"session_id":"s","cwd":"/repo","hook_event_name":"PostToolBatch","tool_calls":[{{"tool_name":"{tool}","tool_input":{input},"tool_use_id":"{id}","tool_response":"{output}"}}]}}"#
    );
    let after = run(host, Agent::ClaudeCode, batch.as_bytes(), &options());
    assert!(after.warnings.is_empty(), "{:?}", after.warnings);
    answer
}

/// The test run failing the same way, a different `tool` edit before each
/// re-run, under the default option; whether any call was refused.
fn edit_with_and_retest(config: &str, tool: &str) -> bool {
    let mut host = host();
    put(&mut host, "/repo/.doomloop.toml", config);
    let test = r#"{"command":"pytest tests/test_x.py"}"#;
    let fail = "FAILED test_x - AssertionError: 1 != 2";
    let mut answers = vec![call(&mut host, "t0", "Bash", test, fail)];
    for i in 1..=3 {
        let edit = format!(r#"{{"path":"/repo/x.py","content":"v{i}"}}"#);
        answers.push(call(&mut host, &format!("e{i}"), tool, &edit, "ok"));
        answers.push(call(&mut host, &format!("t{i}"), "Bash", test, fail));
    }
    answers.iter().any(refused)
}

#[test]
fn a_loop_effects_table_declares_an_mcp_tool_a_write_so_edits_between_failing_test_runs_are_progress() {
    let tool = "mcp__fs__write_file";
    assert!(edit_with_and_retest("", tool), "undeclared, the re-runs are a loop");
    assert!(!edit_with_and_retest(
        "[loop_effects]\n\"mcp__fs__write_file\" = \"write\"\n",
        tool
    ));
    // The table is laid over the built-in declarations, tool by tool:
    // Claude Code's `Edit` is a write until a file says otherwise.
    assert!(!edit_with_and_retest("", "Edit"));
    assert!(edit_with_and_retest("[loop_effects]\nEdit = \"read\"\n", "Edit"));
    let mut host = host();
    put(
        &mut host,
        USER_FILE,
        "[loop_effects]\nmcp__github__get_issue = \"read\"\n",
    );
    put(
        &mut host,
        "/repo/.doomloop.toml",
        "[loop_effects]\nmcp__fs__write_file = \"write\"\n",
    );
    let settings = config::load(&mut host, Some(Path::new("/repo")), None).unwrap();
    let effects = settings.loop_effects(Agent::ClaudeCode);
    let effect = |tool: &str| effects.get(tool).cloned();
    assert_eq!(effect("mcp__github__get_issue"), Some(parse("\"read\"").unwrap()));
    assert_eq!(effect("mcp__fs__write_file"), Some(parse("\"write\"").unwrap()));
    assert_eq!(effect("Write"), Some(parse("\"write\"").unwrap()));
    // `doomloop hook config` shows each effect with where it came from.
    let text = config::describe(&settings, Some(Agent::ClaudeCode), Path::new("/repo"));
    let table = &text[text.find("[loop_effects]").unwrap()..];
    assert!(
        table.contains("\"Edit\" = \"write\"   # built in (claude-code)"),
        "{text}"
    );
    assert!(
        table.contains("\"mcp__fs__write_file\" = \"write\"   # /repo/.doomloop.toml"),
        "{text}"
    );
    assert!(
        table.contains(&format!("\"mcp__github__get_issue\" = \"read\"   # {USER_FILE}")),
        "{text}"
    );
    let json = parse(config::describe_json(&settings, Some(Agent::ClaudeCode)).trim()).unwrap();
    let json = doom_loop::json::to_json(&json);
    assert!(json.contains(r#""loopEffects":{"Edit":"write","#), "{json}");
}

#[test]
fn a_malformed_config_file_allows_the_call_with_one_line_naming_the_file_the_line_and_the_key() {
    let cases = [
        (
            "option = true\n\n[loop_keys]\nmcp__x = true\n",
            4,
            "key `loop_keys.mcp__x`",
        ),
        ("option = 3\n", 1, "key `option`"),
        ("\n[option.ladder]\nstop = 2026-01-01\n", 3, "key `option.ladder.stop`"),
        ("exempt = [\"a\",\n  2]\n", 2, "key `exempt`"),
        ("option = true\nloopKeys = {}\n", 2, "key `loopKeys`"),
        ("option = true\n[loop_keys\n", 2, "not valid TOML"),
        (
            "[loop_effects]\nmcp__a = \"read\"\nmcp__fs__write_file = \"writes\"\n",
            3,
            "key `loop_effects.mcp__fs__write_file`: expected \"write\" or \"read\"",
        ),
        ("loop_effects = [\"write\"]\n", 1, "key `loop_effects`"),
    ];
    for (text, line, key) in cases {
        let mut host = host();
        put(&mut host, "/repo/.doomloop.toml", text);
        let event = r#"{"session_id":"s","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1"}"#;
        let answer = run(&mut host, Agent::ClaudeCode, event.as_bytes(), &options());
        assert_eq!(answer.stdout, "", "{text}");
        assert_eq!(answer.warnings.len(), 1, "{text}: {:?}", answer.warnings);
        let warning = &answer.warnings[0];
        assert!(
            warning.starts_with(&format!("/repo/.doomloop.toml:{line}: ")) && warning.contains(key),
            "{text}: {warning}"
        );
        assert!(warning.ends_with("allowing the call"), "{warning}");
        assert!(!warning.contains('\n'), "{warning}");
    }
}
