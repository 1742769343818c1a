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
use std::path::Path;

use doom_loop::error::Result;
use doom_loop::json::{to_json, write_json_string, Value};
use doom_loop::ladder::Action;
use doom_loop::monitor::Verdict;
use doom_loop::JsString;

use crate::import::{import_path, ImportedRun};
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
    /// Runs by the class of their first intervention.
    pub first: Split,
    /// The same, successful runs only.
    pub first_resolved: Split,
    /// Stopped runs by the class of their stopping verdict.
    pub stops: Split,
    /// Runs with any intervention (not only the first) on unchanged output.
    pub caught_unchanged: usize,
}

impl Metrics {
    /// Runs with a `block` or `stop`.
    pub fn intervened(&self) -> usize {
        self.first.unchanged + self.first.changing + self.first.unknown + self.first.text
    }

    fn add(&mut self, outcome: &RunOutcome, resolved: Option<bool>) {
        let ok = resolved == Some(true);
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
        self.first.merge(&other.first);
        self.first_resolved.merge(&other.first_resolved);
        self.stops.merge(&other.stops);
        self.caught_unchanged += other.caught_unchanged;
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

/// An evaluation in progress: add runs, then take a [`Report`].
#[derive(Clone, Debug)]
pub struct Evaluation {
    options: Vec<EvalOption>,
    /// Per source, in first-seen order: metrics per option.
    sources: Vec<(String, Vec<Metrics>)>,
    failures: Vec<Failure>,
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
            sources: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// The options being evaluated.
    pub fn options(&self) -> &[EvalOption] {
        &self.options
    }

    fn source_metrics(&mut self, source: &str) -> &mut Vec<Metrics> {
        let index = match self.sources.iter().position(|(s, _)| s == source) {
            Some(index) => index,
            None => {
                self.sources
                    .push((source.to_string(), vec![Metrics::default(); self.options.len()]));
                self.sources.len() - 1
            }
        };
        &mut self.sources[index].1
    }

    /// Replays one run under every option and counts it. `resolved` is its
    /// success label, where known. A run that failed to import (`Err`) or
    /// fails to replay is counted as failed and listed in the report.
    pub fn add_run(&mut self, source: &str, id: &str, resolved: Option<bool>, transcript: Result<Transcript>) {
        let mut transcript = match transcript {
            Ok(transcript) => transcript,
            Err(error) => {
                self.source_metrics(source).iter_mut().for_each(|m| m.failed += 1);
                self.failures.push(Failure {
                    source: source.to_string(),
                    id: id.to_string(),
                    option: None,
                    error: error.to_string(),
                });
                return;
            }
        };
        for index in 0..self.options.len() {
            transcript.option = self.options[index].option.clone();
            match evaluate_run(&transcript) {
                Ok(outcome) => self.source_metrics(source)[index].add(&outcome, resolved),
                Err(error) => {
                    self.source_metrics(source)[index].failed += 1;
                    self.failures.push(Failure {
                        source: source.to_string(),
                        id: id.to_string(),
                        option: Some(self.options[index].label.clone()),
                        error: format!("{id}: {error}"),
                    });
                }
            }
        }
    }

    /// [`Evaluation::add_run`] for an imported run.
    pub fn add_imported(&mut self, run: ImportedRun) {
        self.add_run(&run.source, &run.id, run.resolved, run.transcript);
    }

    /// Imports and adds every run under a path (a file, or a directory's
    /// trace files; `.jsonl.gz` with a run per line included). Returns the
    /// number of runs read (failed ones included).
    pub fn add_path(&mut self, path: &Path) -> usize {
        let runs = import_path(path);
        let count = runs.len();
        for run in runs {
            self.add_imported(run);
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
        }
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
    /// Runs that failed to import or replay.
    pub failures: Vec<Failure>,
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
    let mut outcome = RunOutcome {
        calls: transcript.rounds.iter().map(|r| r.calls.len()).sum(),
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
                    by_fingerprint.entry(fingerprint.as_bytes()).or_default().push(call.result.as_ref());
                }
                by_tool.entry(call.tool_name.as_bytes()).or_default().push(call.result.as_ref());
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
    let take = if streak.is_finite() && streak >= 1.0 { streak as usize } else { 1 };
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
                "source", "runs", "ok", "observed", "blocked", "stopped", "calls", "refused", "saved", "unchanged",
                "changing", "unknown", "text",
            ];
            let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
            let mut push = |name: &str, m: &Metrics| {
                rows.push(vec![
                    name.to_string(),
                    if m.failed > 0 { format!("{} +{} failed", m.runs, m.failed) } else { m.runs.to_string() },
                    if m.labelled > 0 { m.resolved.to_string() } else { "-".to_string() },
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
            out.push('\n');
        }
        out.push_str(
            "(N) = successful runs among N; unchanged/changing/unknown/text classify each run's first block or stop\n",
        );
        if !self.failures.is_empty() {
            out.push_str(&format!("{} run(s) failed:\n", self.failures.len()));
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
    /// output), `refusedPercent`, …).
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"options\":[");
        for (i, option) in self.options.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"label\":");
            push_string(&option.label, &mut out);
            out.push_str(",\"option\":");
            out.push_str(&to_json(&option.option));
            out.push_str(",\"sources\":{");
            for (j, (name, metrics)) in option.sources.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                push_string(name, &mut out);
                out.push(':');
                metrics_json(metrics, &mut out);
            }
            out.push_str("},\"total\":");
            metrics_json(&option.total, &mut out);
            out.push('}');
        }
        out.push_str("],\"failures\":[");
        for (i, failure) in self.failures.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"source\":");
            push_string(&failure.source, &mut out);
            out.push_str(",\"id\":");
            push_string(&failure.id, &mut out);
            out.push_str(",\"option\":");
            match &failure.option {
                Some(option) => push_string(option, &mut out),
                None => out.push_str("null"),
            }
            out.push_str(",\"error\":");
            push_string(&failure.error, &mut out);
            out.push('}');
        }
        out.push_str("]}");
        out
    }
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
\"saved\":{},\"refusedPercent\":{},\"savedPercent\":{},\"firstIntervention\":{},\"firstInterventionResolved\":{},\"stops\":{},\"caughtUnchanged\":{}}}",
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
        doom_loop::json::js_number(percent_number(m.refused, m.calls)),
        doom_loop::json::js_number(percent_number(m.saved, m.calls)),
        split_json(&m.first),
        split_json(&m.first_resolved),
        split_json(&m.stops),
        m.caught_unchanged,
    ));
}
