//! `import::import_bytes` on arbitrary bytes (text, JSON Lines, gzip).
//!
//! Invariants:
//! - never panics, whatever the bytes (truncated gzip, bad UTF-8, hostile
//!   nesting, lines that are half runs and half messages);
//! - every run that fails carries an error naming its place (it starts with
//!   the input's name);
//! - every run that imports replays (under the defaults) without panicking,
//!   and its transcript JSON re-imports as the rounds format.
#![no_main]

use doom_loop::json::parse;
use doom_loop_trace::import::{import_bytes, import_detected, Format};
use doom_loop_trace::replay::replay;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for run in import_bytes(data, "fuzz.jsonl") {
        match &run.transcript {
            Err(error) => assert!(error.message().starts_with("fuzz.jsonl"), "no place: {error}"),
            Ok(transcript) => {
                if let Ok(timeline) = replay(transcript) {
                    let _ = timeline.to_json();
                    let _ = timeline.render();
                }
                let json = transcript.to_json();
                let reread = parse(&json).unwrap_or_else(|e| panic!("transcript JSON does not parse: {e}: {json}"));
                let (format, again) = import_detected(&reread).unwrap_or_else(|e| panic!("{e}: {json}"));
                assert_eq!(format, Format::Rounds);
                assert_eq!(again.rounds.len(), transcript.rounds.len());
            }
        }
    }
});
