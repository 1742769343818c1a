//! Where a hook keeps each session's state: one JSON file per session in a
//! state directory, written atomically (a temporary file renamed over the
//! old one, so a process killed mid-write leaves the previous file whole)
//! and guarded by a lock file (parallel tool calls of one message start
//! parallel hook processes).
//!
//! The directory: `--state-dir`, else `$DOOMLOOP_STATE_DIR`, else
//! `$XDG_STATE_HOME/doomloop`, else `~/.local/state/doomloop`.

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime};

use doom_loop::fingerprint::sha256_hex;

use super::event::Agent;

/// How long a process waits for another's lock before giving up (and
/// allowing the call unguarded).
const LOCK_WAIT: Duration = Duration::from_millis(3000);
/// A lock older than this is stale whoever holds it (a hook decides in
/// milliseconds; a holder this slow is hung or its pid was reused).
const LOCK_STALE: Duration = Duration::from_secs(20);

/// The state directory from the flag, the environment and the defaults.
pub fn state_dir(flag: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = flag {
        return Ok(dir.to_path_buf());
    }
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
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

/// An exclusive lock on one session's state, released on drop.
pub struct Lock {
    path: PathBuf,
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

fn holder_is_dead(contents: &str) -> bool {
    // The lock file holds the holder's pid. Where /proc exists, a pid
    // without an entry is a dead holder.
    let Ok(pid) = contents.trim().parse::<u32>() else {
        return false;
    };
    let proc = Path::new("/proc");
    proc.join("self").exists() && !proc.join(pid.to_string()).exists()
}

fn is_stale(path: &Path) -> bool {
    let contents = fs::read_to_string(path).unwrap_or_default();
    if holder_is_dead(&contents) {
        return true;
    }
    let age = fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok());
    // An empty lock is one whose holder died between creating and writing it
    // (or is writing it right now: give it a moment).
    match age {
        Some(age) if age > LOCK_STALE => true,
        Some(age) if contents.is_empty() => age > Duration::from_millis(500),
        _ => false,
    }
}

/// Takes the lock of `file` (`FILE.lock`), waiting for a live holder and
/// taking over from a dead one.
///
/// # Errors
/// The directory cannot be written, or a live holder kept it too long.
pub fn lock(file: &Path) -> Result<Lock, String> {
    let mut path = file.as_os_str().to_owned();
    path.push(".lock");
    let path = PathBuf::from(path);
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                let _ = write!(f, "{}", std::process::id());
                return Ok(Lock { path });
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                if is_stale(&path) {
                    // Whoever removes it first takes it next; a second
                    // remover finds it gone or fresh and simply retries.
                    let _ = fs::remove_file(&path);
                    continue;
                }
                if start.elapsed() > LOCK_WAIT {
                    return Err(format!("{} is held by another process", path.display()));
                }
                sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
        }
    }
}

/// Reads a state file: `Ok(None)` when there is none yet.
///
/// # Errors
/// The file exists but cannot be read.
pub fn read(file: &Path) -> Result<Option<String>, String> {
    match fs::read(file) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", file.display())),
    }
}

/// Writes a state file atomically: `FILE.tmp`, then renamed over `FILE`
/// (the lock makes this process the only writer of both).
///
/// # Errors
/// The directory cannot be written.
pub fn write(file: &Path, contents: &str) -> Result<(), String> {
    let mut tmp = file.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(contents.as_bytes())?;
        // No fsync: the rename is what a killed process cannot tear (the
        // kernel has the bytes either way); a power loss can, and a torn
        // file then starts that session over (one warning). Syncing would
        // cost more than the whole decision on every tool call.
        drop(f);
        fs::rename(&tmp, file)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        format!("cannot write {}: {e}", file.display())
    })
}

/// Creates the state directory (owner-only where permissions exist).
///
/// # Errors
/// It cannot be created.
pub fn ensure_dir(dir: &Path) -> Result<(), String> {
    if dir.is_dir() {
        return Ok(());
    }
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
    }
    Ok(())
}
