//! `doomloop`: the native CLI over the core (`doomloop --help` lists the
//! subcommands; docs/cli.md has the usage and the exit codes).
//!
//! Failing cleanly is part of the interface: every argv is parsed as
//! `OsString` (a non-UTF-8 argument is a usage error naming it, never a
//! panic), all output goes through one writer whose errors are handled (a
//! closed pipe ends the process quietly with the status a shell reports
//! for SIGPIPE; any other write error is reported), and warnings go to
//! stderr so that stdout is only the result.

use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use doom_loop_trace::conformance::run_document;
use doom_loop::json::parse;
use doom_loop::ladder::Action;
use doom_loop_trace::cli::{self, OptionChoice};
use doom_loop_trace::eval::Evaluation;
use doom_loop_trace::hook::args::HookCommand;
use doom_loop_trace::import::walk;

/// The bundled example transcript: the default input of `replay`.
const BILLING_AGENT: &str = include_str!("../../../examples/billing-agent.json");

/// Exit status: a finding (failed or no conformance cases, no runs to
/// evaluate, `--fail-on` reached).
const EXIT_FINDING: u8 = 1;
/// Exit status: usage, input or output errors (nothing was decided).
const EXIT_ERROR: u8 = 2;
/// Exit status when stdout is closed early (`| head -1`): 128 + SIGPIPE,
/// what a shell reports for a tool killed by the signal.
const EXIT_BROKEN_PIPE: u8 = 141;
/// `eval` shows a progress line (on a terminal) from this many files on.
const PROGRESS_FROM_FILES: usize = 20;

#[derive(Parser)]
#[command(
    name = "doomloop",
    version,
    about = "Doom-loop detector for LLM agents: conformance, fingerprints, trace replay and evaluation",
    after_help = "Exit status: 0 ok; 1 a finding (conformance failed or found no cases, eval found no runs, --fail-on reached); 2 a usage, input or output error; 141 stdout closed early.",
    subcommand_required = true,
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

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
        #[arg(long = "option", value_name = "JSON", allow_hyphen_values = true, conflicts_with = "recommended")]
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
    /// Guard a coding agent: the hook command Claude Code or Gemini CLI runs around every tool call, and its installer
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
    Output(io::Error),
}

impl From<io::Error> for Failure {
    fn from(error: io::Error) -> Self {
        Failure::Output(error)
    }
}

type Outcome = Result<(), Failure>;

fn main() -> ExitCode {
    let matches = match Cli::command().try_get_matches_from(std::env::args_os()) {
        Ok(matches) => matches,
        Err(error) if is_hook_run() && error.use_stderr() => {
            // An agent reads a hook's exit status 2 as "block the call": a
            // bad hook command line allows the call instead, with one line.
            let first = error.render().to_string();
            warn(&format!("doomloop hook: {}; allowing the call", first.lines().next().unwrap_or("bad arguments")));
            return ExitCode::SUCCESS;
        }
        Err(error) => return clap_exit(&error),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => return clap_exit(&error),
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = run(cli.command, &mut out).and_then(|()| out.flush().map_err(Failure::from));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Finding(message)) => {
            warn(&format!("doomloop: {message}"));
            ExitCode::from(EXIT_FINDING)
        }
        Err(Failure::Input(message)) => {
            warn(&format!("doomloop: {message}"));
            ExitCode::from(EXIT_ERROR)
        }
        Err(Failure::Output(error)) => output_failed(&error),
    }
}

/// `doomloop hook claude-code|gemini-cli|codex …`: a hook an agent runs.
fn is_hook_run() -> bool {
    let args: Vec<_> = std::env::args_os().skip(1).take(2).collect();
    args.len() == 2 && args[0] == "hook" && (args[1] == "claude-code" || args[1] == "gemini-cli" || args[1] == "codex")
}

/// Help and version go to stdout (exit 0, or the output failure's
/// status); every other parse error to stderr with exit 2.
fn clap_exit(error: &clap::Error) -> ExitCode {
    let text = error.render().to_string();
    if error.use_stderr() {
        warn(text.trim_end());
        return ExitCode::from(EXIT_ERROR);
    }
    let mut stdout = io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => output_failed(&error),
    }
}

fn output_failed(error: &io::Error) -> ExitCode {
    if error.kind() == io::ErrorKind::BrokenPipe {
        return ExitCode::from(EXIT_BROKEN_PIPE);
    }
    warn(&format!("doomloop: cannot write output: {error}"));
    ExitCode::from(EXIT_ERROR)
}

/// One line to stderr; a failing stderr is ignored (there is nowhere left
/// to report it, and `eprintln!` would panic).
fn warn(line: &str) {
    let _ = writeln!(io::stderr().lock(), "{line}");
}

fn run(command: Command, out: &mut impl Write) -> Outcome {
    match command {
        Command::Hook { command } => {
            doom_loop_trace::hook::args::main(command, &mut io::stdin().lock(), out, &mut io::stderr().lock())
                .map_err(Failure::Input)
        }
        Command::Conformance { paths } => conformance(&paths, out),
        Command::Fingerprint { tool, json } => {
            let text = argument_or_stdin(json)?;
            let fingerprint = cli::fingerprint_text(&tool, &text).map_err(Failure::Input)?;
            Ok(writeln!(out, "{fingerprint}")?)
        }
        Command::Canonicalize { json } => {
            let text = argument_or_stdin(json)?;
            let canonical = cli::canonicalize_text(&text).map_err(Failure::Input)?;
            Ok(writeln!(out, "{canonical}")?)
        }
        Command::Replay {
            file,
            json,
            option,
            recommended,
            fail_on,
        } => {
            let (bytes, name) = match file {
                Some(path) => (read_bytes(&path)?, source_name(&path)),
                None => (BILLING_AGENT.as_bytes().to_vec(), "billing-agent.json".to_string()),
            };
            let choice = match (&option, recommended) {
                (Some(text), _) => OptionChoice::Json(text),
                (None, true) => OptionChoice::Recommended,
                (None, false) => OptionChoice::Trace,
            };
            let run = cli::replay_bytes(&bytes, &name, choice, json, fail_on.map(FailOn::action))
                .map_err(Failure::Input)?;
            finish(&run.stdout, &run.warnings, run.finding, out)
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
            let options = cli::eval_options(&options, recommended, compare).map_err(Failure::Input)?;
            let mut evaluation = Evaluation::new(options);
            if sessions || html.is_some() {
                evaluation = evaluation.keep_sessions();
            }
            evaluate_all(&paths, &mut evaluation)?;
            let mut run = cli::eval_finish(&evaluation, json, fail_on.map(FailOn::action));
            if sessions && !json {
                run.stdout.push_str(&cli::sessions_text(&evaluation));
            }
            if let Some(file) = html {
                let page = doom_loop_trace::html::render(&evaluation.report(), evaluation.sessions());
                std::fs::write(&file, page).map_err(|e| Failure::Input(format!("{}: {e}", file.display())))?;
            }
            finish(&run.stdout, &run.warnings, run.finding, out)
        }
    }
}

/// Prints a result: warnings to stderr, the result to stdout, and the
/// finding (if any) as the outcome.
fn finish(stdout: &str, warnings: &[String], finding: Option<String>, out: &mut impl Write) -> Outcome {
    for warning in warnings {
        warn(&format!("warning: {warning}"));
    }
    out.write_all(stdout.as_bytes())?;
    finding.map_or(Ok(()), |finding| Err(Failure::Finding(finding)))
}

/// Evaluates every run under the paths, a file at a time and, within a
/// file, a run at a time (memory follows the largest run, not the input).
/// A path named that does not exist (or a folder named that cannot be
/// listed) is an input error (exit 2); anything found under a folder that
/// cannot be read — a file, a dangling link, a sub-folder — is a failed
/// run listed in the report, and FIFOs, devices and links to folders are
/// skipped with a warning (see `doom_loop_trace::import::walk`).
fn evaluate_all(paths: &[PathBuf], evaluation: &mut Evaluation) -> Outcome {
    check_stdin_once(paths)?;
    let mut files = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            files.push(path.clone());
            continue;
        }
        std::fs::metadata(path).map_err(|e| Failure::Input(format!("{}: {e}", path.display())))?;
        let walk = walk(path).map_err(|e| Failure::Input(e.to_string()))?;
        for (skipped, why) in &walk.skipped {
            evaluation.add_skipped(&source_name(skipped), *why);
        }
        for (dir, error) in &walk.unreadable {
            evaluation.add_unreadable(&source_name(dir), error);
        }
        files.extend(walk.files);
    }
    let mut progress = Progress::new(files.len());
    for (done, file) in files.iter().enumerate() {
        let name = source_name(file);
        if file.as_os_str() == "-" {
            evaluation.add_reader(io::stdin().lock(), &name);
        } else {
            match std::fs::File::open(file) {
                Ok(handle) => {
                    evaluation.add_reader(handle, &name);
                }
                Err(e) => evaluation.add_unreadable(&name, &e.to_string()),
            }
        }
        progress.show(done + 1);
    }
    progress.clear();
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
    fn new(total: usize) -> Self {
        Progress {
            total,
            shown: None,
            enabled: total >= PROGRESS_FROM_FILES && io::stderr().is_terminal(),
        }
    }

    fn show(&mut self, done: usize) {
        let percent = done * 100 / self.total.max(1);
        if !self.enabled || self.shown == Some(percent) {
            return;
        }
        self.shown = Some(percent);
        let _ = write!(io::stderr().lock(), "\reval: {done}/{} files ({percent}%)", self.total);
    }

    fn clear(&self) {
        if self.enabled && self.shown.is_some() {
            let _ = write!(io::stderr().lock(), "\r\x1b[2K");
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
fn argument_or_stdin(argument: Option<String>) -> Result<String, Failure> {
    match argument {
        Some(text) if text != "-" => Ok(text),
        _ => read_text(Path::new("-")),
    }
}

/// A file's bytes, or stdin's for `-`.
fn read_bytes(path: &Path) -> Result<Vec<u8>, Failure> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::Input(format!("{STDIN}: {e}")))?;
        return Ok(bytes);
    }
    std::fs::read(path).map_err(|e| Failure::Input(format!("{}: {e}", path.display())))
}

/// A file's (or stdin's) text; it must be UTF-8.
fn read_text(path: &Path) -> Result<String, Failure> {
    String::from_utf8(read_bytes(path)?).map_err(|e| {
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
fn corpus_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    check_stdin_once(paths)?;
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| Failure::Input(format!("{}: {e}", path.display())))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
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

fn conformance(paths: &[PathBuf], out: &mut impl Write) -> Outcome {
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in corpus_files(paths)? {
        let name = source_name(&file);
        let text = read_text(&file)?;
        let outcome = parse(&text)
            .and_then(|doc| run_document(&doc))
            .map_err(|e| Failure::Input(format!("{name}: {e}")))?;
        for failure in outcome.failures.iter().take(20) {
            writeln!(out, "FAIL {name}: {failure}")?;
        }
        writeln!(out, "{name}: {} passed, {} failed", outcome.passed, outcome.failures.len())?;
        passed += outcome.passed;
        failed += outcome.failures.len();
    }
    writeln!(out, "{passed} passed, {failed} failed")?;
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
