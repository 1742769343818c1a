//! Where a hook keeps each session's state: one JSON file per session in a
//! state directory, written atomically (a temporary file renamed over the
//! old one, so a process killed mid-write leaves the previous file whole)
//! and guarded by a lock file (parallel tool calls of one message start
//! parallel hook processes). [`replace`] is also how `hook install`
//! writes a user's settings.
//!
//! The directory may be one someone else can reach (`--state-dir
//! /tmp/…`): every file the store creates is created exclusively, so a
//! link planted at its name is never followed, and the state files are
//! owner-only (they hold the round's tool inputs and outputs).
//!
//! The directory: `--state-dir`, else `$DOOMLOOP_STATE_DIR`, else
//! `$XDG_STATE_HOME/doomloop`, else `~/.local/state/doomloop`.
//!
//! Every file operation, the pid, the clock and the backoff sleep go
//! through the [`Host`], so `npx doomloop hook …` (the same code in wasm,
//! over Node's `fs`) takes the very lock the native binary takes and the
//! two can answer one session's parallel calls side by side.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use doom_loop::fingerprint::sha256_hex;

use crate::event::Agent;
use doom_loop_trace::host::Host;

/// How long a process waits for another's lock before giving up (and
/// allowing the call unguarded), in milliseconds.
const LOCK_WAIT_MS: u64 = 3000;
/// A lock older than this (ms) is stale whoever holds it (a hook decides
/// in milliseconds; a holder this slow is hung or its pid was reused).
const LOCK_STALE_MS: u64 = 20_000;
/// An empty lock older than this (ms) lost its holder between creating and
/// writing it.
const LOCK_EMPTY_STALE_MS: u64 = 500;

/// The state directory from the flag, the environment and the defaults.
///
/// # Errors
/// None of them is set.
pub fn state_dir(host: &mut dyn Host, flag: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = flag {
        return Ok(dir.to_path_buf());
    }
    let mut var = |name: &str| {
        host.env_var(name)
            .filter(|v: &OsString| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("DOOMLOOP_STATE_DIR") {
        return Ok(dir);
    }
    if let Some(dir) = var("XDG_STATE_HOME") {
        return Ok(dir.join("doomloop"));
    }
    if let Some(home) = var("HOME").or_else(|| var("USERPROFILE")) {
        return Ok(home.join(".local").join("state").join("doomloop"));
    }
    Err("no state directory: set DOOMLOOP_STATE_DIR (or HOME)".into())
}

/// The state file of one session: `AGENT-SESSION.json`, the session id
/// kept when it is a plain name, else its SHA-256 (ids come from the agent
/// and must not reach outside the directory).
pub fn session_file(dir: &Path, agent: Agent, session_id: &str) -> PathBuf {
    let plain = session_id.len() <= 96
        && session_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    let name = if plain {
        session_id.to_string()
    } else {
        sha256_hex(session_id.as_bytes())
    };
    dir.join(format!("{}-{name}.json", agent.as_str()))
}

fn holder_is_dead(host: &mut dyn Host, contents: &str) -> bool {
    // The lock file holds the holder's pid. Where /proc exists, a pid
    // without an entry is a dead holder.
    let Ok(pid) = contents.trim().parse::<u32>() else {
        return false;
    };
    let proc = Path::new("/proc");
    host.metadata(&proc.join("self"), true).is_ok()
        && host
            .metadata(&proc.join(pid.to_string()), true)
            .is_err_and(|e| e.kind() == ErrorKind::NotFound)
}

fn is_stale(host: &mut dyn Host, path: &Path) -> bool {
    let contents = host
        .read_file(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    if holder_is_dead(host, &contents) {
        return true;
    }
    let now = host.now_ms();
    let age = host
        .metadata(path, false)
        .ok()
        .and_then(|m| m.modified_ms)
        .and_then(|t| now.checked_sub(t));
    // An empty lock is one whose holder died between creating and writing it
    // (or is writing it right now: give it a moment).
    match age {
        Some(age) if age > LOCK_STALE_MS => true,
        Some(age) if contents.is_empty() => age > LOCK_EMPTY_STALE_MS,
        _ => false,
    }
}

/// Runs `body` holding the exclusive lock of `file` (`FILE.lock`, created
/// exclusively with this process's pid in it), waiting for a live holder
/// and taking over from a dead one; the lock is removed after `body`.
///
/// # Errors
/// The directory cannot be written, or a live holder kept it too long;
/// else `body`'s.
pub fn locked<T>(
    host: &mut dyn Host,
    file: &Path,
    body: impl FnOnce(&mut dyn Host) -> Result<T, String>,
) -> Result<T, String> {
    let mut path = file.as_os_str().to_owned();
    path.push(".lock");
    let path = PathBuf::from(path);
    let start = host.now_ms();
    let mut pause = 1;
    loop {
        let pid = host.pid().to_string();
        match host.create_new(&path, pid.as_bytes()) {
            Ok(()) => break,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                if is_stale(host, &path) {
                    // Whoever removes it first takes it next; a second
                    // remover finds it gone or fresh and simply retries.
                    let _ = host.remove_file(&path);
                    continue;
                }
                if host.now_ms().saturating_sub(start) > LOCK_WAIT_MS {
                    return Err(format!("{} is held by another process", path.display()));
                }
                host.sleep_ms(pause);
                pause = (pause * 2).min(20);
            }
            Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
        }
    }
    let result = body(host);
    let _ = host.remove_file(&path);
    result
}

/// Reads a state file: `Ok(None)` when there is none yet.
///
/// # Errors
/// The file exists but cannot be read.
pub fn read(host: &mut dyn Host, file: &Path) -> Result<Option<String>, String> {
    match host.read_file(file) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", file.display())),
    }
}

/// Writes a state file atomically and owner-only ([`replace`]).
///
/// # Errors
/// The directory cannot be written.
pub fn write(host: &mut dyn Host, file: &Path, contents: &str) -> Result<(), String> {
    // No fsync: the rename is what a killed process cannot tear (the
    // kernel has the bytes either way); a power loss can, and a torn
    // file then starts that session over (one warning). Syncing would
    // cost more than the whole decision on every tool call.
    replace(host, file, contents.as_bytes(), 0o600)
}

/// Temporary names tried before giving up: `FILE.PID.tmp`, then
/// `FILE.PID-1.tmp`, … (a name already taken — a crashed run's leftover,
/// or a link someone planted — is skipped, never written through).
const TMP_TRIES: u32 = 16;

/// Replaces `file` atomically: `bytes` go to a temporary file beside it,
/// created exclusively ([`FileSystem::write_new`](doom_loop_trace::host::FileSystem::write_new):
/// `O_CREAT|O_EXCL`, so never through a link someone put there) with
/// permissions `mode`, then renamed over `file` (a rename replaces a link
/// at `file` itself, never what it points to). A failure removes the
/// temporary file; `file` is then as it was.
///
/// # Errors
/// The directory cannot be written (the message names `file`).
pub fn replace(host: &mut dyn Host, file: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("cannot write {}: {e}", file.display());
    let tmp = write_temp(host, file, bytes, mode).map_err(failed)?;
    host.rename(&tmp, file).map_err(|e| {
        let _ = host.remove_file(&tmp);
        failed(e)
    })
}

fn write_temp(host: &mut dyn Host, file: &Path, bytes: &[u8], mode: u32) -> std::io::Result<PathBuf> {
    let pid = host.pid();
    let mut taken = None;
    for n in 0..TMP_TRIES {
        let mut name = file.as_os_str().to_owned();
        name.push(if n == 0 {
            format!(".{pid}.tmp")
        } else {
            format!(".{pid}-{n}.tmp")
        });
        let tmp = PathBuf::from(name);
        match host.write_new(&tmp, bytes, mode) {
            Ok(()) => return Ok(tmp),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => taken = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(taken.unwrap_or_else(|| ErrorKind::AlreadyExists.into()))
}

/// Creates the state directory (owner-only where permissions exist), or
/// checks the one found there: it must be this user's and writable by no
/// one else. A directory others can write is refused even with the sticky
/// bit (`/tmp`'s 1777): the sticky bit stops them removing the hook's
/// files, not creating the names it will use next (a session's state or
/// lock file, read and trusted by the next call).
///
/// # Errors
/// It cannot be created, or is not one to use (the message says why).
pub fn ensure_dir(host: &mut dyn Host, dir: &Path) -> Result<(), String> {
    if !host.is_dir(dir) {
        host.create_dir_all(dir, true)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    // Checked after creating too: a directory someone made first, between
    // the look and the creation, is found here.
    let meta = host
        .metadata(dir, true)
        .map_err(|e| format!("cannot use {}: {e}", dir.display()))?;
    if let (Some(owner), Some(me)) = (meta.uid, host.uid()) {
        if owner != me {
            return Err(format!(
                "the state directory {} belongs to another user (uid {owner}); not using it",
                dir.display()
            ));
        }
    }
    match meta.mode {
        Some(mode) if mode & 0o022 != 0 => Err(format!(
            "the state directory {} can be written by other users (mode {:o}); not using it (chmod 700 it, or choose another)",
            dir.display(),
            mode & 0o7777
        )),
        _ => Ok(()),
    }
}
