//! The coding agents' own session logs (issue 16): Gemini CLI (stream-json
//! and saved chats), OpenHands (event lists and `output.jsonl`), Cline /
//! Roo Code (`ui_messages.json`, `api_conversation_history.json`), pi
//! sessions and mini-swe-agent's `mswea_bash_command` fence, each on a
//! fixture written from the format's documentation or source (not copied
//! from a real session): the format detected, every call with its result,
//! failures, the verdicts of a replay, and tokens where the log has them.
//! Then the files that are not transcripts: one clear error each, never a
//! silent zero.

use doom_loop::json::to_json;
use doom_loop_trace::import::{import_bytes, Format, ImportedRun};
use doom_loop_trace::replay::Transcript;

mod common;
use common::{actions, fixture, single, summary};

fn runs(name: &str) -> Vec<ImportedRun> {
    import_bytes(&fixture(name), name)
}

fn tokens(transcript: &Transcript) -> Vec<Option<f64>> {
    transcript.rounds.iter().map(|r| r.tokens).collect()
}

struct Case {
    file: &'static str,
    format: Format,
    rounds: &'static [&'static str],
    actions: &'static [&'static str],
    tokens: &'static [Option<f64>],
}

const CASES: &[Case] = &[
    Case {
        file: "gemini-cli-stream.jsonl",
        format: Format::GeminiCli,
        rounds: &[
            r#"text; run_shell_command {"command":"npm test"} => "1 failing: parses dates" failed"#,
            r#"read_file {"absolute_path":"/repo/src/date.js"} => "export function parse(s) {}" | read_file {"absolute_path":"/repo/test/date.test.js"} => "test('parses dates')""#,
            r#"run_shell_command {"command":"npm test"} => "1 failing: parses dates" failed"#,
            r#"run_shell_command {"command":"npm test"} => "1 failing: parses dates" failed"#,
            "text; ",
        ],
        actions: &["-", "-", "-", "observe", "block"],
        tokens: &[None, None, None, None, None],
    },
    Case {
        file: "gemini-cli-chat.json",
        format: Format::GeminiCliChat,
        rounds: &[
            r#"text; read_file {"absolute_path":"/repo/config.yaml"} => {"error":"File not found: /repo/config.yaml"} failed"#,
            r#"read_file {"absolute_path":"/repo/config.yaml"} => {"error":"File not found: /repo/config.yaml"} failed"#,
            r#"read_file {"absolute_path":"/repo/config.yaml"} => {"error":"File not found: /repo/config.yaml"} failed"#,
            "text; ",
        ],
        actions: &["-", "observe", "block"],
        tokens: &[Some(1250.0), Some(1330.0), Some(1430.0), Some(1512.0)],
    },
    Case {
        file: "openhands-events.json",
        format: Format::OpenHands,
        rounds: &[
            r#"text; execute_bash {"command":"pytest -q"} => "F.\n1 failed, 1 passed" failed"#,
            r#"str_replace_editor {"command":"view","path":"/workspace/app.py"} => "def add(a, b):\n    return a - b" | str_replace_editor {"command":"view","path":"/workspace/test_app.py"} => "def test_add():\n    assert add(1, 2) == 3""#,
            r#"text; execute_bash {"command":"pytest -q"} => "F.\n1 failed, 1 passed" failed"#,
            r#"execute_bash {"command":"pytest -q"} => "F.\n1 failed, 1 passed" failed"#,
            "text; ",
        ],
        actions: &["-", "-", "-", "observe", "block"],
        tokens: &[None, None, None, None, None],
    },
    Case {
        file: "cline-ui-messages.json",
        format: Format::ClineUi,
        rounds: &[
            r#"text; execute_command {"command":"npm run build"} => "error TS2304: Cannot find name 'Foo'.""#,
            r#"readFile {"tool":"readFile","path":"src/index.ts","content":"/repo/src/index.ts","operationIsLocatedInWorkspace":true} => ?"#,
            r#"execute_command {"command":"npm run build"} => "error TS2304: Cannot find name 'Foo'.""#,
            r#"execute_command {"command":"npm run build"} => "error TS2304: Cannot find name 'Foo'.""#,
            r#"search_issues {"q":"TS2304 Foo"} => "[]""#,
        ],
        actions: &["-", "-", "observe", "block", "-"],
        tokens: &[Some(960.0), Some(1140.0), Some(1530.0), Some(1630.0), Some(1730.0)],
    },
    Case {
        file: "cline-api-history.json",
        format: Format::ClineHistory,
        rounds: &[
            r#"text; read_file {"path":"src/parser.ts"} => "export const parse = (s: string) => s.split(',');""#,
            r#"text; execute_command {"command":"npm test -- parser","requires_approval":"false"} => "Command executed.\nOutput:\nFAIL test/parser.test.ts""#,
            r#"text; execute_command {"command":"npm test -- parser","requires_approval":"false"} => "Command executed.\nOutput:\nFAIL test/parser.test.ts""#,
            r#"text; read_file {"path":"test/parser.test.ts"} => "The tool execution failed with the following error:\n<error>\nError reading file: ENOENT\n</error>" failed"#,
            r#"text; attempt_completion {"result":"The test file is missing."} => ?"#,
        ],
        actions: &["-", "-", "observe", "-", "-"],
        tokens: &[None, None, None, None, None],
    },
    Case {
        file: "pi-session.jsonl",
        format: Format::Pi,
        rounds: &[
            r#"bash {"command":"grep -rn TODO src"} => "grep: src: No such file or directory" failed"#,
            r##"text; bash {"command":"grep -rn TODO lib"} => "lib/a.js:3: // TODO: cache" | read {"path":"README.md"} => "# Project""##,
            "text; ",
        ],
        actions: &["-", "-", "-"],
        tokens: &[Some(830.0), Some(990.0), Some(1012.0)],
    },
    Case {
        file: "mini-swe-agent-mswea.traj.json",
        format: Format::MiniSweAgent,
        rounds: &[
            r#"text; bash {"command":"python -m pytest -q"} => "<returncode>1</returncode>\n<output>\n1 failed\n</output>" failed"#,
            r#"text; bash {"command":"python -m pytest -q"} => "<returncode>1</returncode>\n<output>\n1 failed\n</output>" failed"#,
            r#"text; bash {"command":"python -m pytest -q"} => "<returncode>1</returncode>\n<output>\n1 failed\n</output>" failed"#,
        ],
        actions: &["-", "observe", "block"],
        tokens: &[None, None, None],
    },
];

#[test]
fn every_coding_agent_log_reads_its_calls_results_failures_and_tokens() {
    for case in CASES {
        let run = single(case.file);
        let transcript = run.transcript.as_ref().unwrap_or_else(|e| panic!("{}: {e}", case.file));
        assert_eq!(run.format, Some(case.format), "{}", case.file);
        assert_eq!(summary(transcript), case.rounds, "{}", case.file);
        assert_eq!(actions(transcript), case.actions, "{}", case.file);
        assert_eq!(tokens(transcript), case.tokens, "{}", case.file);
    }
}

#[test]
fn an_openhands_output_jsonl_is_a_run_per_line_pairs_included() {
    let all = runs("openhands/output.jsonl");
    let ids: Vec<&str> = all.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["demo__demo-1", "demo__demo-2"]);
    for run in &all {
        assert_eq!(run.format, Some(Format::OpenHands), "{}", run.id);
    }
    let pairs = all[1].transcript.as_ref().unwrap();
    assert_eq!(
        summary(pairs),
        [
            r#"execute_bash {"command":"ls"} => "app.py""#,
            r#"execute_bash {"command":"ls"} => "app.py""#
        ]
        .map(|s| s.replace("execute_bash", "run"))
    );
}

#[test]
fn a_pi_session_is_read_on_the_branch_it_ended_on() {
    // e4/e5 (`ls`) were abandoned when the user branched from e3.
    let run = single("pi-session.jsonl");
    let calls: Vec<String> = run
        .transcript
        .unwrap()
        .rounds
        .iter()
        .flat_map(|r| r.calls.iter().map(|c| to_json(&c.args)))
        .collect();
    assert!(!calls.iter().any(|c| c.contains("\"ls\"")), "{calls:?}");
}

fn error_of(name: &str, bytes: &[u8]) -> String {
    let mut all = import_bytes(bytes, name);
    assert_eq!(all.len(), 1, "{name}: {} runs", all.len());
    all.remove(0)
        .transcript
        .err()
        .map(|e| e.to_string())
        .unwrap_or_else(|| panic!("{name}: imported"))
}

#[test]
fn logs_that_are_not_transcripts_are_one_clear_error() {
    let aider = error_of("aider.chat.history.md", &fixture("aider.chat.history.md"));
    assert!(
        aider.contains("Aider chat history") && aider.contains("no structured tool calls"),
        "{aider}"
    );
    let spans = error_of("otel-spans.json", &fixture("otel-spans.json"));
    assert!(spans.contains("OpenTelemetry span dump"), "{spans}");
    let span_lines = b"{\"name\":\"chat\",\"context\":{\"trace_id\":\"0x1\",\"span_id\":\"0x2\"},\"attributes\":{}}\n{\"name\":\"execute_tool\",\"context\":{\"trace_id\":\"0x1\",\"span_id\":\"0x3\"},\"attributes\":{}}\n";
    let lines = error_of("spans.jsonl", span_lines);
    assert!(lines.contains("OpenTelemetry span dump"), "{lines}");
    let prompts = error_of(
        "logs.json",
        br#"[{"sessionId":"s","messageId":0,"type":"user","message":"hi","timestamp":"t"}]"#,
    );
    assert!(prompts.contains("Gemini CLI prompt log"), "{prompts}");
    let markdown = error_of("notes.md", b"# Notes\n\nsome text\nmore text\n");
    assert!(markdown.contains("Markdown"), "{markdown}");
}

#[test]
fn a_log_with_no_tool_call_is_an_error_naming_what_was_looked_for_never_a_silent_zero() {
    let chat = br#"[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]"#;
    let error = error_of("chat.json", chat);
    assert!(error.contains("no tool call of a known shape"), "{error}");
    assert!(error.contains("Gemini CLI") && error.contains("pi sessions"), "{error}");
    // The rounds format is explicit: text-only rounds replay (text detection).
    let rounds = br#"{"rounds":[{"text":"a"},{"text":"a"}]}"#;
    assert!(import_bytes(rounds, "r.json").remove(0).transcript.is_ok());
}
