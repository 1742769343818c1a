//! `doomloop hook install` and the hook's state store against real files:
//! the built binary run in a scratch folder, with the links, modes and
//! planted names a hostile checkout or a shared directory can hold (the
//! merge itself is tested in guard/tests/hook.rs; the npm CLI's same code in
//! tests/hooks/install-safety.test.mjs).
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

const AGENTS: [(&str, &str, &str); 4] = [
    ("claude-code", ".claude", "settings.json"),
    ("gemini-cli", ".gemini", "settings.json"),
    ("codex", ".codex", "hooks.json"),
    ("copilot", ".github/hooks", "doom-loop.json"),
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
        symlink(&victim, settings.with_file_name(format!("{file}.tmp"))).unwrap();
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
        let inside = scratch.project().join(dir);
        fs::create_dir_all(inside.parent().unwrap()).unwrap();
        symlink(&outside, &inside).unwrap();
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

#[test]
fn the_users_settings_keep_their_mode_their_link_and_a_backup_of_the_previous_file() {
    let scratch = Scratch::new();
    // A 0600 file holding a key stays 0600, and so does its backup; 0640 stays 0640.
    let claude = scratch.home().join(".claude/settings.json");
    fs::create_dir_all(claude.parent().unwrap()).unwrap();
    let secret = r#"{"env":{"ANTHROPIC_API_KEY":"sk-ant-secret"}}"#;
    fs::write(&claude, secret).unwrap();
    fs::set_permissions(&claude, fs::Permissions::from_mode(0o600)).unwrap();
    let out = install(&scratch, "claude-code", "--user");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(mode(&claude), 0o600);
    let backup = claude.with_file_name("settings.json.bak");
    assert_eq!(fs::read_to_string(&backup).unwrap(), secret);
    assert_eq!(mode(&backup), 0o600);
    // Installing again changes nothing: the backup still holds the file before the hook.
    let out = install(&scratch, "claude-code", "--user");
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing changed"));
    assert_eq!(fs::read_to_string(&backup).unwrap(), secret);
    // A settings file linked from a dotfiles repository: the target gets the hook, the link stays.
    let dotfiles = scratch.home().join("dotfiles/gemini-settings.json");
    fs::create_dir_all(dotfiles.parent().unwrap()).unwrap();
    fs::write(&dotfiles, r#"{"model":"gemini-2.5-pro"}"#).unwrap();
    fs::set_permissions(&dotfiles, fs::Permissions::from_mode(0o640)).unwrap();
    let link = scratch.home().join(".gemini/settings.json");
    fs::create_dir_all(link.parent().unwrap()).unwrap();
    symlink("../dotfiles/gemini-settings.json", &link).unwrap();
    let out = install(&scratch, "gemini-cli", "--user");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(fs::read_to_string(&dotfiles).unwrap().contains("doomloop hook x"));
    assert_eq!(mode(&dotfiles), 0o640);
    assert_eq!(
        fs::read_to_string(dotfiles.with_file_name("gemini-settings.json.bak")).unwrap(),
        r#"{"model":"gemini-2.5-pro"}"#
    );
}

#[test]
fn a_link_planted_at_the_backup_name_is_replaced_not_followed() {
    let scratch = Scratch::new();
    let victim = scratch.home().join("victim");
    fs::write(&victim, "victim\n").unwrap();
    let hooks = scratch.project().join(".codex/hooks.json");
    fs::create_dir_all(hooks.parent().unwrap()).unwrap();
    fs::write(&hooks, "{}").unwrap();
    symlink(&victim, hooks.with_file_name("hooks.json.bak")).unwrap();
    let out = install(&scratch, "codex", "--project");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "victim\n");
    let backup = hooks.with_file_name("hooks.json.bak");
    assert!(fs::symlink_metadata(&backup).unwrap().file_type().is_file());
    assert_eq!(fs::read_to_string(&backup).unwrap(), "{}");
}

#[test]
fn a_users_settings_link_to_nothing_is_refused() {
    let scratch = Scratch::new();
    fs::create_dir_all(scratch.home().join(".claude")).unwrap();
    symlink(
        "/nonexistent/settings.json",
        scratch.home().join(".claude/settings.json"),
    )
    .unwrap();
    let out = install(&scratch, "claude-code", "--user");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot follow it"), "{}", stderr(&out));
}

const PRE: &str = r#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"cat secrets"}}"#;

fn hook_in(scratch: &Scratch, dir: &Path) -> Output {
    doomloop(
        scratch,
        &["hook", "claude-code", "--state-dir", dir.to_str().unwrap()],
        Some(PRE),
    )
}

#[test]
fn a_state_directory_other_users_can_write_is_refused_with_one_line_and_the_call_allowed() {
    for mode_bits in [0o777, 0o1777, 0o770] {
        let scratch = Scratch::new();
        let dir = scratch.0.join("shared");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(mode_bits)).unwrap();
        let out = hook_in(&scratch, &dir);
        assert!(out.status.success());
        assert!(out.stdout.is_empty(), "allowed");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("can be written by other users") && err.contains("allowing the call"),
            "{err}"
        );
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            0,
            "nothing written in {mode_bits:o}"
        );
    }
    // The user's own private directory is used, its files owner-only.
    let scratch = Scratch::new();
    let dir = scratch.0.join("mine");
    let out = hook_in(&scratch, &dir);
    assert!(out.status.success() && out.stderr.is_empty(), "{}", stderr(&out));
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("claude-code-s.json")), 0o600);
}

#[test]
fn a_state_directory_of_another_user_is_refused() {
    // Only root can hand a directory to another user.
    let me = Command::new("id").arg("-u").output().map(|o| o.stdout).ok();
    if me.as_deref() != Some(b"0\n".as_slice()) {
        return;
    }
    let scratch = Scratch::new();
    let dir = scratch.0.join("theirs");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    let out = hook_in(&scratch, &dir);
    assert!(out.status.success() && out.stdout.is_empty());
    assert!(stderr(&out).contains("belongs to another user"), "{}", stderr(&out));
}

#[test]
fn a_state_write_never_follows_a_link_planted_at_its_temporary_name_and_cleans_up_a_failure() {
    use doom_loop_guard::store::replace;
    use doom_loop_trace::host::NativeHost;
    let scratch = Scratch::new();
    let dir = scratch.0.join("state");
    fs::create_dir(&dir).unwrap();
    let victim = scratch.0.join("victim");
    fs::write(&victim, "victim\n").unwrap();
    let file = dir.join("claude-code-s.json");
    // The names this process would try first, taken: a link and a file.
    let pid = std::process::id();
    symlink(&victim, dir.join(format!("claude-code-s.json.{pid}.tmp"))).unwrap();
    fs::write(dir.join(format!("claude-code-s.json.{pid}-1.tmp")), "left over").unwrap();
    let mut host = NativeHost::default();
    replace(&mut host, &file, b"{\"v\":1}", 0o600).unwrap();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "victim\n");
    assert_eq!(fs::read_to_string(&file).unwrap(), "{\"v\":1}");
    assert_eq!(mode(&file), 0o600);
    assert!(!dir.join(format!("claude-code-s.json.{pid}-2.tmp")).exists());
    // A rename that fails (a folder in the way) leaves no temporary file.
    let blocked = dir.join("blocked.json");
    fs::create_dir_all(blocked.join("x")).unwrap();
    assert!(replace(&mut host, &blocked, b"{}", 0o600).is_err());
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with("blocked.json.")), "{names:?}");
}
