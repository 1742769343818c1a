//! What the command makes of the inputs trace/tests/reliability.rs reads:
//! an unreadable file is a failed run in the report, not an abort; the
//! importers' warnings reach `replay`'s stderr and only real ones do; a
//! bad `--option` is a usage error before any file is read.

use std::path::PathBuf;

use doom_loop_cli::compute::{eval_finish, eval_options, replay_bytes, OptionChoice};
use doom_loop_trace::eval::{EvalOption, Evaluation};

#[cfg(unix)]
#[test]
fn eval_unreadable_file_is_a_report_not_an_abort() {
    let dir: PathBuf = std::env::temp_dir().join(format!("doomloop-cli-unreadable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("run.json"),
        r#"{"rounds":[{"calls":[{"toolName":"t","args":{}}]}]}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(dir.join("gone.json"), dir.join("stale.json")).unwrap();
    let mut evaluation = Evaluation::new(vec![EvalOption::defaults()]);
    evaluation.add_path(&dir);
    let finished = eval_finish(&evaluation, false, None);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(finished.finding, None, "a report, not an abort");
    assert!(finished.stdout.contains("stale.json"), "{}", finished.stdout);
}

#[test]
fn replay_warns_of_calls_of_another_format() {
    let text = [
        r#"{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"chat_tool","arguments":"{}"}}]}"#,
        r#"{"role":"assistant","content":[{"type":"tool_use","id":"u","name":"anthropic_tool","input":{}}]}"#,
    ]
    .join("\n");
    let replayed = replay_bytes(text.as_bytes(), "mixed.jsonl", OptionChoice::Trace, false, None).unwrap();
    assert!(
        replayed.warnings.iter().any(|w| w.contains("another format")),
        "{:?}",
        replayed.warnings
    );
}

#[test]
fn replay_of_a_claude_code_thinking_line_warns_of_nothing() {
    let text = [
        r#"{"type":"assistant","uuid":"1","sessionId":"s","message":{"id":"m","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"first","signature":"x"}]}}"#,
        r#"{"type":"assistant","uuid":"2","sessionId":"s","message":{"id":"m","type":"message","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}"#,
    ]
    .join("\n");
    let replayed = replay_bytes(text.as_bytes(), "session.jsonl", OptionChoice::Trace, false, None).unwrap();
    assert!(replayed.warnings.is_empty(), "{:?}", replayed.warnings);
}

#[test]
fn eval_invalid_option_is_a_usage_error_up_front() {
    let error = eval_options(&["null".into()], false, false).unwrap_err();
    assert!(error.starts_with("--option: "), "{error}");
    let error = eval_options(&["true".into(), "false".into()], false, false).unwrap_err();
    assert_eq!(error, "--option 2 turns detection off: there is nothing to evaluate");
    assert!(eval_options(&[r#"{"ladder":{"block":4}}"#.into()], false, false).is_ok());
}
