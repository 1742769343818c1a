//! From bytes, text, files and directories to runs.
//!
//! A file holds one run (any accepted shape), a list of runs (a tau-bench
//! results file), or JSON Lines: a run per line (the shared trajectory
//! layout) or a message per line (a chat log, a Claude Code or Codex
//! session log, whose lines wrap the message under `message` / `payload`).
//! Gzip is recognised by its magic bytes. Every run carries its place
//! (`file`, `file:line`, `file[index]`) and every error names it.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use doom_loop::error::{Error, ErrorKind, Result};
use doom_loop::json::{js_number, parse, Value};

use super::effects::LogAgent;
use super::{get, import_by, invalid, run_list, string_field, Format, ACCEPTED_SHAPES};
use crate::host::{FileKind, FileSystem, NativeFs};
use crate::transcript::Transcript;

/// Decompressed input larger than this is refused (a gzip bomb guard).
pub const MAX_DECOMPRESSED_BYTES: u64 = 1 << 30;

/// One run read from an input, or the error that stopped it.
#[derive(Clone, Debug)]
pub struct ImportedRun {
    /// Where it came from: `file`, `file:line` or `file[index]`.
    pub place: String,
    /// The run's `source` field, else the file's name without extensions.
    pub source: String,
    /// The run's id (`id`, `instance_id`, `task_id`), else its place.
    pub id: String,
    /// Whether the run succeeded, where labelled (`resolved`, `success`,
    /// or a `reward` of 1).
    pub resolved: Option<bool>,
    /// How the run ended, where recorded (`exitStatus`, `exit_status`, or
    /// `info.exit_status`): the evaluation reads cost, step and attempt caps
    /// from it.
    pub exit_status: Option<String>,
    /// The format it was read as.
    pub format: Option<Format>,
    /// The transcript, or an error naming the place and run id.
    pub transcript: Result<Transcript>,
    /// What the import noticed but read past (lines skipped, formats mixed).
    pub warnings: Vec<String>,
}

fn with_place(place: &str, id: Option<&str>, error: Error) -> Error {
    let prefix = match id {
        Some(id) if id != place => format!("{place} (run {id})"),
        _ => place.to_string(),
    };
    Error::new(error.kind(), format!("{prefix}: {}", error.message()))
}

fn scalar(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.to_string()),
        Value::Number(n) => Some(js_number(*n)),
        _ => None,
    }
}

fn run_id(run: &Value) -> Option<String> {
    if let Some(id) = scalar(get(run, "id")).or_else(|| scalar(get(run, "instance_id"))) {
        return Some(id);
    }
    if let Some(task) = scalar(get(run, "task_id")) {
        return Some(match scalar(get(run, "trial")) {
            Some(trial) => format!("task{task}-trial{trial}"),
            None => format!("task{task}"),
        });
    }
    get(run, "info").and_then(|info| scalar(get(info, "instance_id")))
}

fn resolved(run: &Value) -> Option<bool> {
    match (get(run, "resolved"), get(run, "success"), get(run, "reward")) {
        (Some(Value::Bool(b)), _, _) | (_, Some(Value::Bool(b)), _) => Some(*b),
        (_, _, Some(Value::Number(r))) => Some(*r == 1.0),
        _ => None,
    }
}

/// The file name without directories and without `.gz`/`.json…` endings.
fn stem(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let mut stem = base;
    for ending in [".gz", ".jsonl", ".ndjson", ".json", ".traj"] {
        stem = stem.strip_suffix(ending).unwrap_or(stem);
    }
    stem.to_string()
}

fn run_from(document: &Value, place: String, name: &str) -> ImportedRun {
    run_by(document, place, name, None)
}

/// [`run_from`] of a log whose lines named the agent that wrote it.
fn run_by(document: &Value, place: String, name: &str, agent: Option<LogAgent>) -> ImportedRun {
    let id = run_id(document);
    let imported = import_by(document, agent).map_err(|e| with_place(&place, id.as_deref(), e));
    let (format, transcript) = match imported {
        Ok((format, transcript)) => (Some(format), Ok(transcript)),
        Err(error) => (None, Err(error)),
    };
    ImportedRun {
        source: string_field(document, &["source"]).map_or_else(|| stem(name), |s| s.to_string()),
        id: id.unwrap_or_else(|| place.clone()),
        resolved: resolved(document),
        exit_status: scalar(get(document, "exitStatus"))
            .or_else(|| scalar(get(document, "exit_status")))
            .or_else(|| get(document, "info").and_then(|info| scalar(get(info, "exit_status")))),
        format,
        transcript,
        place,
        warnings: Vec::new(),
    }
}

fn failed(place: String, name: &str, error: Error) -> ImportedRun {
    ImportedRun {
        source: stem(name),
        id: place.clone(),
        resolved: None,
        exit_status: None,
        format: None,
        transcript: Err(with_place(&place, None, error)),
        place,
        warnings: Vec::new(),
    }
}

/// Is this parsed line a whole run (rather than one message of a run)?
fn is_run(line: &Value) -> bool {
    matches!(line, Value::Array(_))
        || ["rounds", "trajectory", "traj", "contents", "input", "output", "history"]
            .iter()
            .any(|k| matches!(get(line, k), Some(Value::Array(_))))
        || (matches!(get(line, "messages"), Some(Value::Array(_))) && get(line, "role").is_none())
}

/// pi `--mode json` events that repeat a message another event carries.
const PI_REPEATS: &[&str] = &["message_start", "message_update", "turn_end", "agent_end"];

/// The message a log line carries: the line itself, or its `message` (a
/// Claude Code session log) or `payload` (a Codex rollout) when that holds
/// a message or item.
fn line_message(line: Value) -> Option<Value> {
    // pi's `--mode json` repeats each message while streaming it and again
    // at the end of the turn and run; only `message_end` is kept.
    if string_field(&line, &["type"]).is_some_and(|t| PI_REPEATS.iter().any(|r| t == *r)) {
        return None;
    }
    let inner = ["message", "payload"].iter().find_map(|k| {
        get(&line, k)
            .filter(|m| get(m, "role").is_some() || get(m, "type").is_some() || get(m, "parts").is_some())
            .cloned()
    });
    match inner {
        Some(message) => Some(message),
        None if get(&line, "role").is_some() || get(&line, "type").is_some() || get(&line, "parts").is_some() => {
            Some(line)
        }
        None => None,
    }
}

/// Reads every run of a text: one document, a list of runs, or JSON Lines.
/// `name` (a file name, `<stdin>`, `<paste>`) is used in places and as the
/// source of runs that do not name one. Never fails as a whole: a run that
/// cannot be read is an [`ImportedRun`] holding the error.
pub fn import_text(text: &str, name: &str) -> Vec<ImportedRun> {
    import_bytes(text.as_bytes(), name)
}

/// Reads every run of some bytes: gzip (by its magic bytes) is
/// decompressed, then the text is read as [`import_text`] does.
pub fn import_bytes(bytes: &[u8], name: &str) -> Vec<ImportedRun> {
    let mut runs = Vec::new();
    for_each_run(bytes, name, &mut |run| runs.push(run));
    runs
}

/// Bytes as text, gunzipped first when they are gzip.
///
/// # Errors
/// A corrupt or truncated gzip stream, input past
/// [`MAX_DECOMPRESSED_BYTES`], or text that is not UTF-8 (with the byte
/// offset).
pub fn decode(bytes: &[u8]) -> Result<String> {
    let raw = if bytes.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::new();
        Limited::new(flate2::read::MultiGzDecoder::new(bytes))
            .read_to_end(&mut out)
            .map_err(|e| read_error(&e))?;
        out
    } else {
        bytes.to_vec()
    };
    String::from_utf8(raw).map_err(|e| not_utf8(e.utf8_error().valid_up_to()))
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The error of gzip input past [`MAX_DECOMPRESSED_BYTES`] (also what the
/// npm package says when Node's own gunzip hits the same limit).
pub fn gzip_limit_error() -> Error {
    invalid(format!("gzip: more than {MAX_DECOMPRESSED_BYTES} bytes decompressed"))
}

fn not_utf8(valid_up_to: usize) -> Error {
    invalid(format!("not UTF-8 text (byte {valid_up_to})"))
}

/// A reader's error as an import error (the gzip limit keeps its message).
fn read_error(error: &std::io::Error) -> Error {
    match error.get_ref().and_then(|e| e.downcast_ref::<LimitExceeded>()) {
        Some(_) => gzip_limit_error(),
        None => invalid(error.to_string()),
    }
}

#[derive(Debug)]
struct LimitExceeded;

impl std::fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "more than {MAX_DECOMPRESSED_BYTES} bytes decompressed")
    }
}

impl std::error::Error for LimitExceeded {}

/// A decompressing reader that fails once more than
/// [`MAX_DECOMPRESSED_BYTES`] came out of it.
struct Limited<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Limited<R> {
    fn new(inner: R) -> Self {
        Limited {
            inner,
            left: MAX_DECOMPRESSED_BYTES,
        }
    }
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self
            .inner
            .read(buf)
            .map_err(|e| std::io::Error::new(e.kind(), format!("gzip: {e}")))?;
        if n as u64 > self.left {
            return Err(std::io::Error::other(LimitExceeded));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// The lines of an input, numbered from 1, blank ones skipped; each at
/// most [`MAX_DECOMPRESSED_BYTES`] long. Everything read is kept in `raw`
/// while `keep` is set (to re-read it as one document).
struct Lines<'a> {
    reader: Box<dyn BufRead + 'a>,
    number: usize,
    keep: bool,
    raw: Vec<u8>,
    done: bool,
}

impl<'a> Lines<'a> {
    fn new(reader: impl Read + 'a) -> Self {
        let mut reader = BufReader::with_capacity(1 << 16, reader);
        let gzip = matches!(reader.fill_buf(), Ok(head) if head.starts_with(&GZIP_MAGIC));
        let reader: Box<dyn BufRead + 'a> = if gzip {
            Box::new(BufReader::with_capacity(
                1 << 16,
                Limited::new(flate2::bufread::MultiGzDecoder::new(reader)),
            ))
        } else {
            Box::new(reader)
        };
        Lines {
            reader,
            number: 0,
            keep: true,
            raw: Vec::new(),
            done: false,
        }
    }

    /// The next non-blank line (its number and its bytes, line end and
    /// surrounding whitespace trimmed), `None` at the end, or the read error.
    fn next(&mut self) -> Option<Result<(usize, Vec<u8>)>> {
        let mut line = Vec::new();
        while !self.done {
            line.clear();
            let read = (&mut self.reader)
                .take(MAX_DECOMPRESSED_BYTES + 1)
                .read_until(b'\n', &mut line);
            match read {
                Err(error) => {
                    self.done = true;
                    return Some(Err(read_error(&error)));
                }
                Ok(0) => self.done = true,
                Ok(_) => {
                    self.number += 1;
                    if line.len() as u64 > MAX_DECOMPRESSED_BYTES {
                        self.done = true;
                        return Some(Err(invalid(format!(
                            "line {}: longer than {MAX_DECOMPRESSED_BYTES} bytes",
                            self.number
                        ))));
                    }
                    if self.keep {
                        self.raw.extend_from_slice(&line);
                    }
                    let trimmed = trim(&line);
                    if !trimmed.is_empty() {
                        return Some(Ok((self.number, trimmed.to_vec())));
                    }
                }
            }
        }
        None
    }

    /// Everything from the first byte: what was read so far and the rest.
    fn whole(mut self) -> Result<Vec<u8>> {
        let mut raw = std::mem::take(&mut self.raw);
        if !self.done {
            let limit = MAX_DECOMPRESSED_BYTES.saturating_sub(raw.len() as u64);
            (&mut self.reader)
                .take(limit + 1)
                .read_to_end(&mut raw)
                .map_err(|e| read_error(&e))?;
            if raw.len() as u64 > MAX_DECOMPRESSED_BYTES {
                return Err(invalid(format!(
                    "a document longer than {MAX_DECOMPRESSED_BYTES} bytes"
                )));
            }
        }
        Ok(raw)
    }
}

fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
    let start = line.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &line[start..end]
}

/// One line parsed on its own.
fn parse_line(line: &[u8]) -> Result<Value> {
    let text = std::str::from_utf8(line)
        .map_err(|e| invalid(format!("not UTF-8 text (byte {} of the line)", e.valid_up_to())))?;
    parse(text).map_err(|e| Error::new(e.kind(), format!("not valid JSON: {}", e.message())))
}

fn is_complete(line: &Result<Value>) -> bool {
    matches!(line, Ok(Value::Object(_) | Value::Array(_)))
}

/// Most lines a JSON Lines file names in the warning about lines skipped.
const NAMED_SKIPPED_LINES: usize = 5;
/// Lines kept while a JSON Lines file has shown neither a run nor a
/// message (the rest are counted).
const MAX_PENDING_LINES: usize = 10_000;

/// Calls every run of an input with the sink, one at a time, as it is
/// read: one document, a list of runs, or JSON Lines — a run per line
/// (memory follows the largest run, not the file) or a message per line.
/// Gzip is recognised by its magic bytes (at most
/// [`MAX_DECOMPRESSED_BYTES`] decompressed). Never fails as a whole, and
/// never loses a run: an input that cannot be read, a truncated document,
/// a line that is not UTF-8 or not JSON, a header line that is not a run,
/// each is an [`ImportedRun`] holding the error with its place
/// (`file:line`), and every other run is still read. In a file with a
/// message per line, a bad line is skipped and named in a warning of the
/// run. A file is JSON Lines when one of its first two non-blank lines is
/// a JSON object or array on its own; otherwise it is one document.
pub fn for_each_run(reader: impl Read, name: &str, sink: &mut dyn FnMut(ImportedRun)) {
    let mut guard = ZeroGuard::default();
    let mut shapes_said: Option<String> = None;
    {
        let mut checked = |mut run: ImportedRun| {
            if let Err(error) = &run.transcript {
                run.transcript = Err(once_per_file(error, &run.place, &mut shapes_said));
            }
            guard.pass(run, sink);
        };
        read_runs(reader, name, &mut checked);
    }
    guard.finish(name, sink);
}

/// Never a silent zero: a file whose runs all read but hold no tool call
/// (and are not in the rounds format, where text-only rounds are explicit)
/// replays to nothing, which would read as "no loop" rather than "not
/// understood" — so it is one error naming the shapes looked for. Runs are
/// held back only while every run so far is such a run (at most
/// [`ZeroGuard::HOLD`]); a file with some calls keeps its text-only runs (a
/// run may make no call).
#[derive(Default)]
struct ZeroGuard {
    held: Vec<ImportedRun>,
    passing: bool,
}

impl ZeroGuard {
    const HOLD: usize = 1000;

    fn callless(run: &ImportedRun) -> bool {
        run.format.is_some_and(|f| f != Format::Rounds)
            && run
                .transcript
                .as_ref()
                .is_ok_and(|t| t.rounds.iter().all(|r| r.calls.is_empty()))
    }

    fn pass(&mut self, run: ImportedRun, sink: &mut dyn FnMut(ImportedRun)) {
        if self.passing {
            return sink(run);
        }
        let hold = Self::callless(&run);
        self.held.push(run);
        if !hold || self.held.len() >= Self::HOLD {
            self.passing = true;
            self.held.drain(..).for_each(&mut *sink);
        }
    }

    fn finish(self, name: &str, sink: &mut dyn FnMut(ImportedRun)) {
        if self.held.is_empty() {
            return;
        }
        let mut kinds: Vec<&str> = self.held.iter().filter_map(|r| r.format.map(Format::name)).collect();
        kinds.dedup();
        sink(failed(
            name.to_string(),
            name,
            invalid(format!(
                "no tool call of a known shape in {} run(s) read as {}; looked for: {ACCEPTED_SHAPES}",
                self.held.len(),
                kinds.join(", ")
            )),
        ));
    }
}

/// [`for_each_run`] without the zero guard.
fn read_runs(reader: impl Read, name: &str, mut sink: &mut dyn FnMut(ImportedRun)) {
    let mut lines = Lines::new(reader);
    let first = match lines.next() {
        None => return document(lines, name, &mut sink),
        Some(Err(error)) => return sink(failed(name.to_string(), name, error)),
        Some(Ok(line)) => line,
    };
    let first_value = parse_line(&first.1);
    let second = if is_complete(&first_value) {
        match lines.next() {
            None => {
                // A document on one line.
                return match first_value {
                    Ok(value) => runs_of_document(&value, name, &mut sink),
                    Err(error) => sink(failed(name.to_string(), name, error)),
                };
            }
            Some(line) => line,
        }
    } else {
        match lines.next() {
            None => return document(lines, name, &mut sink),
            Some(Ok(line)) if is_complete(&parse_line(&line.1)) => Ok(line),
            Some(_) => return document(lines, name, &mut sink),
        }
    };
    lines.keep = false;
    lines.raw = Vec::new();
    let mut reader = JsonLines::new(name);
    reader.line(first.0, first_value, &mut sink);
    let mut next = Some(second);
    while let Some(line) = next {
        match line {
            Ok((number, bytes)) => reader.line(number, parse_line(&bytes), &mut sink),
            Err(error) => {
                reader.decide(Mode::Runs, &mut sink);
                sink(failed(format!("{name}:{}", lines.number + 1), name, error));
                break;
            }
        }
        next = lines.next();
    }
    reader.finish(&mut sink);
}

/// The input read as one document.
fn document(lines: Lines<'_>, name: &str, sink: &mut dyn FnMut(ImportedRun)) {
    let several_lines = lines.number > 1;
    let text = match lines
        .whole()
        .and_then(|raw| String::from_utf8(raw).map_err(|e| not_utf8(e.utf8_error().valid_up_to())))
    {
        Ok(text) => text,
        Err(error) => return sink(failed(name.to_string(), name, error)),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    match parse(text) {
        Ok(value) => runs_of_document(&value, name, sink),
        Err(error) => {
            if let Some(found) = super::foreign::describe_text(text) {
                return sink(failed(name.to_string(), name, invalid(found)));
            }
            let what = if several_lines {
                "not valid JSON, nor JSON Lines"
            } else {
                "not valid JSON"
            };
            sink(failed(
                name.to_string(),
                name,
                Error::new(error.kind(), format!("{what}: {}", error.message())),
            ));
        }
    }
}

fn runs_of_document(document: &Value, name: &str, sink: &mut dyn FnMut(ImportedRun)) {
    match run_list(document) {
        Some(runs) => runs
            .iter()
            .enumerate()
            .for_each(|(i, run)| sink(run_from(run, format!("{name}[{i}]"), name))),
        None => sink(run_from(document, name.to_string(), name)),
    }
}

/// The accepted shapes, said once per file: later errors point back.
fn once_per_file(error: &Error, place: &str, said: &mut Option<String>) -> Error {
    let long = format!("; accepted: {ACCEPTED_SHAPES}");
    if !error.message().contains(&long) {
        return error.clone();
    }
    match said {
        None => {
            *said = Some(place.to_string());
            error.clone()
        }
        Some(first) => Error::new(
            error.kind(),
            error
                .message()
                .replace(&long, &format!(" (the shapes accepted are listed at {first})")),
        ),
    }
}

/// What a JSON Lines file turned out to hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Undecided,
    /// A run per line: a line that is not a run is a failed entry.
    Runs,
    /// A message per line (one run): bad lines are skipped with a warning.
    Messages,
}

/// A line seen before the file showed what it holds.
enum Pending {
    Bad(usize, Error),
    Other(usize, String),
}

struct JsonLines<'n> {
    name: &'n str,
    mode: Mode,
    pending: Vec<Pending>,
    pending_dropped: usize,
    messages: Vec<Value>,
    message_lines: Vec<usize>,
    skipped: Vec<String>,
    skipped_count: usize,
    /// A pi session (its first line is the header): every entry, to read
    /// the branch the session ended on at the end.
    pi_entries: Option<Vec<Value>>,
    /// What the first line that is neither a run nor a message is, when it
    /// is a log we know (a span dump): the file's one error if nothing else
    /// turns up.
    foreign: Option<String>,
    /// The coding agent the message lines name ([`LogAgent::of_line`]),
    /// unless two lines name different ones.
    agent: Option<LogAgent>,
    agents_differ: bool,
}

impl<'n> JsonLines<'n> {
    fn new(name: &'n str) -> Self {
        JsonLines {
            name,
            mode: Mode::Undecided,
            pending: Vec::new(),
            pending_dropped: 0,
            messages: Vec::new(),
            message_lines: Vec::new(),
            skipped: Vec::new(),
            skipped_count: 0,
            pi_entries: None,
            foreign: None,
            agent: None,
            agents_differ: false,
        }
    }

    fn place(&self, number: usize) -> String {
        format!("{}:{number}", self.name)
    }

    fn line(&mut self, number: usize, parsed: Result<Value>, sink: &mut dyn FnMut(ImportedRun)) {
        if let (Some(entries), Ok(value)) = (self.pi_entries.as_mut(), &parsed) {
            entries.push(value.clone());
            return;
        }
        if let Ok(header) = &parsed {
            if self.mode == Mode::Undecided && super::pi::is_session_header(header) {
                self.pi_entries = Some(vec![header.clone()]);
                self.decide(Mode::Messages, sink);
                return;
            }
        }
        match parsed {
            Err(error) => self.bad(number, error, sink),
            Ok(value) if is_run(&value) => {
                self.decide(Mode::Runs, sink);
                sink(run_from(&value, self.place(number), self.name));
            }
            Ok(value) => {
                self.note_agent(&value);
                let description = super::describe(&value);
                let foreign = super::foreign::describe_value(&value);
                match line_message(value) {
                    Some(message) => {
                        self.decide(Mode::Messages, sink);
                        if self.mode == Mode::Messages {
                            self.messages.push(message);
                            self.message_lines.push(number);
                        } else {
                            self.other(number, description, sink);
                        }
                    }
                    None => {
                        if self.foreign.is_none() {
                            self.foreign = foreign;
                        }
                        self.other(number, description, sink)
                    }
                }
            }
        }
    }

    fn note_agent(&mut self, line: &Value) {
        if let Some(agent) = LogAgent::of_line(line) {
            self.agents_differ |= self.agent.is_some_and(|known| known != agent);
            self.agent = Some(agent);
        }
    }

    fn bad(&mut self, number: usize, error: Error, sink: &mut dyn FnMut(ImportedRun)) {
        match self.mode {
            Mode::Runs => sink(failed(self.place(number), self.name, error)),
            Mode::Messages => self.skip(number, &error),
            Mode::Undecided => self.hold(Pending::Bad(number, error)),
        }
    }

    fn other(&mut self, number: usize, description: String, sink: &mut dyn FnMut(ImportedRun)) {
        match self.mode {
            Mode::Runs => sink(failed(self.place(number), self.name, not_a_run(&description))),
            // A log line that is not a message (metadata, a summary): not
            // part of the conversation, as before.
            Mode::Messages => {}
            Mode::Undecided => self.hold(Pending::Other(number, description)),
        }
    }

    fn hold(&mut self, pending: Pending) {
        if self.pending.len() < MAX_PENDING_LINES {
            self.pending.push(pending);
        } else {
            self.pending_dropped += 1;
        }
    }

    fn skip(&mut self, number: usize, error: &Error) {
        self.skipped_count += 1;
        if self.skipped.len() < NAMED_SKIPPED_LINES {
            self.skipped
                .push(format!("{} ({})", self.place(number), error.message()));
        }
    }

    /// Settles what the file holds at the first run or message line; the
    /// lines held until then are dealt with as that mode says. A message
    /// line in a file of runs is a line that is not a run.
    fn decide(&mut self, mode: Mode, sink: &mut dyn FnMut(ImportedRun)) {
        if self.mode != Mode::Undecided {
            return;
        }
        self.mode = mode;
        for pending in std::mem::take(&mut self.pending) {
            match pending {
                Pending::Bad(number, error) => self.bad(number, error, sink),
                Pending::Other(number, description) => self.other(number, description, sink),
            }
        }
        if self.pending_dropped > 0 && mode == Mode::Runs {
            let place = format!("{} (lines after the first {MAX_PENDING_LINES})", self.name);
            sink(failed(
                place,
                self.name,
                invalid(format!("{} more line(s) not runs", self.pending_dropped)),
            ));
        }
        self.pending_dropped = 0;
    }

    fn finish(mut self, sink: &mut dyn FnMut(ImportedRun)) {
        if self.mode == Mode::Undecided {
            if let Some(found) = self.foreign.take() {
                return sink(failed(self.name.to_string(), self.name, invalid(found)));
            }
            let all_bad = self.pending_dropped == 0 && self.pending.iter().all(|p| matches!(p, Pending::Bad(..)));
            if all_bad {
                // Not one line is JSON: one error for the file.
                if let Some(Pending::Bad(number, error)) = self.pending.first() {
                    let error = invalid(format!("not JSON or JSON Lines (line {number}: {})", error.message()));
                    return sink(failed(self.name.to_string(), self.name, error));
                }
            }
            self.decide(Mode::Runs, sink);
            return;
        }
        if self.mode != Mode::Messages {
            return;
        }
        let messages = match self.pi_entries.take() {
            Some(entries) => Value::Array(super::pi::session_messages(&entries)),
            None => Value::Array(std::mem::take(&mut self.messages)),
        };
        let agent = self.agent.filter(|_| !self.agents_differ);
        let mut run = run_by(&messages, self.name.to_string(), self.name, agent);
        if self.skipped_count > 0 {
            let more = self.skipped_count - self.skipped.len();
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            run.warnings.push(format!(
                "{}: {} line(s) skipped, not read: {}{more}",
                self.name,
                self.skipped_count,
                self.skipped.join(", ")
            ));
        }
        if let (Value::Array(items), Some(format)) = (&messages, run.format) {
            // A pi session's messages are rebuilt from its entries, so they
            // have no line each: the message's position stands in.
            let place = |i: usize| match self.message_lines.get(i) {
                Some(&line) => self.place(line),
                None => format!("{}, message {}", self.name, i + 1),
            };
            if let Some(warning) = super::mixed_formats(items, format, place) {
                run.warnings.push(warning);
            }
        }
        sink(run);
    }
}

fn not_a_run(description: &str) -> Error {
    invalid(format!(
        "not a run ({description}): a line of a JSON Lines file of runs holds one run"
    ))
}

/// Why a directory entry was not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skipped {
    /// A symbolic link to a directory: directory links are not followed.
    DirectoryLink,
    /// A directory already walked (reached again through a bind mount).
    Walked,
    /// A FIFO (named pipe): reading it could wait forever.
    Fifo,
    /// A socket.
    Socket,
    /// A device (`/dev/zero` never ends).
    Device,
}

impl Skipped {
    /// The short names the npm CLI passes (`directory-link`, `walked`,
    /// `fifo`, `socket`, `device`).
    pub fn from_name(name: &str) -> Option<Skipped> {
        Some(match name {
            "directory-link" => Skipped::DirectoryLink,
            "walked" => Skipped::Walked,
            "fifo" => Skipped::Fifo,
            "socket" => Skipped::Socket,
            "device" => Skipped::Device,
            _ => return None,
        })
    }

    /// The warning for `path`.
    pub fn message(self, path: &str) -> String {
        let why = match self {
            Skipped::DirectoryLink => "a link to a directory (directory links are not followed)",
            Skipped::Walked => "a directory already walked",
            Skipped::Fifo => "not a regular file (a FIFO)",
            Skipped::Socket => "not a regular file (a socket)",
            Skipped::Device => "not a regular file (a device)",
        };
        format!("{path}: skipped, {why}")
    }
}

/// What a directory walk found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Walk {
    /// The trace files, sorted.
    pub files: Vec<PathBuf>,
    /// Entries not read, with why, sorted by path.
    pub skipped: Vec<(PathBuf, Skipped)>,
    /// Sub-directories that could not be listed, with the error.
    pub unreadable: Vec<(PathBuf, String)>,
}

/// The files a path stands for: itself, or every trace file under a
/// directory (`.json`, `.jsonl`, `.ndjson`, `.traj`, and those gzipped),
/// sorted, hidden entries skipped. The walk cannot loop or hang: links to
/// directories are not followed (a directory reached twice, through a bind
/// mount, is walked once), and only regular files are listed (a link to
/// one included; FIFOs, sockets and devices are skipped). A link that
/// points nowhere is listed, so that reading it fails with its error.
///
/// # Errors
/// The I/O error of the directory named, with its path.
pub fn walk(path: &Path) -> Result<Walk> {
    walk_in(&mut NativeFs, path)
}

/// [`walk`] over a host's file system (`npx doomloop` walks with Node's
/// `fs` through the very same code).
///
/// # Errors
/// As [`walk`].
pub fn walk_in(fs: &mut dyn FileSystem, path: &Path) -> Result<Walk> {
    let mut walk = Walk::default();
    if !fs.is_dir(path) {
        walk.files.push(path.to_path_buf());
        return Ok(walk);
    }
    let mut seen = std::collections::HashSet::new();
    let mut pending = vec![path.to_path_buf()];
    let mut top = true;
    while let Some(dir) = pending.pop() {
        if let Some(id) = fs.metadata(&dir, true).ok().and_then(|m| m.id) {
            if !seen.insert(id) {
                walk.skipped.push((dir, Skipped::Walked));
                continue;
            }
        }
        let entries = match fs.read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if top => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    format!("{}: {e}", dir.display()),
                ))
            }
            Err(e) => {
                walk.unreadable.push((dir, e.to_string()));
                continue;
            }
        };
        top = false;
        for entry in entries {
            let path = dir.join(&entry.name);
            let name = entry.name.to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let Some(kind) = entry.kind else {
                if is_trace_file(&name) {
                    walk.files.push(path);
                }
                continue;
            };
            if kind == FileKind::Dir {
                pending.push(path);
                continue;
            }
            let target = if kind == FileKind::Symlink {
                match fs.metadata(&path, true) {
                    Ok(target) if target.kind == FileKind::Dir => {
                        walk.skipped.push((path, Skipped::DirectoryLink));
                        continue;
                    }
                    Ok(target) => target.kind,
                    // Dangling: listed, so that reading it says so.
                    Err(_) => kind,
                }
            } else {
                kind
            };
            if !is_trace_file(&name) {
                continue;
            }
            match special(target) {
                Some(skipped) => walk.skipped.push((path, skipped)),
                None => walk.files.push(path),
            }
        }
    }
    walk.files.sort();
    walk.skipped.sort_by(|a, b| a.0.cmp(&b.0));
    walk.unreadable.sort();
    Ok(walk)
}

fn special(kind: FileKind) -> Option<Skipped> {
    match kind {
        FileKind::Fifo => Some(Skipped::Fifo),
        FileKind::Socket => Some(Skipped::Socket),
        FileKind::Device => Some(Skipped::Device),
        FileKind::File | FileKind::Dir | FileKind::Symlink => None,
    }
}

/// The trace files of [`walk`].
///
/// # Errors
/// As [`walk`].
pub fn trace_files(path: &Path) -> Result<Vec<PathBuf>> {
    walk(path).map(|walk| walk.files)
}

fn is_trace_file(name: &str) -> bool {
    let name = name.strip_suffix(".gz").unwrap_or(name);
    [".json", ".jsonl", ".ndjson", ".traj"]
        .iter()
        .any(|e| name.ends_with(e))
}

/// Reads every run under a path (a file, or a directory's trace files).
/// Unreadable files are runs holding the error, like unreadable lines.
pub fn import_path(path: &Path) -> Vec<ImportedRun> {
    let name = path.display().to_string();
    match walk(path) {
        Ok(walk) => {
            let mut runs: Vec<ImportedRun> = walk
                .unreadable
                .iter()
                .map(|(dir, error)| unreadable(&dir.display().to_string(), error))
                .collect();
            for file in &walk.files {
                for_each_file_run(file, &mut |run| runs.push(run));
            }
            runs
        }
        Err(error) => vec![failed(name.clone(), &name, error)],
    }
}

/// A file (or directory) that could not be read, as a failed run.
pub fn unreadable(name: &str, reason: &str) -> ImportedRun {
    failed(name.to_string(), name, invalid(reason.to_string()))
}

/// The failed run of an input refused by the gzip limit (see
/// [`gzip_limit_error`]).
pub fn gzip_refused(name: &str) -> ImportedRun {
    failed(name.to_string(), name, gzip_limit_error())
}

/// Reads every run of one file.
pub fn import_file(file: &Path) -> Vec<ImportedRun> {
    let mut runs = Vec::new();
    for_each_file_run(file, &mut |run| runs.push(run));
    runs
}

/// [`for_each_run`] over a file; a file that cannot be opened is one
/// failed run naming it.
pub fn for_each_file_run(file: &Path, sink: &mut dyn FnMut(ImportedRun)) {
    for_each_file_run_in(&mut NativeFs, file, sink);
}

/// [`for_each_file_run`] over a host's file system.
pub fn for_each_file_run_in(fs: &mut dyn FileSystem, file: &Path, sink: &mut dyn FnMut(ImportedRun)) {
    let name = file.display().to_string();
    match fs.open(file) {
        Ok(handle) => for_each_run(handle, &name, sink),
        Err(e) => sink(unreadable(&name, &e.to_string())),
    }
}

/// Reads exactly one run (what `replay` needs).
///
/// # Errors
/// The run's own error, or an error when the input holds several runs or
/// none.
pub fn import_single(bytes: &[u8], name: &str) -> Result<Transcript> {
    import_one(bytes, name).map(|(transcript, _)| transcript)
}

/// [`import_single`], with the warnings of the import (lines skipped,
/// formats mixed).
///
/// # Errors
/// As [`import_single`].
pub fn import_one(bytes: &[u8], name: &str) -> Result<(Transcript, Vec<String>)> {
    let mut runs = import_bytes(bytes, name);
    match runs.len() {
        1 => {
            let run = runs.remove(0);
            run.transcript.map(|t| (t, run.warnings))
        }
        0 => Err(invalid(format!("{name}: no run found"))),
        n => Err(invalid(format!(
            "{name}: holds {n} runs, not one: replay one of them, or evaluate them all"
        ))),
    }
}
