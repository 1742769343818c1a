//! `npx doomloop`: the native CLI's own command (`doom_loop_cli::command`:
//! clap's definition, every subcommand, the folder walk, the streaming
//! reader, the hook's locked state store, messages and exit statuses) over
//! a JS host object whose methods are Node's `fs` and `process`
//! (`js/cli-wasm.cjs`; the interface is in docs/cli.md). This file only
//! forwards: each `Host` method is one call of the object's method of the
//! same meaning, and a JS exception becomes an `io::Error` in Rust's own
//! wording (from Node's error code), so both CLIs print the same message.

use std::ffi::OsString;
use std::io::{self, BufReader, Cursor, ErrorKind, Read};
use std::path::{Path, PathBuf};

use doom_loop_cli::command;
use doom_loop_trace::host::{DirEntry, FileKind, FileSystem, Host, Metadata, OutputError};
use js_sys::{Array, Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The JS host object (`js/cli-wasm.cjs`).
#[derive(Clone)]
struct JsHost {
    host: JsValue,
}

/// Node's error codes as Rust's `io::Error` shows them (Linux errno
/// numbers and `strerror` texts): the messages both CLIs print.
const OS_ERRORS: &[(&str, i32, &str, ErrorKind)] = &[
    ("EPERM", 1, "Operation not permitted", ErrorKind::PermissionDenied),
    ("ENOENT", 2, "No such file or directory", ErrorKind::NotFound),
    ("EBADF", 9, "Bad file descriptor", ErrorKind::Other),
    ("EAGAIN", 11, "Resource temporarily unavailable", ErrorKind::WouldBlock),
    ("EACCES", 13, "Permission denied", ErrorKind::PermissionDenied),
    ("EEXIST", 17, "File exists", ErrorKind::AlreadyExists),
    ("EXDEV", 18, "Invalid cross-device link", ErrorKind::Other),
    ("ENOTDIR", 20, "Not a directory", ErrorKind::Other),
    ("EISDIR", 21, "Is a directory", ErrorKind::Other),
    ("EINVAL", 22, "Invalid argument", ErrorKind::InvalidInput),
    ("EMFILE", 24, "Too many open files", ErrorKind::Other),
    ("ENOSPC", 28, "No space left on device", ErrorKind::Other),
    ("EROFS", 30, "Read-only file system", ErrorKind::Other),
    ("EPIPE", 32, "Broken pipe", ErrorKind::BrokenPipe),
    ("ENAMETOOLONG", 36, "File name too long", ErrorKind::Other),
    ("ENOTEMPTY", 39, "Directory not empty", ErrorKind::Other),
    ("ELOOP", 40, "Too many levels of symbolic links", ErrorKind::Other),
];

/// The one conversion of a JS exception into the command's error type.
fn io_error(thrown: &JsValue) -> io::Error {
    let field = |name: &str| Reflect::get(thrown, &JsValue::from_str(name)).ok();
    let code = field("code").and_then(|c| c.as_string());
    if let Some((_, errno, text, kind)) = OS_ERRORS.iter().find(|e| code.as_deref() == Some(e.0)) {
        return io::Error::new(*kind, format!("{text} (os error {errno})"));
    }
    let message = field("message")
        .and_then(|m| m.as_string())
        .or_else(|| thrown.as_string())
        .unwrap_or_else(|| "unknown error".into());
    io::Error::other(message)
}

fn path_value(path: &Path) -> JsValue {
    JsValue::from_str(&path.to_string_lossy())
}

fn kind_of(value: &JsValue) -> Option<FileKind> {
    Some(match value.as_string()?.as_str() {
        "file" => FileKind::File,
        "dir" => FileKind::Dir,
        "symlink" => FileKind::Symlink,
        "fifo" => FileKind::Fifo,
        "socket" => FileKind::Socket,
        "device" => FileKind::Device,
        _ => return None,
    })
}

fn bad_answer(method: &str) -> io::Error {
    io::Error::other(format!("the JS host's {method} answered with something else"))
}

impl JsHost {
    fn call(&self, method: &str, args: &[JsValue]) -> io::Result<JsValue> {
        let function = Reflect::get(&self.host, &JsValue::from_str(method))
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
            .ok_or_else(|| io::Error::other(format!("the JS host has no {method}")))?;
        let args: Array = args.iter().collect();
        function.apply(&self.host, &args).map_err(|e| io_error(&e))
    }

    fn bytes(&self, method: &str, args: &[JsValue]) -> io::Result<Vec<u8>> {
        let value = self.call(method, args)?;
        let bytes = value.dyn_into::<Uint8Array>().map_err(|_| bad_answer(method))?;
        Ok(bytes.to_vec())
    }

    fn number(&self, method: &str, args: &[JsValue]) -> Option<f64> {
        self.call(method, args).ok().and_then(|v| v.as_f64())
    }
}

/// A file the JS host opened: read a piece at a time (`read(fd, n)`),
/// closed when dropped.
struct JsFile {
    host: JsHost,
    fd: JsValue,
}

impl Read for JsFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let wanted = JsValue::from(buf.len() as f64);
        let chunk = self.host.call("read", &[self.fd.clone(), wanted])?;
        let chunk = chunk.dyn_into::<Uint8Array>().map_err(|_| bad_answer("read"))?;
        let n = (chunk.length() as usize).min(buf.len());
        chunk.subarray(0, n as u32).copy_to(&mut buf[..n]);
        Ok(n)
    }
}

impl Drop for JsFile {
    fn drop(&mut self) {
        let _ = self.host.call("close", std::slice::from_ref(&self.fd));
    }
}

impl FileSystem for JsHost {
    fn read_file(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        self.bytes("readFile", &[path_value(path)])
    }

    fn open(&mut self, path: &Path) -> io::Result<Box<dyn Read>> {
        let fd = self.call("open", &[path_value(path)])?;
        // Pieces of 64 KiB: one host call per piece, not per line.
        Ok(Box::new(BufReader::with_capacity(
            1 << 16,
            JsFile { host: self.clone(), fd },
        )))
    }

    fn metadata(&mut self, path: &Path, follow: bool) -> io::Result<Metadata> {
        let answer = self.call("stat", &[path_value(path), JsValue::from_bool(follow)])?;
        let answer: Array = answer.dyn_into().map_err(|_| bad_answer("stat"))?;
        let kind = kind_of(&answer.get(0)).ok_or_else(|| bad_answer("stat"))?;
        let id = answer.get(1).as_string().and_then(|id| {
            let (dev, ino) = id.split_once(':')?;
            Some((dev.parse().ok()?, ino.parse().ok()?))
        });
        let modified_ms = answer
            .get(2)
            .as_f64()
            .filter(|t| t.is_finite() && *t >= 0.0)
            .map(|t| t as u64);
        let bits = |i: u32| {
            answer
                .get(i)
                .as_f64()
                .filter(|n| n.is_finite() && *n >= 0.0)
                .map(|n| n as u32)
        };
        Ok(Metadata {
            kind,
            id,
            modified_ms,
            mode: bits(3).map(|m| m & 0o7777),
            uid: bits(4),
        })
    }

    fn read_dir(&mut self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let answer = self.call("readDir", &[path_value(path)])?;
        let answer: Array = answer.dyn_into().map_err(|_| bad_answer("readDir"))?;
        let mut entries = Vec::new();
        for entry in answer.iter() {
            let entry: Array = entry.dyn_into().map_err(|_| bad_answer("readDir"))?;
            let name = entry.get(0).as_string().ok_or_else(|| bad_answer("readDir"))?;
            entries.push(DirEntry {
                name: OsString::from(name),
                kind: kind_of(&entry.get(1)),
            });
        }
        Ok(entries)
    }

    fn write_file(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.call("writeFile", &[path_value(path), Uint8Array::from(bytes).into()])
            .map(drop)
    }

    fn create_new(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.call("createNew", &[path_value(path), Uint8Array::from(bytes).into()])
            .map(drop)
    }

    fn write_new(&mut self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
        let args = [
            path_value(path),
            Uint8Array::from(bytes).into(),
            JsValue::from(mode & 0o777),
        ];
        self.call("writeNew", &args).map(drop)
    }

    fn real_path(&mut self, path: &Path) -> io::Result<PathBuf> {
        let real = self.call("realPath", &[path_value(path)])?;
        real.as_string()
            .map(PathBuf::from)
            .ok_or_else(|| bad_answer("realPath"))
    }

    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        self.call("rename", &[path_value(from), path_value(to)]).map(drop)
    }

    fn remove_file(&mut self, path: &Path) -> io::Result<()> {
        self.call("removeFile", &[path_value(path)]).map(drop)
    }

    fn create_dir_all(&mut self, path: &Path, private: bool) -> io::Result<()> {
        self.call("mkdir", &[path_value(path), JsValue::from_bool(private)])
            .map(drop)
    }
}

impl Host for JsHost {
    fn stdin(&mut self) -> io::Result<Box<dyn Read>> {
        Ok(Box::new(Cursor::new(self.bytes("readStdin", &[])?)))
    }

    fn env_var(&mut self, name: &str) -> Option<OsString> {
        self.call("env", &[JsValue::from_str(name)])
            .ok()
            .and_then(|v| v.as_string())
            .map(OsString::from)
    }

    fn current_dir(&mut self) -> io::Result<PathBuf> {
        let dir = self.call("cwd", &[])?;
        dir.as_string().map(PathBuf::from).ok_or_else(|| bad_answer("cwd"))
    }

    fn program(&mut self) -> io::Result<Vec<String>> {
        let words = self.call("program", &[])?;
        let words: Array = words.dyn_into().map_err(|_| bad_answer("program"))?;
        words
            .iter()
            .map(|w| w.as_string().ok_or_else(|| bad_answer("program")))
            .collect()
    }

    fn pid(&mut self) -> u32 {
        self.number("pid", &[]).map_or(0, |pid| pid as u32)
    }

    fn uid(&mut self) -> Option<u32> {
        self.number("uid", &[])
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(|n| n as u32)
    }

    fn now_ms(&mut self) -> u64 {
        self.number("now", &[]).filter(|t| *t >= 0.0).map_or(0, |t| t as u64)
    }

    fn sleep_ms(&mut self, ms: u64) {
        let _ = self.call("sleep", &[JsValue::from(ms as f64)]);
    }

    fn stdout(&mut self, text: &str) -> Result<(), OutputError> {
        // Node reports a failing stdout asynchronously (js/cli-wasm.cjs ends the
        // process then, as the native CLI would).
        self.call("stdout", &[JsValue::from_str(text)])
            .map(drop)
            .map_err(OutputError::from)
    }

    fn flush(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn stderr(&mut self, text: &str) {
        let _ = self.call("stderr", &[JsValue::from_str(text)]);
    }

    fn stderr_is_terminal(&mut self) -> bool {
        self.call("stderrIsTerminal", &[])
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    }
}

/// `npx doomloop ARGV…` over the JS `host`: the exit status.
#[wasm_bindgen(js_name = cliMain)]
pub fn cli_main(argv: Vec<String>, host: JsValue) -> u8 {
    command::main_lossy(&argv, &mut JsHost { host })
}

/// `npx doomloop hook AGENT …` as an agent runs it on every event, read
/// without clap (`command::main_plain_hook_lossy`): the exit status, or -1
/// for any other command line (then [`cli_main`] answers it). An export of
/// its own, so that a hook event compiles only the hook's code.
#[wasm_bindgen(js_name = hookMain)]
pub fn hook_main(argv: Vec<String>, host: JsValue) -> i32 {
    command::main_plain_hook_lossy(&argv, &mut JsHost { host }).map_or(-1, i32::from)
}
