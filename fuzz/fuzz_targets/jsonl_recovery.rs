//! JSON Lines recovery (issue 20): a file of runs with good run lines and,
//! between them, lines that are broken in every way the trial found — a
//! header object, invalid UTF-8, truncated JSON, arbitrary bytes, blank
//! lines — optionally gzipped, is read line by line.
//!
//! Invariants:
//! - never panics;
//! - no run is lost: each non-blank line is exactly one entry, every good
//!   run line imports, and every failed entry names its file and line
//!   (`runs.jsonl:N`);
//! - an evaluation of it keeps at most MAX_LISTED_FAILURES failures and
//!   counts every run;
//! - the first byte's low bit makes the first line a message instead: the
//!   file then reads as a message per line, and never panics either.
#![no_main]

use doom_loop_trace::eval::{EvalOption, Evaluation, MAX_LISTED_FAILURES};
use doom_loop_trace::import::for_each_run;
use libfuzzer_sys::fuzz_target;
use std::io::Write;

const RUN: &[u8] = br#"{"rounds":[{"calls":[{"toolName":"t","args":{"i":1}}]}]}"#;
const MESSAGE: &[u8] =
    br#"{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"a","arguments":"{}"}}]}"#;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let messages = flags & 1 == 1;
    let mut text = Vec::new();
    text.extend_from_slice(if messages { MESSAGE } else { RUN });
    text.push(b'\n');
    let mut good = usize::from(!messages);
    let mut lines = 1;
    for chunk in rest.chunks(9) {
        let (kind, body) = chunk.split_first().unwrap();
        let body: Vec<u8> = body
            .iter()
            .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
            .collect();
        let line: Vec<u8> = match kind % 6 {
            0 => RUN.to_vec(),
            1 => br#"{"version":1,"generator":"fuzz"}"#.to_vec(),
            2 => [&RUN[..20], b"\xff", &RUN[20..]].concat(),
            3 => RUN[..(body.len() * 3).min(RUN.len() - 1)].to_vec(),
            4 => body,
            _ => Vec::new(),
        };
        if kind % 6 == 0 {
            good += 1;
        }
        // As the reader trims a line: a byte-order mark, then whitespace.
        let trimmed = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&line);
        if !trimmed.iter().all(u8::is_ascii_whitespace) {
            lines += 1;
        }
        text.extend_from_slice(&line);
        text.push(b'\n');
    }
    let input = if flags & 2 == 2 {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&text).unwrap();
        gz.finish().unwrap()
    } else {
        text
    };
    let mut entries = 0;
    let mut ok = 0;
    for_each_run(&input[..], "runs.jsonl", &mut |run| {
        entries += 1;
        match &run.transcript {
            Ok(_) => ok += 1,
            Err(error) => assert!(error.message().starts_with("runs.jsonl"), "no place: {error}"),
        }
    });
    if !messages {
        assert_eq!(entries, lines, "one entry per non-blank line");
        assert!(ok >= good, "{ok} runs read of {good} good lines");
    }
    let mut evaluation = Evaluation::new(vec![EvalOption::defaults()]);
    let read = evaluation.add_bytes(&input, "runs.jsonl");
    let report = evaluation.report();
    assert!(report.failures.len() <= MAX_LISTED_FAILURES);
    let total = &report.options[0].total;
    assert_eq!(total.runs + total.failed, read);
});
