//! The `doomloop` command: clap's definition of the command line, every
//! subcommand, the messages and the exit statuses — written once, over a
//! [`Host`] for all I/O. The native binary (`src/bin/doomloop.rs`) runs it
//! over [`doom_loop_trace::host::NativeHost`]; `npx doomloop` runs the same code
//! compiled to wasm over Node's `fs` and `process` (`js/cli-wasm.cjs`), so help,
//! usage, errors and exit codes come from this one clap definition in both
//! (docs/cli.md: the usage, the exit codes and the host interface).
//!
//! Failing cleanly is part of the interface: every argv is parsed as
//! `OsString` (a non-UTF-8 argument is a usage error naming it, never a
//! panic), all output goes through the host's one writer whose errors are
//! handled (a closed pipe ends the process quietly with the status a shell
//! reports for SIGPIPE; any other write error is reported), and warnings go
//! to stderr so that stdout is only the result.
//!
//! A new subcommand does its I/O through the [`Host`] (files, stdin,
//! environment, clock) and never through `std::fs`, or it would fail under
//! `npx`; `cli/tests/command.rs` runs the command over an in-memory host.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use doom_loop::json::parse;
use doom_loop::ladder::Action;
use doom_loop_guard::event::Agent;

use doom_loop_trace::conformance::run_document;
use doom_loop_trace::eval::Evaluation;
use doom_loop_trace::host::{Host, OutputError};
use doom_loop_trace::import::walk_in;

use crate::compute::{self, OptionChoice};
use crate::hook::HookCommand;

/// The bundled example transcript: the default input of `replay`.
const BILLING_AGENT: &str = include_str!("../examples/billing-agent.json");

/// Exit status: a finding (failed or no conformance cases, no runs to
/// evaluate, `--fail-on` reached).
pub const EXIT_FINDING: u8 = 1;
/// Exit status: usage, input or output errors (nothing was decided).
pub const EXIT_ERROR: u8 = 2;
/// Exit status when stdout is closed early (`| head -1`): 128 + SIGPIPE,
/// what a shell reports for a tool killed by the signal.
pub const EXIT_BROKEN_PIPE: u8 = 141;
/// `eval` shows a progress line (on a terminal) from this many files on.
const PROGRESS_FROM_FILES: usize = 20;

/// `--version` names the build that answered after the version: the
/// native binary and its platform (npm's names, as its platform package is
/// named: `native linux-x64`) or `wasm` (the npm package's fallback CLI) —
/// so a user, or a test, can tell which one the npm `doomloop` ran.
macro_rules! version_of {
    ($build:literal) => {
        concat!(env!("CARGO_PKG_VERSION"), " (", $build, ")")
    };
}

/// The version line's text after `doomloop ` (the version and which build answered).
pub const VERSION: &str = if cfg!(target_family = "wasm") {
    version_of!("wasm")
} else if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
    version_of!("native linux-x64")
} else if cfg!(all(target_os = "linux", target_arch = "aarch64")) {
    version_of!("native linux-arm64")
} else if cfg!(all(target_os = "macos", target_arch = "x86_64")) {
    version_of!("native darwin-x64")
} else if cfg!(all(target_os = "macos", target_arch = "aarch64")) {
    version_of!("native darwin-arm64")
} else if cfg!(all(windows, target_arch = "x86_64")) {
    version_of!("native win32-x64")
} else {
    version_of!("native")
};

/// The command line (clap's derive: the help texts are these doc comments).
#[derive(Parser)]
#[command(
    name = "doomloop",
    version = VERSION,
    about = "Doom-loop detector for LLM agents: conformance, fingerprints, trace replay and evaluation",
    after_help = "Exit status: 0 ok; 1 a finding (conformance failed or found no cases, eval found no runs, --fail-on reached); 2 a usage, input or output error; 141 stdout closed early.",
    subcommand_required = true,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Subcommand)]
enum Command {
    /// Run conformance corpora (files, or folders of .json files); prints `N passed, M failed` last
    Conformance {
        /// Corpus files or folders (`-` reads one document from stdin)
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Print the tool-call fingerprint: sha256(TOOL + "\n" + jcs(JSON))
    #[command(allow_negative_numbers = true)]
    Fingerprint {
        /// The tool name
        tool: String,
        /// The arguments as JSON (absent or `-`: read from stdin)
        json: Option<String>,
    },
    /// Print the RFC 8785 canonical form of JSON
    #[command(allow_negative_numbers = true)]
    Canonicalize {
        /// The JSON value (absent or `-`: read from stdin)
        json: Option<String>,
    },
    /// Replay one recorded run through the detector and print its timeline
    Replay {
        /// The trace, in any format eval reads (`-` reads stdin; absent: the bundled billing-agent example)
        file: Option<PathBuf>,
        /// Print the timeline as JSON instead of a table
        #[arg(long)]
        json: bool,
        /// The `doomLoop` option to replay with, as JSON (overrides the trace's)
        #[arg(
            long = "option",
            value_name = "JSON",
            allow_hyphen_values = true,
            conflicts_with = "recommended"
        )]
        option: Option<String>,
        /// Replay with RECOMMENDED_DOOM_LOOP_OPTION
        #[arg(long)]
        recommended: bool,
        /// Exit 1 when the replay reaches this rung (or a stronger one)
        #[arg(long, value_enum, value_name = "RUNG")]
        fail_on: Option<FailOn>,
    },
    /// Replay many recorded runs under one or more options and print what the detector would have done
    Eval {
        /// Trace files or folders (.json, .jsonl, .ndjson, .traj, gzipped too; `-` reads stdin)
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// A `doomLoop` option to evaluate, as JSON (repeatable)
        #[arg(long = "option", value_name = "JSON", allow_hyphen_values = true)]
        options: Vec<String>,
        /// Evaluate RECOMMENDED_DOOM_LOOP_OPTION
        #[arg(long)]
        recommended: bool,
        /// The reference's defaults and the recommended option, side by side
        #[arg(long)]
        compare: bool,
        /// Print the report as JSON instead of tables
        #[arg(long)]
        json: bool,
        /// Exit 1 when any run reaches this rung (or a stronger one) under any option
        #[arg(long, value_enum, value_name = "RUNG")]
        fail_on: Option<FailOn>,
        /// Also list every session that reached a block or stop, with the calls (and tokens) a stop would have saved
        #[arg(long)]
        sessions: bool,
        /// Write a self-contained HTML page (totals, and a timeline per session coloured by rung) to FILE
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// Print the command that runs this doomloop, as `hook install` writes it: the native binary's absolute path, or `node` and the npm CLI's path
    Which,
    /// Guard a coding agent: the hook command Claude Code, Gemini CLI, Codex CLI or GitHub Copilot CLI runs around every tool call, and its installer
    Hook {
        #[command(subcommand)]
        command: HookCommand,
    },
}

/// The rung at which `--fail-on` turns a run into a failure.
#[derive(Clone, Copy, ValueEnum)]
enum FailOn {
    Block,
    Stop,
}

impl FailOn {
    fn action(self) -> Action {
        match self {
            FailOn::Block => Action::Block,
            FailOn::Stop => Action::Stop,
        }
    }
}

/// Why a command did not succeed; each maps to one exit status.
enum Failure {
    /// Exit 1: the command ran and found something (printed already or here).
    Finding(String),
    /// Exit 2: bad usage or input; nothing was decided.
    Input(String),
    /// Writing the result failed.
    Output(OutputError),
}

impl From<OutputError> for Failure {
    fn from(error: OutputError) -> Self {
        Failure::Output(error)
    }
}

type Outcome = Result<(), Failure>;

/// Runs the command line `argv` (the program name first) over `host`;
/// returns the exit status (0 ok, 1 a finding, 2 a usage, input or output
/// error, 141 stdout closed early).
pub fn main<I, T>(argv: I, host: &mut dyn Host) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
    if let Some(status) = main_plain_hook(&argv, host) {
        return status;
    }
    let matches = match Cli::command().try_get_matches_from(&argv) {
        Ok(matches) => matches,
        Err(error) if is_hook_run(&argv) && error.use_stderr() => {
            // An agent reads a hook's exit status 2 as "block the call": a
            // bad hook command line allows the call instead, with one line.
            let first = error.render().to_string();
            let line = first.lines().next().unwrap_or("bad arguments").to_string();
            warn(host, &format!("doomloop hook: {line}; allowing the call"));
            return 0;
        }
        Err(error) => return clap_exit(&error, host),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => return clap_exit(&error, host),
    };
    exit_status(run(cli.command, host), host)
}

/// The hook an agent runs on every event — `hook AGENT` with at most one
/// `--state-dir` and one `--option` ([`crate::hook::plain_run`]) — read
/// without clap and answered as [`main`] answers it: `None` for any other
/// command line (clap's). Building clap's whole command tree is most of
/// what a hook event costs in freshly compiled wasm (the npm package's
/// fallback), so the line every event repeats skips it, natively too.
pub fn main_plain_hook(argv: &[OsString], host: &mut dyn Host) -> Option<u8> {
    let (agent, args) = crate::hook::plain_run(argv.get(1..)?)?;
    crate::hook::answer_event(agent, &args, host);
    Some(exit_status(Ok(()), host))
}

/// [`main_plain_hook`] for a lossy host (see [`main_lossy`]): `None` also
/// when an argument holds U+FFFD, which [`main_lossy`] answers.
pub fn main_plain_hook_lossy(argv: &[String], host: &mut dyn Host) -> Option<u8> {
    if argv.iter().any(|a| a.contains('\u{FFFD}')) {
        return None;
    }
    let argv: Vec<OsString> = std::iter::once("doomloop".into())
        .chain(argv.iter().map(OsString::from))
        .collect();
    main_plain_hook(&argv, host)
}

/// A command's outcome, its output flushed, as the exit status.
fn exit_status(result: Outcome, host: &mut dyn Host) -> u8 {
    match result.and_then(|()| host.flush().map_err(Failure::from)) {
        Ok(()) => 0,
        Err(Failure::Finding(message)) => {
            warn(host, &format!("doomloop: {message}"));
            EXIT_FINDING
        }
        Err(Failure::Input(message)) => {
            warn(host, &format!("doomloop: {message}"));
            EXIT_ERROR
        }
        Err(Failure::Output(error)) => output_failed(&error, host),
    }
}

/// [`main`] for a host whose argv (without the program name) is Unicode
/// text decoded lossily (Node's `process.argv` turns a byte that is not
/// UTF-8 into U+FFFD): an argument after the subcommand holding U+FFFD is
/// rejected as clap rejects one that is not UTF-8; in the subcommand's
/// place it is an unknown subcommand, shown lossily, as natively. (A U+FFFD
/// typed on purpose is rejected too: the limit of such a host.)
pub fn main_lossy(argv: &[String], host: &mut dyn Host) -> u8 {
    let lossy = |a: &String| a.contains('\u{FFFD}');
    let whole = || std::iter::once("doomloop".to_string()).chain(argv.iter().cloned());
    if argv.first().is_none_or(lossy) || !argv.iter().any(lossy) {
        return main(whole(), host);
    }
    let argv_os: Vec<OsString> = whole().map(OsString::from).collect();
    let mut command = Cli::command();
    command.build();
    // The deepest subcommand named before the first lossy argument.
    let mut current = command;
    for word in argv.iter().take_while(|a| !lossy(a)) {
        match current.find_subcommand(word.as_str()).cloned() {
            Some(sub) => current = sub,
            None => break,
        }
    }
    let error = current.error(
        clap::error::ErrorKind::InvalidUtf8,
        "invalid UTF-8 was detected in one or more arguments",
    );
    if is_hook_run(&argv_os) {
        warn(
            host,
            "doomloop hook: error: invalid UTF-8 was detected in one or more arguments; allowing the call",
        );
        return 0;
    }
    clap_exit(&error, host)
}

/// `doomloop hook AGENT …`: a hook an agent runs (every agent reads a
/// non-zero exit as a failed hook; Copilot CLI denies the call).
fn is_hook_run(argv: &[OsString]) -> bool {
    argv.len() >= 3 && argv[1] == "hook" && argv[2].to_str().and_then(Agent::from_name).is_some()
}

/// Help and version go to stdout (exit 0, or the output failure's
/// status); every other parse error to stderr with exit 2.
fn clap_exit(error: &clap::Error, host: &mut dyn Host) -> u8 {
    let text = error.render().to_string();
    if error.use_stderr() {
        warn(host, text.trim_end());
        return EXIT_ERROR;
    }
    match host.stdout(&text).and_then(|()| host.flush()) {
        Ok(()) => 0,
        Err(error) => output_failed(&error, host),
    }
}

fn output_failed(error: &OutputError, host: &mut dyn Host) -> u8 {
    if error.broken_pipe {
        return EXIT_BROKEN_PIPE;
    }
    warn(host, &format!("doomloop: cannot write output: {}", error.message));
    EXIT_ERROR
}

/// One line to stderr.
fn warn(host: &mut dyn Host, line: &str) {
    host.stderr(&format!("{line}\n"));
}

fn run(command: Command, host: &mut dyn Host) -> Outcome {
    match command {
        Command::Hook { command } => crate::hook::main(command, host).map_err(Failure::Input),
        Command::Which => {
            let program = host
                .program()
                .map_err(|e| Failure::Input(format!("cannot tell this binary's path: {e}")))?;
            Ok(host.stdout(&format!("{}\n", crate::hook::program_command(&program)))?)
        }
        Command::Conformance { paths } => conformance(&paths, host),
        Command::Fingerprint { tool, json } => {
            let text = argument_or_stdin(json, host)?;
            let fingerprint = compute::fingerprint_text(&tool, &text).map_err(Failure::Input)?;
            Ok(host.stdout(&format!("{fingerprint}\n"))?)
        }
        Command::Canonicalize { json } => {
            let text = argument_or_stdin(json, host)?;
            let canonical = compute::canonicalize_text(&text).map_err(Failure::Input)?;
            Ok(host.stdout(&format!("{canonical}\n"))?)
        }
        Command::Replay {
            file,
            json,
            option,
            recommended,
            fail_on,
        } => {
            let (bytes, name) = match file {
                Some(path) => (read_bytes(&path, host)?, source_name(&path)),
                None => (BILLING_AGENT.as_bytes().to_vec(), "billing-agent.json".to_string()),
            };
            let choice = match (&option, recommended) {
                (Some(text), _) => OptionChoice::Json(text),
                (None, true) => OptionChoice::Recommended,
                (None, false) => OptionChoice::Trace,
            };
            let run = compute::replay_bytes(&bytes, &name, choice, json, fail_on.map(FailOn::action))
                .map_err(Failure::Input)?;
            finish(&run.stdout, &run.warnings, run.finding, host)
        }
        Command::Eval {
            paths,
            options,
            recommended,
            compare,
            json,
            fail_on,
            sessions,
            html,
        } => {
            let options = compute::eval_options(&options, recommended, compare).map_err(Failure::Input)?;
            let mut evaluation = Evaluation::new(options);
            if sessions || html.is_some() {
                evaluation = evaluation.keep_sessions();
            }
            evaluate_all(&paths, &mut evaluation, host)?;
            let mut run = compute::eval_finish(&evaluation, json, fail_on.map(FailOn::action));
            if sessions && !json {
                run.stdout.push_str(&compute::sessions_text(&evaluation));
            }
            if let Some(file) = html {
                let page = doom_loop_trace::html::render(&evaluation.report(), evaluation.sessions());
                host.write_file(&file, page.as_bytes())
                    .map_err(|e| Failure::Input(format!("{}: {e}", file.display())))?;
            }
            finish(&run.stdout, &run.warnings, run.finding, host)
        }
    }
}

/// Prints a result: warnings to stderr, the result to stdout, and the
/// finding (if any) as the outcome.
fn finish(stdout: &str, warnings: &[String], finding: Option<String>, host: &mut dyn Host) -> Outcome {
    for warning in warnings {
        warn(host, &format!("warning: {warning}"));
    }
    host.stdout(stdout)?;
    finding.map_or(Ok(()), |finding| Err(Failure::Finding(finding)))
}

/// Evaluates every run under the paths, a file at a time and, within a
/// file, a run at a time (memory follows the largest run, not the input).
/// A path named that does not exist (or a folder named that cannot be
/// listed) is an input error (exit 2); anything found under a folder that
/// cannot be read — a file, a dangling link, a sub-folder — is a failed
/// run listed in the report, and FIFOs, devices and links to folders are
/// skipped with a warning (see [`doom_loop_trace::import::walk`]).
fn evaluate_all(paths: &[PathBuf], evaluation: &mut Evaluation, host: &mut dyn Host) -> Outcome {
    check_stdin_once(paths)?;
    let mut files = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            files.push(path.clone());
            continue;
        }
        host.metadata(path, true)
            .map_err(|e| Failure::Input(format!("{}: {e}", path.display())))?;
        let walk = walk_in(host, path).map_err(|e| Failure::Input(e.to_string()))?;
        for (skipped, why) in &walk.skipped {
            evaluation.add_skipped(&source_name(skipped), *why);
        }
        for (dir, error) in &walk.unreadable {
            evaluation.add_unreadable(&source_name(dir), error);
        }
        files.extend(walk.files);
    }
    let mut progress = Progress::new(files.len(), host);
    for (done, file) in files.iter().enumerate() {
        let name = source_name(file);
        let reader = if file.as_os_str() == "-" {
            host.stdin()
        } else {
            host.open(file)
        };
        match reader {
            Ok(reader) => {
                evaluation.add_reader(reader, &name);
            }
            Err(e) => evaluation.add_unreadable(&name, &e.to_string()),
        }
        progress.show(done + 1, host);
    }
    progress.clear(host);
    Ok(())
}

/// A progress line on stderr while `eval` works through many files, only
/// when stderr is a terminal (never in a pipe, a file or CI logs).
struct Progress {
    total: usize,
    shown: Option<usize>,
    enabled: bool,
}

impl Progress {
    fn new(total: usize, host: &mut dyn Host) -> Self {
        Progress {
            total,
            shown: None,
            enabled: total >= PROGRESS_FROM_FILES && host.stderr_is_terminal(),
        }
    }

    fn show(&mut self, done: usize, host: &mut dyn Host) {
        let percent = done * 100 / self.total.max(1);
        if !self.enabled || self.shown == Some(percent) {
            return;
        }
        self.shown = Some(percent);
        host.stderr(&format!("\reval: {done}/{} files ({percent}%)", self.total));
    }

    fn clear(&self, host: &mut dyn Host) {
        if self.enabled && self.shown.is_some() {
            host.stderr("\r\x1b[2K");
        }
    }
}

/// What stdin is called in messages and reports.
const STDIN: &str = "<stdin>";

fn source_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        STDIN.to_string()
    } else {
        path.display().to_string()
    }
}

/// A JSON argument, or stdin's text when it is absent or `-`.
fn argument_or_stdin(argument: Option<String>, host: &mut dyn Host) -> Result<String, Failure> {
    match argument {
        Some(text) if text != "-" => Ok(text),
        _ => read_text(Path::new("-"), host),
    }
}

/// A file's bytes, or stdin's for `-`.
fn read_bytes(path: &Path, host: &mut dyn Host) -> Result<Vec<u8>, Failure> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        host.stdin()
            .and_then(|mut stdin| stdin.read_to_end(&mut bytes))
            .map_err(|e| Failure::Input(format!("{STDIN}: {e}")))?;
        return Ok(bytes);
    }
    host.read_file(path)
        .map_err(|e| Failure::Input(format!("{}: {e}", path.display())))
}

/// A file's (or stdin's) text; it must be UTF-8.
fn read_text(path: &Path, host: &mut dyn Host) -> Result<String, Failure> {
    String::from_utf8(read_bytes(path, host)?).map_err(|e| {
        Failure::Input(format!(
            "{}: not UTF-8 text (byte {})",
            source_name(path),
            e.utf8_error().valid_up_to()
        ))
    })
}

fn check_stdin_once(paths: &[PathBuf]) -> Outcome {
    if paths.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(Failure::Input("stdin (`-`) can be read only once".into()));
    }
    Ok(())
}

/// The corpus files: each path, or a folder's `.json` files in name order.
fn corpus_files(paths: &[PathBuf], host: &mut dyn Host) -> Result<Vec<PathBuf>, Failure> {
    check_stdin_once(paths)?;
    let mut files = Vec::new();
    for path in paths {
        if path.as_os_str() != "-" && host.is_dir(path) {
            let mut found: Vec<PathBuf> = host
                .read_dir(path)
                .map_err(|e| Failure::Input(format!("{}: {e}", path.display())))?
                .into_iter()
                .map(|entry| path.join(entry.name))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

fn conformance(paths: &[PathBuf], host: &mut dyn Host) -> Outcome {
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in corpus_files(paths, host)? {
        let name = source_name(&file);
        let text = read_text(&file, host)?;
        let outcome = parse(&text)
            .and_then(|doc| run_document(&doc))
            .map_err(|e| Failure::Input(format!("{name}: {e}")))?;
        let mut out = String::new();
        for failure in outcome.failures.iter().take(20) {
            let _ = writeln!(out, "FAIL {name}: {failure}");
        }
        let _ = writeln!(
            out,
            "{name}: {} passed, {} failed",
            outcome.passed,
            outcome.failures.len()
        );
        host.stdout(&out)?;
        passed += outcome.passed;
        failed += outcome.failures.len();
    }
    host.stdout(&format!("{passed} passed, {failed} failed\n"))?;
    if passed + failed == 0 {
        let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Failure::Finding(format!(
            "no conformance cases found in {} (a folder is searched for .json files)",
            list.join(", ")
        )));
    }
    if failed > 0 {
        return Err(Failure::Finding(format!("{failed} conformance case(s) failed")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
