//! What the importer tests share: reading a fixture, and a transcript as
//! the lines the cases compare (`tool args => result [failed]` per call, a
//! round a line) and as the actions of its replay.

use doom_loop::json::to_json;
use doom_loop_trace::import::{import_bytes, ImportedRun};
use doom_loop_trace::replay::{replay, Transcript};

/// A fixture's bytes (trace/tests/fixtures/).
pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The one run of a fixture.
pub fn single(name: &str) -> ImportedRun {
    let mut runs = import_bytes(&fixture(name), name);
    assert_eq!(runs.len(), 1, "{name}: {} runs", runs.len());
    runs.remove(0)
}

/// Per call: `tool args => result [failed]`, a round per line.
pub fn summary(transcript: &Transcript) -> Vec<String> {
    transcript
        .rounds
        .iter()
        .map(|round| {
            let calls: Vec<String> = round
                .calls
                .iter()
                .map(|c| {
                    let result = c.result.as_ref().map_or("?".to_string(), to_json);
                    let failed = if c.failed { " failed" } else { "" };
                    format!("{} {} => {result}{failed}", c.tool_name, to_json(&c.args))
                })
                .collect();
            let text = if round.text.is_some() { "text; " } else { "" };
            format!("{text}{}", calls.join(" | "))
        })
        .collect()
}

/// Each call's action in a replay under the transcript's option (`-` for none).
pub fn actions(transcript: &Transcript) -> Vec<String> {
    let timeline = replay(transcript).unwrap();
    timeline
        .rounds
        .iter()
        .flat_map(|r| {
            r.calls
                .iter()
                .map(|c| c.verdict.as_ref().map_or("-", |v| v.action.as_str()).to_string())
        })
        .collect()
}
