//! The native `doomloop` binary's behaviour: exit statuses, streams and
//! the findings of `../shared/repros/cli.sh`, each a named regression test.
//! (tests/js/cli.test.mjs runs the same behaviours against both CLIs.)

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn doomloop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_doomloop"))
}

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = doomloop()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn doomloop");
    // The CLI may exit before reading (a usage error): a failed write is fine.
    let _ = child.stdin.take().expect("stdin").write_all(stdin.as_bytes());
    child.wait_with_output().expect("wait")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("doomloop-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn assert_no_panic(output: &Output) {
    let stderr = text(&output.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );
}

/// `--version` says the native binary answered, and for which platform
/// (npm's names): how a user, and the npm package's tests, tell the native
/// binary from the wasm CLI behind the npm `doomloop` launcher.
#[test]
fn version_names_the_native_build_and_its_platform() {
    let version = text(&run(&["--version"], "").stdout);
    let want = format!("doomloop {} (native ", env!("CARGO_PKG_VERSION"));
    assert!(version.starts_with(&want), "{version}");
    if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        assert!(version.ends_with(" (native linux-x64)\n"), "{version}");
    }
}

/// `doomloop which` prints this binary's absolute path (what `hook
/// install` writes), so a script can find the native binary.
#[test]
fn which_prints_the_binary_own_absolute_path() {
    let out = run(&["which"], "");
    assert_eq!(out.status.code(), Some(0));
    let path = text(&out.stdout);
    let want = std::fs::canonicalize(env!("CARGO_BIN_EXE_doomloop")).unwrap();
    assert_eq!(std::fs::canonicalize(path.trim_end()).unwrap(), want);
}

#[test]
fn version_and_help_go_to_stdout_with_status_0() {
    let version = run(&["--version"], "");
    assert_eq!(version.status.code(), Some(0));
    assert_eq!(
        text(&version.stdout),
        format!("doomloop {}\n", doom_loop_cli::command::VERSION)
    );
    for args in [
        &["--help"][..],
        &["help"],
        &["conformance", "--help"],
        &["fingerprint", "-h"],
        &["canonicalize", "--help"],
        &["replay", "--help"],
        &["eval", "--help"],
        &["help", "replay"],
    ] {
        let output = run(args, "");
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        assert!(text(&output.stdout).contains("Usage: doomloop"), "{args:?}");
        assert!(output.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn unknown_subcommands_and_flags_are_named_with_status_2() {
    for (args, first) in [
        (&["frobnicate"][..], "error: unrecognized subcommand 'frobnicate'"),
        (&["replay", "--frob"], "error: unexpected argument '--frob' found"),
        (
            &["replay", "--fail-on", "maybe"],
            "error: invalid value 'maybe' for '--fail-on <RUNG>'",
        ),
        (
            &["conformance"],
            "error: the following required arguments were not provided:",
        ),
    ] {
        let output = run(args, "");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&output.stderr).lines().next(), Some(first));
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn stdin_is_read_for_dash_and_for_absent_json() {
    for args in [&["canonicalize"][..], &["canonicalize", "-"]] {
        let output = run(args, r#"{"b":1,"a":2}"#);
        assert_eq!(text(&output.stdout), "{\"a\":2,\"b\":1}\n", "{}", text(&output.stderr));
    }
    let by_argument = run(&["fingerprint", "t", "{}"], "");
    assert_eq!(run(&["fingerprint", "t"], "{}").stdout, by_argument.stdout);
    let billing = include_str!("../examples/billing-agent.json");
    let output = run(&["replay", "-"], billing);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(output.stdout, run(&["replay"], "").stdout);
}

#[cfg(unix)]
#[test]
fn regression_non_utf8_argument_is_a_usage_error_not_a_panic() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"\xff");
    let output = doomloop().arg("fingerprint").arg(bad).arg("{}").output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).starts_with("error: invalid UTF-8 was detected"));
    assert_no_panic(&output);
    // A path that is not UTF-8 is a path like any other.
    let output = doomloop().arg("replay").arg(bad).output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("No such file or directory"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn regression_closed_stdout_exits_quietly_with_141() {
    let dir = scratch("pipe");
    let rounds: Vec<String> = (0..20_000)
        .map(|i| format!(r#"{{"calls":[{{"toolName":"t","args":{{"i":{i}}}}}]}}"#))
        .collect();
    let long = dir.join("long.json");
    std::fs::write(&long, format!(r#"{{"rounds":[{}]}}"#, rounds.join(","))).expect("write");
    let mut child = doomloop()
        .arg("replay")
        .arg(&long)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(141));
    assert_eq!(text(&output.stderr), "");
}

#[cfg(target_os = "linux")]
#[test]
fn regression_full_stdout_is_a_clear_error_with_status_2() {
    for args in [&["replay"][..], &["--help"], &["canonicalize", "[1]"]] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let output = doomloop().args(args).stdout(full).output().expect("run");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            text(&output.stderr).starts_with("doomloop: cannot write output: No space left on device"),
            "{}",
            text(&output.stderr)
        );
        assert_no_panic(&output);
    }
}

#[test]
fn regression_empty_conformance_run_fails_with_status_1() {
    let dir = scratch("empty");
    let output = doomloop().arg("conformance").arg(&dir).output().expect("run");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(text(&output.stdout), "0 passed, 0 failed\n");
    assert!(text(&output.stderr).starts_with("doomloop: no conformance cases found in "));
}

#[test]
fn regression_deep_input_is_rejected_with_status_2() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let output = run(&["replay", "-"], &deep);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        "doomloop: <stdin>: not valid JSON: JSON nested deeper than 512 levels\n"
    );
}

#[test]
fn regression_replay_warnings_go_to_stderr() {
    let transcript = r#"{"loopKeys":{"t":["missing"]},"rounds":[{"calls":[{"toolName":"t","args":{"a":1}}]}]}"#;
    let output = run(&["replay", "-"], transcript);
    assert_eq!(output.status.code(), Some(0));
    assert!(text(&output.stderr).starts_with("warning: [DoomLoop] \"t\": "));
    assert!(!text(&output.stdout).contains("warning"));
}

#[test]
fn replay_fail_on_exits_1_at_the_rung() {
    let round = r#"{"calls":[{"toolName":"poll","args":{}}]}"#;
    let transcript = format!(r#"{{"rounds":[{}]}}"#, [round; 4].join(","));
    let block = run(&["replay", "-", "--fail-on", "block"], &transcript);
    assert_eq!(block.status.code(), Some(1));
    assert_eq!(
        text(&block.stderr),
        "doomloop: --fail-on block: block at round 3 (\"poll\")\n"
    );
    let stop = run(&["replay", "-", "--fail-on", "stop"], &transcript);
    assert_eq!(stop.status.code(), Some(0), "{}", text(&stop.stderr));
}

const LOOP_ROUND: &str = r#"{"calls":[{"toolName":"poll","args":{}}]}"#;

#[test]
fn replay_recommended_and_option_conflict() {
    let output = run(&["replay", "--recommended", "--option", "true"], "");
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).starts_with("error: the argument '--recommended' cannot be used with"));
    let output = run(&["replay", "--recommended", "--json"], "");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("\"outcomes\""));
}

#[test]
fn eval_reports_gates_and_fails_without_runs() {
    let dir = scratch("eval");
    let transcript = format!(r#"{{"rounds":[{}]}}"#, [LOOP_ROUND; 6].join(","));
    std::fs::write(dir.join("loop.json"), &transcript).expect("write");
    let folder = dir.to_str().expect("utf-8 temp dir");
    let report = run(&["eval", folder, "--compare", "--json"], "");
    assert_eq!(report.status.code(), Some(0), "{}", text(&report.stderr));
    assert!(text(&report.stdout).starts_with(r#"{"options":[{"label":"defaults","#));
    let block = run(&["eval", folder, "--fail-on", "block"], "");
    assert_eq!(block.status.code(), Some(1));
    assert_eq!(
        text(&block.stderr),
        "doomloop: --fail-on block: block or stop in 1 run(s) under defaults\n"
    );
    let stdin = run(&["eval", "-", "--fail-on", "stop"], &transcript);
    assert_eq!(stdin.status.code(), Some(1));
    let empty = scratch("eval-empty");
    let none = run(&["eval", empty.to_str().expect("utf-8 temp dir")], "");
    assert_eq!(none.status.code(), Some(1));
    assert_eq!(text(&none.stderr), "doomloop: no runs evaluated (0 read)\n");
}
