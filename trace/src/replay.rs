//! Replaying a recorded agent transcript through the detector.
//!
//! A transcript is what an agent run leaves behind: per model turn, the
//! assistant's text and the tool calls it made. Replaying it drives a
//! [`DoomLoopMonitor`] the way the reference engine does — text recorded
//! when the response arrives, the round's calls declared as one set, each
//! call recorded with its `loopKey` identity (absent → full arguments,
//! malformed JSON → the raw text, an unhashable identity → full arguments →
//! skipped), in-round duplicates sharing the first call's decision, and the
//! run halting at the first `stop` — and reports a timeline: per round, each
//! call's fingerprint, round-set and effective streaks, the rung reached and
//! the verdict text. The CLI (`doomloop replay`), the npm package's CLI and
//! the playground all render this one timeline, so they cannot disagree.
//!
//! Reading the formats agents write is [`crate::import`]'s job;
//! [`parse_transcript`] is its single-document entry, kept here for callers
//! of the replay API.

use doom_loop::config::resolve_doom_loop_option;
use doom_loop::error::{Error, ErrorKind, Result};
use doom_loop::js_string::JsString;
use doom_loop::json::{js_number, write_json_string, write_number, Value};
use doom_loop::ladder::Action;
use doom_loop::loop_key::{resolve_loop_key_material, LoopKey, LoopKeyResolution};
use doom_loop::monitor::{DeclaredCall, DoomLoopMonitor, RecordOptions, Verdict};

pub use crate::transcript::{Transcript, TranscriptCall, TranscriptRound};

/// What happened to one call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallReport {
    /// The tool.
    pub tool_name: JsString,
    /// Its fingerprint (absent when exempt or unhashable).
    pub fingerprint: Option<JsString>,
    /// The effective streak.
    pub streak: f64,
    /// A repeat within the round (shares the first call's decision).
    pub duplicate_in_round: bool,
    /// `loopKey: false` or a null identity: not tracked.
    pub exempt: bool,
    /// Arguments were not JSON; identity is the raw text.
    pub malformed: bool,
    /// The verdict, if a rung was reached.
    pub verdict: Option<Verdict>,
    /// The call's recorded result, where the trace has one.
    pub result: Option<Value>,
    /// The call failed (an error result).
    pub failed: bool,
}

/// One round of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundReport {
    /// 1-based round number.
    pub round: usize,
    /// The text verdict of the turn's assistant text.
    pub text_verdict: Option<Verdict>,
    /// The calls.
    pub calls: Vec<CallReport>,
}

/// The replay's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// Rounds replayed (up to and including the stopping one).
    pub rounds: Vec<RoundReport>,
    /// Rounds in the transcript.
    pub total_rounds: usize,
    /// The verdict that stopped the run.
    pub stop_verdict: Option<Verdict>,
    /// Warnings (config, loop keys, fallbacks), in order.
    pub warnings: Vec<String>,
    /// The detector state after the last replayed round.
    pub state: Value,
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidArgument, message)
}

/// Reads a transcript in any accepted shape (see [`crate::import`]).
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] naming what is missing or malformed and
/// where, or, for a shape not recognised, the shapes accepted.
pub fn parse_transcript(document: &Value) -> Result<Transcript> {
    crate::import::import_value(document)
}

/// Replays a transcript.
///
/// # Errors
/// The config's `TypeError`, or [`ErrorKind::InvalidArgument`] when the
/// `doomLoop` option turns detection off.
pub fn replay(transcript: &Transcript) -> Result<Timeline> {
    let resolution = resolve_doom_loop_option(Some(&transcript.option));
    let mut warnings = resolution.warnings;
    let config = resolution
        .result?
        .ok_or_else(|| invalid("the transcript's `doomLoop` option turns detection off"))?;
    let mut monitor = DoomLoopMonitor::new(config);
    let mut reports = Vec::new();
    let mut stop_verdict = None;
    for (index, round) in transcript.rounds.iter().enumerate() {
        let number = index + 1;
        let report = replay_round(&mut monitor, transcript, round, number, &mut warnings);
        stop_verdict = report
            .text_verdict
            .iter()
            .chain(report.calls.iter().filter_map(|c| c.verdict.as_ref()))
            .find(|v| v.action == Action::Stop)
            .cloned();
        reports.push(report);
        if stop_verdict.is_some() {
            break;
        }
    }
    Ok(Timeline {
        rounds: reports,
        total_rounds: transcript.rounds.len(),
        stop_verdict,
        warnings,
        state: monitor.get_state(),
    })
}

fn replay_round(
    monitor: &mut DoomLoopMonitor,
    transcript: &Transcript,
    round: &TranscriptRound,
    number: usize,
    warnings: &mut Vec<String>,
) -> RoundReport {
    let text_verdict = round
        .text
        .as_ref()
        .and_then(|text| monitor.record_assistant_text(text));
    let identities: Vec<Option<Value>> = round
        .calls
        .iter()
        .map(|call| identity(transcript, call, warnings))
        .collect();
    let declared: Vec<DeclaredCall> = round
        .calls
        .iter()
        .zip(&identities)
        .filter_map(|(call, key)| {
            key.as_ref().map(|key| DeclaredCall {
                tool_name: call.tool_name.clone(),
                key_material: key.clone(),
            })
        })
        .collect();
    warnings.extend(monitor.declare_round(number as f64, &declared));
    let calls = round
        .calls
        .iter()
        .zip(identities)
        .map(|(call, key)| record(monitor, call, key, number, warnings))
        .collect();
    RoundReport {
        round: number,
        text_verdict,
        calls,
    }
}

/// The call's key material, `None` when exempt (the engine's first step).
fn identity(transcript: &Transcript, call: &TranscriptCall, warnings: &mut Vec<String>) -> Option<Value> {
    if call.malformed {
        return Some(call.args.clone());
    }
    let declaration = match transcript.loop_keys.get_js(&call.tool_name) {
        Some(v) => LoopKey::Declared(v),
        None => LoopKey::Absent,
    };
    match resolve_loop_key_material(declaration, &call.args) {
        Ok(LoopKeyResolution::Exempt) => None,
        Ok(LoopKeyResolution::Key(key)) => Some(key),
        Ok(LoopKeyResolution::Fallback { key_material, warning }) => {
            warnings.push(format!("[DoomLoop] \"{}\": {warning}", call.tool_name));
            Some(key_material)
        }
        Err(error) => {
            warnings.push(format!("[DoomLoop] \"{}\": {error}; falling back to full arguments", call.tool_name));
            Some(call.args.clone())
        }
    }
}

fn record(
    monitor: &mut DoomLoopMonitor,
    call: &TranscriptCall,
    key: Option<Value>,
    number: usize,
    warnings: &mut Vec<String>,
) -> CallReport {
    let mut report = CallReport {
        tool_name: call.tool_name.clone(),
        fingerprint: None,
        streak: 0.0,
        duplicate_in_round: false,
        exempt: key.is_none(),
        malformed: call.malformed,
        verdict: None,
        result: call.result.clone(),
        failed: call.failed,
    };
    let Some(key) = key else {
        return report;
    };
    let options = RecordOptions::default();
    let round = number as f64;
    let recorded = monitor
        .record_tool_call(&call.tool_name, &key, round, &options)
        .or_else(|error| {
            warnings.push(format!(
                "[DoomLoop] could not fingerprint call to \"{}\"; falling back to full arguments: {error}",
                call.tool_name
            ));
            monitor.record_tool_call(&call.tool_name, &call.args, round, &options)
        });
    match recorded {
        Ok(record) => {
            let fed = feed_result(monitor, call, &record.fingerprint, round, warnings);
            report.fingerprint = Some(record.fingerprint);
            report.streak = record.streak;
            report.duplicate_in_round = record.duplicate_in_round;
            report.verdict = match (record.verdict, fed) {
                (Some(call), Some(result)) if result.action > call.action => Some(result),
                (call, result) => call.or(result),
            };
        }
        Err(error) => warnings.push(format!(
            "[DoomLoop] fallback identity for \"{}\" also unhashable; skipping detection for this call: {error}",
            call.tool_name
        )),
    }
    report
}

/// Feeds a call's recorded result to the monitor right after the call, as
/// the engine's `PostToolUse` would (the outcome-aware streaks, the ledger
/// and the failure streak read it; a no-op for a default monitor). The
/// call's own verdict was decided before, so a result verdict (never a
/// block) only shows when the call earned none.
fn feed_result(
    monitor: &mut DoomLoopMonitor,
    call: &TranscriptCall,
    fingerprint: &JsString,
    round: f64,
    warnings: &mut Vec<String>,
) -> Option<Verdict> {
    if monitor.config().beyond.is_off() || (call.result.is_none() && !call.failed) {
        return None;
    }
    monitor
        .record_tool_result(&call.tool_name, fingerprint, call.result.as_ref(), call.failed, round)
        .unwrap_or_else(|error| {
            warnings.push(format!(
                "[DoomLoop] the result of a \"{}\" call cannot be fingerprinted; recording it without an outcome: {error}",
                call.tool_name
            ));
            monitor
                .record_tool_result(&call.tool_name, fingerprint, None, call.failed, round)
                .ok()
                .flatten()
        })
}

impl Timeline {
    /// The timeline as JSON (for the npm package and the playground).
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"rounds\":[");
        for (i, round) in self.rounds.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&format!("{{\"round\":{},\"textVerdict\":", round.round));
            push_verdict(&round.text_verdict, &mut out);
            out.push_str(",\"calls\":[");
            for (j, call) in round.calls.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                out.push_str("{\"toolName\":");
                write_json_string(&call.tool_name, &mut out);
                out.push_str(",\"fingerprint\":");
                match &call.fingerprint {
                    Some(f) => write_json_string(f, &mut out),
                    None => out.push_str("null"),
                }
                out.push_str(",\"streak\":");
                write_number(call.streak, &mut out);
                out.push_str(&format!(
                    ",\"duplicateInRound\":{},\"exempt\":{},\"malformed\":{},\"verdict\":",
                    call.duplicate_in_round, call.exempt, call.malformed
                ));
                push_verdict(&call.verdict, &mut out);
                out.push_str(",\"result\":");
                match &call.result {
                    Some(result) => out.push_str(&doom_loop::json::to_json(result)),
                    None => out.push_str("null"),
                }
                out.push_str(&format!(",\"failed\":{}}}", call.failed));
            }
            out.push_str("]}");
        }
        out.push_str(&format!("],\"totalRounds\":{},\"stopVerdict\":", self.total_rounds));
        push_verdict(&self.stop_verdict, &mut out);
        out.push_str(",\"warnings\":");
        let warnings: Vec<Value> = self
            .warnings
            .iter()
            .map(|w| Value::String(JsString::from(w.as_str())))
            .collect();
        out.push_str(&doom_loop::json::to_json(&Value::Array(warnings)));
        out.push_str(",\"state\":");
        out.push_str(&doom_loop::json::to_json(&self.state));
        out.push('}');
        out
    }

    /// The timeline as a terminal table: one line per call, the verdict
    /// text under the call that earned it, and how the run ended.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for warning in &self.warnings {
            out.push_str(&format!("warning: {warning}\n"));
        }
        for round in &self.rounds {
            if let Some(verdict) = round.text_verdict.as_ref().filter(|v| shows_message(v)) {
                out.push_str(&format!(
                    "round {:>3}  {:<18} {:<10} streak {:>3}  {}\n           {}\n",
                    round.round,
                    "(assistant text)",
                    short(&verdict.fingerprint),
                    js_number(verdict.streak),
                    verdict.action.as_str().to_ascii_uppercase(),
                    verdict.message
                ));
            }
            for call in &round.calls {
                let fingerprint = call.fingerprint.as_ref().map_or_else(|| "-".to_string(), short);
                let mut status = match (&call.verdict, call.exempt) {
                    (_, true) => "exempt".to_string(),
                    (Some(v), _) => v.action.as_str().to_ascii_uppercase(),
                    (None, _) => "ok".to_string(),
                };
                if call.duplicate_in_round {
                    status.push_str(" (duplicate in round)");
                }
                if call.malformed {
                    status.push_str(" (malformed JSON)");
                }
                out.push_str(&format!(
                    "round {:>3}  {:<18} {:<10} streak {:>3}  {status}\n",
                    round.round,
                    call.tool_name.to_string(),
                    fingerprint,
                    js_number(call.streak)
                ));
                if let Some(v) = call.verdict.as_ref().filter(|v| shows_message(v) && !call.duplicate_in_round) {
                    out.push_str(&format!("           {}\n", v.message));
                }
            }
        }
        match &self.stop_verdict {
            Some(v) => out.push_str(&format!(
                "stopped: doom_loop at round {} of {} ({} streak {})\n",
                self.rounds.len(),
                self.total_rounds,
                detector_name(v),
                js_number(v.streak)
            )),
            None => out.push_str(&format!("completed: {} rounds, no stop\n", self.total_rounds)),
        }
        out
    }
}

/// Observe verdicts are counted, not explained: their text is the same
/// as the stronger rung's that follows.
fn shows_message(verdict: &Verdict) -> bool {
    verdict.action >= Action::Steer
}

/// The opt-in detector when one raised the verdict: it says more than the
/// reference kind it is reported under.
fn detector_name(verdict: &Verdict) -> String {
    if let Some(name) = verdict.opt_in_detector {
        return name.to_string();
    }
    match &verdict.detector {
        Value::String(s) => s.to_string(),
        other => doom_loop::json::to_json(other),
    }
}

fn short(fingerprint: &JsString) -> String {
    format!("{}…", fingerprint.slice_utf16(0, 8))
}


fn push_verdict(verdict: &Option<Verdict>, out: &mut String) {
    match verdict {
        Some(v) => v.write_json(out),
        None => out.push_str("null"),
    }
}
