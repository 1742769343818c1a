//! The `doomloop` command's entry point for a lossy argv (`main_lossy`,
//! what `npx doomloop` calls): argv words and stdin from the input, over
//! an in-memory host holding one trace file and one folder.
//!
//! Invariants:
//! - never panics, whatever the argv (clap parsing, U+FFFD handling, every
//!   subcommand's body, the hook's store);
//! - the exit status is one the docs list (0, 1, 2; 141 needs a pipe);
//! - a hook run (`hook claude-code|gemini-cli …`) always exits 0;
//! - nothing is left behind in the state folder but state files.
#![no_main]

use std::path::PathBuf;

use doom_loop_cli::command::main_lossy;
use doom_loop_trace::host::MemoryHost;
use libfuzzer_sys::fuzz_target;

const RUN: &str = r#"{"rounds":[{"calls":[{"toolName":"t","args":{}}]}]}"#;

fuzz_target!(|data: &[u8]| {
    // argv words separated by NUL, then (after two NULs) stdin.
    let (args, stdin) = match data.windows(2).position(|w| w == [0, 0]) {
        Some(at) => (&data[..at], &data[at + 2..]),
        None => (data, &[][..]),
    };
    let argv: Vec<String> = args
        .split(|b| *b == 0)
        .take(12)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    let mut host = MemoryHost::default();
    host.dirs.insert(PathBuf::from("runs"));
    host.files.insert(PathBuf::from("runs/a.json"), RUN.into());
    host.files.insert(PathBuf::from("a.json"), RUN.into());
    host.stdin = stdin.to_vec();
    host.env.insert("DOOMLOOP_STATE_DIR".into(), "state".into());
    let status = main_lossy(&argv, &mut host);
    assert!(matches!(status, 0..=2), "status {status} for {argv:?}");
    let hook = argv.len() >= 2 && argv[0] == "hook" && (argv[1] == "claude-code" || argv[1] == "gemini-cli");
    assert!(
        !hook || status == 0,
        "a hook exited {status}: {argv:?}\n{}",
        host.stderr
    );
    for path in host.files.keys().filter(|p| p.starts_with("state")) {
        let name = path.display().to_string();
        assert!(
            !name.ends_with(".lock") && !name.ends_with(".tmp"),
            "{name} left behind"
        );
    }
});
