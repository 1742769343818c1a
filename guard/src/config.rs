//! The guard's config files: what `doomloop hook` runs with besides the
//! event — the `doomLoop` option, per-tool loop keys (MCP tools whose
//! arguments carry a request id, say), per-tool effects (an MCP tool that
//! writes files, so a test re-run after it is not a repeat) and the tools
//! never counted.
//!
//! Two TOML files, as Codex's `config.toml` and the other agents' settings
//! come in a user and a project flavour:
//! - the user's: `$DOOMLOOP_CONFIG`, else `$XDG_CONFIG_HOME/doomloop/config.toml`,
//!   else `~/.config/doomloop/config.toml`;
//! - the project's: `.doomloop.toml` in the event's `cwd` (else the
//!   process's) or its nearest ancestor that has one.
//!
//! Each top-level key of the project's file replaces the user's
//! (`loop_keys` and `loop_effects` per tool), which replaces the built-in
//! default (`RECOMMENDED_DOOM_LOOP_OPTION`, the hook's shell-tool keys and
//! edit-tool effects); a
//! `--option` on the hook's command line (installs before the files
//! existed) wins over both. An exempt tool is the core's own `loopKey:
//! false`: its calls are never tracked, so the hook adds no logic of its own.
//!
//! A file that is not what it should be is one error naming the file, the
//! line and the key; the hook then allows the call (it never blocks an agent
//! over its own settings). Files are read through the [`Host`], so the npm
//! CLI (wasm over Node's `fs`) reads the very same files.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use doom_loop::config::{recommended_doom_loop_option, resolve_doom_loop_option};
use doom_loop::json::{Object, Value};
use doom_loop::JsString;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::event::Agent;
use doom_loop_trace::host::{FileKind, Host};

/// The project file's name, looked up from the working directory upwards.
pub const PROJECT_FILE: &str = ".doomloop.toml";

/// Where a setting came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The built-in default.
    BuiltIn,
    /// The user's file.
    User(PathBuf),
    /// The project's file.
    Project(PathBuf),
    /// `--option` on the hook's command line.
    CommandLine,
}

impl Origin {
    /// For `doomloop hook config`: `built in`, the file's path, `--option`.
    pub fn describe(&self) -> String {
        match self {
            Origin::BuiltIn => "built in".into(),
            Origin::User(path) | Origin::Project(path) => path.display().to_string(),
            Origin::CommandLine => "--option".into(),
        }
    }
}

/// One file's settings (absent keys are `None` / empty: the next file down decides).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileConfig {
    /// `option`: `true`, `false`, `"recommended"` or a table (as JSON).
    pub option: Option<Value>,
    /// `exempt`: tools never counted.
    pub exempt: Option<Vec<String>>,
    /// `[loop_keys]`: per tool, a field list (JSON array of strings) or `false`.
    pub loop_keys: Vec<(String, Value)>,
    /// `[loop_effects]`: per tool, `"write"` or `"read"` (as JSON strings).
    pub loop_effects: Vec<(String, Value)>,
}

/// The settings a hook runs with, and where each came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Effective {
    /// The `doomLoop` option (`false`: the guard is off).
    pub option: Value,
    /// Where [`Effective::option`] came from.
    pub option_from: Origin,
    /// Tools never counted.
    pub exempt: Vec<String>,
    /// Where [`Effective::exempt`] came from.
    pub exempt_from: Origin,
    /// The files' loop keys (over the agent's built-in ones), per tool.
    pub loop_keys: Vec<(String, Value, Origin)>,
    /// The files' effects (over the agent's built-in ones), per tool.
    pub loop_effects: Vec<(String, Value, Origin)>,
    /// The files looked for: the user's and the project's (`None`: there is none).
    pub user_file: Option<PathBuf>,
    /// The project's file, when one was found.
    pub project_file: Option<PathBuf>,
}

impl Default for Effective {
    fn default() -> Self {
        Effective {
            option: recommended_doom_loop_option(),
            option_from: Origin::BuiltIn,
            exempt: Vec::new(),
            exempt_from: Origin::BuiltIn,
            loop_keys: Vec::new(),
            loop_effects: Vec::new(),
            user_file: None,
            project_file: None,
        }
    }
}

impl Effective {
    /// The settings of nothing but `option` (what `--option` alone meant
    /// before the files; the tests' shorthand).
    pub fn with_option(option: Value) -> Effective {
        Effective {
            option,
            ..Effective::default()
        }
    }

    /// Lays one file over these settings (key by key; `loop_keys` and
    /// `loop_effects` tool by tool).
    pub fn apply(&mut self, file: FileConfig, origin: &Origin) {
        if let Some(option) = file.option {
            self.option = option;
            self.option_from = origin.clone();
        }
        if let Some(exempt) = file.exempt {
            self.exempt = exempt;
            self.exempt_from = origin.clone();
        }
        for (tool, key) in file.loop_keys {
            self.loop_keys.retain(|(t, _, _)| *t != tool);
            self.loop_keys.push((tool, key, origin.clone()));
        }
        for (tool, effect) in file.loop_effects {
            self.loop_effects.retain(|(t, _, _)| *t != tool);
            self.loop_effects.push((tool, effect, origin.clone()));
        }
    }

    /// The engine's `loopKeys` for `agent`: the hook's built-in shell keys,
    /// the files' keys over them, and `false` (never tracked) for each
    /// exempt tool.
    pub fn loop_keys(&self, agent: Agent) -> Object {
        let mut keys = crate::default_loop_keys(agent);
        for (tool, key, _) in &self.loop_keys {
            keys.insert(JsString::from(tool.as_str()), key.clone());
        }
        for tool in &self.exempt {
            keys.insert(JsString::from(tool.as_str()), Value::Bool(false));
        }
        keys
    }

    /// The engine's `loopEffects` for `agent`: the hook's built-in edit
    /// tools (writes), the files' effects over them.
    pub fn loop_effects(&self, agent: Agent) -> Object {
        let mut effects = crate::default_loop_effects(agent);
        for (tool, effect, _) in &self.loop_effects {
            effects.insert(JsString::from(tool.as_str()), effect.clone());
        }
        effects
    }

    /// Whether the option turns the guard off.
    pub fn is_off(&self) -> bool {
        matches!(self.option, Value::Bool(false))
    }
}

/// The user's config file: `$DOOMLOOP_CONFIG` (`true`: named explicitly,
/// so its absence is an error), else under `$XDG_CONFIG_HOME` or `~/.config`.
pub fn user_file(host: &mut dyn Host) -> Option<(PathBuf, bool)> {
    let mut var = |name: &str| {
        host.env_var(name)
            .filter(|v: &OsString| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(file) = var("DOOMLOOP_CONFIG") {
        return Some((file, true));
    }
    let dir =
        var("XDG_CONFIG_HOME").or_else(|| var("HOME").or_else(|| var("USERPROFILE")).map(|h| h.join(".config")))?;
    Some((dir.join("doomloop").join("config.toml"), false))
}

/// The project's config file: [`PROJECT_FILE`] in `dir` or its nearest
/// ancestor that has one.
pub fn project_file(host: &mut dyn Host, dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|d| d.join(PROJECT_FILE))
        .find(|file| host.metadata(file, true).is_ok_and(|m| m.kind != FileKind::Dir))
}

/// Reads a file's text: `Ok(None)` when it does not exist.
fn read_text(host: &mut dyn Host, file: &Path) -> Result<Option<String>, String> {
    match host.read_file(file) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("{}: is not UTF-8 text", file.display())),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", file.display())),
    }
}

/// The effective settings for an event in `cwd` (`None`: the process's
/// directory), with `--option` (`command_line`) over the files.
///
/// # Errors
/// A file cannot be read or is not a valid config: one line naming the
/// file, the line and the key.
pub fn load(host: &mut dyn Host, cwd: Option<&Path>, command_line: Option<&Value>) -> Result<Effective, String> {
    let mut effective = Effective::default();
    if let Some((file, named)) = user_file(host) {
        match read_text(host, &file)? {
            Some(text) => effective.apply(parse_file(&text, &file)?, &Origin::User(file.clone())),
            None if named => {
                return Err(format!(
                    "{}: DOOMLOOP_CONFIG names this file, which does not exist",
                    file.display()
                ))
            }
            None => {}
        }
        effective.user_file = Some(file);
    }
    // `has_root`, not `is_absolute`: in wasm (the npm CLI) std knows no
    // platform and calls no path absolute.
    let dir = match cwd {
        Some(dir) if dir.has_root() => Some(dir.to_path_buf()),
        _ => host.current_dir().ok(),
    };
    if let Some(file) = dir.and_then(|dir| project_file(host, &dir)) {
        if let Some(text) = read_text(host, &file)? {
            effective.apply(parse_file(&text, &file)?, &Origin::Project(file.clone()));
            effective.project_file = Some(file);
        }
    }
    if let Some(option) = command_line {
        effective.option = option.clone();
        effective.option_from = Origin::CommandLine;
    }
    Ok(effective)
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Parses one config file's text (`file` names it in errors).
///
/// # Errors
/// `FILE:LINE: key `KEY`: what is wrong` (or the TOML syntax error at its line).
pub fn parse_file(text: &str, file: &Path) -> Result<FileConfig, String> {
    let table = DeTable::parse(text).map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(text, s.start));
        format!("{}:{line}: not valid TOML: {}", file.display(), e.message())
    })?;
    read_table(table.get_ref()).map_err(|problem| {
        format!(
            "{}:{}: key `{}`: {}",
            file.display(),
            line_of(text, problem.span.start),
            problem.key,
            problem.what
        )
    })
}

/// What is wrong in a file, and where.
struct Problem {
    span: std::ops::Range<usize>,
    key: String,
    what: String,
}

fn problem(value: &Spanned<DeValue<'_>>, key: &str, what: &str) -> Problem {
    Problem {
        span: value.span(),
        key: key.to_string(),
        what: what.to_string(),
    }
}

fn read_table(table: &DeTable<'_>) -> Result<FileConfig, Problem> {
    let mut config = FileConfig::default();
    for (key, value) in table {
        match key.get_ref().as_ref() {
            "option" => config.option = Some(option(value)?),
            "exempt" => config.exempt = Some(names(value, "exempt")?),
            "loop_keys" => {
                config.loop_keys = per_tool(
                    value,
                    "loop_keys",
                    "expected a table of tool = [argument names] or false",
                    loop_key,
                )?;
            }
            "loop_effects" => {
                config.loop_effects = per_tool(
                    value,
                    "loop_effects",
                    "expected a table of tool = \"write\" or \"read\"",
                    loop_effect,
                )?;
            }
            other => {
                return Err(Problem {
                    span: key.span(),
                    key: other.to_string(),
                    what: "not a setting of doomloop (the settings are option, exempt, loop_keys and loop_effects)"
                        .into(),
                })
            }
        }
    }
    Ok(config)
}

/// A `[table]` of tool = value (`loop_keys`, `loop_effects`), each value
/// read by `read` under the key `TABLE.TOOL`.
fn per_tool(
    value: &Spanned<DeValue<'_>>,
    table: &str,
    expected: &str,
    read: fn(&Spanned<DeValue<'_>>, &str) -> Result<Value, Problem>,
) -> Result<Vec<(String, Value)>, Problem> {
    let DeValue::Table(tools) = value.get_ref() else {
        return Err(problem(value, table, expected));
    };
    tools
        .iter()
        .map(|(tool, item)| {
            let name = format!("{table}.{}", tool.get_ref());
            Ok((tool.get_ref().to_string(), read(item, &name)?))
        })
        .collect()
}

/// A tool's effect: `"write"` (it changes what a re-run reads) or
/// `"read"` — the core's `loopEffects` values, checked here to name the line.
fn loop_effect(value: &Spanned<DeValue<'_>>, key: &str) -> Result<Value, Problem> {
    match value.get_ref() {
        DeValue::String(s) if s == "write" || s == "read" => Ok(Value::String(JsString::from(s.as_ref()))),
        _ => Err(problem(value, key, "expected \"write\" or \"read\"")),
    }
}

/// `option`: `true`, `false`, `"recommended"` or a table of the option's
/// fields, which the core must accept (checked here, to name the line).
fn option(value: &Spanned<DeValue<'_>>) -> Result<Value, Problem> {
    let option = match value.get_ref() {
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::String(s) if s == "recommended" => recommended_doom_loop_option(),
        DeValue::Table(_) => json(value, "option")?,
        _ => {
            return Err(problem(
                value,
                "option",
                "expected true, false, \"recommended\" or a table of the doomLoop option's fields",
            ))
        }
    };
    match resolve_doom_loop_option(Some(&option)).result {
        Ok(_) => Ok(option),
        Err(e) => Err(problem(value, "option", &e.to_string())),
    }
}

/// A list of names (`exempt`, a loop key's fields).
fn names(value: &Spanned<DeValue<'_>>, key: &str) -> Result<Vec<String>, Problem> {
    let DeValue::Array(items) = value.get_ref() else {
        return Err(problem(value, key, "expected a list of names, like [\"poll_job\"]"));
    };
    items
        .iter()
        .map(|item| match item.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            _ => Err(problem(item, key, "expected a string")),
        })
        .collect()
}

/// A tool's loop key: a non-empty field list or `false`.
fn loop_key(value: &Spanned<DeValue<'_>>, key: &str) -> Result<Value, Problem> {
    match value.get_ref() {
        DeValue::Boolean(false) => Ok(Value::Bool(false)),
        DeValue::Array(items) if items.is_empty() => Err(problem(
            value,
            key,
            "an empty list would make every call the same; use false to exempt the tool",
        )),
        DeValue::Array(_) => Ok(Value::Array(
            names(value, key)?
                .iter()
                .map(|n| Value::String(JsString::from(n.as_str())))
                .collect(),
        )),
        _ => Err(problem(
            value,
            key,
            "expected a list of argument names, like [\"owner\", \"repo\"], or false",
        )),
    }
}

/// A TOML value as the JSON the option's fields are (a date has no JSON form).
fn json(value: &Spanned<DeValue<'_>>, key: &str) -> Result<Value, Problem> {
    Ok(match value.get_ref() {
        DeValue::String(s) => Value::String(JsString::from(s.as_ref())),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
            // Option fields are counts and amounts: f64 holds them.
            #[allow(clippy::cast_precision_loss)]
            Ok(n) => Value::Number(n as f64),
            Err(_) => return Err(problem(value, key, "integer out of range")),
        },
        DeValue::Float(f) => match f.as_str().parse::<f64>() {
            Ok(n) if n.is_finite() => Value::Number(n),
            _ => return Err(problem(value, key, "expected a finite number")),
        },
        DeValue::Datetime(_) => return Err(problem(value, key, "a date is not a value of the doomLoop option")),
        DeValue::Array(items) => Value::Array(items.iter().map(|item| json(item, key)).collect::<Result<_, _>>()?),
        DeValue::Table(entries) => {
            let mut object = Object::new();
            for (name, item) in entries {
                object.insert(
                    JsString::from(name.get_ref().as_ref()),
                    json(item, &format!("{key}.{}", name.get_ref()))?,
                );
            }
            Value::Object(object)
        }
    })
}

/// A value as one line of TOML (inline tables; strings, numbers and
/// booleans are spelled the same in JSON and TOML), to copy into a file.
fn shown(value: &Value) -> String {
    match value {
        Value::Array(items) => format!("[{}]", items.iter().map(shown).collect::<Vec<_>>().join(", ")),
        Value::Object(object) => {
            let entries: Vec<String> = object
                .iter()
                .map(|(key, item)| format!("{} = {}", toml_key(&key.to_utf8_lossy()), shown(item)))
                .collect();
            if entries.is_empty() {
                "{}".into()
            } else {
                format!("{{ {} }}", entries.join(", "))
            }
        }
        other => doom_loop::json::to_json(other),
    }
}

/// A key, bare where TOML allows it, else quoted.
fn toml_key(key: &str) -> String {
    if !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        key.to_string()
    } else {
        doom_loop::json::to_json(&Value::String(JsString::from(key)))
    }
}

/// `doomloop hook config`: the effective settings, each with where it came
/// from, as text (`agent`: with that agent's built-in shell keys).
pub fn describe(settings: &Effective, agent: Option<Agent>, dir: &Path) -> String {
    let mut out = String::new();
    let file = |path: &Option<PathBuf>| path.as_ref().map_or("none".to_string(), |p| p.display().to_string());
    out.push_str(&format!("# user file:    {}\n", file(&settings.user_file)));
    out.push_str(&format!(
        "# project file: {} (looked up from {})\n",
        file(&settings.project_file),
        dir.display()
    ));
    let option = if settings.option == recommended_doom_loop_option() {
        "\"recommended\"".to_string()
    } else {
        shown(&settings.option)
    };
    out.push_str(&format!("option = {option}   # {}\n", settings.option_from.describe()));
    let exempt: Vec<Value> = settings
        .exempt
        .iter()
        .map(|t| Value::String(JsString::from(t.as_str())))
        .collect();
    out.push_str(&format!(
        "exempt = {}   # {}\n",
        shown(&Value::Array(exempt)),
        settings.exempt_from.describe()
    ));
    out.push_str("\n[loop_keys]\n");
    let mut lines = per_tool_lines(agent, crate::default_loop_keys, &settings.loop_keys);
    for tool in &settings.exempt {
        lines.retain(|(t, _)| t != tool);
        lines.push((tool.clone(), "false   # exempt".to_string()));
    }
    push_lines(&mut out, lines);
    if agent.is_none() {
        out.push_str("# plus each agent's built-in shell-tool key: `doomloop hook config AGENT` lists them\n");
    }
    out.push_str("\n[loop_effects]\n");
    push_lines(
        &mut out,
        per_tool_lines(agent, crate::default_loop_effects, &settings.loop_effects),
    );
    if agent.is_none() {
        out.push_str("# plus each agent's built-in edit tools (writes): `doomloop hook config AGENT` lists them\n");
    }
    out
}

/// A per-tool table's entries, each with its origin: `agent`'s built-in
/// ones (`built_in`), the files' over them.
fn per_tool_lines(
    agent: Option<Agent>,
    built_in: fn(Agent) -> Object,
    files: &[(String, Value, Origin)],
) -> Vec<(String, String)> {
    let mut lines: Vec<(String, String)> = Vec::new();
    if let Some(agent) = agent {
        for (tool, value) in built_in(agent).iter() {
            let tool = tool.to_utf8_lossy().into_owned();
            lines.push((tool, format!("{}   # built in ({})", shown(value), agent.as_str())));
        }
    }
    for (tool, value, origin) in files {
        lines.retain(|(t, _)| t != tool);
        lines.push((tool.clone(), format!("{}   # {}", shown(value), origin.describe())));
    }
    lines
}

/// `"tool" = value   # origin` lines of a per-tool table.
fn push_lines(out: &mut String, lines: Vec<(String, String)>) {
    for (tool, line) in lines {
        let name = doom_loop::json::to_json(&Value::String(JsString::from(tool.as_str())));
        out.push_str(&format!("{name} = {line}\n"));
    }
}

/// `doomloop hook config --json`: the same as one JSON object.
pub fn describe_json(settings: &Effective, agent: Option<Agent>) -> String {
    let s = |t: &str| Value::String(JsString::from(t));
    let path = |p: &Option<PathBuf>| p.as_ref().map_or(Value::Null, |p| s(&p.display().to_string()));
    let keys = agent.map_or_else(
        || {
            let mut keys = Object::new();
            for (tool, key, _) in &settings.loop_keys {
                keys.insert(JsString::from(tool.as_str()), key.clone());
            }
            for tool in &settings.exempt {
                keys.insert(JsString::from(tool.as_str()), Value::Bool(false));
            }
            keys
        },
        |agent| settings.loop_keys(agent),
    );
    let effects = agent.map_or_else(
        || {
            Object::from_entries(
                settings
                    .loop_effects
                    .iter()
                    .map(|(tool, effect, _)| (JsString::from(tool.as_str()), effect.clone()))
                    .collect(),
            )
        },
        |agent| settings.loop_effects(agent),
    );
    let object = Object::from_entries(vec![
        (JsString::from("userFile"), path(&settings.user_file)),
        (JsString::from("projectFile"), path(&settings.project_file)),
        (JsString::from("option"), settings.option.clone()),
        (JsString::from("optionFrom"), s(&settings.option_from.describe())),
        (
            JsString::from("exempt"),
            Value::Array(settings.exempt.iter().map(|t| s(t)).collect()),
        ),
        (JsString::from("exemptFrom"), s(&settings.exempt_from.describe())),
        (JsString::from("loopKeys"), Value::Object(keys)),
        (JsString::from("loopEffects"), Value::Object(effects)),
    ]);
    let mut out = doom_loop::json::to_json(&Value::Object(object));
    out.push('\n');
    out
}
