//! What the `doomloop` subcommands compute from the text and bytes they
//! read, kept apart from the command line and the I/O.
//!
//! [`crate::command`] (clap's definition and the subcommand bodies, over a
//! [`doom_loop_trace::host::Host`]) calls these for both front ends — the native
//! binary and `npx doomloop`, the same command compiled to wasm — so both
//! accept and reject the same input with the same message (the core's own
//! JSON reader, nesting limit included) and print the same result. They
//! are plain functions of their input, so tests call them without a host.
//!
//! Errors are plain messages (the command prints them after `doomloop: `);
//! a [`ReplayRun::finding`] is not an error but the `--fail-on` outcome,
//! which the command turns into exit status 1.

use doom_loop::config::{recommended_doom_loop_option, resolve_doom_loop_option};
use doom_loop::json::{parse, Value};
use doom_loop::ladder::Action;
use doom_loop::{canonicalize, fingerprint_tool_call, JsString};

use doom_loop_trace::eval::{EvalOption, Evaluation};
use doom_loop_trace::import::import_one;
use doom_loop_trace::replay::{replay, Timeline};

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
/// assert_eq!(doom_loop_cli::compute::canonicalize_text(r#"{"b":1,"a":[2]}"#).unwrap(), r#"{"a":[2],"b":1}"#);
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

/// `doomloop replay`: replays the one run in `bytes` (any format the
/// importers read, gzip included; `name` places errors), under `option`
/// (JSON text of a `doomLoop` option replacing the trace's) when given.
///
/// # Errors
/// Input or option that is not JSON, a trace shape that is not
/// recognised, input holding several runs or none, or an option the
/// config rejects.
pub fn replay_bytes(
    bytes: &[u8],
    name: &str,
    option: OptionChoice<'_>,
    json: bool,
    fail_on: Option<Action>,
) -> Result<ReplayRun, String> {
    let (mut transcript, mut warnings) = import_one(bytes, name).map_err(|e| e.to_string())?;
    if let Some(option) = option.value()? {
        transcript.option = option;
    }
    let mut timeline = replay(&transcript).map_err(|e| e.to_string())?;
    warnings.append(&mut timeline.warnings);
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

/// Which `doomLoop` option a replay runs under.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OptionChoice<'a> {
    /// The trace's own (`doomLoop` in a rounds document; else the defaults).
    #[default]
    Trace,
    /// `--option JSON`.
    Json(&'a str),
    /// `--recommended`: [`doom_loop::config::RECOMMENDED_DOOM_LOOP_OPTION`].
    Recommended,
}

impl OptionChoice<'_> {
    fn value(self) -> Result<Option<Value>, String> {
        match self {
            OptionChoice::Trace => Ok(None),
            OptionChoice::Json(text) => read_json(text, "--option").map(Some),
            OptionChoice::Recommended => Ok(Some(recommended_doom_loop_option())),
        }
    }
}

/// The options `doomloop eval` compares, in this order: the reference's
/// defaults (with `compare`), each `--option` (labelled `option 1`, …),
/// the recommended option (with `recommended` or `compare`); none given:
/// the defaults alone.
///
/// # Errors
/// An `--option` that is not JSON, that the config rejects, or that turns
/// detection off — a usage error, as for `replay`, not a failure per run.
pub fn eval_options(options: &[String], recommended: bool, compare: bool) -> Result<Vec<EvalOption>, String> {
    let mut out = Vec::new();
    if compare {
        out.push(EvalOption::defaults());
    }
    for (i, text) in options.iter().enumerate() {
        let what = if options.len() > 1 {
            format!("--option {}", i + 1)
        } else {
            "--option".into()
        };
        let value = read_json(text, &what)?;
        match resolve_doom_loop_option(Some(&value)).result {
            Err(error) => return Err(format!("{what}: {error}")),
            Ok(None) => return Err(format!("{what} turns detection off: there is nothing to evaluate")),
            Ok(Some(_)) => {}
        }
        out.push(EvalOption::new(format!("option {}", i + 1), value));
    }
    if recommended || compare {
        out.push(EvalOption::new("recommended", recommended_doom_loop_option()));
    }
    if out.is_empty() {
        out.push(EvalOption::defaults());
    }
    Ok(out)
}

/// What `doomloop eval` prints and decides.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalRun {
    /// The report, for stdout: the tables, or the JSON and a newline.
    pub stdout: String,
    /// Warnings, for stderr.
    pub warnings: Vec<String>,
    /// Why the evaluation fails (no runs at all; `--fail-on` reached).
    pub finding: Option<String>,
}

/// `doomloop eval`'s outcome once every run was added to `evaluation`.
pub fn eval_finish(evaluation: &Evaluation, json: bool, fail_on: Option<Action>) -> EvalRun {
    let report = evaluation.report();
    let stdout = if json {
        format!("{}\n", report.to_json())
    } else {
        report.render()
    };
    let mut warnings = report.warnings.clone();
    let failed = report.options.iter().map(|o| o.total.failed).max().unwrap_or(0);
    let read = report.options.first().map_or(0, |o| o.total.runs + o.total.failed);
    if failed > 0 {
        warnings.push(format!(
            "{failed} of {read} run(s) could not be read or replayed (listed in the report)"
        ));
    }
    let replayed = report.options.iter().map(|o| o.total.runs).max().unwrap_or(0);
    let finding = if replayed == 0 {
        Some(format!("no runs evaluated ({read} read)"))
    } else {
        fail_on.and_then(|rung| {
            let hits: Vec<String> = report
                .options
                .iter()
                .filter_map(|o| {
                    let n = if rung == Action::Stop {
                        o.total.stopped
                    } else {
                        o.total.intervened()
                    };
                    (n > 0).then(|| format!("{n} run(s) under {}", o.label))
                })
                .collect();
            let reached = if rung == Action::Stop { "stop" } else { "block or stop" };
            (!hits.is_empty()).then(|| format!("--fail-on {}: {reached} in {}", rung.as_str(), hits.join(", ")))
        })
    };
    EvalRun {
        stdout,
        warnings,
        finding,
    }
}

/// `doomloop eval --sessions`: one line per session that reached a block
/// or a stop under some option, worst first, with what a stop would have
/// saved there.
pub fn sessions_text(evaluation: &Evaluation) -> String {
    let labels: Vec<&str> = evaluation.options().iter().map(|o| o.label.as_str()).collect();
    let mut rows: Vec<(u8, String)> = Vec::new();
    for session in evaluation.sessions() {
        let mut worst = 0;
        let mut cells = Vec::new();
        for (label, track) in labels.iter().zip(&session.tracks) {
            let stopped = track.rungs.contains('S') || (track.saved_calls > 0);
            let blocked = track.rungs.contains('b');
            worst = worst.max(if stopped { 2 } else { u8::from(blocked) });
            let cell = match (&track.first, stopped) {
                (Some((round, _)), true) => {
                    let tokens = track
                        .saved_tokens
                        .map_or(String::new(), |t| format!(", {} tokens", doom_loop::json::js_number(t)));
                    format!(
                        "{label}: stop (first block or stop at round {round}; {} calls{tokens} saved)",
                        track.saved_calls
                    )
                }
                (Some((round, _)), false) => format!("{label}: block at round {round}"),
                _ => format!("{label}: -"),
            };
            cells.push(cell);
        }
        if worst > 0 {
            rows.push((
                worst,
                format!("  {} {}: {}\n", session.source, session.id, cells.join("; ")),
            ));
        }
    }
    rows.sort_by_key(|row| std::cmp::Reverse(row.0));
    let mut out = format!(
        "sessions with a block or stop: {} of {}\n",
        rows.len(),
        evaluation.sessions().len()
    );
    rows.into_iter().for_each(|(_, row)| out.push_str(&row));
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: &str = r#"{"rounds":[
        {"calls":[{"toolName":"t","args":{}}]},{"calls":[{"toolName":"t","args":{}}]},
        {"calls":[{"toolName":"t","args":{}}]},{"calls":[{"toolName":"t","args":{}}]}]}"#;

    #[test]
    fn deep_input_is_rejected_by_the_core_reader() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let error = replay_bytes(deep.as_bytes(), "deep.json", OptionChoice::Trace, false, None).unwrap_err();
        assert_eq!(error, "deep.json: not valid JSON: JSON nested deeper than 512 levels");
    }

    #[test]
    fn warnings_are_kept_out_of_the_table() {
        let text = r#"{"loopKeys":{"t":["missing"]},"rounds":[{"calls":[{"toolName":"t","args":{"a":1}}]}]}"#;
        let run = replay_bytes(text.as_bytes(), "t", OptionChoice::Trace, false, None).unwrap();
        assert_eq!(run.warnings.len(), 1, "{:?}", run.warnings);
        assert!(!run.stdout.contains("warning"), "{}", run.stdout);
        let json = replay_bytes(text.as_bytes(), "t", OptionChoice::Trace, true, None).unwrap();
        assert!(json.stdout.contains("\"warnings\":[\""), "{}", json.stdout);
    }

    #[test]
    fn fail_on_reports_the_first_verdict_at_the_rung() {
        let run = replay_bytes(LOOP.as_bytes(), "t", OptionChoice::Trace, false, Some(Action::Block)).unwrap();
        assert_eq!(
            run.finding.as_deref(),
            Some("--fail-on block: block at round 3 (\"t\")")
        );
        let run = replay_bytes(LOOP.as_bytes(), "t", OptionChoice::Trace, false, Some(Action::Stop)).unwrap();
        assert_eq!(run.finding, None);
    }

    #[test]
    fn option_replaces_the_transcripts() {
        let quiet = replay_bytes(
            LOOP.as_bytes(),
            "t",
            OptionChoice::Json(r#"{"ladder":{"block":10,"stop":20}}"#),
            false,
            Some(Action::Block),
        )
        .unwrap();
        assert_eq!(quiet.finding, None);
        let error = replay_bytes(LOOP.as_bytes(), "t", OptionChoice::Json("{"), false, None).unwrap_err();
        assert!(error.starts_with("--option is not valid JSON: "), "{error}");
    }

    #[test]
    fn recommended_replaces_the_option() {
        let run = replay_bytes(LOOP.as_bytes(), "t", OptionChoice::Recommended, true, None).unwrap();
        assert!(run.stdout.contains("\"outcomes\""), "{}", run.stdout);
    }

    #[test]
    fn eval_options_are_ordered_and_labelled() {
        let labels = |o: Vec<EvalOption>| o.into_iter().map(|o| o.label).collect::<Vec<_>>();
        assert_eq!(labels(eval_options(&[], false, false).unwrap()), ["defaults"]);
        assert_eq!(labels(eval_options(&[], true, false).unwrap()), ["recommended"]);
        let both = eval_options(&["true".into()], false, true).unwrap();
        assert_eq!(labels(both), ["defaults", "option 1", "recommended"]);
        let error = eval_options(&["true".into(), "{".into()], false, false).unwrap_err();
        assert!(error.starts_with("--option 2 is not valid JSON"), "{error}");
    }

    #[test]
    fn eval_fails_without_runs_and_on_the_rung() {
        let mut evaluation = Evaluation::new(eval_options(&[], false, true).unwrap());
        assert_eq!(
            eval_finish(&evaluation, false, None).finding.as_deref(),
            Some("no runs evaluated (0 read)")
        );
        for run in doom_loop_trace::import::import_text(LOOP, "loop.json") {
            evaluation.add_imported(run);
        }
        for run in doom_loop_trace::import::import_text("{", "bad.json") {
            evaluation.add_imported(run);
        }
        let done = eval_finish(&evaluation, false, None);
        assert_eq!(done.finding, None);
        assert_eq!(
            done.warnings,
            ["1 of 2 run(s) could not be read or replayed (listed in the report)"]
        );
        let gated = eval_finish(&evaluation, true, Some(Action::Block));
        assert_eq!(
            gated.finding.as_deref(),
            Some("--fail-on block: block or stop in 1 run(s) under defaults, 1 run(s) under recommended")
        );
        assert!(gated.stdout.starts_with("{\"options\":["));
        assert_eq!(eval_finish(&evaluation, false, Some(Action::Stop)).finding, None);
    }
}
