//! `doomloop hook install AGENT`: the settings entry that makes the agent
//! run the hook, printed or merged into the user's or the project's
//! settings file without touching anything else in it.
//!
//! Claude Code: `~/.claude/settings.json` (`--user`, the default) or
//! `.claude/settings.json` (`--project`), events `PreToolUse`,
//! `PostToolUseFailure` (matcher `*`), `PostToolBatch` (every call of a
//! message resolved: the round's end and its results) and `UserPromptSubmit`.
//! Gemini CLI: `~/.gemini/settings.json` or `.gemini/settings.json`,
//! events `BeforeTool`, `AfterTool` (matcher `*`), `BeforeModel` (where a
//! model response, and so a round, begins) and `BeforeAgent`.
//! Codex CLI: `$CODEX_HOME/hooks.json` (else `~/.codex/hooks.json`) or
//! `.codex/hooks.json`, events `PreToolUse`, `PostToolUse` (matcher `*`),
//! `PreModelRequest` (a round's end) and `UserPromptSubmit`; its `hooks`
//! feature is on by default in 0.169, but it runs a user's or project's
//! hook only once the user has reviewed it (the install says so).
//! GitHub Copilot CLI: a file of its own, `doom-loop.json`, in
//! `$COPILOT_HOME/hooks/` (else `~/.copilot/hooks/`) or `.github/hooks/`,
//! of Copilot's shape ([`super::copilot`]).
//! The first three read the same shape: `hooks.EVENT = [{matcher, hooks: [{type:
//! "command", command}]}]`.
//!
//! The file is someone's: [`resolve`] decides which file is written — a
//! user's settings that are a link (a dotfiles repository) are followed to
//! the file they name, deliberately; a project's settings, which a cloned
//! repository controls, are never followed out of the project, and nothing
//! but a regular file is read or written. The new text replaces the file
//! atomically through a temporary file created exclusively beside it
//! ([`super::store::replace`]: never through a link planted there).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use doom_loop::json::{parse, write_json_string, Object, Value};
use doom_loop::JsString;

use super::event::Agent;
use crate::host::{FileKind, Host};

/// Which settings file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The user's (all projects).
    User,
    /// The project's (the current directory's).
    Project,
}

/// The events an agent's hook is registered for, and whether each takes a
/// tool matcher.
pub fn events(agent: Agent) -> &'static [(&'static str, bool)] {
    match agent {
        Agent::ClaudeCode => &[
            ("PreToolUse", true),
            ("PostToolUseFailure", true),
            ("PostToolBatch", false),
            ("UserPromptSubmit", false),
        ],
        Agent::GeminiCli => &[
            ("BeforeTool", true),
            ("AfterTool", true),
            ("BeforeModel", false),
            ("BeforeAgent", false),
        ],
        Agent::Codex => &[
            ("PreToolUse", true),
            ("PostToolUse", true),
            ("PreModelRequest", false),
            ("UserPromptSubmit", false),
        ],
        // Copilot's entries take no matcher: every call.
        Agent::Copilot => &[
            ("PreToolUse", false),
            ("PostToolUse", false),
            ("PostToolUseFailure", false),
            ("PermissionRequest", false),
            ("UserPromptSubmit", false),
        ],
    }
}

/// The settings file of `agent` in `scope` (`home`: the user's home; `cwd`:
/// the project). Codex's user file is in `CODEX_HOME` when that is set
/// ([`codex_user_hooks`]).
pub fn settings_path(agent: Agent, scope: Scope, home: &Path, cwd: &Path) -> PathBuf {
    let (dir, file) = match agent {
        Agent::Copilot => return super::copilot::hooks_path(scope, home, None, cwd),
        Agent::ClaudeCode => (".claude", "settings.json"),
        Agent::GeminiCli => (".gemini", "settings.json"),
        Agent::Codex => (".codex", "hooks.json"),
    };
    match scope {
        Scope::User => home.join(dir).join(file),
        Scope::Project => cwd.join(dir).join(file),
    }
}

/// Codex's user hooks file when `CODEX_HOME` is set: `$CODEX_HOME/hooks.json`
/// (Codex reads its user configuration there instead of `~/.codex`).
pub fn codex_user_hooks(codex_home: &Path) -> PathBuf {
    codex_home.join("hooks.json")
}

/// `path` with its links resolved as far as anything exists: the real
/// path of its nearest existing ancestor, then the names still to be
/// created (a link pointing nowhere is an error: it is not created).
fn real_path_to_be(host: &mut dyn Host, path: &Path) -> std::io::Result<PathBuf> {
    let mut missing = Vec::new();
    let mut at = path;
    loop {
        match host.metadata(at, false) {
            Ok(_) => {
                let mut real = host.real_path(at)?;
                real.extend(missing.iter().rev());
                return Ok(real);
            }
            Err(e) if e.kind() == ErrorKind::NotFound => match (at.parent(), at.file_name()) {
                (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => {
                    missing.push(name);
                    at = parent;
                }
                _ => return Ok(path.to_path_buf()),
            },
            Err(e) => return Err(e),
        }
    }
}

/// The file the install reads and writes for the settings at `path`: the
/// file itself, or the one a link there names. The user's links are
/// followed (a settings file kept in a dotfiles repository gets the hook,
/// and the link stays a link). In `Scope::Project` (`cwd`: the project)
/// the settings, their folder and whatever they link to must stay inside
/// the project: a repository cannot send the install to a file of the
/// user's elsewhere.
///
/// # Errors
/// A link out of the project, a link to nothing, or something that is not
/// a regular file (a FIFO, a device, a folder): the message says which,
/// and nothing is read or written.
pub fn resolve(host: &mut dyn Host, path: &Path, scope: Scope, cwd: &Path) -> Result<PathBuf, String> {
    let real = real_path_to_be(host, path)
        .map_err(|e| format!("{}: cannot follow it ({e}); not changing anything", path.display()))?;
    if scope == Scope::Project {
        let root = host.real_path(cwd).map_err(|e| format!("{}: {e}", cwd.display()))?;
        if !real.starts_with(&root) {
            return Err(format!(
                "{} leads out of the project (to {}); a project's settings are not followed out of it: not changing anything",
                path.display(),
                real.display()
            ));
        }
    }
    match host.metadata(&real, false) {
        Ok(meta) if meta.kind != FileKind::File => {
            Err(format!("{} is not a regular file; not changing it", real.display()))
        }
        _ => Ok(real),
    }
}

/// What the user must do after the install before the agent runs the hook.
pub fn next_step(agent: Agent) -> Option<&'static str> {
    match agent {
        Agent::Codex => Some(
            "Codex runs a new hook only after you review it: start `codex` and trust the doomloop hooks it lists as needing review (automation that vets its hooks can pass `codex exec --dangerously-bypass-hook-trust`)",
        ),
        Agent::Copilot => Some(
            "Copilot runs a repository's .github/hooks only in a folder you trust (`copilot --trust-folder -p …` trusts it for one run)",
        ),
        Agent::ClaudeCode | Agent::GeminiCli => None,
    }
}

fn s(text: &str) -> JsString {
    JsString::from(text)
}

fn entry(command: &str, matcher: bool) -> Value {
    let hook = Value::Object(Object::from_entries(vec![
        (s("type"), Value::String(s("command"))),
        (s("command"), Value::String(s(command))),
    ]));
    let mut fields = Vec::new();
    if matcher {
        fields.push((s("matcher"), Value::String(s("*"))));
    }
    fields.push((s("hooks"), Value::Array(vec![hook])));
    Value::Object(Object::from_entries(fields))
}

/// Whether a hook entry runs a `doomloop hook AGENT` command, or exactly
/// the `command` being installed (the npm CLI run as `node …/cli.mjs`
/// writes a command without the word `doomloop`; reinstalling it must
/// replace it, not add a second hook).
fn is_ours(entry: &Value, agent: Agent, command: &str) -> bool {
    let needle = format!("hook {}", agent.as_str());
    let Some(Value::Array(hooks)) = entry.as_object().and_then(|o| o.get("hooks")) else {
        return false;
    };
    hooks.iter().any(|h| {
        h.as_object()
            .and_then(|o| o.get("command"))
            .and_then(Value::as_js_string)
            .is_some_and(|c| {
                let c = c.to_utf8_lossy();
                c == command || (c.contains("doomloop") && c.contains(&needle))
            })
    })
}

/// Merges the hook into the settings `existing` (`None`: no file yet):
/// every event gets one entry running `command`, replacing an earlier
/// `doomloop hook AGENT` entry, keeping every other entry and setting.
///
/// # Errors
/// The existing settings are not a JSON object (or `hooks` is not one).
pub fn merge(agent: Agent, existing: Option<&str>, command: &str) -> Result<Value, String> {
    if agent == Agent::Copilot {
        // Copilot's own file shape (`version`, `bash` commands).
        return super::copilot::merge(existing, command);
    }
    let events = events(agent)
        .iter()
        .map(|&(event, matcher)| (event, entry(command, matcher)));
    merge_entries(existing, events, |e| is_ours(e, agent, command)).map(Value::Object)
}

/// The merge every agent's file shares: in the JSON object `existing`
/// (`None` or blank: none yet), each event's list under `hooks` gets its
/// new entry in place of the first entry `is_ours` recognises (the others of
/// ours dropped), or at its end; every other key and entry is kept, in order.
///
/// # Errors
/// `existing` is not a JSON object, or its `hooks` (or an event's list) has
/// another type: nothing is changed.
pub fn merge_entries<'a>(
    existing: Option<&str>,
    events: impl Iterator<Item = (&'a str, Value)>,
    is_ours: impl Fn(&Value) -> bool,
) -> Result<Object, String> {
    let settings = match existing.map(str::trim) {
        None | Some("") => Value::Object(Object::new()),
        Some(text) => parse(text).map_err(|e| format!("the settings are not JSON ({e}); not changing them"))?,
    };
    let Value::Object(settings) = settings else {
        return Err("the settings are not a JSON object; not changing them".into());
    };
    let mut hooks = match settings.get("hooks") {
        None | Some(Value::Null) => Object::new(),
        Some(Value::Object(hooks)) => hooks.clone(),
        Some(_) => return Err("the settings' `hooks` is not an object; not changing them".into()),
    };
    for (event, new) in events {
        let mut entries = match hooks.get(event) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(entries)) => entries.clone(),
            Some(_) => {
                return Err(format!(
                    "the settings' `hooks.{event}` is not an array; not changing them"
                ))
            }
        };
        match entries.iter().position(&is_ours) {
            Some(i) => {
                entries[i] = new;
                let mut first = true;
                entries.retain(|e| !is_ours(e) || std::mem::replace(&mut first, false));
            }
            None => entries.push(new),
        }
        hooks.insert(s(event), Value::Array(entries));
    }
    let mut out: Vec<(JsString, Value)> = settings.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    match out.iter_mut().find(|(k, _)| *k == "hooks") {
        Some(slot) => slot.1 = Value::Object(hooks),
        None => out.push((s("hooks"), Value::Object(hooks))),
    }
    Ok(Object::from_entries(out))
}

/// JSON with two-space indentation (settings files are read by people).
pub fn pretty(value: &Value) -> String {
    let mut out = String::new();
    write_pretty(value, 0, &mut out);
    out.push('\n');
    out
}

fn write_pretty(value: &Value, depth: usize, out: &mut String) {
    let indent = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                write_pretty(item, depth + 1, out);
            }
            indent(out, depth);
            out.push(']');
        }
        Value::Object(object) if !object.is_empty() => {
            out.push('{');
            for (i, (key, item)) in object.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                write_json_string(key, out);
                out.push_str(": ");
                write_pretty(item, depth + 1, out);
            }
            indent(out, depth);
            out.push('}');
        }
        other => out.push_str(&doom_loop::json::to_json(other)),
    }
}
