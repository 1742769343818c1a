//! From bytes, text, files and directories to runs.
//!
//! A file holds one run (any accepted shape), a list of runs (a tau-bench
//! results file), or JSON Lines: a run per line (the shared trajectory
//! layout) or a message per line (a chat log, a Claude Code or Codex
//! session log, whose lines wrap the message under `message` / `payload`).
//! Gzip is recognised by its magic bytes. Every run carries its place
//! (`file`, `file:line`, `file[index]`) and every error names it.

use std::io::Read;
use std::path::{Path, PathBuf};

use doom_loop::error::{Error, ErrorKind, Result};
use doom_loop::json::{js_number, parse, Value};

use super::{get, import_detected, invalid, run_list, string_field, Format};
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
    /// The format it was read as.
    pub format: Option<Format>,
    /// The transcript, or an error naming the place and run id.
    pub transcript: Result<Transcript>,
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
    let id = run_id(document);
    let imported = import_detected(document).map_err(|e| with_place(&place, id.as_deref(), e));
    let (format, transcript) = match imported {
        Ok((format, transcript)) => (Some(format), Ok(transcript)),
        Err(error) => (None, Err(error)),
    };
    ImportedRun {
        source: string_field(document, &["source"]).map_or_else(|| stem(name), |s| s.to_string()),
        id: id.unwrap_or_else(|| place.clone()),
        resolved: resolved(document),
        format,
        transcript,
        place,
    }
}

fn failed(place: String, name: &str, error: Error) -> ImportedRun {
    ImportedRun {
        source: stem(name),
        id: place.clone(),
        resolved: None,
        format: None,
        transcript: Err(with_place(&place, None, error)),
        place,
    }
}

/// Is this parsed line a whole run (rather than one message of a run)?
fn is_run(line: &Value) -> bool {
    matches!(line, Value::Array(_))
        || ["rounds", "trajectory", "traj", "contents", "input", "output"]
            .iter()
            .any(|k| matches!(get(line, k), Some(Value::Array(_))))
        || (matches!(get(line, "messages"), Some(Value::Array(_))) && get(line, "role").is_none())
}

/// The message a log line carries: the line itself, or its `message` (a
/// Claude Code session log) or `payload` (a Codex rollout) when that holds
/// a message or item.
fn line_message(line: Value) -> Option<Value> {
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
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match parse(text) {
        Ok(document) => match run_list(&document) {
            Some(runs) => runs
                .iter()
                .enumerate()
                .map(|(i, run)| run_from(run, format!("{name}[{i}]"), name))
                .collect(),
            None => vec![run_from(&document, name.to_string(), name)],
        },
        Err(whole) => {
            let lines: Vec<(usize, &str)> = text
                .lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.trim()))
                .filter(|(_, l)| !l.is_empty())
                .collect();
            if lines.len() < 2 {
                return vec![failed(name.to_string(), name, Error::new(whole.kind(), format!("not valid JSON: {}", whole.message())))];
            }
            json_lines(&lines, name)
        }
    }
}

fn json_lines(lines: &[(usize, &str)], name: &str) -> Vec<ImportedRun> {
    let first = lines.iter().find_map(|(_, l)| parse(l).ok());
    if first.as_ref().is_none_or(is_run) {
        return lines
            .iter()
            .map(|(number, line)| {
                let place = format!("{name}:{number}");
                match parse(line) {
                    Ok(run) => run_from(&run, place, name),
                    Err(e) => failed(place, name, Error::new(e.kind(), format!("not valid JSON: {}", e.message()))),
                }
            })
            .collect();
    }
    let mut messages = Vec::with_capacity(lines.len());
    for (number, line) in lines {
        match parse(line) {
            Ok(value) => messages.extend(line_message(value)),
            Err(e) => {
                return vec![failed(
                    format!("{name}:{number}"),
                    name,
                    Error::new(e.kind(), format!("not valid JSON: {}", e.message())),
                )]
            }
        }
    }
    vec![run_from(&Value::Array(messages), name.to_string(), name)]
}

/// Reads every run of some bytes: gzip (by its magic bytes) is
/// decompressed, then the text is read as [`import_text`] does.
pub fn import_bytes(bytes: &[u8], name: &str) -> Vec<ImportedRun> {
    match decode(bytes) {
        Ok(text) => import_text(&text, name),
        Err(error) => vec![failed(name.to_string(), name, error)],
    }
}

/// Bytes as text, gunzipped first when they are gzip.
///
/// # Errors
/// A corrupt or truncated gzip stream, input past
/// [`MAX_DECOMPRESSED_BYTES`], or text that is not UTF-8 (with the byte
/// offset).
pub fn decode(bytes: &[u8]) -> Result<String> {
    let raw = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .take(MAX_DECOMPRESSED_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| invalid(format!("gzip: {e}")))?;
        if out.len() as u64 > MAX_DECOMPRESSED_BYTES {
            return Err(invalid(format!("gzip: more than {MAX_DECOMPRESSED_BYTES} bytes decompressed")));
        }
        out
    } else {
        bytes.to_vec()
    };
    String::from_utf8(raw).map_err(|e| {
        invalid(format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
    })
}

/// The files a path stands for: itself, or every trace file under a
/// directory (`.json`, `.jsonl`, `.ndjson`, `.traj`, and those gzipped),
/// sorted, hidden entries skipped.
///
/// # Errors
/// The I/O error of a directory that cannot be read, with its path.
pub fn trace_files(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| Error::new(ErrorKind::InvalidArgument, format!("{}: {e}", dir.display())))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else if is_trace_file(&name) {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn is_trace_file(name: &str) -> bool {
    let name = name.strip_suffix(".gz").unwrap_or(name);
    [".json", ".jsonl", ".ndjson", ".traj"].iter().any(|e| name.ends_with(e))
}

/// Reads every run under a path (a file, or a directory's trace files).
/// Unreadable files are runs holding the error, like unreadable lines.
pub fn import_path(path: &Path) -> Vec<ImportedRun> {
    let name = path.display().to_string();
    match trace_files(path) {
        Ok(files) => files.iter().flat_map(|file| import_file(file)).collect(),
        Err(error) => vec![failed(name.clone(), &name, error)],
    }
}

/// Reads every run of one file.
pub fn import_file(file: &Path) -> Vec<ImportedRun> {
    let name = file.display().to_string();
    match std::fs::read(file) {
        Ok(bytes) => import_bytes(&bytes, &name),
        Err(e) => vec![failed(name.clone(), &name, invalid(e.to_string()))],
    }
}

/// Reads exactly one run (what `replay` needs).
///
/// # Errors
/// The run's own error, or an error when the input holds several runs or
/// none.
pub fn import_single(bytes: &[u8], name: &str) -> Result<Transcript> {
    let mut runs = import_bytes(bytes, name);
    match runs.len() {
        1 => runs.remove(0).transcript,
        0 => Err(invalid(format!("{name}: no run found"))),
        n => Err(invalid(format!(
            "{name}: holds {n} runs, not one: replay one of them, or evaluate them all"
        ))),
    }
}
