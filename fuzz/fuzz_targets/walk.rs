//! The directory walk behind `eval DIR` (issue 20): a small tree built
//! from the input — folders, trace files and other files, links to a
//! parent, to itself, to a sibling, to a device, dangling ones — is walked
//! and evaluated.
//!
//! Invariants:
//! - never panics, never loops (libFuzzer's timeout catches a hang);
//! - every file listed is under the root, listed once, and is a regular
//!   file or a link that points nowhere; nothing listed is a folder;
//! - the evaluation reads every listed file (a run or a failed run each).
#![no_main]

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use doom_loop_trace::eval::{EvalOption, Evaluation};
use doom_loop_trace::import::walk;
use libfuzzer_sys::fuzz_target;

static CASE: AtomicUsize = AtomicUsize::new(0);
const RUN: &str = r#"{"rounds":[{"calls":[{"toolName":"t","args":{}}]}]}"#;

fuzz_target!(|data: &[u8]| {
    let root = std::env::temp_dir().join(format!(
        "doomloop-fuzz-walk-{}-{}",
        std::process::id(),
        CASE.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let mut dirs: Vec<PathBuf> = vec![root.clone()];
    for (i, pair) in data.chunks(2).take(40).enumerate() {
        let kind = pair[0];
        let at = dirs[usize::from(pair.get(1).copied().unwrap_or(0)) % dirs.len()].clone();
        let name = |ext: &str| at.join(format!("e{i}{ext}"));
        match kind % 9 {
            0 => {
                let dir = name("");
                if std::fs::create_dir(&dir).is_ok() {
                    dirs.push(dir);
                }
            }
            1 => drop(std::fs::write(name(".json"), RUN)),
            2 => drop(std::fs::write(name(".jsonl"), format!("{RUN}\n{RUN}\n"))),
            3 => drop(std::fs::write(name(".txt"), "notes")),
            4 => drop(symlink("..", &name(""))),
            5 => drop(symlink(".", &name(".json"))),
            6 => drop(symlink(&root, &name(""))),
            7 => drop(symlink("/dev/null", &name(".json"))),
            _ => drop(symlink("missing.json", &name(".json"))),
        }
    }
    let found = walk(&root).unwrap();
    let mut seen = HashSet::new();
    for file in &found.files {
        assert!(file.starts_with(&root), "{} outside the root", file.display());
        assert!(seen.insert(file.clone()), "{} listed twice", file.display());
        match std::fs::metadata(file) {
            Ok(meta) => assert!(meta.is_file(), "{} is not a regular file", file.display()),
            Err(_) => assert!(std::fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_symlink())),
        }
    }
    let mut evaluation = Evaluation::new(vec![EvalOption::defaults()]);
    let read = evaluation.add_path(&root);
    assert!(
        read >= found.files.len(),
        "{read} runs from {} files",
        found.files.len()
    );
    let _ = std::fs::remove_dir_all(&root);
});

#[cfg(unix)]
fn symlink(target: impl AsRef<std::path::Path>, link: &std::path::Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: impl AsRef<std::path::Path>, _link: &std::path::Path) -> std::io::Result<()> {
    Ok(())
}
