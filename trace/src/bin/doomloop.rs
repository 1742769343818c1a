//! `doomloop`: the native CLI over the core.
//!
//! - `doomloop conformance PATH...` — run corpus files (or every `.json` in
//!   a folder) and print, last, `N passed, M failed`.
//! - `doomloop fingerprint TOOL JSON` — a tool-call fingerprint, for parity
//!   checks from any language.
//! - `doomloop canonicalize JSON` — RFC 8785 canonical JSON.
//! - `doomloop replay [FILE] [--json]` — replay a transcript (default: the
//!   bundled billing-agent run) and print its timeline.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use doom_loop::conformance::run_document;
use doom_loop::json::parse;
use doom_loop::{canonicalize, fingerprint_tool_call, JsString};

const USAGE: &str = "usage:
  doomloop conformance PATH...     run conformance corpus files or folders
  doomloop fingerprint TOOL JSON   print sha256(TOOL + \"\\n\" + jcs(JSON))
  doomloop canonicalize JSON       print the RFC 8785 canonical form of JSON
  doomloop replay [FILE] [--json]  replay a transcript (default: the billing-agent example)";

/// The bundled example transcript: the default input of `replay`.
const BILLING_AGENT: &str = include_str!("../../../examples/billing-agent.json");

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("conformance") if args.len() > 1 => conformance(&args[1..]),
        Some("fingerprint") if args.len() == 3 => fingerprint(&args[1], &args[2]),
        Some("canonicalize") if args.len() == 2 => parse(&args[1])
            .and_then(|v| canonicalize(&v))
            .map(|c| println!("{c}"))
            .map_err(|e| e.to_string()),
        Some("replay") if args.len() <= 3 => replay(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("doomloop: {message}");
            ExitCode::FAILURE
        }
    }
}

fn fingerprint(tool: &str, json: &str) -> Result<(), String> {
    let value = parse(json).map_err(|e| format!("invalid JSON: {e}"))?;
    let fp = fingerprint_tool_call(&JsString::from(tool), &value).map_err(|e| e.to_string())?;
    println!("{fp}");
    Ok(())
}

fn replay(args: &[String]) -> Result<(), String> {
    let json = args.iter().any(|a| a == "--json");
    let text = match args.iter().find(|a| *a != "--json") {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?,
        None => BILLING_AGENT.to_string(),
    };
    let document = parse(&text).map_err(|e| format!("transcript is not valid JSON: {e}"))?;
    let transcript = doom_loop_trace::replay::parse_transcript(&document).map_err(|e| e.to_string())?;
    let timeline = doom_loop_trace::replay::replay(&transcript).map_err(|e| e.to_string())?;
    if json {
        println!("{}", timeline.to_json());
    } else {
        print!("{}", timeline.render());
    }
    Ok(())
}

fn corpus_files(paths: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths.iter().map(Path::new) {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.to_path_buf());
        }
    }
    Ok(files)
}

fn conformance(paths: &[String]) -> Result<(), String> {
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in corpus_files(paths)? {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let outcome = parse(&text)
            .and_then(|doc| run_document(&doc))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        for failure in outcome.failures.iter().take(20) {
            println!("FAIL {}: {failure}", file.display());
        }
        println!(
            "{}: {} passed, {} failed",
            file.display(),
            outcome.passed,
            outcome.failures.len()
        );
        passed += outcome.passed;
        failed += outcome.failures.len();
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        return Err(format!("{failed} conformance case(s) failed"));
    }
    Ok(())
}
