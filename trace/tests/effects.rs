//! Effect-aware streaks under `RECOMMENDED_DOOM_LOOP_OPTION`, replayed as
//! `doomloop replay --recommended` replays a rounds-format run: the coding
//! agent's edit-and-retest session (run the test, edit, the test fails the
//! same way, edit again, …) completes, while a session that re-applies the
//! same edit, or re-runs the test with no edit, is still blocked; the
//! verdict text never says the result cannot change after writes.

use doom_loop::json::{parse, to_json, Value};
use doom_loop::recommended_doom_loop_option;
use doom_loop_trace::replay::{parse_transcript, replay, Timeline};

#[path = "common/refusals.rs"]
mod refusals;
use refusals::refusals;

const TEST: &str = r#"{"command":"pytest tests/test_x.py"}"#;
const FAIL: &str = "FAILED test_x - AssertionError: 1 != 2";

/// One call a round: `(tool, args, result)`.
fn session(calls: &[(&str, String, &str)], effects: &str) -> Timeline {
    let rounds: Vec<String> = calls
        .iter()
        .map(|(tool, args, result)| {
            format!(
                r#"{{"calls":[{{"toolName":{},"args":{},"result":{}}}]}}"#,
                to_json(&Value::String((*tool).into())),
                to_json(&Value::String(args.as_str().into())),
                to_json(&Value::String((*result).into()))
            )
        })
        .collect();
    let document = format!(
        r#"{{"doomLoop":{},"loopEffects":{effects},"rounds":[{}]}}"#,
        to_json(&recommended_doom_loop_option()),
        rounds.join(",")
    );
    replay(&parse_transcript(&parse(&document).unwrap()).unwrap()).unwrap()
}

fn edit(from: &str, to: &str) -> String {
    format!(r#"{{"file_path":"x.py","old_string":"{from}","new_string":"{to}"}}"#)
}

const CLAUDE_CODE: &str = r#"{"Edit":"write","Write":"write","MultiEdit":"write","NotebookEdit":"write"}"#;

/// The test fails identically after `failing` different edits, then passes.
fn edit_and_retest(failing: usize) -> Vec<(&'static str, String, &'static str)> {
    let mut calls = vec![("Bash", TEST.to_string(), FAIL)];
    for i in 0..=failing {
        let result = if i == failing { "1 passed" } else { FAIL };
        calls.push((
            "Edit",
            edit(&format!("v{i}"), &format!("v{}", i + 1)),
            "The file x.py has been updated.",
        ));
        calls.push(("Bash", TEST.to_string(), result));
    }
    calls
}

#[test]
fn a_new_edit_between_two_identical_failing_test_runs_is_progress() {
    // The five rounds of the report: test, edit, same failure, edit, test.
    let timeline = session(&edit_and_retest(1), CLAUDE_CODE);
    assert_eq!(refusals(&timeline), vec![]);
    assert!(timeline.stop_verdict.is_none());
    let test_streaks: Vec<f64> = timeline
        .rounds
        .iter()
        .flat_map(|r| &r.calls)
        .filter(|c| c.tool_name == "Bash")
        .map(|c| c.streak)
        .collect();
    assert_eq!(test_streaks, vec![1.0, 1.0, 1.0]);
}

#[test]
fn three_failing_edits_before_the_fix_complete_without_a_block() {
    let timeline = session(&edit_and_retest(3), CLAUDE_CODE);
    assert_eq!(refusals(&timeline), vec![]);
    assert!(timeline
        .rounds
        .iter()
        .flat_map(|r| &r.calls)
        .all(|c| c.verdict.is_none()));
}

#[test]
fn without_declared_effects_the_same_session_is_blocked_at_the_third_test_run() {
    // What the rule changes: the recommended option alone, no declaration.
    let timeline = session(&edit_and_retest(1), "{}");
    assert_eq!(refusals(&timeline), vec![(5, "block")]);
}

#[test]
fn the_same_edit_re_applied_each_time_is_still_blocked() {
    let same = edit("a", "b");
    let mut calls = vec![("Bash", TEST.to_string(), FAIL)];
    for _ in 0..4 {
        calls.push(("Edit", same.clone(), "The file x.py has been updated."));
        calls.push(("Bash", TEST.to_string(), FAIL));
    }
    let timeline = session(&calls, CLAUDE_CODE);
    let refused = refusals(&timeline);
    assert!(!refused.is_empty(), "a loop of one edit and one test is caught");
    // The edit itself repeats identically: its own streak blocks it.
    assert_eq!(refused[0], (6, "block"));
    let verdict = timeline.rounds[5].calls[0].verdict.as_ref().unwrap();
    assert_eq!(verdict.tool_name, Some("Edit".into()));
}

#[test]
fn a_test_re_run_with_no_edit_between_is_blocked_at_its_third_run() {
    let calls = vec![
        ("Bash", TEST.to_string(), FAIL),
        ("Read", r#"{"file_path":"x.py"}"#.to_string(), "1 a = 1"),
        ("Bash", TEST.to_string(), FAIL),
        ("Read", r#"{"file_path":"y.py"}"#.to_string(), "1 b = 2"),
        ("Bash", TEST.to_string(), FAIL),
    ];
    let reads = r#"{"Read":"read","Edit":"write"}"#;
    assert_eq!(refusals(&session(&calls, reads)), vec![(5, "block")]);
}

#[test]
fn a_failed_edit_changes_nothing() {
    let mut calls = vec![("Bash", TEST.to_string(), FAIL)];
    for i in 0..2 {
        calls.push((
            "Edit",
            edit(&format!("missing{i}"), "b"),
            "String to replace not found in file.",
        ));
        calls.push(("Bash", TEST.to_string(), FAIL));
    }
    let document = |failed: bool| {
        let rounds: Vec<String> = calls
            .iter()
            .map(|(tool, args, result)| {
                format!(
                    r#"{{"calls":[{{"toolName":"{tool}","args":{},"result":{},"error":{}}}]}}"#,
                    to_json(&Value::String(args.as_str().into())),
                    to_json(&Value::String((*result).into())),
                    failed && *tool == "Edit"
                )
            })
            .collect();
        format!(
            r#"{{"doomLoop":{},"loopEffects":{CLAUDE_CODE},"rounds":[{}]}}"#,
            to_json(&recommended_doom_loop_option()),
            rounds.join(",")
        )
    };
    let run = |failed| replay(&parse_transcript(&parse(&document(failed)).unwrap()).unwrap()).unwrap();
    assert_eq!(refusals(&run(true)), vec![(5, "block")]);
    assert_eq!(refusals(&run(false)), vec![]);
}

#[test]
fn a_verdict_after_repeated_writes_does_not_claim_the_result_cannot_change() {
    // Edits that repeat earlier ones (a, then b, then a again) do not lift
    // the test's streak; its verdict says what is known instead.
    let calls = vec![
        ("Bash", TEST.to_string(), FAIL),
        ("Edit", edit("a", "b"), "ok"),
        ("Bash", TEST.to_string(), FAIL),
        ("Edit", edit("b", "a"), "ok"),
        ("Bash", TEST.to_string(), FAIL),
        ("Edit", edit("a", "b"), "ok"),
        ("Bash", TEST.to_string(), FAIL),
        ("Edit", edit("b", "a"), "ok"),
        ("Bash", TEST.to_string(), FAIL),
    ];
    let timeline = session(&calls, CLAUDE_CODE);
    let (round, action) = refusals(&timeline)[0];
    assert_eq!((round, action), (9, "block"));
    let message = timeline.rounds[8].calls[0]
        .verdict
        .as_ref()
        .unwrap()
        .message
        .to_string();
    assert!(!message.contains("will not change the result"), "{message}");
    assert!(
        message.contains("The changes made in between repeat earlier ones"),
        "{message}"
    );
}

#[test]
fn an_undeclared_or_misdeclared_tool_keeps_the_reference_rule_with_one_warning() {
    let timeline = session(&edit_and_retest(1), r#"{"Edit":"writes"}"#);
    assert_eq!(refusals(&timeline), vec![(5, "block")]);
    let warned: Vec<&String> = timeline.warnings.iter().filter(|w| w.contains("loopEffect")).collect();
    assert_eq!(
        warned,
        vec![
            r#"[DoomLoop] loopEffect of "Edit" must be "write" or "read", got "writes"; treating the tool's effect as unknown."#
        ]
    );
}
