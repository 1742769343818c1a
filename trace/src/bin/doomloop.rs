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
use doom_loop_trace::import::{import_bytes, trace_files, ImportedRun};

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
/// `eval` shows a progress line (on a terminal) from this many runs on.
const PROGRESS_FROM_RUNS: usize = 200;

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
        } => {
            let options = cli::eval_options(&options, recommended, compare).map_err(Failure::Input)?;
            let runs = import_all(&paths)?;
            let mut evaluation = Evaluation::new(options);
            let mut progress = Progress::new(runs.len());
            for (done, run) in runs.into_iter().enumerate() {
                evaluation.add_imported(run);
                progress.show(done + 1);
            }
            progress.clear();
            let run = cli::eval_finish(&evaluation, json, fail_on.map(FailOn::action));
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

/// Every run under the paths, in order. A path or file that cannot be
/// read is an input error (exit 2); a run that cannot be parsed is counted
/// by the evaluation and listed in its report.
fn import_all(paths: &[PathBuf]) -> Result<Vec<ImportedRun>, Failure> {
    check_stdin_once(paths)?;
    let mut runs = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            runs.extend(import_bytes(&read_bytes(path)?, STDIN));
            continue;
        }
        let files = trace_files(path).map_err(|e| Failure::Input(e.to_string()))?;
        for file in files {
            runs.extend(import_bytes(&read_bytes(&file)?, &source_name(&file)));
        }
    }
    Ok(runs)
}

/// A progress line on stderr while `eval` works through many runs, only
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
            enabled: total >= PROGRESS_FROM_RUNS && io::stderr().is_terminal(),
        }
    }

    fn show(&mut self, done: usize) {
        let percent = done * 100 / self.total.max(1);
        if !self.enabled || self.shown == Some(percent) {
            return;
        }
        self.shown = Some(percent);
        let _ = write!(io::stderr().lock(), "\reval: {done}/{} runs ({percent}%)", self.total);
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
