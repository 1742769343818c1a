//! The importers carry what a log records about its tools' effects, so
//! `doomloop replay --recommended` and `doomloop eval` score a run as the
//! hooks and `doom-loop-wasm/mcp` score it live: an OpenAI Responses log's
//! `mcp_list_tools` annotations and `mcp_call` items, a request body's
//! annotated `tools`, and the built-in edit tools of the coding agent that
//! wrote the log (Claude Code, Codex, Gemini CLI — the hooks' table).
//! Every log here is written by hand for the shape it tests.

use doom_loop::json::{to_json, Value};
use doom_loop::recommended_doom_loop_option;
use doom_loop_trace::import::{import_one, Format, ImportedRun};
use doom_loop_trace::replay::{replay, Timeline, Transcript};

#[path = "common/refusals.rs"]
mod refusals;
use refusals::refusals;

fn json(text: &str) -> String {
    to_json(&Value::String(text.into()))
}

fn import(log: &str) -> (Transcript, Vec<String>) {
    import_one(log.as_bytes(), "log.jsonl").unwrap_or_else(|e| panic!("{e}\n{log}"))
}

fn format_of(log: &str) -> Option<Format> {
    let runs: Vec<ImportedRun> = doom_loop_trace::import::import_text(log, "log.jsonl");
    runs.first().and_then(|run| run.format)
}

/// `doomloop replay --recommended`: the log under the option the hooks use.
fn replay_recommended(log: &str) -> Timeline {
    let (mut transcript, _) = import(log);
    transcript.option = recommended_doom_loop_option();
    replay(&transcript).unwrap()
}

fn effects(transcript: &Transcript) -> String {
    to_json(&Value::Object(transcript.loop_effects.clone()))
}

const FAIL: &str = "FAILED tests/test_dates.py::test_pad - AssertionError: '2024-1-5' != '2024-01-05'";

/// Whether the `i`-th test run of an edit-and-retest session passes: the
/// test fails identically after each of `failing` edits, then passes.
fn passes(i: usize, failing: usize) -> bool {
    i > failing
}

/// The edit before the `i`-th re-run: a new one each time, or the same
/// edit re-applied.
fn edit_text(i: usize, same: bool) -> String {
    if same {
        "v1".into()
    } else {
        format!("v{i}")
    }
}

// --- OpenAI Responses: mcp_list_tools + mcp_call -------------------------

fn mcp_list_tools(tools: &str) -> String {
    format!(r#"{{"type":"mcp_list_tools","id":"mcpl_1","server_label":"repo","tools":{tools}}}"#)
}

fn mcp_call(n: usize, name: &str, arguments: &str, output: &str) -> String {
    format!(
        r#"{{"type":"mcp_call","id":"mcp_{n}","server_label":"repo","name":"{name}","arguments":{},"output":{},"error":null}}"#,
        json(arguments),
        json(output)
    )
}

const REPO_TOOLS: &str = r#"[
  {"name":"run_tests","input_schema":{"type":"object"},"annotations":{"readOnlyHint":true}},
  {"name":"write_file","input_schema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":true}},
  {"name":"delete_file","input_schema":{"type":"object"},"annotations":{"destructiveHint":true}},
  {"name":"search","input_schema":{"type":"object"}}
]"#;

/// A Responses log of a remote MCP server's edit-and-retest session: the
/// tools listed once, then a test run and an edit per model turn.
fn responses_session(failing: usize, same_edit: bool) -> String {
    let mut items = vec![
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix the date test."}]}"#.to_string(),
        mcp_list_tools(&REPO_TOOLS.replace('\n', "")),
    ];
    let test = r#"{"path":"tests/test_dates.py"}"#;
    let mut n = 0;
    for i in 0..=failing + 1 {
        if i > 0 {
            n += 1;
            let edit = format!(r#"{{"path":"src/dates.py","content":"{}"}}"#, edit_text(i, same_edit));
            items.push(mcp_call(n, "write_file", &edit, "wrote src/dates.py"));
        }
        n += 1;
        let result = if passes(i, failing) { "1 passed" } else { FAIL };
        items.push(mcp_call(n, "run_tests", test, result));
    }
    items.push(r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixed."}]}"#.into());
    format!(r#"{{"output":[{}]}}"#, items.join(","))
}

#[test]
fn a_responses_log_reads_mcp_calls_with_their_output_and_the_listed_tools_annotations() {
    let log = responses_session(1, false);
    assert_eq!(format_of(&log), Some(Format::Responses));
    let (transcript, _) = import(&log);
    // Each mcp_call is a turn of its own, its output its result.
    let calls: Vec<(String, Option<String>, bool)> = transcript
        .rounds
        .iter()
        .flat_map(|r| &r.calls)
        .map(|c| (c.tool_name.to_string(), c.result.as_ref().map(to_json), c.failed))
        .collect();
    assert_eq!(calls.len(), 5, "{calls:?}");
    assert!(transcript.rounds.iter().take(5).all(|r| r.calls.len() == 1));
    assert_eq!(calls[0], ("run_tests".into(), Some(json(FAIL)), false));
    assert_eq!(calls[1], ("write_file".into(), Some(json("wrote src/dates.py")), false));
    assert_eq!(calls[4], ("run_tests".into(), Some(json("1 passed")), false));
    // The called tools' annotated effects; `delete_file` is not called,
    // `search` is not annotated.
    assert_eq!(effects(&transcript), r#"{"run_tests":"read","write_file":"write"}"#);
    assert!(transcript.warnings.is_empty(), "{:?}", transcript.warnings);
}

#[test]
fn an_mcp_call_that_errored_is_a_failed_call_whose_error_is_its_result() {
    let log = format!(
        r#"[{},{{"type":"mcp_call","id":"mcp_1","server_label":"repo","name":"write_file","arguments":"{{}}","output":null,"error":"permission denied"}}]"#,
        mcp_list_tools(&REPO_TOOLS.replace('\n', ""))
    );
    let (transcript, _) = import(&log);
    let call = &transcript.rounds[0].calls[0];
    assert!(call.failed);
    assert_eq!(call.result, Some(Value::String("permission denied".into())));
}

#[test]
fn new_mcp_writes_between_identical_failing_test_runs_complete_under_recommended() {
    for failing in [1, 3] {
        let timeline = replay_recommended(&responses_session(failing, false));
        assert_eq!(refusals(&timeline), vec![], "{failing} failing edits");
        assert!(timeline.stop_verdict.is_none());
    }
}

#[test]
fn the_same_mcp_write_reapplied_between_failing_test_runs_is_still_blocked() {
    let timeline = replay_recommended(&responses_session(3, true));
    assert!(!refusals(&timeline).is_empty(), "{:?}", timeline.rounds);
}

#[test]
fn without_annotations_the_listed_tools_effects_stay_unknown_and_the_retest_is_blocked() {
    let log = responses_session(3, false).replace(r#""annotations""#, r#""notes""#);
    let (transcript, _) = import(&log);
    assert_eq!(effects(&transcript), "{}");
    assert!(!refusals(&replay_recommended(&log)).is_empty());
}

#[test]
fn annotations_that_are_not_booleans_are_ignored_with_one_warning() {
    let tools = r#"[
      {"name":"run_tests","annotations":{"readOnlyHint":"yes"}},
      {"name":"write_file","annotations":{"readOnlyHint":"no","destructiveHint":1}}
    ]"#
    .replace('\n', "");
    let log = responses_session(1, false).replace(&REPO_TOOLS.replace('\n', ""), &tools);
    let (transcript, _) = import(&log);
    assert_eq!(effects(&transcript), "{}");
    let timeline = replay(&transcript).unwrap();
    let warned: Vec<&String> = timeline.warnings.iter().filter(|w| w.contains("annotations")).collect();
    assert_eq!(
        warned,
        [
            r#"[DoomLoop] MCP tool annotations that are not booleans were ignored (run_tests.readOnlyHint, write_file.readOnlyHint, write_file.destructiveHint); those tools' effects are unknown unless another hint says."#
        ],
    );
    // The evaluation says it once for the run, whatever the options.
    let mut evaluation = doom_loop_trace::eval::Evaluation::new(vec![
        doom_loop_trace::eval::EvalOption::new("default", Value::Bool(true)),
        doom_loop_trace::eval::EvalOption::new("recommended", recommended_doom_loop_option()),
    ]);
    evaluation.add_bytes(log.as_bytes(), "log.json");
    let said = evaluation
        .warnings()
        .iter()
        .filter(|w| w.contains("annotations"))
        .count();
    assert_eq!(said, 1, "{:?}", evaluation.warnings());
}

#[test]
fn two_tools_lists_that_disagree_about_a_tool_leave_its_effect_unknown() {
    let other = r#"[{"name":"write_file","annotations":{"readOnlyHint":true}}]"#;
    let log = responses_session(1, false).replace(
        r#"{"type":"mcp_call","id":"mcp_1""#,
        &format!(r#"{},{{"type":"mcp_call","id":"mcp_1""#, mcp_list_tools(other)),
    );
    let (transcript, _) = import(&log);
    assert_eq!(effects(&transcript), r#"{"run_tests":"read"}"#);
}

#[test]
fn a_request_bodys_annotated_tools_declare_effects_and_its_own_loop_effects_win() {
    // Chat completions: the definition under `function`.
    let chat = r#"{"tools":[{"type":"function","function":{"name":"save","parameters":{},"annotations":{"destructiveHint":true}}}],
      "messages":[{"role":"user","content":"go"},
        {"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"save","arguments":"{}"}}]},
        {"role":"tool","tool_call_id":"c1","content":"saved"}]}"#;
    let (transcript, _) = import(&chat.replace('\n', ""));
    assert_eq!(effects(&transcript), r#"{"save":"write"}"#);
    // Anthropic: `{name, input_schema, annotations}`; the document's own
    // `loopEffects` is the user's word and wins.
    let anthropic = r#"{"loopEffects":{"save":"read"},"tools":[{"name":"save","input_schema":{},"annotations":{"readOnlyHint":false}}],
      "messages":[{"role":"user","content":"go"},
        {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"save","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"saved"}]}]}"#;
    let (transcript, _) = import(&anthropic.replace('\n', ""));
    assert_eq!(effects(&transcript), r#"{"save":"read"}"#);
}

// --- The coding agents' logs: the hooks' built-in edit tools -------------

/// A coding agent's edit-and-retest log (`session(failing, same_edit)`):
/// read as `format` with the agent's built-in `effects`, it completes
/// under the recommended option after 1 and after 3 failing edits.
fn completes_under_recommended(session: fn(usize, bool) -> String, format: Format, effects_read: &str) {
    let log = session(1, false);
    assert_eq!(format_of(&log), Some(format));
    assert_eq!(effects(&import(&log).0), effects_read);
    for failing in [1, 3] {
        let timeline = replay_recommended(&session(failing, false));
        assert_eq!(refusals(&timeline), vec![], "{failing} failing edits");
    }
}

/// The same log re-applying one edit before every re-run is still blocked.
fn same_edit_still_blocked(session: fn(usize, bool) -> String) {
    assert!(!refusals(&replay_recommended(&session(3, true))).is_empty());
}

/// A Claude Code session log (`~/.claude/projects/…/*.jsonl`): each line a
/// message with its session id.
fn claude_code_session(failing: usize, same_edit: bool) -> String {
    let line = |kind: &str, message: String| {
        format!(r#"{{"type":"{kind}","sessionId":"s1","cwd":"/repo","message":{message}}}"#)
    };
    let tool_use = |id: &str, name: &str, input: String| {
        line(
            "assistant",
            format!(
                r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{input}}}]}}"#
            ),
        )
    };
    let tool_result = |id: &str, output: &str| {
        line(
            "user",
            format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":{}}}]}}"#,
                json(output)
            ),
        )
    };
    let mut lines = vec![line("user", r#"{"role":"user","content":"Fix the date test."}"#.into())];
    for i in 0..=failing + 1 {
        if i > 0 {
            let edit = format!(
                r#"{{"file_path":"/repo/src/dates.py","old_string":"v0","new_string":"{}"}}"#,
                edit_text(i, same_edit)
            );
            lines.push(tool_use(&format!("e{i}"), "Edit", edit));
            lines.push(tool_result(
                &format!("e{i}"),
                "The file /repo/src/dates.py has been updated.",
            ));
        }
        lines.push(tool_use(
            &format!("t{i}"),
            "Bash",
            r#"{"command":"pytest tests/test_dates.py"}"#.into(),
        ));
        lines.push(tool_result(
            &format!("t{i}"),
            if passes(i, failing) { "1 passed" } else { FAIL },
        ));
    }
    lines.join("\n")
}

#[test]
fn a_claude_code_edit_then_test_log_completes_under_recommended() {
    completes_under_recommended(
        claude_code_session,
        Format::Anthropic,
        r#"{"Edit":"write","Write":"write","MultiEdit":"write","NotebookEdit":"write"}"#,
    );
}

#[test]
fn a_claude_code_log_reapplying_the_same_edit_is_still_blocked() {
    same_edit_still_blocked(claude_code_session);
}

#[test]
fn claude_codes_stream_json_output_is_read_with_its_built_in_effects_too() {
    // `claude -p --output-format stream-json` (and the Agent SDK) name the
    // session `session_id`.
    let log = claude_code_session(3, false).replace(r#""sessionId""#, r#""session_id""#);
    assert_eq!(
        effects(&import(&log).0),
        r#"{"Edit":"write","Write":"write","MultiEdit":"write","NotebookEdit":"write"}"#
    );
    assert_eq!(refusals(&replay_recommended(&log)), vec![]);
}

#[test]
fn an_anthropic_log_no_agent_wrote_gets_no_built_in_effects() {
    // The same messages without Claude Code's session lines: an `Edit`
    // tool of someone else's agent is not assumed to write.
    let log: Vec<String> = claude_code_session(3, false)
        .lines()
        .map(|l| l.replace(r#""sessionId":"s1","#, ""))
        .collect();
    let log = log.join("\n");
    let (transcript, _) = import(&log);
    assert_eq!(effects(&transcript), "{}");
    // …so its retests count as the reference counts them.
    assert!(!refusals(&replay_recommended(&log)).is_empty());
}

/// A Gemini CLI `--output-format stream-json` log.
fn gemini_cli_stream(failing: usize, same_edit: bool) -> String {
    let mut lines = vec![r#"{"type":"init","session_id":"g1","model":"gemini-2.5-pro"}"#.to_string()];
    let call = |lines: &mut Vec<String>, id: String, name: &str, parameters: String, status: &str, output: &str| {
        lines.push(format!(
            r#"{{"type":"tool_use","tool_name":"{name}","tool_id":"{id}","parameters":{parameters}}}"#
        ));
        lines.push(format!(
            r#"{{"type":"tool_result","tool_id":"{id}","status":"{status}","output":{}}}"#,
            json(output)
        ));
    };
    for i in 0..=failing + 1 {
        if i > 0 {
            let edit = format!(
                r#"{{"file_path":"/repo/src/dates.ts","old_string":"v0","new_string":"{}"}}"#,
                edit_text(i, same_edit)
            );
            call(
                &mut lines,
                format!("replace-{i}"),
                "replace",
                edit,
                "success",
                "Successfully modified file",
            );
        }
        let (status, output) = if passes(i, failing) {
            ("success", "1 passed")
        } else {
            ("error", FAIL)
        };
        call(
            &mut lines,
            format!("run_shell_command-{i}"),
            "run_shell_command",
            r#"{"command":"npm test"}"#.into(),
            status,
            output,
        );
    }
    lines.join("\n")
}

#[test]
fn a_gemini_cli_edit_then_test_log_completes_under_recommended() {
    completes_under_recommended(
        gemini_cli_stream,
        Format::GeminiCli,
        r#"{"replace":"write","write_file":"write"}"#,
    );
}

#[test]
fn a_gemini_cli_log_reapplying_the_same_edit_is_still_blocked() {
    same_edit_still_blocked(gemini_cli_stream);
}

/// A Codex rollout (`~/.codex/sessions/…/rollout-*.jsonl`): a session_meta
/// line, then response items under `payload`; `apply_patch` a free-form
/// custom tool.
fn codex_rollout(failing: usize, same_edit: bool) -> String {
    let item = |payload: String| {
        format!(r#"{{"timestamp":"2026-12-06T10:00:00Z","type":"response_item","payload":{payload}}}"#)
    };
    let mut lines = vec![
        r#"{"timestamp":"2026-12-06T10:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/repo","originator":"codex_cli_rs"}}"#.to_string(),
    ];
    for i in 0..=failing + 1 {
        if i > 0 {
            let patch = format!(
                "*** Begin Patch\n*** Update File: src/dates.rs\n@@\n-v0\n+{}\n*** End Patch",
                edit_text(i, same_edit)
            );
            lines.push(item(format!(
                r#"{{"type":"custom_tool_call","name":"apply_patch","call_id":"p{i}","input":{}}}"#,
                json(&patch)
            )));
            lines.push(item(format!(
                r#"{{"type":"custom_tool_call_output","call_id":"p{i}","output":"Success. Updated the following files:\nM src/dates.rs"}}"#
            )));
        }
        lines.push(item(format!(
            r#"{{"type":"function_call","name":"shell","call_id":"s{i}","arguments":{}}}"#,
            json(r#"{"command":["bash","-lc","cargo test dates"]}"#)
        )));
        let output = if passes(i, failing) {
            "test result: ok. 1 passed"
        } else {
            FAIL
        };
        lines.push(item(format!(
            r#"{{"type":"function_call_output","call_id":"s{i}","output":{}}}"#,
            json(output)
        )));
    }
    lines.join("\n")
}

#[test]
fn a_codex_edit_then_test_rollout_completes_under_recommended() {
    completes_under_recommended(codex_rollout, Format::Responses, r#"{"apply_patch":"write"}"#);
}

#[test]
fn a_codex_rollout_reapplying_the_same_patch_is_still_blocked() {
    same_edit_still_blocked(codex_rollout);
}

#[test]
fn the_rounds_json_of_an_imported_log_keeps_the_effects_it_read() {
    // What the npm package and the playground get back from an import.
    let (transcript, _) = import(&gemini_cli_stream(1, false));
    assert!(transcript
        .to_json()
        .contains(r#""loopEffects":{"replace":"write","write_file":"write"}"#));
}
