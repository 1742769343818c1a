//! The `doomloop hook` command line (a subcommand of [`crate::command`],
//! so of the native binary and of `npx doomloop` alike), over the [`Host`]:
//! clap's arguments and the dispatch to the guard (`doom-loop-guard`), which
//! decides, installs, reads its config and its log without a parser of its own.

use std::ffi::OsString;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use doom_loop_guard::event::Agent;
use doom_loop_guard::install::{self, Scope};
use doom_loop_guard::{config, copilot, log, run, store, HookAnswer, HookOptions};
use doom_loop_trace::host::Host;

/// `doomloop hook …`.
#[derive(Subcommand, Debug)]
pub enum HookCommand {
    /// Answer one Claude Code hook event (JSON on stdin); Claude Code runs this
    #[command(name = "claude-code")]
    ClaudeCode(RunArgs),
    /// Answer one Gemini CLI hook event (JSON on stdin); Gemini CLI runs this
    #[command(name = "gemini-cli")]
    GeminiCli(RunArgs),
    /// Answer one Codex CLI hook event (JSON on stdin); Codex runs this
    Codex(RunArgs),
    /// Answer one GitHub Copilot CLI hook event (JSON on stdin); Copilot runs this
    Copilot(RunArgs),
    /// Print or merge the settings entry that makes an agent run the hook
    Install(InstallArgs),
    /// Print the guard's effective settings (option, exempt tools, loop keys) and the config files they came from
    Config(ConfigArgs),
    /// List what the guard did in the latest sessions (or one): each call it observed, steered, refused or stopped, with the verdict text and when
    Log(LogArgs),
}

/// `doomloop hook log`.
#[derive(Args, Debug)]
pub struct LogArgs {
    /// Only this agent's sessions
    #[arg(value_enum)]
    pub agent: Option<AgentName>,
    /// The session with this id (as the agent sent it; default: the latest sessions)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
    /// Where the per-session state files live (default: as the hook's)
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

/// `doomloop hook config`.
#[derive(Args, Debug)]
pub struct ConfigArgs {
    /// With this agent's built-in shell-tool loop key
    #[arg(value_enum)]
    pub agent: Option<AgentName>,
    /// Look the project's .doomloop.toml up from DIR (default: the current directory)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

/// How the hook runs.
#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// Where the per-session state files live (default: $DOOMLOOP_STATE_DIR, else $XDG_STATE_HOME/doomloop, else ~/.local/state/doomloop)
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// The `doomLoop` option as JSON (default: RECOMMENDED_DOOM_LOOP_OPTION)
    #[arg(long = "option", value_name = "JSON", allow_hyphen_values = true)]
    pub option: Option<String>,
}

/// The agent to install for.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum AgentName {
    /// Claude Code
    ClaudeCode,
    /// Gemini CLI
    GeminiCli,
    /// Codex CLI
    Codex,
    /// GitHub Copilot CLI
    Copilot,
}

/// `doomloop hook install`.
#[derive(Args, Debug)]
pub struct InstallArgs {
    /// The agent
    #[arg(value_enum)]
    pub agent: AgentName,
    /// The user's settings (~/.claude/settings.json, ~/.gemini/settings.json, $CODEX_HOME or ~/.codex/hooks.json, $COPILOT_HOME or ~/.copilot/hooks/doom-loop.json; the default)
    #[arg(long, conflicts_with = "project")]
    pub user: bool,
    /// The project's settings (.claude/settings.json, .gemini/settings.json, .codex/hooks.json, .github/hooks/doom-loop.json in the current directory)
    #[arg(long)]
    pub project: bool,
    /// Print the merged settings instead of writing them
    #[arg(long)]
    pub print: bool,
    /// The command the agent runs (default: this binary's path, then `hook AGENT` and --state-dir)
    #[arg(long, value_name = "COMMAND")]
    pub command: Option<String>,
    /// The state directory, written into the command
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Not written into commands any more: the option goes in the config file
    #[arg(long = "option", value_name = "JSON", allow_hyphen_values = true, hide = true)]
    pub option: Option<String>,
}

fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The words that run this CLI (`program`), quoted for a shell: what
/// `doomloop which` prints and every hook command starts with.
pub fn program_command(program: &[String]) -> String {
    program.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// The hook command written into the settings: `program` (the words that
/// run this CLI), then `hook AGENT` and `--state-dir`. The option, loop
/// keys and exempt tools live in the config file (hook/config.rs), where a
/// change needs no reinstall; a `--option` in an existing install still works.
pub fn hook_command(agent: Agent, program: &[String], state_dir: Option<&Path>) -> String {
    let mut words = vec![program_command(program)];
    words.push("hook".to_string());
    words.push(agent.as_str().to_string());
    if let Some(dir) = state_dir {
        words.push("--state-dir".into());
        words.push(quote(&dir.display().to_string()));
    }
    words.join(" ")
}

/// Where the user's config file is (for install's messages).
fn config_hint(host: &mut dyn Host) -> String {
    let user = config::user_file(host).map_or_else(
        || "~/.config/doomloop/config.toml".to_string(),
        |(path, _)| path.display().to_string(),
    );
    format!("{user} (or a project's {})", config::PROJECT_FILE)
}

/// Runs `doomloop hook …`. The hook itself always succeeds (an agent reads
/// exit status 2 as "block"), whatever went wrong.
///
/// # Errors
/// `install` could not read or write the settings, or print (the message,
/// for stderr).
pub fn main(command: HookCommand, host: &mut dyn Host) -> Result<(), String> {
    match command {
        HookCommand::ClaudeCode(args) => answer_event(Agent::ClaudeCode, &args, host),
        HookCommand::GeminiCli(args) => answer_event(Agent::GeminiCli, &args, host),
        HookCommand::Codex(args) => answer_event(Agent::Codex, &args, host),
        HookCommand::Copilot(args) => answer_event(Agent::Copilot, &args, host),
        HookCommand::Install(args) => return install_main(&args, host),
        HookCommand::Config(args) => return config_main(&args, host),
        HookCommand::Log(args) => return log_main(&args, host),
    }
    Ok(())
}

/// The words of `hook AGENT [--state-dir DIR] [--option JSON]` (after the
/// program name), each flag at most once, as two words or `--flag=value` —
/// the command line an agent runs on every event — read without clap:
/// the agent and the arguments clap would read from them, or `None` for
/// any other command line, which clap then reads (and answers, for a bad
/// hook line, as before). Only words whose reading by clap is certain are
/// taken: no value that is empty or starts with `-`, no word that is not
/// UTF-8; cli/tests/command.rs checks the two readings agree.
pub fn plain_run(words: &[OsString]) -> Option<(Agent, RunArgs)> {
    let mut words = words.iter().map(|w| w.to_str());
    if words.next()?? != "hook" {
        return None;
    }
    let agent = Agent::from_name(words.next()??)?;
    let mut args = RunArgs::default();
    while let Some(word) = words.next() {
        let (flag, attached) = match word?.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (word?, None),
        };
        let value = match attached {
            Some(value) => value,
            None => words.next()??,
        };
        if value.is_empty() || value.starts_with('-') {
            return None;
        }
        match flag {
            "--state-dir" if args.state_dir.is_none() => args.state_dir = Some(PathBuf::from(value)),
            "--option" if args.option.is_none() => args.option = Some(value.to_string()),
            _ => return None,
        }
    }
    Some((agent, args))
}

/// Answers one hook event of `agent` (JSON on stdin): always succeeds.
pub fn answer_event(agent: Agent, args: &RunArgs, host: &mut dyn Host) {
    let mut warnings = Vec::new();
    let option = match &args.option {
        None => None,
        Some(text) => match crate::compute::read_json(text, "--option") {
            Ok(v) => Some(v),
            Err(e) => {
                warnings.push(format!("{e}; using the default option"));
                None
            }
        },
    };
    let mut input = Vec::new();
    let answer = match host.stdin().and_then(|mut stdin| stdin.read_to_end(&mut input)) {
        Ok(_) => run(
            host,
            agent,
            &input,
            &HookOptions {
                state_dir: args.state_dir.clone(),
                option,
            },
        ),
        Err(e) => HookAnswer {
            stdout: String::new(),
            warnings: vec![format!("cannot read stdin: {e}; allowing the call")],
        },
    };
    warnings.extend(answer.warnings);
    let mut stdout = answer.stdout;
    // Gemini CLI reads stderr as the answer when stdout is empty: say "allow".
    if stdout.is_empty() && agent == Agent::GeminiCli {
        stdout.push_str("{}\n");
    }
    for warning in warnings {
        host.stderr(&format!("doomloop hook: {}\n", warning.replace('\n', " ")));
    }
    let _ = host.stdout(&stdout).and_then(|()| host.flush());
}

impl AgentName {
    fn agent(self) -> Agent {
        match self {
            AgentName::ClaudeCode => Agent::ClaudeCode,
            AgentName::GeminiCli => Agent::GeminiCli,
            AgentName::Codex => Agent::Codex,
            AgentName::Copilot => Agent::Copilot,
        }
    }
}

fn config_main(args: &ConfigArgs, host: &mut dyn Host) -> Result<(), String> {
    let dir = match &args.cwd {
        // `has_root`: in wasm `is_absolute` is false for every path.
        Some(dir) if dir.has_root() => dir.clone(),
        other => {
            let cwd = host
                .current_dir()
                .map_err(|e| format!("cannot tell the current directory: {e}"))?;
            other.as_ref().map_or(cwd.clone(), |d| cwd.join(d))
        }
    };
    let settings = config::load(host, Some(&dir), None)?;
    let agent = args.agent.map(AgentName::agent);
    let text = if args.json {
        config::describe_json(&settings, agent)
    } else {
        config::describe(&settings, agent, &dir)
    };
    host.stdout(&text).map_err(|e| e.message)
}

fn log_main(args: &LogArgs, host: &mut dyn Host) -> Result<(), String> {
    let dir = store::state_dir(host, args.state_dir.as_deref())?;
    let agent = args.agent.map(AgentName::agent);
    let sessions = log::sessions(host, &dir, agent, args.session.as_deref())?;
    if let (Some(id), true) = (&args.session, sessions.is_empty()) {
        return Err(format!("no hook state of session {id} in {}", dir.display()));
    }
    let text = if args.json {
        log::render_json(&sessions)
    } else {
        log::render_text(&sessions)
    };
    host.stdout(&text).map_err(|e| e.message)
}

fn install_main(args: &InstallArgs, host: &mut dyn Host) -> Result<(), String> {
    let agent = args.agent.agent();
    if args.option.is_some() {
        return Err(format!(
            "hook install no longer writes --option into the hook command: put `option = ...` in {} (docs/coding-agents.md, \"The config file\")",
            config_hint(host)
        ));
    }
    let command = match &args.command {
        Some(command) => command.clone(),
        None => {
            let program = host
                .program()
                .map_err(|e| format!("cannot tell this binary's path ({e}); pass --command"))?;
            hook_command(agent, &program, args.state_dir.as_deref())
        }
    };
    let scope = if args.project { Scope::Project } else { Scope::User };
    let home = host.env_var("HOME").map(PathBuf::from);
    let cwd = host
        .current_dir()
        .map_err(|e| format!("cannot tell the current directory: {e}"))?;
    let codex_home = host.env_var("CODEX_HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
    let copilot_home = host
        .env_var("COPILOT_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let path = match (scope, &home, &codex_home) {
        (Scope::User, _, Some(codex_home)) if agent == Agent::Codex => install::codex_user_hooks(codex_home),
        (Scope::User, _, _) if agent == Agent::Copilot && copilot_home.is_some() => {
            copilot::hooks_path(scope, Path::new("/"), copilot_home.as_deref(), &cwd)
        }
        (Scope::User, None, _) => return Err("HOME is not set; use --project or --print".into()),
        (_, home, _) => install::settings_path(agent, scope, home.as_deref().unwrap_or(Path::new("/")), &cwd),
    };
    let file = install::resolve(host, &path, scope, &cwd)?;
    let existing = match host.read_file(&file) {
        Ok(bytes) => Some(
            String::from_utf8(bytes).map_err(|_| format!("{}: stream did not contain valid UTF-8", path.display()))?,
        ),
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let text = install::edit(agent, existing.as_deref(), &command).map_err(|e| format!("{}: {e}", path.display()))?;
    if args.print {
        return host.stdout(&text).map_err(|e| e.message);
    }
    let note = match install::write(host, &file, existing.as_deref(), &text)? {
        install::Written::Unchanged => " (already there: nothing changed)".to_string(),
        install::Written::Created => String::new(),
        install::Written::Replaced { backup } => format!(" (the previous file is kept as {})", backup.display()),
    };
    let settings = config_hint(host);
    host.stdout(&format!(
        "{}: runs `{command}`{note}\nThe guard's settings (option, loop keys, exempt tools) go in {settings}: `doomloop hook config` shows them\n",
        path.display()
    ))
    .map_err(|e| e.message)?;
    match install::next_step(agent) {
        Some(step) => host.stdout(&format!("{step}\n")).map_err(|e| e.message),
        None => Ok(()),
    }
}
