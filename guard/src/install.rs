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
//! of Copilot's shape ([`crate::copilot`]).
//! The first three read the same shape: `hooks.EVENT = [{matcher, hooks: [{type:
//! "command", command}]}]`.
//!
//! The file is someone's: [`resolve`] decides which file is written — a
//! user's settings that are a link (a dotfiles repository) are followed to
//! the file they name, deliberately; a project's settings, which a cloned
//! repository controls, are never followed out of the project, and nothing
//! but a regular file is read or written. The new text replaces the file
//! atomically through a temporary file created exclusively beside it
//! ([`crate::store::replace`]: never through a link planted there), keeps
//! its permissions, and leaves the previous bytes in `FILE.bak` ([`write()`]).
//!
//! The edit is made on a concrete syntax tree of the file ([`edit`], with
//! dprint's `jsonc-parser`, no dependencies of its own): only the
//! installer's own entries change, every other byte stays — where parsing
//! into values and writing them back rounded numbers past 2^53 through
//! f64, turned `1e400` into `null`, collapsed duplicate keys and lost the
//! layout. Splicing text spans by hand would mean a second JSON(C) scanner
//! to keep exact; the tree also gives JSONC (comments) for free.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstInputValue, CstNode, CstObject, CstObjectProp, CstRootNode};
use jsonc_parser::ParseOptions;

use crate::event::Agent;
use doom_loop_trace::host::{FileKind, Host};

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
        Agent::Copilot => return crate::copilot::hooks_path(scope, home, None, cwd),
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

/// What [`write()`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Written {
    /// The file already held the text: not touched (and its backup kept).
    Unchanged,
    /// There was no file: a new one, owner-only.
    Created,
    /// The file was replaced; its previous bytes are in `backup`.
    Replaced {
        /// `FILE.bak`, beside it.
        backup: PathBuf,
    },
}

/// Writes the settings `text` to `file` (from [`resolve`]; `previous`: what
/// it holds now). The file keeps its permissions (a settings file holding
/// an API key stays owner-only; a new one is owner-only) and its previous
/// bytes go to `FILE.bak` beside it, with the same permissions — the
/// backup written as safely as the file: through an exclusively created
/// temporary file renamed over the name, so a link planted there is
/// replaced, never followed.
///
/// # Errors
/// The folder cannot be created or written (nothing is changed then, or
/// the backup alone is).
pub fn write(host: &mut dyn Host, file: &Path, previous: Option<&str>, text: &str) -> Result<Written, String> {
    use crate::store::replace;
    if previous == Some(text) {
        return Ok(Written::Unchanged);
    }
    let Some(previous) = previous else {
        if let Some(dir) = file.parent() {
            host.create_dir_all(dir, false)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        replace(host, file, text.as_bytes(), 0o600)?;
        return Ok(Written::Created);
    };
    let mode = host.metadata(file, false).ok().and_then(|m| m.mode).unwrap_or(0o600);
    let mut backup = file.as_os_str().to_owned();
    backup.push(".bak");
    let backup = PathBuf::from(backup);
    replace(host, &backup, previous.as_bytes(), mode)?;
    replace(host, file, text.as_bytes(), mode)?;
    Ok(Written::Replaced { backup })
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

/// What the settings parser accepts: JSON, plus the comments and trailing
/// commas of JSONC (Gemini CLI's settings allow comments; a file an agent
/// already reads is kept as it is). Nothing of JSON5 (single quotes, hex,
/// bare names): a file that is not JSONC is refused, untouched.
pub fn parse_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// The entry running `command` for `agent`: `{matcher?, hooks: [{type,
/// command}]}`, Copilot's `{type, bash}`.
fn entry(agent: Agent, command: &str, matcher: bool) -> CstInputValue {
    let text = |t: &str| CstInputValue::String(t.to_string());
    if agent == Agent::Copilot {
        return CstInputValue::Object(vec![("type".into(), text("command")), ("bash".into(), text(command))]);
    }
    let hook = CstInputValue::Object(vec![
        ("type".into(), text("command")),
        ("command".into(), text(command)),
    ]);
    let mut fields = Vec::new();
    if matcher {
        fields.push(("matcher".into(), text("*")));
    }
    fields.push(("hooks".into(), CstInputValue::Array(vec![hook])));
    CstInputValue::Object(fields)
}

/// The commands of a hook entry (`{hooks: [{command}]}`; Copilot's
/// `{bash}`), as written.
fn commands(entry: &CstNode, agent: Agent) -> Vec<String> {
    let string = |node: Option<CstNode>| node?.as_string_lit()?.decoded_value().ok();
    if agent == Agent::Copilot {
        let bash = entry.as_object().and_then(|o| o.get("bash")).and_then(|p| p.value());
        return string(bash).into_iter().collect();
    }
    let Some(hooks) = entry.as_object().and_then(|o| o.array_value("hooks")) else {
        return Vec::new();
    };
    hooks
        .elements()
        .iter()
        .filter_map(|h| string(h.as_object()?.get("command")?.value()))
        .collect()
}

/// Whether a hook entry runs a `doomloop hook AGENT` command, or exactly
/// the `command` being installed (the npm CLI run as `node …/cli.mjs`
/// writes a command without the word `doomloop`; reinstalling it must
/// replace it, not add a second hook).
pub fn is_ours(entry: &CstNode, agent: Agent, command: &str) -> bool {
    let needle = format!("hook {}", agent.as_str());
    commands(entry, agent)
        .iter()
        .any(|c| c == command || (c.contains("doomloop") && c.contains(&needle)))
}

/// A value's text without its layout: members and elements in order,
/// leaves (strings, numbers) as written — what tells an entry already
/// installed from one to replace, however it is indented.
fn compact(node: &CstNode) -> String {
    if let Some(object) = node.as_object() {
        let members: Vec<String> = object
            .properties()
            .iter()
            .map(|p| {
                let name = p.name().and_then(|n| n.decoded_value().ok()).unwrap_or_default();
                let value = p.value().map(|v| compact(&v)).unwrap_or_default();
                format!("{name:?}:{value}")
            })
            .collect();
        format!("{{{}}}", members.join(","))
    } else if let Some(array) = node.as_array() {
        let elements: Vec<String> = array.elements().iter().map(compact).collect();
        format!("[{}]", elements.join(","))
    } else {
        node.to_string().trim().to_string()
    }
}

/// [`compact`] of a value about to be written.
fn compact_input(value: &CstInputValue) -> String {
    let root = CstRootNode::parse("[]", &parse_options()).ok();
    let array = root.as_ref().and_then(CstRootNode::array_value);
    array.map_or_else(String::new, |array| compact(&array.append(value.clone())))
}

/// The one property `name` of `object` (`None`: there is none).
///
/// # Errors
/// There are two: an agent reads the last, an editor may show the first;
/// which to change is not for the install to guess.
fn only(object: &CstObject, name: &str, what: &str) -> Result<Option<CstObjectProp>, String> {
    let mut found = object
        .properties()
        .into_iter()
        .filter(|p| p.name().and_then(|n| n.decoded_value().ok()).as_deref() == Some(name));
    let first = found.next();
    if found.next().is_some() {
        return Err(format!("the settings hold {what} twice; not changing them"));
    }
    Ok(first)
}

/// The object or array member `name` of `object`, created when absent or
/// `null`; `None` when it is something else.
fn member(object: &CstObject, name: &str, what: &str, array: bool) -> Result<CstNode, String> {
    let empty = || {
        if array {
            CstInputValue::Array(Vec::new())
        } else {
            CstInputValue::Object(Vec::new())
        }
    };
    let prop = match only(object, name, what)? {
        Some(prop) => prop,
        None => object.append(name, empty()),
    };
    if prop.value().is_some_and(|v| v.as_null_keyword().is_some()) {
        prop.set_value(empty());
    }
    let value = prop.value().filter(|v| {
        if array {
            v.as_array().is_some()
        } else {
            v.as_object().is_some()
        }
    });
    value.ok_or_else(|| {
        format!(
            "the settings' {what} is not {}; not changing them",
            if array { "an array" } else { "an object" }
        )
    })
}

/// The settings text `existing` (`None`: no file yet) with the hook merged
/// in: every event gets one entry running `command`, replacing an earlier
/// `doomloop hook AGENT` entry (a second one is removed). Only those
/// entries, and the `hooks` members they need, change: every other byte —
/// other settings and hooks, comments, key order, duplicate keys elsewhere,
/// numbers as written (`12345678901234567890`, `1e400`), indentation, a
/// byte-order mark — is kept as it was (a concrete syntax tree of the file,
/// jsonc-parser's, edited in place; not a parse and a re-serialisation,
/// which rounds numbers through f64 and drops the rest).
///
/// # Errors
/// The settings are not JSON (or JSONC), not an object, or their `hooks`
/// (or one of its events) is not an object (an array), or is there twice:
/// the message says which, and nothing is to be written.
pub fn edit(agent: Agent, existing: Option<&str>, command: &str) -> Result<String, String> {
    let text = existing.unwrap_or("");
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(body) => ("\u{feff}", body),
        None => ("", text),
    };
    let root = CstRootNode::parse(body, &parse_options())
        .map_err(|e| format!("the settings are not JSON ({e}); not changing them"))?;
    let settings = match root.value() {
        None => root.object_value_or_set(),
        Some(value) => value
            .as_object()
            .ok_or("the settings are not a JSON object; not changing them")?,
    };
    if agent == Agent::Copilot && only(&settings, "version", "`version`")?.is_none() {
        // Copilot reads a hooks file that says its format, first.
        settings.insert(0, "version", CstInputValue::Number("1".into()));
    }
    let hooks = member(&settings, "hooks", "`hooks`", false)?;
    let hooks = hooks.as_object().ok_or("the settings' `hooks` is not an object")?;
    for &(event, matcher) in events(agent) {
        let entries = member(&hooks, event, &format!("`hooks.{event}`"), true)?;
        let entries = entries.as_array().ok_or("not an array")?;
        let elements = entries.elements();
        let mut ours = elements.iter().enumerate().filter(|(_, e)| is_ours(e, agent, command));
        let new = entry(agent, command, matcher);
        match ours.next() {
            None => {
                entries.append(new);
            }
            Some((_, first)) if ours.clone().next().is_none() && compact(first) == compact_input(&new) => {
                // Already there, alone: left as it is laid out.
            }
            Some((index, first)) => {
                let stale: Vec<CstNode> = std::iter::once(first).chain(ours.map(|(_, e)| e)).cloned().collect();
                // Inserted where the first one was, then the old ones
                // removed (the tree's `replace_with` misplaces indentation).
                entries.insert(index, new);
                stale.into_iter().for_each(CstNode::remove);
            }
        }
    }
    let mut out = format!("{bom}{root}");
    if !out.ends_with('\n') && body.trim().is_empty() {
        out.push('\n');
    }
    Ok(out)
}
