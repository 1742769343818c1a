//! What the guard did: each session's interventions — the call, the rung,
//! the verdict text the agent or the model read, and when — kept in the
//! session's state file (at most [`MAX_ENTRIES`], the latest), and
//! `doomloop hook log`, which lists them from the state directory.
//!
//! The time is the wall clock at the event, recorded for the reader only:
//! no verdict reads it.

use std::path::{Path, PathBuf};

use doom_loop::json::{parse, to_json, Object, Value};
use doom_loop::{canonicalize, JsString};

use crate::event::Agent;
use crate::store;
use doom_loop_trace::host::{FileKind, Host};

/// Interventions kept per session (the latest; older ones are dropped, so a
/// session that loops for hours keeps a state file of bounded size).
pub const MAX_ENTRIES: usize = 64;
/// Characters of a call's input kept in an entry.
const INPUT_CHARS: usize = 160;
/// Characters of a verdict text kept in an entry.
const TEXT_CHARS: usize = 2000;
/// Sessions `hook log` shows without `--session`.
pub const LATEST_SESSIONS: usize = 5;

/// One intervention.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Milliseconds since the Unix epoch, at the event.
    pub at_ms: u64,
    /// The tool of the call.
    pub tool: String,
    /// The call's input, short (a shell call's command; else its JSON).
    pub input: String,
    /// `observe`, `steer`, `block` or `stop`.
    pub rung: String,
    /// The verdict text (what the model read, or the stop's reason).
    pub text: String,
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// A call's input in one short line: a shell call's command, else its
/// canonical JSON, cut at 160 characters.
pub fn short_input(input: &Value) -> String {
    let command = input
        .as_object()
        .and_then(|o| o.get("command"))
        .and_then(Value::as_js_string)
        .map(|c| c.to_utf8_lossy().into_owned());
    let text = command.unwrap_or_else(|| match canonicalize(input) {
        Ok(text) => text,
        Err(_) => to_json(input),
    });
    cut(&text.replace('\n', " "), INPUT_CHARS)
}

impl Entry {
    /// An entry for `tool`'s call with `input`.
    pub fn new(at_ms: u64, tool: &str, input: &Value, rung: &str, text: &str) -> Entry {
        Entry {
            at_ms,
            tool: tool.to_string(),
            input: short_input(input),
            rung: rung.to_string(),
            text: cut(text, TEXT_CHARS),
        }
    }

    /// As stored in the state file.
    pub fn to_value(&self) -> Value {
        let s = |t: &str| Value::String(JsString::from(t));
        #[allow(clippy::cast_precision_loss)]
        let at = Value::Number(self.at_ms as f64);
        Value::Object(Object::from_entries(vec![
            (JsString::from("at"), at),
            (JsString::from("tool"), s(&self.tool)),
            (JsString::from("input"), s(&self.input)),
            (JsString::from("rung"), s(&self.rung)),
            (JsString::from("text"), s(&self.text)),
        ]))
    }

    /// From the state file (`None`: not an entry).
    pub fn from_value(value: &Value) -> Option<Entry> {
        let o = value.as_object()?;
        let text = |k: &str| {
            o.get(k)
                .and_then(Value::as_js_string)
                .map(|v| v.to_utf8_lossy().into_owned())
        };
        Some(Entry {
            at_ms: millis(o.get("at"))?,
            tool: text("tool")?,
            input: text("input").unwrap_or_default(),
            rung: text("rung")?,
            text: text("text").unwrap_or_default(),
        })
    }
}

/// Milliseconds since the epoch, as stored (`None`: not a time).
pub fn millis(value: Option<&Value>) -> Option<u64> {
    let at = value.and_then(Value::as_f64).filter(|t| t.is_finite() && *t >= 0.0)?;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Some(at as u64)
}

/// Appends `entry`, dropping the oldest beyond [`MAX_ENTRIES`].
pub fn push(log: &mut Vec<Entry>, entry: Entry) {
    log.push(entry);
    if log.len() > MAX_ENTRIES {
        let extra = log.len() - MAX_ENTRIES;
        log.drain(..extra);
    }
}

/// `YYYY-MM-DD HH:MM:SS UTC` of milliseconds since the epoch (the civil
/// calendar from days, Howard Hinnant's algorithm).
pub fn utc(at_ms: u64) -> String {
    let secs = at_ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// One session's record, as `hook log` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionLog {
    /// The agent.
    pub agent: Agent,
    /// The session id (as the agent sent it, where the state recorded it;
    /// else the file's name).
    pub session: String,
    /// The state file.
    pub file: PathBuf,
    /// Its last event (ms since the epoch; the file's last change for a
    /// state written before the hook recorded it).
    pub last_event_ms: u64,
    /// The interventions, oldest first.
    pub entries: Vec<Entry>,
    /// The session is stopped (until the user's next prompt), with this reason.
    pub halted: Option<String>,
    /// The agent's settings lack the event that ends a round: rounds were inferred.
    pub round_end_missing: bool,
}

/// The agent and session name of a state file's name (`AGENT-NAME.json`).
fn parse_name(name: &str) -> Option<(Agent, String)> {
    let stem = name.strip_suffix(".json")?;
    stem.match_indices('-').find_map(|(i, _)| {
        let agent = Agent::from_name(&stem[..i])?;
        Some((agent, stem[i + 1..].to_string()))
    })
}

/// Reads one state file's log (`None`: not a hook state).
fn read_session(host: &mut dyn Host, file: &Path, agent: Agent, name: String, modified_ms: u64) -> Option<SessionLog> {
    let text = store::read(host, file).ok()??;
    let value = parse(&text).ok()?;
    let o = value.as_object()?;
    o.get("doomloopHook")?;
    let text_of = |k: &str| {
        o.get(k)
            .and_then(Value::as_js_string)
            .map(|v| v.to_utf8_lossy().into_owned())
    };
    let entries = match o.get("log") {
        Some(Value::Array(items)) => items.iter().filter_map(Entry::from_value).collect(),
        _ => Vec::new(),
    };
    Some(SessionLog {
        agent,
        session: text_of("session").unwrap_or(name),
        file: file.to_path_buf(),
        last_event_ms: millis(o.get("lastEvent")).filter(|t| *t > 0).unwrap_or(modified_ms),
        entries,
        halted: text_of("halted"),
        round_end_missing: matches!(o.get("roundEndMissing"), Some(Value::Bool(true))),
    })
}

/// The sessions to show: `session` (its file for each agent, or `agent`'s),
/// else the [`LATEST_SESSIONS`] most recently changed state files (of
/// `agent`, if given), oldest first.
///
/// # Errors
/// The state directory cannot be listed.
pub fn sessions(
    host: &mut dyn Host,
    dir: &Path,
    agent: Option<Agent>,
    session: Option<&str>,
) -> Result<Vec<SessionLog>, String> {
    let entries = match host.read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
    };
    let mut found = Vec::new();
    for entry in entries {
        let Some(name) = entry.name.to_str() else { continue };
        let Some((file_agent, file_session)) = parse_name(name) else {
            continue;
        };
        if agent.is_some_and(|a| a != file_agent) {
            continue;
        }
        let file = dir.join(name);
        if let Some(session) = session {
            if store::session_file(dir, file_agent, session) != file {
                continue;
            }
        }
        let meta = match host.metadata(&file, false) {
            Ok(meta) if meta.kind == FileKind::File => meta,
            _ => continue,
        };
        let modified = meta.modified_ms.unwrap_or(0);
        if let Some(log) = read_session(host, &file, file_agent, file_session, modified) {
            found.push(log);
        }
    }
    found.sort_by(|a, b| (a.last_event_ms, &a.file).cmp(&(b.last_event_ms, &b.file)));
    if session.is_none() && found.len() > LATEST_SESSIONS {
        found.drain(..found.len() - LATEST_SESSIONS);
    }
    Ok(found)
}

/// What to tell the user when the agent's settings lack the round-end
/// event (the hook's notice, and `hook log`'s).
pub fn round_end_notice(agent: Agent) -> String {
    let event = match agent {
        Agent::ClaudeCode => "PostToolBatch",
        Agent::GeminiCli => "BeforeModel",
        Agent::Codex => "PreModelRequest",
        // Copilot sends none: its rounds are always inferred, never reported.
        Agent::Copilot => "round-end",
    };
    format!(
        "this {} session's hooks lack the {event} event, which ends a round: rounds are inferred from the calls (identical parallel calls may count twice); run `doomloop hook install {}` (or install the doom-loop plugin) to fix it",
        agent.as_str(),
        agent.as_str()
    )
}

/// `hook log` as text: per session, its interventions in order.
pub fn render_text(sessions: &[SessionLog]) -> String {
    if sessions.is_empty() {
        return "no hook sessions recorded yet\n".to_string();
    }
    let mut out = String::new();
    for (i, log) in sessions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "{} session {} (last event {}; {})\n",
            log.agent.as_str(),
            log.session,
            utc(log.last_event_ms),
            log.file.display()
        ));
        if log.round_end_missing {
            out.push_str(&format!("  note: {}\n", round_end_notice(log.agent)));
        }
        if log.entries.is_empty() {
            out.push_str("  no interventions\n");
        }
        for entry in &log.entries {
            out.push_str(&format!(
                "  {}  {:<7}  {} {}\n      {}\n",
                utc(entry.at_ms),
                entry.rung,
                entry.tool,
                entry.input,
                entry.text.replace('\n', "\n      ")
            ));
        }
        if let Some(reason) = &log.halted {
            out.push_str(&format!(
                "  stopped until the next prompt: {}\n",
                cut(&reason.replace('\n', " "), 200)
            ));
        }
    }
    out
}

/// `hook log --json`: `{"sessions":[{agent, session, file, modified, halted, roundEndMissing, interventions:[…]}]}`.
pub fn render_json(sessions: &[SessionLog]) -> String {
    let s = |t: &str| Value::String(JsString::from(t));
    let items = sessions
        .iter()
        .map(|log| {
            #[allow(clippy::cast_precision_loss)]
            let last_event = Value::Number(log.last_event_ms as f64);
            Value::Object(Object::from_entries(vec![
                (JsString::from("agent"), s(log.agent.as_str())),
                (JsString::from("session"), s(&log.session)),
                (JsString::from("file"), s(&log.file.display().to_string())),
                (JsString::from("lastEvent"), last_event),
                (JsString::from("halted"), log.halted.as_deref().map_or(Value::Null, s)),
                (JsString::from("roundEndMissing"), Value::Bool(log.round_end_missing)),
                (
                    JsString::from("interventions"),
                    Value::Array(log.entries.iter().map(Entry::to_value).collect()),
                ),
            ]))
        })
        .collect();
    let mut out = to_json(&Value::Object(Object::from_entries(vec![(
        JsString::from("sessions"),
        Value::Array(items),
    )])));
    out.push('\n');
    out
}
