//! The `doomloop` command's view of the outside world — files, folders,
//! stdin, stdout, stderr, the environment, the process id and the clock —
//! behind two traits.
//!
//! The command (`doom_loop_cli::command`: clap's argument parsing, every
//! subcommand, the messages and exit statuses), the folder walk of `eval`
//! and the streaming reader ([`crate::import`]), and the hook's locked
//! state store (`doom-loop-guard`) are written once against [`Host`]. It
//! lives here, the lowest crate of the three, because the importers' walk
//! reads through it. The native binary runs it all over [`NativeHost`]
//! (`std::fs`, `std::io`); the npm package's `npx doomloop` runs the very
//! same code compiled to wasm over a host whose methods are Node's `fs` and
//! `process` (`js/cli.mjs`, `docs/cli.md`). Code reached from the
//! command asks the host; it never calls `std::fs`, `std::env`,
//! `SystemTime` or `thread::sleep` itself, or it would fail (or trap)
//! under `npx`.
//!
//! Errors are `io::Error`s: the native ones as they come, the JS host's
//! rebuilt from Node's error code in Rust's wording (`No such file or
//! directory (os error 2)`), so both CLIs print the same message and the
//! command can tell `NotFound` and `AlreadyExists` apart.

use std::ffi::OsString;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A failed write to stdout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputError {
    /// The reader went away (a closed pipe): the command ends quietly with
    /// status 141, as a shell reports a tool killed by SIGPIPE.
    pub broken_pipe: bool,
    /// What failed, for `doomloop: cannot write output: …`.
    pub message: String,
}

impl From<io::Error> for OutputError {
    fn from(error: io::Error) -> Self {
        OutputError {
            broken_pipe: error.kind() == io::ErrorKind::BrokenPipe,
            message: error.to_string(),
        }
    }
}

/// What a directory entry or a path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (only from [`FileSystem::metadata`] without
    /// following, and from [`FileSystem::read_dir`]).
    Symlink,
    /// A FIFO (named pipe).
    Fifo,
    /// A socket.
    Socket,
    /// A block or character device.
    Device,
}

/// What the command needs to know of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// Its kind.
    pub kind: FileKind,
    /// Device and inode, where the platform has them (a folder reached
    /// twice, through a bind mount, is walked once).
    pub id: Option<(u64, u64)>,
    /// Last modification, in milliseconds since the Unix epoch.
    pub modified_ms: Option<u64>,
    /// Permission bits (`st_mode & 0o7777`), where the platform has them.
    pub mode: Option<u32>,
    /// The owner's user id, where the platform has one.
    pub uid: Option<u32>,
}

/// One entry of a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// Its name (not its path).
    pub name: OsString,
    /// Its kind without following a link (`None`: it could not be told).
    pub kind: Option<FileKind>,
}

/// Reading and writing files.
pub trait FileSystem {
    /// A file's bytes.
    ///
    /// # Errors
    /// The OS's (a directory is an error too).
    fn read_file(&mut self, path: &Path) -> io::Result<Vec<u8>>;
    /// A file opened for reading a piece at a time.
    ///
    /// # Errors
    /// The OS's.
    fn open(&mut self, path: &Path) -> io::Result<Box<dyn Read>>;
    /// What `path` is, following a final link when `follow`.
    ///
    /// # Errors
    /// The OS's (`NotFound` when nothing is there).
    fn metadata(&mut self, path: &Path, follow: bool) -> io::Result<Metadata>;
    /// The entries of a directory, in any order.
    ///
    /// # Errors
    /// The OS's.
    fn read_dir(&mut self, path: &Path) -> io::Result<Vec<DirEntry>>;
    /// Writes (creates or replaces) a file.
    ///
    /// # Errors
    /// The OS's.
    fn write_file(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// Creates a file that must not exist yet, holding `bytes` (the
    /// exclusive creation a lock file is).
    ///
    /// # Errors
    /// `AlreadyExists` when it does; else the OS's.
    fn create_new(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// Creates a file that must not exist yet, holding all of `bytes`, with
    /// permissions `mode` (its `0o777` bits, where permissions exist):
    /// `O_CREAT|O_EXCL`, so a link already at `path` — even one pointing
    /// nowhere — is never followed, and the file is owner-only until the
    /// bytes are in. A failed write removes the file again.
    ///
    /// # Errors
    /// `AlreadyExists` when anything is at `path`; else the OS's.
    fn write_new(&mut self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<()>;
    /// `path` with every link, `.` and `..` resolved (it must exist).
    ///
    /// # Errors
    /// The OS's (`NotFound` when it, or a link's target, is missing).
    fn real_path(&mut self, path: &Path) -> io::Result<PathBuf>;
    /// Renames `from` over `to` (atomically, where the OS does).
    ///
    /// # Errors
    /// The OS's.
    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    ///
    /// # Errors
    /// The OS's.
    fn remove_file(&mut self, path: &Path) -> io::Result<()>;
    /// Creates a directory and its parents; `private`: owner-only access
    /// for the last one, where permissions exist.
    ///
    /// # Errors
    /// The OS's.
    fn create_dir_all(&mut self, path: &Path, private: bool) -> io::Result<()>;

    /// Whether `path` is a directory (following links; false when absent).
    fn is_dir(&mut self, path: &Path) -> bool {
        self.metadata(path, true).is_ok_and(|m| m.kind == FileKind::Dir)
    }
}

/// Everything the command reads and writes besides files.
pub trait Host: FileSystem {
    /// Stdin, to read once.
    ///
    /// # Errors
    /// The OS's.
    fn stdin(&mut self) -> io::Result<Box<dyn Read>>;
    /// An environment variable, when set.
    fn env_var(&mut self, name: &str) -> Option<OsString>;
    /// The current directory.
    ///
    /// # Errors
    /// The OS's.
    fn current_dir(&mut self) -> io::Result<PathBuf>;
    /// The words that run this CLI again (the native binary's path; `node`
    /// and the script under npx): what `hook install` writes by default.
    ///
    /// # Errors
    /// The OS's.
    fn program(&mut self) -> io::Result<Vec<String>>;
    /// This process's id (written into a lock file).
    fn pid(&mut self) -> u32;
    /// This process's effective user id, where the platform has one (the
    /// owner a state directory must have).
    fn uid(&mut self) -> Option<u32>;
    /// Wall-clock time in milliseconds since the Unix epoch (lock ages and
    /// waits only; never a verdict).
    fn now_ms(&mut self) -> u64;
    /// Blocks for `ms` milliseconds (the lock's backoff).
    fn sleep_ms(&mut self, ms: u64);
    /// Writes to stdout (buffered or not).
    ///
    /// # Errors
    /// The write failed.
    fn stdout(&mut self, text: &str) -> Result<(), OutputError>;
    /// Flushes stdout.
    ///
    /// # Errors
    /// The write failed.
    fn flush(&mut self) -> Result<(), OutputError>;
    /// Writes to stderr; a failing stderr is ignored (there is nowhere
    /// left to report it).
    fn stderr(&mut self, text: &str);
    /// Whether stderr is a terminal (progress lines are shown only there).
    fn stderr_is_terminal(&mut self) -> bool;
}

/// The process's own file system, through `std::fs`.
#[derive(Clone, Copy, Debug, Default)]
pub struct NativeFs;

fn kind_of(kind: std::fs::FileType) -> FileKind {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return FileKind::Fifo;
        }
        if kind.is_socket() {
            return FileKind::Socket;
        }
        if kind.is_block_device() || kind.is_char_device() {
            return FileKind::Device;
        }
    }
    if kind.is_dir() {
        FileKind::Dir
    } else if kind.is_symlink() {
        FileKind::Symlink
    } else if kind.is_file() {
        FileKind::File
    } else {
        FileKind::Device
    }
}

#[cfg(unix)]
fn id_of(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn id_of(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

#[cfg(unix)]
fn owner_of(meta: &std::fs::Metadata) -> (Option<u32>, Option<u32>) {
    use std::os::unix::fs::MetadataExt;
    (Some(meta.mode() & 0o7777), Some(meta.uid()))
}

#[cfg(not(unix))]
fn owner_of(_meta: &std::fs::Metadata) -> (Option<u32>, Option<u32>) {
    (None, None)
}

/// Opens `path` for writing, exclusively, owner-only where modes exist.
fn open_new(path: &Path) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Sets an open file's permissions (`fchmod`: the file itself, never a
/// link that may have replaced its name).
#[cfg(unix)]
fn set_mode(file: &std::fs::File, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(mode & 0o777))
}

#[cfg(not(unix))]
fn set_mode(_file: &std::fs::File, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// `time` in milliseconds since the Unix epoch (0 before it).
fn epoch_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl FileSystem for NativeFs {
    fn read_file(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn open(&mut self, path: &Path) -> io::Result<Box<dyn Read>> {
        Ok(Box::new(std::fs::File::open(path)?))
    }

    fn metadata(&mut self, path: &Path, follow: bool) -> io::Result<Metadata> {
        let meta = if follow {
            std::fs::metadata(path)?
        } else {
            std::fs::symlink_metadata(path)?
        };
        let (mode, uid) = owner_of(&meta);
        Ok(Metadata {
            kind: kind_of(meta.file_type()),
            id: id_of(&meta),
            modified_ms: meta.modified().ok().map(epoch_ms),
            mode,
            uid,
        })
    }

    fn read_dir(&mut self, path: &Path) -> io::Result<Vec<DirEntry>> {
        Ok(std::fs::read_dir(path)?
            .flatten()
            .map(|entry| DirEntry {
                name: entry.file_name(),
                kind: entry.file_type().ok().map(kind_of),
            })
            .collect())
    }

    fn write_file(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        std::fs::write(path, bytes)
    }

    fn create_new(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
        // The file exists now whatever the write does: a holder that dies
        // here leaves an empty lock, which the lock treats as stale soon.
        let _ = file.write_all(bytes);
        Ok(())
    }

    fn write_new(&mut self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
        let mut file = open_new(path)?;
        let written = file.write_all(bytes).and_then(|()| set_mode(&file, mode));
        if written.is_err() {
            drop(file);
            let _ = std::fs::remove_file(path);
        }
        written
    }

    fn real_path(&mut self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }

    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove_file(&mut self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn create_dir_all(&mut self, path: &Path, private: bool) -> io::Result<()> {
        std::fs::create_dir_all(path)?;
        #[cfg(unix)]
        if private {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700));
        }
        #[cfg(not(unix))]
        let _ = private;
        Ok(())
    }
}

/// The native binary's host: `std::fs`, the process's stdin, a buffered
/// stdout, stderr, environment and clock.
pub struct NativeHost {
    out: io::BufWriter<io::Stdout>,
}

impl Default for NativeHost {
    fn default() -> Self {
        NativeHost {
            out: io::BufWriter::new(io::stdout()),
        }
    }
}

impl FileSystem for NativeHost {
    fn read_file(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        NativeFs.read_file(path)
    }

    fn open(&mut self, path: &Path) -> io::Result<Box<dyn Read>> {
        NativeFs.open(path)
    }

    fn metadata(&mut self, path: &Path, follow: bool) -> io::Result<Metadata> {
        NativeFs.metadata(path, follow)
    }

    fn read_dir(&mut self, path: &Path) -> io::Result<Vec<DirEntry>> {
        NativeFs.read_dir(path)
    }

    fn write_file(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        NativeFs.write_file(path, bytes)
    }

    fn create_new(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        NativeFs.create_new(path, bytes)
    }

    fn write_new(&mut self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
        NativeFs.write_new(path, bytes, mode)
    }

    fn real_path(&mut self, path: &Path) -> io::Result<PathBuf> {
        NativeFs.real_path(path)
    }

    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        NativeFs.rename(from, to)
    }

    fn remove_file(&mut self, path: &Path) -> io::Result<()> {
        NativeFs.remove_file(path)
    }

    fn create_dir_all(&mut self, path: &Path, private: bool) -> io::Result<()> {
        NativeFs.create_dir_all(path, private)
    }
}

impl Host for NativeHost {
    fn stdin(&mut self) -> io::Result<Box<dyn Read>> {
        Ok(Box::new(io::stdin()))
    }

    fn env_var(&mut self, name: &str) -> Option<OsString> {
        std::env::var_os(name)
    }

    fn current_dir(&mut self) -> io::Result<PathBuf> {
        std::env::current_dir()
    }

    fn program(&mut self) -> io::Result<Vec<String>> {
        Ok(vec![std::env::current_exe()?.display().to_string()])
    }

    fn pid(&mut self) -> u32 {
        std::process::id()
    }

    fn uid(&mut self) -> Option<u32> {
        #[cfg(unix)]
        return Some(rustix::process::geteuid().as_raw());
        #[cfg(not(unix))]
        None
    }

    fn now_ms(&mut self) -> u64 {
        epoch_ms(SystemTime::now())
    }

    fn sleep_ms(&mut self, ms: u64) {
        std::thread::sleep(Duration::from_millis(ms));
    }

    fn stdout(&mut self, text: &str) -> Result<(), OutputError> {
        Ok(self.out.write_all(text.as_bytes())?)
    }

    fn flush(&mut self) -> Result<(), OutputError> {
        Ok(self.out.flush()?)
    }

    fn stderr(&mut self, text: &str) {
        let _ = io::stderr().lock().write_all(text.as_bytes());
    }

    fn stderr_is_terminal(&mut self) -> bool {
        io::stderr().is_terminal()
    }
}

/// A host in memory: files and folders in maps, stdin from bytes, stdout
/// and stderr into strings, a clock that advances only when slept. Tests
/// and the fuzz target run the whole command over it; code that reached
/// behind the host's back (`std::fs`) would find nothing there.
#[derive(Clone, Debug, Default)]
pub struct MemoryHost {
    /// Files by path.
    pub files: std::collections::BTreeMap<PathBuf, Vec<u8>>,
    /// Folders (a file's folder need not be listed to read the file).
    pub dirs: std::collections::BTreeSet<PathBuf>,
    /// What stdin holds.
    pub stdin: Vec<u8>,
    /// The environment.
    pub env: std::collections::BTreeMap<String, String>,
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
    /// The clock, in milliseconds (advanced by `sleep_ms`).
    pub now_ms: u64,
}

fn not_found() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "No such file or directory (os error 2)")
}

impl FileSystem for MemoryHost {
    fn read_file(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        if self.dirs.contains(path) {
            return Err(io::Error::other("Is a directory (os error 21)"));
        }
        self.files.get(path).cloned().ok_or_else(not_found)
    }

    fn open(&mut self, path: &Path) -> io::Result<Box<dyn Read>> {
        Ok(Box::new(io::Cursor::new(self.read_file(path)?)))
    }

    fn metadata(&mut self, path: &Path, _follow: bool) -> io::Result<Metadata> {
        let kind = if self.dirs.contains(path) {
            FileKind::Dir
        } else if self.files.contains_key(path) {
            FileKind::File
        } else {
            return Err(not_found());
        };
        Ok(Metadata {
            kind,
            id: None,
            modified_ms: Some(self.now_ms),
            mode: None,
            uid: None,
        })
    }

    fn read_dir(&mut self, path: &Path) -> io::Result<Vec<DirEntry>> {
        if !self.dirs.contains(path) {
            return Err(not_found());
        }
        let files = self.files.keys().map(|p| (p, FileKind::File));
        let dirs = self.dirs.iter().map(|p| (p, FileKind::Dir));
        Ok(files
            .chain(dirs)
            .filter(|(p, _)| p.parent() == Some(path))
            .filter_map(|(p, kind)| {
                Some(DirEntry {
                    name: p.file_name()?.to_os_string(),
                    kind: Some(kind),
                })
            })
            .collect())
    }

    fn write_file(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.files.insert(path.to_path_buf(), bytes.to_vec());
        Ok(())
    }

    fn create_new(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        if self.files.contains_key(path) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "File exists (os error 17)",
            ));
        }
        self.write_file(path, bytes)
    }

    fn write_new(&mut self, path: &Path, bytes: &[u8], _mode: u32) -> io::Result<()> {
        self.create_new(path, bytes)
    }

    fn real_path(&mut self, path: &Path) -> io::Result<PathBuf> {
        if self.files.contains_key(path) || self.dirs.contains(path) {
            Ok(path.to_path_buf())
        } else {
            Err(not_found())
        }
    }

    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        let bytes = self.files.remove(from).ok_or_else(not_found)?;
        self.files.insert(to.to_path_buf(), bytes);
        Ok(())
    }

    fn remove_file(&mut self, path: &Path) -> io::Result<()> {
        self.files.remove(path).map(drop).ok_or_else(not_found)
    }

    fn create_dir_all(&mut self, path: &Path, _private: bool) -> io::Result<()> {
        for dir in path.ancestors().filter(|d| !d.as_os_str().is_empty()) {
            self.dirs.insert(dir.to_path_buf());
        }
        Ok(())
    }
}

impl Host for MemoryHost {
    fn stdin(&mut self) -> io::Result<Box<dyn Read>> {
        Ok(Box::new(io::Cursor::new(std::mem::take(&mut self.stdin))))
    }

    fn env_var(&mut self, name: &str) -> Option<OsString> {
        self.env.get(name).map(OsString::from)
    }

    fn current_dir(&mut self) -> io::Result<PathBuf> {
        Ok(PathBuf::from("/work"))
    }

    fn program(&mut self) -> io::Result<Vec<String>> {
        Ok(vec!["/bin/doomloop".into()])
    }

    fn pid(&mut self) -> u32 {
        1
    }

    fn uid(&mut self) -> Option<u32> {
        None
    }

    fn now_ms(&mut self) -> u64 {
        self.now_ms
    }

    fn sleep_ms(&mut self, ms: u64) {
        self.now_ms += ms;
    }

    fn stdout(&mut self, text: &str) -> Result<(), OutputError> {
        self.stdout.push_str(text);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn stderr(&mut self, text: &str) {
        self.stderr.push_str(text);
    }

    fn stderr_is_terminal(&mut self) -> bool {
        false
    }
}
