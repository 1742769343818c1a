//! Issue 20 (reliability of the trace tooling): each finding of the third
//! adversarial round has a named test here — the directory walk that
//! cannot loop or hang, bounded work per input, `eval` that never loses
//! runs, keyed lookups (timed as ratios, generous enough for a busy
//! machine: a quadratic path is ~8× over its bound), and the low items.
//! The JS halves (trap guard per entry, Node's gunzip limit, the npm CLI)
//! are in tests/js/trace-reliability.test.mjs; what the command makes of
//! the same inputs is in cli/tests/reliability.rs.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use doom_loop_trace::eval::{EvalOption, Evaluation, MAX_LISTED_FAILURES};
use doom_loop_trace::import::{for_each_run, import_bytes, import_single, import_text, walk, Skipped, ACCEPTED_SHAPES};

const RUN: &str = r#"{"rounds":[{"calls":[{"toolName":"t","args":{}}]}]}"#;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("doomloop-reliability-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn evaluate(path: &Path) -> Evaluation {
    let mut evaluation = Evaluation::new(vec![EvalOption::defaults()]);
    evaluation.add_path(path);
    evaluation
}

fn runs_and_failed(evaluation: &Evaluation) -> (usize, usize) {
    let total = &evaluation.report().options[0].total;
    (total.runs, total.failed)
}

#[cfg(unix)]
#[test]
fn eval_symlink_loops_directory_links_are_not_followed() {
    let dir = temp_dir("links");
    std::fs::write(dir.join("a.json"), RUN).unwrap();
    std::os::unix::fs::symlink(".", dir.join("l1")).unwrap();
    std::os::unix::fs::symlink(".", dir.join("l2")).unwrap();
    let found = walk(&dir).unwrap();
    assert_eq!(found.files, [dir.join("a.json")]);
    assert_eq!(
        found.skipped,
        [
            (dir.join("l1"), Skipped::DirectoryLink),
            (dir.join("l2"), Skipped::DirectoryLink)
        ]
    );
    let evaluation = evaluate(&dir);
    assert_eq!(runs_and_failed(&evaluation), (1, 0));
    let warnings = evaluation.warnings();
    assert_eq!(warnings.len(), 2);
    assert!(
        warnings[0].ends_with("l1: skipped, a link to a directory (directory links are not followed)"),
        "{warnings:?}"
    );
    // A link named on the command line is followed: the user chose it.
    let named = temp_dir("named-link");
    std::os::unix::fs::symlink(&dir, named.join("runs")).unwrap();
    assert_eq!(runs_and_failed(&evaluate(&named.join("runs"))), (1, 0));
}

#[cfg(unix)]
#[test]
fn eval_special_files_fifos_and_devices_are_skipped_with_a_warning() {
    let dir = temp_dir("special");
    std::fs::write(dir.join("a.json"), RUN).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe.json"))
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.json")).unwrap();
    let evaluation = evaluate(&dir);
    assert_eq!(runs_and_failed(&evaluation), (1, 0));
    let warnings = evaluation.warnings();
    assert!(
        warnings[0].ends_with("pipe.json: skipped, not a regular file (a FIFO)"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].ends_with("zero.json: skipped, not a regular file (a device)"),
        "{warnings:?}"
    );
}

#[cfg(unix)]
#[test]
fn eval_one_unreadable_file_is_a_failed_run_and_the_others_are_evaluated() {
    let dir = temp_dir("unreadable");
    for i in 1..=3 {
        std::fs::write(dir.join(format!("run{i}.json")), RUN).unwrap();
    }
    std::os::unix::fs::symlink(dir.join("gone.json"), dir.join("stale.json")).unwrap();
    let evaluation = evaluate(&dir);
    assert_eq!(runs_and_failed(&evaluation), (3, 1));
    let report = evaluation.report();
    assert!(
        report.failures[0]
            .error
            .contains("stale.json: No such file or directory"),
        "{:?}",
        report.failures
    );
}

#[test]
fn eval_failure_amplification_is_capped_and_the_shapes_said_once_per_file() {
    let text = "[]\n".repeat(20_000);
    let mut evaluation = Evaluation::new(vec![EvalOption::defaults()]);
    assert_eq!(evaluation.add_bytes(text.as_bytes(), "empties.jsonl"), 20_000);
    let report = evaluation.report();
    assert_eq!(report.options[0].total.failed, 20_000);
    assert_eq!(report.failures.len(), MAX_LISTED_FAILURES);
    assert_eq!(report.failures_omitted, 20_000 - MAX_LISTED_FAILURES);
    let with_shapes = report
        .failures
        .iter()
        .filter(|f| f.error.contains(ACCEPTED_SHAPES))
        .count();
    assert_eq!(with_shapes, 1, "the accepted shapes are said once per file");
    assert!(
        report.failures[1]
            .error
            .ends_with("(the shapes accepted are listed at empties.jsonl:1)"),
        "{}",
        report.failures[1].error
    );
    let rendered = report.render();
    assert!(rendered.len() < 20_000, "{} bytes", rendered.len());
    assert!(rendered.contains("20000 run(s) failed (the first 100 listed):"));
    assert!(report.to_json().contains("\"failuresOmitted\":19900"));
}

/// A reader that hands out its bytes in small pieces and counts them.
struct Trickle<'a> {
    bytes: &'a [u8],
    read: std::rc::Rc<std::cell::Cell<usize>>,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(64).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        self.read.set(self.read.get() + n);
        Ok(n)
    }
}

#[test]
fn eval_holds_every_file_no_more_runs_stream_one_at_a_time() {
    let text = format!("{RUN}\n").repeat(2_000);
    let read = std::rc::Rc::new(std::cell::Cell::new(0));
    let mut first_seen_after = None;
    let mut count = 0;
    for_each_run(
        Trickle {
            bytes: text.as_bytes(),
            read: read.clone(),
        },
        "runs.jsonl",
        &mut |run| {
            assert!(run.transcript.is_ok());
            count += 1;
            first_seen_after.get_or_insert(read.get());
        },
    );
    assert_eq!(count, 2_000);
    let first = first_seen_after.unwrap();
    assert!(
        first < 200_000,
        "the first run arrived after {first} of {} bytes",
        text.len()
    );
    // A folder is evaluated a file at a time: add_path streams each file.
    let dir = temp_dir("stream");
    for i in 0..4 {
        std::fs::write(dir.join(format!("part{i}.jsonl")), format!("{RUN}\n").repeat(200)).unwrap();
    }
    assert_eq!(runs_and_failed(&evaluate(&dir)), (800, 0));
}

#[test]
fn jsonl_header_line_is_one_failed_entry_and_every_run_is_read() {
    let text = format!(
        "{{\"version\":1,\"generator\":\"my-harness\"}}\n{}",
        format!("{RUN}\n").repeat(5)
    );
    let runs = import_text(&text, "runs.jsonl");
    assert_eq!(runs.len(), 6);
    let header = runs[0].transcript.as_ref().unwrap_err().to_string();
    assert!(
        header.starts_with("runs.jsonl:1: not a run (an object with keys version, generator)"),
        "{header}"
    );
    assert!(runs[1..].iter().all(|r| r.transcript.is_ok()));
    assert_eq!(runs[5].place, "runs.jsonl:6");
}

#[test]
fn truncated_pretty_json_is_one_error_not_a_run_per_line() {
    let rounds: Vec<String> = (0..300)
        .map(|i| format!("    {{\n      \"calls\": [{{\"toolName\": \"t\", \"args\": {{\"i\": {i}}}}}]\n    }}"))
        .collect();
    let document = format!("{{\n  \"rounds\": [\n{}\n  ]\n}}\n", rounds.join(",\n"));
    let cut = &document[..document.len() - 20];
    let runs = import_text(cut, "run.json");
    assert_eq!(runs.len(), 1);
    let error = import_single(cut.as_bytes(), "run.json").unwrap_err().to_string();
    assert!(
        error.starts_with("run.json: not valid JSON, nor JSON Lines: Unexpected end of JSON input"),
        "{error}"
    );
    // The whole document still reads.
    assert!(import_single(document.as_bytes(), "run.json").is_ok());
}

#[test]
fn jsonl_one_bad_byte_loses_only_its_line() {
    let good = format!("{RUN}\n");
    let mut bytes = good.repeat(500).into_bytes();
    bytes.extend_from_slice(b"{\"rounds\":[{\"calls\":[{\"toolName\":\"t\xff\",\"args\":{}}]}]}\n");
    bytes.extend_from_slice(good.repeat(499).as_bytes());
    let runs = import_bytes(&bytes, "runs.jsonl");
    assert_eq!(runs.iter().filter(|r| r.transcript.is_ok()).count(), 999);
    let bad: Vec<String> = runs
        .iter()
        .filter_map(|r| r.transcript.as_ref().err())
        .map(|e| e.to_string())
        .collect();
    assert_eq!(bad, ["runs.jsonl:501: not UTF-8 text (byte 35 of the line)"]);
}

#[test]
fn jsonl_message_lines_bad_line_is_skipped_counted_and_named() {
    let text = [
        r#"{"role":"user","content":"hi"}"#,
        r#"{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"a","arguments":"{}"}}]}"#,
        r#"{"role":"tool","tool_call_id":"1","content":"ok""#,
        r#"{"role":"assistant","tool_calls":[{"id":"2","type":"function","function":{"name":"a","arguments":"{}"}}]}"#,
    ]
    .join("\n");
    let runs = import_text(&text, "chat.jsonl");
    assert_eq!(runs.len(), 1);
    let transcript = runs[0].transcript.as_ref().unwrap();
    assert_eq!(transcript.rounds.len(), 2, "the lines after the bad one are read");
    assert_eq!(runs[0].warnings.len(), 1, "{:?}", runs[0].warnings);
    assert!(
        runs[0].warnings[0].starts_with("chat.jsonl: 1 line(s) skipped, not read: chat.jsonl:3 (not valid JSON"),
        "{:?}",
        runs[0].warnings
    );
    // A file whose lines are not JSON at all: one clear error.
    let notes = import_text("just some\nnotes, not\na trace\n", "notes.jsonl");
    assert_eq!(notes.len(), 1);
    let error = notes[0].transcript.as_ref().unwrap_err().to_string();
    assert!(
        error.starts_with("notes.jsonl: not valid JSON, nor JSON Lines"),
        "{error}"
    );
}

#[test]
fn mixed_format_calls_dropped_no_more_silently() {
    let text = [
        r#"{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"chat_tool","arguments":"{}"}}]}"#,
        r#"{"type":"function_call","name":"responses_tool","arguments":"{}","call_id":"c"}"#,
        r#"{"role":"assistant","content":[{"type":"tool_use","id":"u","name":"anthropic_tool","input":{}}]}"#,
    ]
    .join("\n");
    let runs = import_text(&text, "mixed.jsonl");
    assert_eq!(runs[0].warnings.len(), 1, "{:?}", runs[0].warnings);
    assert_eq!(
        runs[0].warnings[0],
        "read as anthropic, but 2 message(s) carry calls or results of another format (the first, mixed.jsonl:1, openai-chat): they are not read"
    );
}

/// Claude Code writes one log line per content block of an assistant
/// message, and the message object inside says `"type": "message"`: a line
/// holding only a thinking (or text) block carries no call of any format,
/// so reading the log as Anthropic loses nothing and says nothing.
#[test]
fn claude_code_thinking_only_line_is_no_call_of_another_format() {
    let line = |kind: &str, uuid: &str, message: &str| {
        format!(r#"{{"type":"{kind}","uuid":"{uuid}","sessionId":"thinking-test","message":{message}}}"#)
    };
    let assistant = |content: &str| {
        format!(r#"{{"id":"msg_a","type":"message","role":"assistant","model":"m","content":[{content}]}}"#)
    };
    let text = [
        line("user", "1", r#"{"role":"user","content":"run the tests"}"#),
        line(
            "assistant",
            "2",
            &assistant(r#"{"type":"thinking","thinking":"the tests first","signature":"sig"}"#),
        ),
        line("assistant", "3", &assistant(r#"{"type":"text","text":"Running them."}"#)),
        line(
            "assistant",
            "4",
            &assistant(r#"{"type":"tool_use","id":"toolu_t1","name":"Bash","input":{"command":"cargo test"}}"#),
        ),
        line(
            "user",
            "5",
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_t1","content":"1 failed","is_error":true}]}"#,
        ),
    ]
    .join("\n");
    let runs = import_text(&text, "session.jsonl");
    assert_eq!(runs.len(), 1);
    assert!(runs[0].warnings.is_empty(), "{:?}", runs[0].warnings);
    let transcript = runs[0].transcript.as_ref().unwrap();
    let calls: Vec<_> = transcript.rounds.iter().flat_map(|r| &r.calls).collect();
    assert_eq!(calls.len(), 1);
    assert!(calls[0].result.is_some(), "the call's result is read");
}

#[test]
fn null_is_described_as_null_never_a_object() {
    for (document, expected) in [
        (r#"{"rounds":[null]}"#, "rounds[0]: a round is an object, not null"),
        (r#"{"trajectory":[null]}"#, "a step is an object, not null"),
        ("null", "unrecognised trace shape (null)"),
        (r#"{"messages":[null]}"#, "the first null"),
        (r#"{"rounds":[[1]]}"#, "a round is an object, not an array"),
    ] {
        let error = import_single(document.as_bytes(), "t.json").unwrap_err().to_string();
        assert!(error.contains(expected), "{document}: {error}");
        assert!(!error.contains("a object"), "{document}: {error}");
    }
}

/// Seconds for `f(n)`.
fn seconds(f: &dyn Fn(usize), n: usize) -> f64 {
    let start = Instant::now();
    f(n);
    start.elapsed().as_secs_f64()
}

/// `f(8n) / f(n)` stays near 8 for linear work (quadratic: ~64). Measured
/// up to three times, the best ratio kept: a busy machine slows one side.
fn assert_linear(what: &str, f: &dyn Fn(usize), n: usize) {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let small = seconds(f, n).max(1e-3);
        let large = seconds(f, 8 * n);
        best = best.min(large / small);
        if best < 24.0 {
            return;
        }
    }
    panic!("{what}: 8x the input took {best:.1}x the time");
}

#[test]
fn eval_quadratic_sources_no_more_sources_are_keyed() {
    let run = |n: usize| {
        let text: String = (0..n)
            .map(|i| format!("{{\"source\":\"s{i}\",\"rounds\":[]}}\n"))
            .collect();
        let mut evaluation = Evaluation::new(vec![EvalOption::defaults()]);
        evaluation.add_bytes(text.as_bytes(), "many.jsonl");
        assert_eq!(evaluation.report().options[0].sources.len(), n);
    };
    assert_linear("distinct sources", &run, 1_500);
}

#[test]
fn import_result_matching_quadratic_no_more_results_matched_by_key() {
    let run = |n: usize| {
        let calls: Vec<String> = (0..n)
            .map(|i| {
                format!(r#"{{"id":"c{i}","type":"function","function":{{"name":"t","arguments":"{{\"i\":{i}}}"}}}}"#)
            })
            .collect();
        let results: Vec<String> = (0..n)
            .map(|i| format!(r#",{{"role":"tool","tool_call_id":"c{i}","content":"r"}}"#))
            .collect();
        let unnamed: Vec<String> = (0..n)
            .map(|_| r#",{"role":"tool","content":"r"}"#.to_string())
            .collect();
        for tail in [results, unnamed] {
            let text = format!(
                r#"{{"messages":[{{"role":"assistant","tool_calls":[{}]}}{}]}}"#,
                calls.join(","),
                tail.concat()
            );
            let transcript = import_single(text.as_bytes(), "calls.json").unwrap();
            assert!(transcript.rounds[0].calls.iter().all(|c| c.result.is_some()));
        }
    };
    assert_linear("result matching", &run, 1_000);
}

/// Fuzz finding (import_bytes, CI 2026-12-02): a pi session whose messages
/// carry calls of another format asked for the line of each message, but a
/// pi session's messages are rebuilt from its entries and have none — an
/// index out of bounds. The warning now names the message's position.
#[test]
fn regression_pi_session_with_calls_of_another_format_warns_instead_of_panicking() {
    let bytes =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi-session-mixed-formats.jsonl"))
            .unwrap();
    let runs = import_bytes(&bytes, "pi.jsonl");
    assert_eq!(runs.len(), 1);
    let warnings = &runs[0].warnings;
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("another format") && w.contains("pi.jsonl, message ")),
        "{warnings:?}"
    );
}
