//! What the two `doomloop` CLIs compute, in one place.
//!
//! The native binary and the npm package's `npx doomloop` (through the wasm
//! binding) both call these functions with the text they read, so they
//! accept and reject the same input with the same message — the core's
//! own JSON reader, nesting limit included, rather than `JSON.parse` on one
//! side — and print the same result. Each front-end keeps only what is its
//! own: argument parsing, reading files and stdin, and exit statuses.
//!
//! Errors are plain messages (the front-ends print them after
//! `doomloop: `); a [`ReplayRun::finding`] is not an error but the
//! `--fail-on` outcome, which the front-ends turn into exit status 1.

use doom_loop::json::{parse, Value};
use doom_loop::ladder::Action;
use doom_loop::{canonicalize, fingerprint_tool_call, JsString};

use crate::replay::{parse_transcript, replay, Timeline};

/// Parses `text` as strict JSON (nesting up to
/// [`doom_loop::json::MAX_PARSE_DEPTH`]).
///
/// # Errors
/// `"{what} is not valid JSON: …"`.
pub fn read_json(text: &str, what: &str) -> Result<Value, String> {
    parse(text).map_err(|e| format!("{what} is not valid JSON: {e}"))
}

/// `doomloop canonicalize`: the RFC 8785 form of the JSON `text`.
///
/// # Errors
/// Text that is not JSON, or a value canonicalization rejects.
///
/// ```
/// assert_eq!(doom_loop_trace::cli::canonicalize_text(r#"{"b":1,"a":[2]}"#).unwrap(), r#"{"a":[2],"b":1}"#);
/// ```
pub fn canonicalize_text(text: &str) -> Result<String, String> {
    canonicalize(&read_json(text, "input")?).map_err(|e| e.to_string())
}

/// `doomloop fingerprint`: the fingerprint of a call to `tool` with the
/// JSON `text` as its arguments.
///
/// # Errors
/// As [`canonicalize_text`].
pub fn fingerprint_text(tool: &str, text: &str) -> Result<String, String> {
    let value = read_json(text, "input")?;
    fingerprint_tool_call(&JsString::from(tool), &value)
        .map(|f| f.to_string())
        .map_err(|e| e.to_string())
}

/// What `doomloop replay` prints and decides.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayRun {
    /// The result, for stdout: the timeline table, or its JSON and a newline.
    pub stdout: String,
    /// Warnings, for stderr (each printed as `warning: …`).
    pub warnings: Vec<String>,
    /// The `--fail-on` outcome: why the run fails, when it reached the rung.
    pub finding: Option<String>,
}

/// `doomloop replay`: replays the transcript `text`, under `option` (JSON
/// text of a `doomLoop` option replacing the transcript's) when given.
///
/// # Errors
/// Text or option that is not JSON, a transcript shape that is not
/// recognised, or an option the config rejects.
pub fn replay_text(text: &str, option: Option<&str>, json: bool, fail_on: Option<Action>) -> Result<ReplayRun, String> {
    let document = read_json(text, "transcript")?;
    let mut transcript = parse_transcript(&document).map_err(|e| e.to_string())?;
    if let Some(option) = option {
        transcript.option = read_json(option, "--option")?;
    }
    let mut timeline = replay(&transcript).map_err(|e| e.to_string())?;
    let warnings = std::mem::take(&mut timeline.warnings);
    let stdout = if json {
        // The JSON keeps its warnings: it is the whole record, for machines.
        let mut whole = timeline.clone();
        whole.warnings.clone_from(&warnings);
        format!("{}\n", whole.to_json())
    } else {
        timeline.render()
    };
    Ok(ReplayRun {
        stdout,
        finding: fail_on.and_then(|rung| reached(&timeline, rung)),
        warnings,
    })
}

/// The first verdict at or above `rung`, as the `--fail-on` message.
pub fn reached(timeline: &Timeline, rung: Action) -> Option<String> {
    timeline.rounds.iter().find_map(|round| {
        let text = round.text_verdict.iter().map(|v| (v, "assistant text".to_string()));
        let calls = round
            .calls
            .iter()
            .filter_map(|c| c.verdict.as_ref().map(|v| (v, format!("\"{}\"", c.tool_name))));
        text.chain(calls).find(|(v, _)| v.action >= rung).map(|(v, what)| {
            format!(
                "--fail-on {}: {} at round {} ({what})",
                rung.as_str(),
                v.action.as_str(),
                round.round
            )
        })
    })
}

/// The `--fail-on` rung named `name` (`block` or `stop`).
///
/// # Errors
/// Any other name.
pub fn fail_on_rung(name: &str) -> Result<Action, String> {
    match name {
        "block" => Ok(Action::Block),
        "stop" => Ok(Action::Stop),
        other => Err(format!("--fail-on takes block or stop, not {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: &str = r#"{"rounds":[
        {"calls":[{"toolName":"t","args":{}}]},{"calls":[{"toolName":"t","args":{}}]},
        {"calls":[{"toolName":"t","args":{}}]},{"calls":[{"toolName":"t","args":{}}]}]}"#;

    #[test]
    fn deep_input_is_rejected_by_the_core_reader() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let error = replay_text(&deep, None, false, None).unwrap_err();
        assert_eq!(error, "transcript is not valid JSON: JSON nested deeper than 512 levels");
    }

    #[test]
    fn warnings_are_kept_out_of_the_table() {
        let text = r#"{"loopKeys":{"t":["missing"]},"rounds":[{"calls":[{"toolName":"t","args":{"a":1}}]}]}"#;
        let run = replay_text(text, None, false, None).unwrap();
        assert_eq!(run.warnings.len(), 1, "{:?}", run.warnings);
        assert!(!run.stdout.contains("warning"), "{}", run.stdout);
        let json = replay_text(text, None, true, None).unwrap();
        assert!(json.stdout.contains("\"warnings\":[\""), "{}", json.stdout);
    }

    #[test]
    fn fail_on_reports_the_first_verdict_at_the_rung() {
        let run = replay_text(LOOP, None, false, Some(Action::Block)).unwrap();
        assert_eq!(run.finding.as_deref(), Some("--fail-on block: block at round 3 (\"t\")"));
        let run = replay_text(LOOP, None, false, Some(Action::Stop)).unwrap();
        assert_eq!(run.finding, None);
    }

    #[test]
    fn option_replaces_the_transcripts() {
        let quiet = replay_text(LOOP, Some(r#"{"ladder":{"block":10,"stop":20}}"#), false, Some(Action::Block)).unwrap();
        assert_eq!(quiet.finding, None);
        let error = replay_text(LOOP, Some("{"), false, None).unwrap_err();
        assert!(error.starts_with("--option is not valid JSON: "), "{error}");
    }
}
