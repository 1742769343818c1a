//! `import::import_detected` on arbitrary JSON documents, then replay.
//!
//! The input's first byte picks a wrapper (bare, under `messages`,
//! `contents`, `input`, `trajectory`, `rounds`) so every importer sees the
//! fuzzer's values, not only the detector. Invariants: never panics; an
//! error names what it found or where; a transcript replays without
//! panicking and its call count matches the timeline's where no stop cut
//! the replay short.
#![no_main]

use doom_loop::json::parse;
use doom_loop_trace::import::import_detected;
use doom_loop_trace::replay::replay;
use libfuzzer_sys::fuzz_target;

const WRAPPERS: &[&str] = &["", "messages", "contents", "input", "trajectory", "rounds", "traj"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let wrapper = WRAPPERS[pick as usize % WRAPPERS.len()];
    let document = if wrapper.is_empty() {
        text.to_string()
    } else {
        format!("{{\"{wrapper}\":{text}}}")
    };
    let Ok(value) = parse(&document) else {
        return;
    };
    match import_detected(&value) {
        Err(error) => assert!(!error.message().is_empty()),
        Ok((_, transcript)) => {
            if let Ok(timeline) = replay(&transcript) {
                if timeline.stop_verdict.is_none() {
                    let replayed: usize = timeline.rounds.iter().map(|r| r.calls.len()).sum();
                    let recorded: usize = transcript.rounds.iter().map(|r| r.calls.len()).sum();
                    assert_eq!(replayed, recorded);
                }
            }
        }
    }
});
