//! Evaluating the detector on many recorded runs.
//!
//! Replays every run under one or more `doomLoop` options and counts what
//! `/work/EVAL.md` (the project's evaluation definitions) defines, per
//! source and in total: runs (and successful runs, where labelled); runs
//! observed / blocked / stopped; calls refused (a `block` verdict) and
//! calls saved by a stop (the trace's calls after the stopping call), also
//! as a share of all calls; and each run's *first intervention* (`block`
//! or `stop`) classified by the repeated call's recorded results:
//! `unchanged` (a loop caught), `changing` (progress interrupted),
//! `unknown`, or `text` (a verdict on the assistant's text). Successful
//! runs are counted apart in every column that can hurt them.
//!
//! A run that fails to import or replay is counted and listed with its
//! place; it never stops the evaluation. The engine is shared by the
//! native CLI (`doomloop eval`) and the npm package
//! (`evaluateTranscripts`), so both print the same numbers.
//!
//! ```no_run
//! use doom_loop_trace::eval::{EvalOption, Evaluation};
//! let mut evaluation = Evaluation::new(vec![EvalOption::defaults()]);
//! evaluation.add_path(std::path::Path::new("../shared/trajectories"));
//! let report = evaluation.report();
//! print!("{}", report.render());
//! ```

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use indexmap::IndexMap;

use doom_loop::error::Result;
use doom_loop::json::{js_number, to_json, write_json_string, Value};
use doom_loop::ladder::Action;
use doom_loop::monitor::Verdict;
use doom_loop::JsString;

use crate::import::{for_each_file_run, for_each_run, gzip_refused, unreadable, walk, ImportedRun, Skipped};
use crate::json_list::write_list;
use crate::replay::{replay, Timeline, Transcript};

/// One option to evaluate, with the label reports show.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalOption {
    /// A short name (`defaults`, `recommended`, `option 2`).
    pub label: String,
    /// The `doomLoop` option value (as in a transcript's `doomLoop`).
    pub option: Value,
}

impl EvalOption {
    /// An option with a label.
    pub fn new(label: impl Into<String>, option: Value) -> Self {
        EvalOption {
            label: label.into(),
            option,
        }
    }

    /// The reference's defaults: `doomLoop: true`.
    pub fn defaults() -> Self {
        EvalOption::new("defaults", Value::Bool(true))
    }
}

/// How a run's first intervention is classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Every result of the repeated call is known and equal: a loop caught.
    Unchanged,
    /// At least two known results differ: progress interrupted.
    Changing,
    /// Not enough results known to tell.
    Unknown,
    /// A verdict on the assistant's text (or with no tool call).
    Text,
}

impl Class {
    /// `unchanged`, `changing`, `unknown` or `text`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Unchanged => "unchanged",
            Class::Changing => "changing",
            Class::Unknown => "unknown",
            Class::Text => "text",
        }
    }
}

/// Runs per class of first intervention.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Split {
    /// Loops caught.
    pub unchanged: usize,
    /// Progress interrupted.
    pub changing: usize,
    /// Could not tell.
    pub unknown: usize,
    /// Text verdicts.
    pub text: usize,
}

impl Split {
    fn add(&mut self, class: Class) {
        match class {
            Class::Unchanged => self.unchanged += 1,
            Class::Changing => self.changing += 1,
            Class::Unknown => self.unknown += 1,
            Class::Text => self.text += 1,
        }
    }

    fn merge(&mut self, other: &Split) {
        self.unchanged += other.unchanged;
        self.changing += other.changing;
        self.unknown += other.unknown;
        self.text += other.text;
    }
}

/// A run's first intervention.
#[derive(Clone, Debug, PartialEq)]
pub struct Intervention {
    /// 1-based round.
    pub round: usize,
    /// The verdict.
    pub verdict: Verdict,
    /// Its class.
    pub class: Class,
}

/// What replaying one run under one option gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOutcome {
    /// Tool calls in the whole trace (also those after a stop).
    pub calls: usize,
    /// Any verdict.
    pub observed: bool,
    /// Any `block` verdict.
    pub blocked: bool,
    /// A `stop` verdict.
    pub stopped: bool,
    /// Calls whose verdict is `block`.
    pub refused: usize,
    /// Calls of the trace after the stopping call.
    pub saved: usize,
    /// Model tokens the trace records (`None`: it records none).
    pub tokens: Option<f64>,
    /// Of those, the tokens of the turns after the stopping one.
    pub saved_tokens: Option<f64>,
    /// The first `block` or `stop`.
    pub first: Option<Intervention>,
    /// The class of the stopping verdict, for a stopped run.
    pub stop_class: Option<Class>,
    /// Some intervention of the run (not only the first) came while the
    /// repeated call's output was unchanged: a loop caught at some point.
    pub caught_unchanged: bool,
}

/// Counts for a set of runs (one source, or all).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metrics {
    /// Runs replayed (failed ones not included).
    pub runs: usize,
    /// Runs that failed to import or replay.
    pub failed: usize,
    /// Runs labelled successful or not.
    pub labelled: usize,
    /// Runs labelled successful.
    pub resolved: usize,
    /// Runs with any verdict.
    pub observed: usize,
    /// Runs with a `block`.
    pub blocked: usize,
    /// Runs with a `stop`.
    pub stopped: usize,
    /// Successful runs with any verdict.
    pub resolved_observed: usize,
    /// Successful runs with a `block`.
    pub resolved_blocked: usize,
    /// Successful runs with a `stop`.
    pub resolved_stopped: usize,
    /// Tool calls in all traces.
    pub calls: usize,
    /// Calls refused (verdict `block`).
    pub refused: usize,
    /// Calls saved by a stop.
    pub saved: usize,
    /// Model tokens in the traces that record usage.
    pub tokens: f64,
    /// Tokens of the turns after a stop, in those traces.
    pub saved_tokens: f64,
    /// Runs by the class of their first intervention.
    pub first: Split,
    /// The same, successful runs only.
    pub first_resolved: Split,
    /// Stopped runs by the class of their stopping verdict.
    pub stops: Split,
    /// Runs with any intervention (not only the first) on unchanged output.
    pub caught_unchanged: usize,
    /// Runs labelled unsuccessful.
    pub unresolved: usize,
    /// Unsuccessful runs with a `block` or `stop`.
    pub unresolved_intervened: usize,
    /// Unsuccessful runs with a `stop` (halted).
    pub unresolved_stopped: usize,
    /// Calls after the halt in unsuccessful runs: work saved.
    pub saved_unresolved: usize,
    /// Calls after the halt in successful runs: work the successful agent
    /// would not have done.
    pub lost_resolved: usize,
    /// Runs that ended on a cost, step or attempt cap ([`cap_kind`]).
    pub capped: usize,
    /// Tool calls in the capped runs.
    pub capped_calls: usize,
    /// Capped runs a stop ends.
    pub capped_stopped: usize,
    /// Calls after the halt in capped runs.
    pub capped_saved: usize,
}

impl Metrics {
    /// Successful runs with a `block` or `stop`.
    pub fn resolved_intervened(&self) -> usize {
        self.first_resolved.unchanged
            + self.first_resolved.changing
            + self.first_resolved.unknown
            + self.first_resolved.text
    }

    /// Runs with a `block` or `stop`.
    pub fn intervened(&self) -> usize {
        self.first.unchanged + self.first.changing + self.first.unknown + self.first.text
    }

    fn add(&mut self, outcome: &RunOutcome, resolved: Option<bool>, capped: bool) {
        let ok = resolved == Some(true);
        let failed = resolved == Some(false);
        let intervened = outcome.first.is_some();
        self.unresolved += usize::from(failed);
        self.unresolved_intervened += usize::from(failed && intervened);
        self.unresolved_stopped += usize::from(failed && outcome.stopped);
        if outcome.stopped {
            if ok {
                self.lost_resolved += outcome.saved;
            } else if failed {
                self.saved_unresolved += outcome.saved;
            }
        }
        if capped {
            self.capped += 1;
            self.capped_calls += outcome.calls;
            self.capped_stopped += usize::from(outcome.stopped);
            if outcome.stopped {
                self.capped_saved += outcome.saved;
            }
        }
        self.runs += 1;
        self.labelled += usize::from(resolved.is_some());
        self.resolved += usize::from(ok);
        self.observed += usize::from(outcome.observed);
        self.blocked += usize::from(outcome.blocked);
        self.stopped += usize::from(outcome.stopped);
        self.resolved_observed += usize::from(ok && outcome.observed);
        self.resolved_blocked += usize::from(ok && outcome.blocked);
        self.resolved_stopped += usize::from(ok && outcome.stopped);
        self.calls += outcome.calls;
        self.refused += outcome.refused;
        self.saved += outcome.saved;
        self.tokens += outcome.tokens.unwrap_or(0.0);
        self.saved_tokens += outcome.saved_tokens.unwrap_or(0.0);
        if let Some(first) = &outcome.first {
            self.first.add(first.class);
            if ok {
                self.first_resolved.add(first.class);
            }
        }
        if let Some(class) = outcome.stop_class {
            self.stops.add(class);
        }
        self.caught_unchanged += usize::from(outcome.caught_unchanged);
    }

    fn merge(&mut self, other: &Metrics) {
        self.runs += other.runs;
        self.failed += other.failed;
        self.labelled += other.labelled;
        self.resolved += other.resolved;
        self.observed += other.observed;
        self.blocked += other.blocked;
        self.stopped += other.stopped;
        self.resolved_observed += other.resolved_observed;
        self.resolved_blocked += other.resolved_blocked;
        self.resolved_stopped += other.resolved_stopped;
        self.calls += other.calls;
        self.refused += other.refused;
        self.saved += other.saved;
        self.tokens += other.tokens;
        self.saved_tokens += other.saved_tokens;
        self.first.merge(&other.first);
        self.first_resolved.merge(&other.first_resolved);
        self.stops.merge(&other.stops);
        self.caught_unchanged += other.caught_unchanged;
        self.unresolved += other.unresolved;
        self.unresolved_intervened += other.unresolved_intervened;
        self.unresolved_stopped += other.unresolved_stopped;
        self.saved_unresolved += other.saved_unresolved;
        self.lost_resolved += other.lost_resolved;
        self.capped += other.capped;
        self.capped_calls += other.capped_calls;
        self.capped_stopped += other.capped_stopped;
        self.capped_saved += other.capped_saved;
    }
}

/// A run that could not be imported or replayed.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// Its source.
    pub source: String,
    /// Its id (or place).
    pub id: String,
    /// The option it failed under (`None`: it failed to import).
    pub option: Option<String>,
    /// The error, with its place.
    pub error: String,
}

/// Most failures a report lists; the others are counted
/// ([`Report::failures_omitted`]).
pub const MAX_LISTED_FAILURES: usize = 100;
/// Most warnings an evaluation keeps; the others are counted.
pub const MAX_WARNINGS: usize = 20;
/// Longest failure message kept, in characters (the rest is cut, with `…`).
pub const MAX_FAILURE_CHARS: usize = 1200;

/// An evaluation in progress: add runs, then take a [`Report`].
///
/// Memory stays bounded however many runs are added: runs are replayed
/// and counted as they arrive (a file's runs one at a time), sources are
/// keyed, and at most [`MAX_LISTED_FAILURES`] failures and
/// [`MAX_WARNINGS`] warnings are kept (the rest counted).
#[derive(Clone, Debug)]
pub struct Evaluation {
    options: Vec<EvalOption>,
    /// Per source, in first-seen order: metrics per option.
    sources: IndexMap<String, Vec<Metrics>>,
    failures: Vec<Failure>,
    /// Per-session tracks, kept only when asked for (`--html`).
    sessions: Option<Vec<SessionRow>>,
    failures_omitted: usize,
    warnings: Vec<String>,
    warnings_omitted: usize,
}

impl Evaluation {
    /// An evaluation of these options (none: the reference's defaults).
    pub fn new(options: Vec<EvalOption>) -> Self {
        let options = if options.is_empty() {
            vec![EvalOption::defaults()]
        } else {
            options
        };
        Evaluation {
            options,
            sources: IndexMap::new(),
            failures: Vec::new(),
            sessions: None,
            failures_omitted: 0,
            warnings: Vec::new(),
            warnings_omitted: 0,
        }
    }

    /// Also keeps, per run, the rung each call reached under each option
    /// (what `doomloop eval --html` draws). Off by default: a folder of
    /// runs then costs only its counts.
    pub fn keep_sessions(mut self) -> Self {
        self.sessions = Some(Vec::new());
        self
    }

    /// The sessions kept by [`Evaluation::keep_sessions`] (empty otherwise).
    pub fn sessions(&self) -> &[SessionRow] {
        self.sessions.as_deref().unwrap_or_default()
    }

    /// The options being evaluated.
    pub fn options(&self) -> &[EvalOption] {
        &self.options
    }

    fn source_metrics(&mut self, source: &str) -> &mut Vec<Metrics> {
        if !self.sources.contains_key(source) {
            self.sources
                .insert(source.to_string(), vec![Metrics::default(); self.options.len()]);
        }
        &mut self.sources[source]
    }

    fn fail(&mut self, failure: Failure) {
        if self.failures.len() < MAX_LISTED_FAILURES {
            self.failures.push(Failure {
                error: capped(failure.error),
                ..failure
            });
        } else {
            self.failures_omitted += 1;
        }
    }

    /// Adds a warning (what the walk skipped, lines an import read past);
    /// past [`MAX_WARNINGS`] they are counted.
    pub fn warn(&mut self, warning: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(capped(warning));
        } else {
            self.warnings_omitted += 1;
        }
    }

    /// The warnings so far, with a last line counting those not kept.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = self.warnings.clone();
        if self.warnings_omitted > 0 {
            out.push(format!("{} more warning(s) not shown", self.warnings_omitted));
        }
        out
    }

    /// Replays one run under every option and counts it. `resolved` is its
    /// success label, where known. A run that failed to import (`Err`) or
    /// fails to replay is counted as failed and listed in the report.
    pub fn add_run(&mut self, source: &str, id: &str, resolved: Option<bool>, transcript: Result<Transcript>) {
        self.add_run_ending(source, id, resolved, None, transcript);
    }

    /// [`Evaluation::add_run`] with how the run ended (its `exitStatus`,
    /// where recorded), for the capped-run columns ([`cap_kind`]).
    pub fn add_run_ending(
        &mut self,
        source: &str,
        id: &str,
        resolved: Option<bool>,
        exit_status: Option<&str>,
        transcript: Result<Transcript>,
    ) {
        let mut transcript = match transcript {
            Ok(transcript) => transcript,
            Err(error) => {
                self.source_metrics(source).iter_mut().for_each(|m| m.failed += 1);
                self.fail(Failure {
                    source: source.to_string(),
                    id: id.to_string(),
                    option: None,
                    error: error.to_string(),
                });
                return;
            }
        };
        for warning in std::mem::take(&mut transcript.warnings) {
            self.warn(format!("{id}: {warning}"));
        }
        let capped = cap_kind(exit_status, &transcript).is_some();
        let mut row = self.sessions.is_some().then(|| SessionRow {
            source: source.to_string(),
            id: id.to_string(),
            resolved,
            tracks: Vec::new(),
        });
        let round_calls: Vec<usize> = transcript.rounds.iter().map(|r| r.calls.len()).collect();
        let round_tokens: Vec<Option<f64>> = transcript.rounds.iter().map(|r| r.tokens).collect();
        for index in 0..self.options.len() {
            transcript.option = self.options[index].option.clone();
            let replayed = replay(&transcript).map(|timeline| {
                if let Some(row) = row.as_mut() {
                    row.tracks.push(track(&timeline, &round_calls, &round_tokens));
                }
                measure(&transcript, &timeline)
            });
            match replayed {
                Ok(outcome) => self.source_metrics(source)[index].add(&outcome, resolved, capped),
                Err(error) => {
                    self.source_metrics(source)[index].failed += 1;
                    let label = self.options[index].label.clone();
                    self.fail(Failure {
                        source: source.to_string(),
                        id: id.to_string(),
                        option: Some(label),
                        error: format!("{id}: {error}"),
                    });
                }
            }
        }
        if let (Some(sessions), Some(row)) = (self.sessions.as_mut(), row) {
            sessions.push(row);
        }
    }

    /// [`Evaluation::add_run`] for an imported run (its warnings kept).
    pub fn add_imported(&mut self, run: ImportedRun) {
        for warning in run.warnings {
            self.warn(warning);
        }
        self.add_run_ending(
            &run.source,
            &run.id,
            run.resolved,
            run.exit_status.as_deref(),
            run.transcript,
        );
    }

    /// Adds every run of an input (file contents: JSON, JSON Lines, gzip),
    /// each replayed as soon as it is read; returns how many runs were read
    /// (failed ones included).
    pub fn add_reader(&mut self, reader: impl Read, name: &str) -> usize {
        let mut count = 0;
        for_each_run(reader, name, &mut |run| {
            count += 1;
            self.add_imported(run);
        });
        count
    }

    /// [`Evaluation::add_reader`] over bytes.
    pub fn add_bytes(&mut self, bytes: &[u8], name: &str) -> usize {
        self.add_reader(bytes, name)
    }

    /// Counts an input that could not be read (`reason`: the I/O error) as
    /// a failed run naming it.
    pub fn add_unreadable(&mut self, name: &str, reason: &str) {
        self.add_imported(unreadable(name, reason));
    }

    /// Counts an input refused by the gzip limit as a failed run naming it.
    pub fn add_gzip_refused(&mut self, name: &str) {
        self.add_imported(gzip_refused(name));
    }

    /// Notes a directory entry the walk did not read.
    pub fn add_skipped(&mut self, path: &str, why: Skipped) {
        self.warn(why.message(path));
    }

    /// Imports and adds every run under a path (a file, or a directory's
    /// trace files; `.jsonl.gz` with a run per line included), a file at a
    /// time and a run at a time. Returns the number of runs read (failed
    /// ones included); a path that cannot be read is one failed run.
    pub fn add_path(&mut self, path: &Path) -> usize {
        let name = path.display().to_string();
        let walk = match walk(path) {
            Ok(walk) => walk,
            Err(error) => {
                self.add_unreadable(&name, error.message());
                return 1;
            }
        };
        for (path, why) in &walk.skipped {
            self.add_skipped(&path.display().to_string(), *why);
        }
        let mut count = walk.unreadable.len();
        for (dir, error) in &walk.unreadable {
            self.add_unreadable(&dir.display().to_string(), error);
        }
        for file in &walk.files {
            for_each_file_run(file, &mut |run| {
                count += 1;
                self.add_imported(run);
            });
        }
        count
    }

    /// The report so far.
    pub fn report(&self) -> Report {
        let options = self
            .options
            .iter()
            .enumerate()
            .map(|(index, option)| {
                let sources: Vec<(String, Metrics)> = self
                    .sources
                    .iter()
                    .map(|(name, metrics)| (name.clone(), metrics[index].clone()))
                    .collect();
                let mut total = Metrics::default();
                sources.iter().for_each(|(_, m)| total.merge(m));
                OptionReport {
                    label: option.label.clone(),
                    option: option.option.clone(),
                    sources,
                    total,
                }
            })
            .collect();
        Report {
            options,
            failures: self.failures.clone(),
            failures_omitted: self.failures_omitted,
            warnings: self.warnings(),
        }
    }
}

/// A message cut to [`MAX_FAILURE_CHARS`] characters.
fn capped(message: String) -> String {
    match message.char_indices().nth(MAX_FAILURE_CHARS) {
        Some((end, _)) => format!("{}…", &message[..end]),
        None => message,
    }
}

/// The counts under one option.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionReport {
    /// The option's label.
    pub label: String,
    /// The option.
    pub option: Value,
    /// Per source, in first-seen order.
    pub sources: Vec<(String, Metrics)>,
    /// All sources.
    pub total: Metrics,
}

/// An evaluation's result: per option, per source and in total; and the
/// runs that failed.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// One entry per option, in the order given.
    pub options: Vec<OptionReport>,
    /// Runs that failed to import or replay (at most
    /// [`MAX_LISTED_FAILURES`]).
    pub failures: Vec<Failure>,
    /// Failures past [`MAX_LISTED_FAILURES`], counted but not listed.
    pub failures_omitted: usize,
    /// What the import and the walk noticed but read past (see
    /// [`Evaluation::warnings`]).
    pub warnings: Vec<String>,
}

/// Why a run ended on a cost, step or attempt cap, from its own markers;
/// `None` when it did not (or nothing says so). Read from the run's
/// `exitStatus` — a cost limit (`exit_cost`, also `submitted (exit_cost)`:
/// auto-submitted after it), `exit_context` / `exit_format`, any status
/// naming a limit (`LimitsExceeded`, `step limit`), `no finish…` (the agent
/// ran out of iterations) — or from the run's last call, when it is
/// SWE-agent's own `exit_cost` / `exit_context` / `exit_format` action. A
/// harness that caps steps without recording it (tau-bench's 30 steps)
/// leaves nothing to read.
pub fn cap_kind(exit_status: Option<&str>, transcript: &Transcript) -> Option<String> {
    let status = exit_status.unwrap_or("");
    let lower = status.to_ascii_lowercase();
    if lower.contains("exit_cost") {
        return Some(
            if lower.starts_with("submitted") {
                "autosubmit after cost limit"
            } else {
                "cost limit"
            }
            .to_string(),
        );
    }
    if lower.contains("exit_context") || lower.contains("exit_format") || lower.contains("limit") {
        return Some(status.to_string());
    }
    if lower.starts_with("no finish") {
        return Some("step limit".to_string());
    }
    let last = transcript.rounds.last().and_then(|round| round.calls.last())?;
    let command = match &last.args {
        Value::Object(o) => o.get("command").and_then(Value::as_js_string).map(|c| c.to_string()),
        _ => None,
    }?;
    let word = command.split_whitespace().next().unwrap_or("");
    matches!(word, "exit_cost" | "exit_context" | "exit_format").then(|| format!("autosubmit after {word}"))
}

/// Replays one run (under its own `option`) and measures it.
///
/// # Errors
/// The replay's error (an invalid option, or one that turns detection off).
pub fn evaluate_run(transcript: &Transcript) -> Result<RunOutcome> {
    let timeline = replay(transcript)?;
    Ok(measure(transcript, &timeline))
}

fn is_intervention(verdict: &Verdict) -> bool {
    matches!(verdict.action, Action::Block | Action::Stop)
}

/// The counts of one replayed run (see the module docs).
pub fn measure(transcript: &Transcript, timeline: &Timeline) -> RunOutcome {
    let recorded = transcript.rounds.iter().any(|r| r.tokens.is_some());
    let mut outcome = RunOutcome {
        calls: transcript.rounds.iter().map(|r| r.calls.len()).sum(),
        tokens: recorded.then(|| transcript.rounds.iter().filter_map(|r| r.tokens).sum()),
        ..RunOutcome::default()
    };
    let mut by_fingerprint: HashMap<&[u8], Vec<Option<&Value>>> = HashMap::new();
    let mut by_tool: HashMap<&[u8], Vec<Option<&Value>>> = HashMap::new();
    let mut calls_before = 0;
    let mut stop_counted = false;
    for round in &timeline.rounds {
        if let Some(verdict) = &round.text_verdict {
            outcome.observed = true;
            note(&mut outcome, verdict, round.round, || Class::Text);
            if verdict.action == Action::Stop {
                outcome.saved = outcome.calls.saturating_sub(calls_before);
                outcome.stop_class = Some(Class::Text);
                stop_counted = true;
            }
        }
        for (index, call) in round.calls.iter().enumerate() {
            if !call.duplicate_in_round {
                if let Some(fingerprint) = &call.fingerprint {
                    by_fingerprint
                        .entry(fingerprint.as_bytes())
                        .or_default()
                        .push(call.result.as_ref());
                }
                by_tool
                    .entry(call.tool_name.as_bytes())
                    .or_default()
                    .push(call.result.as_ref());
            }
            let Some(verdict) = &call.verdict else {
                continue;
            };
            outcome.observed = true;
            if verdict.action == Action::Block {
                outcome.refused += 1;
            }
            let class_of = || {
                if verdict.tool_name.is_none() {
                    return Class::Text;
                }
                let history = match (&call.fingerprint, is_fingerprint_detector(verdict)) {
                    (Some(fingerprint), true) => by_fingerprint.get(fingerprint.as_bytes()),
                    _ => by_tool.get(call.tool_name.as_bytes()),
                };
                classify(history.map_or(&[][..], |h| &h[..]), verdict.streak)
            };
            if is_intervention(verdict) && !call.duplicate_in_round && class_of() == Class::Unchanged {
                outcome.caught_unchanged = true;
            }
            note(&mut outcome, verdict, round.round, class_of);
            if verdict.action == Action::Stop && !stop_counted {
                outcome.saved = outcome.calls.saturating_sub(calls_before + index + 1);
                outcome.stop_class = Some(class_of());
                stop_counted = true;
            }
        }
        calls_before += round.calls.len();
    }
    outcome.stopped = timeline.stop_verdict.is_some();
    if recorded && outcome.stopped {
        // The turns after the stopping one would not have been requested.
        let replayed = timeline.rounds.len();
        outcome.saved_tokens = Some(transcript.rounds.iter().skip(replayed).filter_map(|r| r.tokens).sum());
    }
    outcome
}

fn note(outcome: &mut RunOutcome, verdict: &Verdict, round: usize, class: impl FnOnce() -> Class) {
    if verdict.action == Action::Block {
        outcome.blocked = true;
    }
    if outcome.first.is_none() && is_intervention(verdict) {
        outcome.first = Some(Intervention {
            round,
            verdict: verdict.clone(),
            class: class(),
        });
    }
}

fn is_fingerprint_detector(verdict: &Verdict) -> bool {
    verdict
        .detector
        .as_js_string()
        .is_some_and(|d| d.as_bytes().ends_with(b"tool-fingerprint"))
}

/// The class of a repeat from the results of the last `streak` calls
/// (the intervened call included).
fn classify(history: &[Option<&Value>], streak: f64) -> Class {
    let take = if streak.is_finite() && streak >= 1.0 {
        streak as usize
    } else {
        1
    };
    let recent = &history[history.len().saturating_sub(take)..];
    let known: Vec<&Value> = recent.iter().flatten().copied().collect();
    match known.split_first() {
        Some((first, rest)) if rest.iter().any(|r| r != first) => Class::Changing,
        Some(_) if known.len() == recent.len() && known.len() >= 2 => Class::Unchanged,
        _ => Class::Unknown,
    }
}

fn percent(part: usize, whole: usize) -> String {
    if whole == 0 {
        "0.0%".to_string()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

fn with_resolved(all: usize, resolved: usize) -> String {
    format!("{all} ({resolved})")
}

impl Report {
    /// A plain-text table per option: a row per source and a total; cells
    /// `N (M)` give all runs and, in brackets, successful ones.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for option in &self.options {
            out.push_str(&format!("option {}: {}\n", option.label, to_json(&option.option)));
            let header = [
                "source",
                "runs",
                "ok",
                "observed",
                "blocked",
                "stopped",
                "calls",
                "refused",
                "saved",
                "unchanged",
                "changing",
                "unknown",
                "text",
            ];
            let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
            let mut push = |name: &str, m: &Metrics| {
                rows.push(vec![
                    name.to_string(),
                    if m.failed > 0 {
                        format!("{} +{} failed", m.runs, m.failed)
                    } else {
                        m.runs.to_string()
                    },
                    if m.labelled > 0 {
                        m.resolved.to_string()
                    } else {
                        "-".to_string()
                    },
                    with_resolved(m.observed, m.resolved_observed),
                    with_resolved(m.blocked, m.resolved_blocked),
                    with_resolved(m.stopped, m.resolved_stopped),
                    m.calls.to_string(),
                    format!("{} {}", m.refused, percent(m.refused, m.calls)),
                    format!("{} {}", m.saved, percent(m.saved, m.calls)),
                    with_resolved(m.first.unchanged, m.first_resolved.unchanged),
                    with_resolved(m.first.changing, m.first_resolved.changing),
                    with_resolved(m.first.unknown, m.first_resolved.unknown),
                    with_resolved(m.first.text, m.first_resolved.text),
                ]);
            };
            for (name, metrics) in &option.sources {
                push(name, metrics);
            }
            push("total", &option.total);
            let widths: Vec<usize> = (0..header.len())
                .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
                .collect();
            for row in &rows {
                let line: Vec<String> = row
                    .iter()
                    .enumerate()
                    .map(|(c, cell)| {
                        if c == 0 {
                            format!("{cell:<w$}", w = widths[c])
                        } else {
                            format!("{cell:>w$}", w = widths[c])
                        }
                    })
                    .collect();
                out.push_str(line.join("  ").trim_end());
                out.push('\n');
            }
            if option.total.tokens > 0.0 {
                let m = &option.total;
                out.push_str(&format!(
                    "tokens (where the logs record usage): {} recorded, {} after a stop ({:.1}%)\n",
                    js_number(m.tokens),
                    js_number(m.saved_tokens),
                    100.0 * m.saved_tokens / m.tokens
                ));
            }
            out.push_str(&render_outcomes(option));
            out.push('\n');
        }
        out.push_str(
            "(N) = successful runs among N; unchanged/changing/unknown/text classify each run's first block or stop\n",
        );
        out.push_str(
            "outcomes: intervened / halted = runs with a block or stop / with a stop, ok = successful, failed = unsuccessful;\n  \
saved = calls after the halt in unsuccessful runs, lost = in successful ones; capped = runs that ended on a cost, step or attempt cap\n",
        );
        if !self.failures.is_empty() {
            let total = self.failures.len() + self.failures_omitted;
            if self.failures_omitted > 0 {
                out.push_str(&format!(
                    "{total} run(s) failed (the first {} listed):\n",
                    self.failures.len()
                ));
            } else {
                out.push_str(&format!("{total} run(s) failed:\n"));
            }
            for failure in &self.failures {
                match &failure.option {
                    Some(option) => out.push_str(&format!("  [{option}] {}\n", failure.error)),
                    None => out.push_str(&format!("  {}\n", failure.error)),
                }
            }
        }
        out
    }

    /// The report as JSON: `{options: [{label, option, sources: {name:
    /// metrics}, total: metrics}], failures: [{source, id, option, error}]}`,
    /// metrics with camelCase keys (`resolvedBlocked`, `firstIntervention:
    /// {unchanged, changing, unknown, text}`, `firstInterventionResolved`,
    /// `stops` (each stopped run's stopping verdict, classified the same
    /// way), `caughtUnchanged` (runs with any intervention on unchanged
    /// output), `refusedPercent`, … and the outcome columns: `unresolved`,
    /// `intervenedResolved` / `intervenedUnresolved`, `haltedResolved` /
    /// `haltedUnresolved`, `savedUnresolved` / `lostResolved` (calls after
    /// the halt), `capped`, `cappedCalls`, `cappedHalted`, `cappedSaved`).
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"options\":[");
        write_list(&mut out, &self.options, |option, out| {
            out.push_str("{\"label\":");
            push_string(&option.label, out);
            out.push_str(",\"option\":");
            out.push_str(&to_json(&option.option));
            out.push_str(",\"sources\":{");
            write_list(out, &option.sources, |(name, metrics), out| {
                push_string(name, out);
                out.push(':');
                metrics_json(metrics, out);
            });
            out.push_str("},\"total\":");
            metrics_json(&option.total, out);
            out.push('}');
        });
        out.push_str("],\"failures\":[");
        write_list(&mut out, &self.failures, |failure, out| {
            out.push_str("{\"source\":");
            push_string(&failure.source, out);
            out.push_str(",\"id\":");
            push_string(&failure.id, out);
            out.push_str(",\"option\":");
            match &failure.option {
                Some(option) => push_string(option, out),
                None => out.push_str("null"),
            }
            out.push_str(",\"error\":");
            push_string(&failure.error, out);
            out.push('}');
        });
        out.push_str(&format!(
            "],\"failuresOmitted\":{},\"warnings\":[",
            self.failures_omitted
        ));
        write_list(&mut out, &self.warnings, |warning, out| push_string(warning, out));
        out.push_str("]}");
        out
    }
}

/// The outcome columns of one option: a row per source and a total.
fn render_outcomes(option: &OptionReport) -> String {
    let header = [
        "outcomes",
        "intervened ok",
        "intervened failed",
        "halted ok",
        "halted failed",
        "saved",
        "lost",
        "capped",
        "capped halted",
        "capped saved",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    let mut push = |name: &str, m: &Metrics| {
        rows.push(vec![
            name.to_string(),
            m.resolved_intervened().to_string(),
            m.unresolved_intervened.to_string(),
            m.resolved_stopped.to_string(),
            m.unresolved_stopped.to_string(),
            m.saved_unresolved.to_string(),
            m.lost_resolved.to_string(),
            format!("{} ({} calls)", m.capped, m.capped_calls),
            m.capped_stopped.to_string(),
            format!("{} {}", m.capped_saved, percent(m.capped_saved, m.capped_calls)),
        ]);
    };
    for (name, metrics) in &option.sources {
        push(name, metrics);
    }
    push("total", &option.total);
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if c == 0 {
                    format!("{cell:<w$}", w = widths[c])
                } else {
                    format!("{cell:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn push_string(s: &str, out: &mut String) {
    write_json_string(&JsString::from(s), out);
}

fn split_json(split: &Split) -> String {
    format!(
        "{{\"unchanged\":{},\"changing\":{},\"unknown\":{},\"text\":{}}}",
        split.unchanged, split.changing, split.unknown, split.text
    )
}

fn percent_number(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (1000.0 * part as f64 / whole as f64).round() / 10.0
    }
}

fn metrics_json(m: &Metrics, out: &mut String) {
    out.push_str(&format!(
        "{{\"runs\":{},\"failed\":{},\"labelled\":{},\"resolved\":{},\"observed\":{},\"blocked\":{},\"stopped\":{},\
\"intervened\":{},\"resolvedObserved\":{},\"resolvedBlocked\":{},\"resolvedStopped\":{},\"calls\":{},\"refused\":{},\
\"saved\":{},\"tokens\":{},\"savedTokens\":{},\"refusedPercent\":{},\"savedPercent\":{},\"firstIntervention\":{},\"firstInterventionResolved\":{},\"stops\":{},\"caughtUnchanged\":{},\
\"unresolved\":{},\"intervenedResolved\":{},\"intervenedUnresolved\":{},\"haltedResolved\":{},\"haltedUnresolved\":{},\
\"savedUnresolved\":{},\"lostResolved\":{},\"capped\":{},\"cappedCalls\":{},\"cappedHalted\":{},\"cappedSaved\":{}}}",
        m.runs,
        m.failed,
        m.labelled,
        m.resolved,
        m.observed,
        m.blocked,
        m.stopped,
        m.intervened(),
        m.resolved_observed,
        m.resolved_blocked,
        m.resolved_stopped,
        m.calls,
        m.refused,
        m.saved,
        doom_loop::json::js_number(m.tokens),
        doom_loop::json::js_number(m.saved_tokens),
        doom_loop::json::js_number(percent_number(m.refused, m.calls)),
        doom_loop::json::js_number(percent_number(m.saved, m.calls)),
        split_json(&m.first),
        split_json(&m.first_resolved),
        split_json(&m.stops),
        m.caught_unchanged,
        m.unresolved,
        m.resolved_intervened(),
        m.unresolved_intervened,
        m.resolved_stopped,
        m.unresolved_stopped,
        m.saved_unresolved,
        m.lost_resolved,
        m.capped,
        m.capped_calls,
        m.capped_stopped,
        m.capped_saved,
    ));
}

/// The per-call rungs of one session under one option.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionTrack {
    /// One character per tool call of the trace, in order: `.` no verdict,
    /// `o` observe, `s` steer, `e` escalate, `b` block, `S` stop, `x` not
    /// run (after a stop).
    pub rungs: String,
    /// Calls a stop would have saved.
    pub saved_calls: usize,
    /// Model tokens of the turns after the stop, where the log records them.
    pub saved_tokens: Option<f64>,
    /// The first block or stop: its 1-based round and message.
    pub first: Option<(usize, String)>,
}

/// One session of the page: where it came from and its tracks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionRow {
    /// The run's source (file stem, or its `source` field).
    pub source: String,
    /// The run's id or place.
    pub id: String,
    /// Success label, where the log has one.
    pub resolved: Option<bool>,
    /// One track per evaluated option, in the report's order.
    pub tracks: Vec<SessionTrack>,
}

impl SessionRow {
    /// The strongest rung any of its tracks reached (0 none … 5 stop).
    pub(crate) fn severity(&self) -> u8 {
        self.tracks
            .iter()
            .flat_map(|t| t.rungs.bytes())
            .map(|c| match c {
                b'S' => 5,
                b'b' => 4,
                b'e' => 3,
                b's' => 2,
                b'o' => 1,
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }
}

fn rung_char(action: Action) -> char {
    match action {
        Action::Observe => 'o',
        Action::Steer => 's',
        Action::Escalate => 'e',
        Action::Block => 'b',
        Action::Stop => 'S',
    }
}

/// The track of a replayed run: `round_calls` and `round_tokens` are the
/// calls and (where recorded) tokens of each of the transcript's rounds.
/// Calls after a stop are `x`, counted as [`crate::eval`] counts `saved`:
/// after the stopping call, or from the start of the round whose text
/// stopped the run.
pub fn track(timeline: &Timeline, round_calls: &[usize], round_tokens: &[Option<f64>]) -> SessionTrack {
    let mut rungs = String::new();
    let mut first = None;
    let mut stopped_at_round = None;
    for round in &timeline.rounds {
        if stopped_at_round.is_some() {
            break;
        }
        if let Some(verdict) = round.text_verdict.as_ref().filter(|v| v.action == Action::Stop) {
            first.get_or_insert((round.round, verdict.message.to_string()));
            stopped_at_round = Some(round.round);
            break;
        }
        for call in &round.calls {
            if stopped_at_round.is_some() {
                rungs.push('x');
                continue;
            }
            let action = call.verdict.as_ref().map(|v| v.action);
            rungs.push(action.map_or('.', rung_char));
            if let Some(verdict) = call
                .verdict
                .as_ref()
                .filter(|v| matches!(v.action, Action::Block | Action::Stop))
            {
                first.get_or_insert((round.round, verdict.message.to_string()));
            }
            if action == Some(Action::Stop) {
                stopped_at_round = Some(round.round);
            }
        }
    }
    let total: usize = round_calls.iter().sum();
    let run = rungs.chars().filter(|c| *c != 'x').count();
    let saved_calls = if stopped_at_round.is_some() {
        total.saturating_sub(run)
    } else {
        0
    };
    let missing = total.saturating_sub(rungs.chars().count());
    rungs.extend(std::iter::repeat_n(
        'x',
        if stopped_at_round.is_some() { missing } else { 0 },
    ));
    let saved_tokens = stopped_at_round.and_then(|round| {
        let after = round_tokens.get(round..).unwrap_or_default();
        after.iter().any(Option::is_some).then(|| after.iter().flatten().sum())
    });
    SessionTrack {
        rungs,
        saved_calls,
        saved_tokens,
        first,
    }
}
