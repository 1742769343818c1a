//! `doomloop hook install` and the hook's state store against real files:
//! the built binary run in a scratch folder, with the links, modes and
//! planted names a hostile checkout or a shared directory can hold (the
//! merge itself is tested in hook.rs; the npm CLI's same code in
//! tests/hooks/install-safety.test.mjs).
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

const AGENTS: [(&str, &str, &str); 3] = [
    ("claude-code", ".claude", "settings.json"),
    ("gemini-cli", ".gemini", "settings.json"),
    ("codex", ".codex", "hooks.json"),
];

/// A scratch folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "doomloop-install-files-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("home")).unwrap();
        fs::create_dir_all(dir.join("project")).unwrap();
        Scratch(dir)
    }

    fn home(&self) -> PathBuf {
        self.0.join("home")
    }

    fn project(&self) -> PathBuf {
        self.0.join("project")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn doomloop(scratch: &Scratch, args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_doomloop"));
    command
        .args(args)
        .current_dir(scratch.project())
        .env("HOME", scratch.home())
        .env_remove("CODEX_HOME")
        .env_remove("DOOMLOOP_STATE_DIR")
        .env_remove("XDG_STATE_HOME")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        use std::io::Write;
        pipe.write_all(text.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn install(scratch: &Scratch, agent: &str, scope: &str) -> Output {
    doomloop(
        scratch,
        &["hook", "install", agent, scope, "--command", "doomloop hook x"],
        None,
    )
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_project_install_never_writes_through_a_link_planted_at_a_temporary_name() {
    for (agent, dir, file) in AGENTS {
        let scratch = Scratch::new();
        let victim = scratch.home().join(".bashrc");
        fs::write(&victim, "# the victim\n").unwrap();
        let settings = scratch.project().join(dir).join(file);
        fs::create_dir_all(settings.parent().unwrap()).unwrap();
        fs::write(&settings, r#"{"a": "$(touch PWNED)"}"#).unwrap();
        fs::set_permissions(&settings, fs::Permissions::from_mode(0o640)).unwrap();
        // The fixed name earlier versions wrote, and a dangling link too.
        symlink("../../home/.bashrc", settings.with_file_name(format!("{file}.tmp"))).unwrap();
        let out = install(&scratch, agent, "--project");
        assert!(out.status.success(), "{agent}: {}", stderr(&out));
        assert_eq!(fs::read_to_string(&victim).unwrap(), "# the victim\n", "{agent}");
        let written = fs::read_to_string(&settings).unwrap();
        assert!(written.contains("doomloop hook x"), "{agent}: {written}");
        assert!(fs::symlink_metadata(&settings).unwrap().file_type().is_file());
        assert_eq!(mode(&settings), 0o640, "{agent}");
    }
}

#[test]
fn a_project_settings_file_or_folder_linking_out_of_the_project_is_refused() {
    for (agent, dir, file) in AGENTS {
        // The settings file a link to a file of the user's.
        let scratch = Scratch::new();
        let victim = scratch.home().join("victim.json");
        fs::write(&victim, "{}").unwrap();
        fs::create_dir_all(scratch.project().join(dir)).unwrap();
        symlink(&victim, scratch.project().join(dir).join(file)).unwrap();
        let out = install(&scratch, agent, "--project");
        assert_eq!(out.status.code(), Some(2), "{agent}");
        assert!(stderr(&out).contains("leads out of the project"), "{}", stderr(&out));
        assert_eq!(fs::read_to_string(&victim).unwrap(), "{}");
        // The settings folder a link to a folder of the user's.
        let scratch = Scratch::new();
        let outside = scratch.home().join(dir);
        fs::create_dir_all(&outside).unwrap();
        symlink(&outside, scratch.project().join(dir)).unwrap();
        let out = install(&scratch, agent, "--project");
        assert_eq!(out.status.code(), Some(2), "{agent}");
        assert!(stderr(&out).contains("leads out of the project"), "{}", stderr(&out));
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0, "{agent}");
    }
}

#[test]
fn a_project_link_that_stays_inside_the_project_is_followed() {
    let scratch = Scratch::new();
    let shared = scratch.project().join("config/claude");
    fs::create_dir_all(&shared).unwrap();
    fs::write(shared.join("settings.json"), r#"{"model":"opus"}"#).unwrap();
    symlink("config/claude", scratch.project().join(".claude")).unwrap();
    let out = install(&scratch, "claude-code", "--project");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(fs::read_to_string(shared.join("settings.json"))
        .unwrap()
        .contains("doomloop hook x"));
    assert!(fs::symlink_metadata(scratch.project().join(".claude"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn settings_that_are_not_a_regular_file_are_refused_without_being_opened() {
    let scratch = Scratch::new();
    fs::create_dir_all(scratch.project().join(".claude")).unwrap();
    let fifo = scratch.project().join(".claude/settings.json");
    // A FIFO would block a reader forever: the install must not open it.
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return;
    }
    let out = install(&scratch, "claude-code", "--project");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a regular file"), "{}", stderr(&out));
}
