//! The importers, on small fixtures written from each format's public
//! documentation (trace/tests/fixtures/): the format detected, the rounds
//! and calls read, each call's result matched to it, failed calls, and the
//! verdicts of a replay. Then the errors: unrecognised shapes name the
//! shapes accepted, malformed input names its place.

use std::io::Write;

use doom_loop::json::{parse, to_json, Value};
use doom_loop_trace::import::{import_bytes, import_detected, import_single, import_text, Format};

mod common;
use common::{actions, fixture, single, summary};

struct Case {
    file: &'static str,
    format: Format,
    rounds: &'static [&'static str],
    actions: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        file: "openai-chat.json",
        format: Format::OpenAiChat,
        rounds: &[
            r#"get_invoice {"id":"INV-7"} => "{\"id\":\"INV-7\",\"status\":\"paid\"}""#,
            r#"text; refund {"id":"INV-7"} => "error: gateway timeout" | notify {"to":"user"} => "sent""#,
            r#"refund {"id":"INV-7"} => "error: gateway timeout""#,
            r#"refund {"id":"INV-7"} => "error: gateway timeout""#,
            "text; ",
        ],
        actions: &["-", "-", "-", "observe", "block"],
    },
    Case {
        file: "responses.json",
        format: Format::Responses,
        rounds: &[
            r#"get_weather {"city":"Paris"} => "18C, cloudy""#,
            r#"text; get_weather {"city":"Paris"} => "18C, cloudy""#,
            r#"get_weather {"city":"Paris"} => "18C, cloudy""#,
        ],
        actions: &["-", "observe", "block"],
    },
    Case {
        file: "anthropic.json",
        format: Format::Anthropic,
        rounds: &[
            r#"text; bash {"command":"pytest -q"} => "1 failed" failed"#,
            r#"str_replace_based_edit_tool {"command":"str_replace","path":"a.py","old_str":"x","new_str":"y"} => "edited""#,
            r#"bash {"command":"pytest -q"} => "all passed""#,
            "text; ",
        ],
        actions: &["-", "-", "observe"],
    },
    Case {
        file: "gemini.json",
        format: Format::Gemini,
        rounds: &[
            r#"search_flights {"from":"SFO","to":"JFK"} => {"output":["UA 1","DL 2"]}"#,
            r#"book {"flight":"UA 1"} => {"error":"seat unavailable"} failed | search_flights {"from":"SFO","to":"JFK"} => {"output":["UA 1"]}"#,
            "text; ",
        ],
        actions: &["-", "-", "observe"],
    },
    Case {
        file: "swe-agent.traj",
        format: Format::SweAgent,
        rounds: &[
            r#"text; bash {"command":"open src/app.py"} => "[File: src/app.py (400 lines total)]\n1:import os""#,
            r#"text; bash {"command":"scroll_down"} => "[File: src/app.py (400 lines total)]\n101:def main():""#,
            r#"text; bash {"command":"scroll_down"} => "[File: src/app.py (400 lines total)]\n201:    return 0""#,
            "",
            r#"text; bash {"command":"scroll_down"} => "[File: src/app.py (400 lines total)]\n301:# end""#,
        ],
        actions: &["-", "-", "observe", "block"],
    },
    Case {
        file: "mini-swe-agent.traj.json",
        format: Format::MiniSweAgent,
        rounds: &[
            r#"text; bash {"command":"cat src/parser.py | head -n 40"} => "<returncode>0</returncode>\n<output>\ndef parse(text):\n</output>""#,
            "text; ",
            r#"text; bash {"command":"python -m pytest tests/test_parser.py -q"} => "<returncode>1</returncode>\n<output>\n1 failed in 0.12s\n</output>" failed"#,
            "text; ",
            r#"text; bash {"command":"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"} => ?"#,
        ],
        actions: &["-", "-", "-"],
    },
    Case {
        file: "chat-messages.jsonl",
        format: Format::OpenAiChat,
        rounds: &[
            r#"job_status {"job":42} => "running 10%""#,
            r#"job_status {"job":42} => "running 60%""#,
            r#"job_status {"job":42} => "done""#,
        ],
        actions: &["-", "observe", "block"],
    },
    Case {
        file: "claude-code-session.jsonl",
        format: Format::Anthropic,
        rounds: &[r#"text; Bash {"command":"ls"} => "README.md\nsrc""#, "text; "],
        actions: &["-"],
    },
];

#[test]
fn every_format_reads_its_calls_results_and_failures() {
    for case in CASES {
        let run = single(case.file);
        let transcript = run.transcript.as_ref().unwrap_or_else(|e| panic!("{}: {e}", case.file));
        assert_eq!(run.format, Some(case.format), "{}", case.file);
        assert_eq!(summary(transcript), case.rounds, "{}", case.file);
        assert_eq!(actions(transcript), case.actions, "{}", case.file);
    }
}

#[test]
fn a_run_per_line_keeps_each_runs_source_id_and_label() {
    let runs = import_bytes(&fixture("runs.jsonl"), "dir/runs.jsonl");
    let meta: Vec<(String, String, Option<bool>, String)> = runs
        .iter()
        .map(|r| (r.source.clone(), r.id.clone(), r.resolved, r.place.clone()))
        .collect();
    assert_eq!(
        meta,
        [
            ("demo".into(), "paging".into(), Some(true), "dir/runs.jsonl:1".into()),
            (
                "demo".into(),
                "same-edit".into(),
                Some(false),
                "dir/runs.jsonl:2".into()
            ),
            ("runs".into(), "tau".into(), Some(true), "dir/runs.jsonl:3".into()),
        ]
    );
    assert_eq!(
        runs[0].transcript.as_ref().unwrap().rounds[2].calls[0].result,
        Some(Value::String("a3/b3".into()))
    );
    assert_eq!(runs[2].format, Some(Format::OpenAiChat));
}

#[test]
fn gzip_is_read_by_its_magic_bytes() {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(&fixture("runs.jsonl")).unwrap();
    let gz = encoder.finish().unwrap();
    let runs = import_bytes(&gz, "runs.jsonl.gz");
    assert_eq!(runs.len(), 3);
    assert!(runs.iter().all(|r| r.transcript.is_ok()));
    assert_eq!(runs[1].source, "demo");
    // Cut short: the runs before the cut are still read, the cut is a
    // failed entry naming the file (issue 20: eval never loses runs).
    let truncated = import_bytes(&gz[..gz.len() / 2], "cut.jsonl.gz");
    let error = truncated.last().unwrap().transcript.as_ref().unwrap_err().to_string();
    assert!(
        error.starts_with("cut.jsonl.gz") && error.contains(": gzip:"),
        "{error}"
    );
}

#[test]
fn a_tau_bench_results_file_is_a_list_of_runs_labelled_by_reward() {
    let runs = import_bytes(&fixture("tau-bench-results.json"), "gpt-4o-airline.json");
    let meta: Vec<(&str, Option<bool>, &str)> = runs
        .iter()
        .map(|r| (r.id.as_str(), r.resolved, r.place.as_str()))
        .collect();
    assert_eq!(
        meta,
        [
            ("task0-trial0", Some(false), "gpt-4o-airline.json[0]"),
            ("task1-trial0", Some(true), "gpt-4o-airline.json[1]")
        ]
    );
    let first = runs[0].transcript.as_ref().unwrap();
    assert_eq!(
        first.rounds[0].calls[0].result,
        Some(Value::String("Error: reservation not found".into()))
    );
    let error = import_single(&fixture("tau-bench-results.json"), "r.json").unwrap_err();
    assert!(error.to_string().contains("holds 2 runs"), "{error}");
}

fn error_of(json: &str) -> String {
    match import_detected(&parse(json).unwrap()) {
        Ok((format, _)) => panic!("{json} read as {format:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn shapes_that_used_to_replay_as_zero_rounds_are_read_or_named() {
    // An Anthropic tool_use list and a Gemini functionCall list are read.
    let anthropic = r#"[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]}]"#;
    let (format, transcript) = import_detected(&parse(anthropic).unwrap()).unwrap();
    assert_eq!((format, transcript.rounds.len()), (Format::Anthropic, 1));
    let gemini = r#"[{"role":"model","parts":[{"functionCall":{"name":"t","args":{}}}]}]"#;
    let (format, transcript) = import_detected(&parse(gemini).unwrap()).unwrap();
    assert_eq!((format, transcript.rounds.len()), (Format::Gemini, 1));
    // A list of runs is named as such, not replayed as one empty run.
    let error = error_of(r#"[{"task_id":1,"reward":0,"traj":[]}]"#);
    assert!(error.contains("list of 1 runs"), "{error}");
    // Anything else names what it found and what is accepted.
    for json in [
        r#"{"foo":[1,2]}"#,
        r#"[1,2,3]"#,
        r#"[{"a":1}]"#,
        r#""text""#,
        "[]",
        "{}",
    ] {
        let error = error_of(json);
        assert!(error.contains("unrecognised trace shape"), "{json}: {error}");
        assert!(
            error.contains("SWE-agent") && error.contains("Gemini"),
            "{json}: {error}"
        );
    }
    // A recognised shape with no assistant turn is an error, not 0 rounds.
    let error = error_of(r#"[{"role":"user","content":"hi"}]"#);
    assert!(error.contains("no assistant turn"), "{error}");
}

#[test]
fn malformed_input_names_its_place() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"1","function":{}}]}]}"#,
            "messages[1]: tool_calls[0] has no function `name`",
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"tool_use","id":"a","input":{}}]}]"#,
            "messages[0]: content[0]: a tool_use block has no `name`",
        ),
        (
            r#"{"contents":[{"role":"model","parts":[{"text":"a"}]},{"role":"model","parts":[{"functionCall":{"args":{}}}]}]}"#,
            "contents[1]: parts[0]: a functionCall has no `name`",
        ),
        (
            r#"{"trajectory":[{"action":"ls"},{"action":5}]}"#,
            "trajectory[1]: `action` is a number, not a string",
        ),
        (
            r#"{"trajectory":[3]}"#,
            "trajectory[0]: a step is an object, not a number",
        ),
        (
            r#"{"input":[{"type":"function_call","arguments":"{}"}]}"#,
            "items[0]: a function_call has no `name`",
        ),
        (
            r#"{"rounds":[{"calls":[{"args":{}}]}]}"#,
            "rounds[0]: calls[0] has no `toolName`",
        ),
        (r#"{"rounds":[7]}"#, "rounds[0]: a round is an object, not a number"),
    ];
    for (json, expected) in cases {
        assert_eq!(error_of(json), *expected, "{json}");
    }
    let runs = import_text("{\"rounds\":[]}\n{\"rounds\":[{\"calls\":{}}]}\n{\"rounds\"", "x.jsonl");
    let errors: Vec<String> = runs
        .iter()
        .filter_map(|r| r.transcript.as_ref().err().map(|e| e.to_string()))
        .collect();
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0], "x.jsonl:2: rounds[0]: `calls` is not an array");
    assert!(errors[1].starts_with("x.jsonl:3: not valid JSON"), "{}", errors[1]);
    let error = import_single(b"{\"rounds\": [", "t.json").unwrap_err().to_string();
    assert!(error.starts_with("t.json: not valid JSON"), "{error}");
    let error = import_single(&[0x7b, 0xff, 0x7d], "bin.json").unwrap_err().to_string();
    assert_eq!(error, "bin.json: not UTF-8 text (byte 1)");
}

#[test]
fn mini_swe_agent_bash_blocks_follow_its_action_regex() {
    use doom_loop_trace::import::mini_swe::bash_blocks;
    assert_eq!(bash_blocks("```bash\nls\n```"), ["ls"]);
    assert_eq!(bash_blocks("```bash  \n\n  ls -a \n```"), ["ls -a"]);
    assert!(bash_blocks("```bash ls\n```").is_empty(), "the fence needs a newline");
    assert!(
        bash_blocks("```bash\nls```").is_empty(),
        "the closing fence starts a line"
    );
    assert_eq!(
        bash_blocks("```bash\n\n```"),
        [""],
        "an empty block matches through the backtracking newline"
    );
    assert_eq!(bash_blocks("```bash\na\n```\n```bash\nb\n```"), ["a", "b"]);
    assert_eq!(bash_blocks("```python\nx\n```"), Vec::<&str>::new());
}

#[test]
fn a_list_wrapped_as_doomloop_and_messages_keeps_its_format_and_option() {
    let gemini = String::from_utf8(fixture("gemini.json")).unwrap();
    let contents = gemini
        .trim()
        .strip_prefix("{\n  \"contents\": ")
        .unwrap()
        .strip_suffix('}')
        .unwrap();
    let wrapped = format!(r#"{{"doomLoop":{{"ladder":{{"block":2}}}},"messages":{contents}}}"#);
    let (format, transcript) = import_detected(&parse(&wrapped).unwrap()).unwrap();
    assert_eq!(format, Format::Gemini);
    assert_eq!(transcript.rounds.len(), 3);
    assert_eq!(to_json(&transcript.option), r#"{"ladder":{"block":2}}"#);
}

#[test]
fn hostile_and_odd_input_is_an_error_with_its_place_or_read_as_text() {
    // Nesting past the parser's limit, on line 2 of a run-per-line file.
    let deep = format!("{{\"rounds\":[]}}\n{}{}\n", "[".repeat(5000), "]".repeat(5000));
    let runs = import_text(&deep, "deep.jsonl");
    assert_eq!(runs.len(), 2);
    let error = runs[1].transcript.as_ref().unwrap_err().to_string();
    assert!(
        error.starts_with("deep.jsonl:2: not valid JSON: JSON nested deeper than"),
        "{error}"
    );
    // A byte-order mark and CRLF line ends are read as text.
    let crlf = "\u{feff}{\"id\":\"a\",\"rounds\":[]}\r\n{\"id\":\"b\",\"rounds\":[]}\r\n";
    let runs = import_text(crlf, "crlf.jsonl");
    assert_eq!(runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert!(runs.iter().all(|r| r.transcript.is_ok()));
    // Empty and blank input, and a lone scalar.
    for (text, expected) in [
        ("", "empty.json: not valid JSON"),
        ("  \n\n ", "empty.json: not valid JSON"),
    ] {
        let error = import_text(text, "empty.json")[0]
            .transcript
            .as_ref()
            .unwrap_err()
            .to_string();
        assert!(error.starts_with(expected), "{text:?}: {error}");
    }
    let error = import_text("42", "n.json")[0]
        .transcript
        .as_ref()
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("n.json: unrecognised trace shape (a number)"),
        "{error}"
    );
    // A result naming no call is ignored, not an error; a call with no result stays unknown.
    let orphan = r#"[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"t","arguments":"{}"}}]},
                     {"role":"tool","tool_call_id":"zzz","content":"x"},{"role":"tool","tool_call_id":"zzz","content":"y"}]"#;
    let (_, transcript) = import_detected(&parse(orphan).unwrap()).unwrap();
    assert_eq!(
        transcript.rounds[0].calls[0].result,
        Some(Value::String("x".into())),
        "an unmatched id falls back to the oldest unanswered call"
    );
    // Many calls sharing one id: each result answers one call, never panics.
    let many: Vec<String> = (0..200)
        .map(|_| r#"{"role":"assistant","tool_calls":[{"id":"same","function":{"name":"t","arguments":"{}"}}]},{"role":"tool","tool_call_id":"same","content":"r"}"#.to_string())
        .collect();
    let (_, transcript) = import_detected(&parse(&format!("[{}]", many.join(","))).unwrap()).unwrap();
    assert_eq!(transcript.rounds.len(), 200);
    assert!(transcript.rounds.iter().all(|r| r.calls[0].result.is_some()));
}

#[test]
fn a_directory_is_read_file_by_file_and_other_files_are_skipped() {
    let dir = std::env::temp_dir().join(format!("trace-import-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("nested")).unwrap();
    std::fs::write(dir.join("README.md"), "not a trace").unwrap();
    std::fs::write(dir.join(".hidden.json"), "{").unwrap();
    std::fs::write(dir.join("a.jsonl"), fixture("runs.jsonl")).unwrap();
    std::fs::write(dir.join("nested/b.traj"), fixture("swe-agent.traj")).unwrap();
    let runs = doom_loop_trace::import::import_path(&dir);
    let places: Vec<String> = runs
        .iter()
        .map(|r| {
            r.place
                .strip_prefix(&dir.display().to_string())
                .unwrap_or(&r.place)
                .to_string()
        })
        .collect();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(places, ["/a.jsonl:1", "/a.jsonl:2", "/a.jsonl:3", "/nested/b.traj"]);
    assert_eq!(runs[3].source, "b");
    assert_eq!(runs[3].format, Some(Format::SweAgent));
}
