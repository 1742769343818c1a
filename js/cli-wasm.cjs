// The wasm CLI: the native `doomloop` itself, compiled to wasm — what the
// npm `doomloop` runs (cli.cjs, the launcher, requires this file) where no
// native platform package is installed, or with DOOMLOOP_WASM=1; and
// `doomloop proxy` (the gateway's Node server, proxy.mjs) everywhere.
//
// The command — clap's argument parsing, help, usage and error texts,
// every subcommand (the `eval` folder walk, the streaming reader, the
// `hook` state store and its lock), messages and exit statuses — is the
// Rust code the native binary runs (doom_loop_cli::command, in the full
// wasm module). This file is only its host: it hands over argv and does
// the I/O the command asks for with Node's `fs` and `process`, one method
// each (wasm/src/cli.rs; docs/cli.md). Errors are thrown as Node
// throws them; the module words them as Rust does. Failing cleanly: no
// stack trace on any input, a closed stdout ends quietly (141), a failing
// stdout is reported (exit 2).
'use strict';
const {
  closeSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, realpathSync, renameSync, statSync,
  unlinkSync, writeFileSync, writeSync, chmodSync, fchmodSync,
} = require('node:fs');
const { resolve } = require('node:path');

const EXIT_ERROR = 2;
const EXIT_BROKEN_PIPE = 141;

// --- output: one writer whose errors end the process cleanly -------------

let outputFailed = false;
process.stdout.on('error', (error) => {
  if (outputFailed) return;
  outputFailed = true;
  if (error.code === 'EPIPE') process.exit(EXIT_BROKEN_PIPE);
  stderr(`doomloop: cannot write output: ${error.message}\n`);
  process.exit(EXIT_ERROR);
});

/** A failing stderr is ignored (nowhere left to report it). */
function stderr(text) {
  try {
    process.stderr.write(text);
  } catch {
    // stderr closed: nothing to do.
  }
}

/** What a Stats or Dirent is, in the command's words. */
function kind(entry) {
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'dir';
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isFIFO()) return 'fifo';
  if (entry.isSocket()) return 'socket';
  if (entry.isBlockDevice() || entry.isCharacterDevice()) return 'device';
  return null;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** What the command may ask of its host (wasm/src/cli.rs, `JsHost`). */
const host = {
  readFile: (path) => readFileSync(path),
  open: (path) => openSync(path, 'r'),
  read: (fd, n) => {
    const buffer = Buffer.allocUnsafe(n);
    return buffer.subarray(0, readSync(fd, buffer, 0, n, null));
  },
  close: (fd) => closeSync(fd),
  stat: (path, follow) => {
    const s = follow ? statSync(path, { bigint: true }) : lstatSync(path, { bigint: true });
    return [kind(s), `${s.dev}:${s.ino}`, Number(s.mtimeMs), Number(s.mode & 0o7777n), Number(s.uid)];
  },
  readDir: (path) => readdirSync(path, { withFileTypes: true }).map((e) => [e.name, kind(e)]),
  writeFile: (path, bytes) => writeFileSync(path, bytes),
  createNew: (path, bytes) => {
    const fd = openSync(path, 'wx');
    try {
      writeSync(fd, bytes);
    } finally {
      closeSync(fd);
    }
  },
  // 'wx' is O_CREAT|O_EXCL: a link already at `path` is never followed.
  // Owner-only until the bytes are in, then the mode asked for (fchmod:
  // the file itself); a failed write removes it again.
  writeNew: (path, bytes, mode) => {
    const fd = openSync(path, 'wx', 0o600);
    try {
      writeFileSync(fd, bytes);
      fchmodSync(fd, mode);
    } catch (error) {
      closeSync(fd);
      try {
        unlinkSync(path);
      } catch {
        // Already gone: nothing left to clean.
      }
      throw error;
    }
    closeSync(fd);
  },
  realPath: (path) => realpathSync(path),
  rename: (from, to) => renameSync(from, to),
  removeFile: (path) => unlinkSync(path),
  mkdir: (path, owner) => {
    mkdirSync(path, { recursive: true });
    if (owner) chmodSync(path, 0o700);
  },
  readStdin: () => readFileSync(0),
  env: (name) => process.env[name],
  cwd: () => process.cwd(),
  // As invoked: the `doomloop` bin link under npm, or the launcher
  // (cli.mjs) run by path — what `hook install` writes and recognises on
  // a second run, so the installed hook starts the launcher, which runs a
  // native binary installed later.
  program: () => [process.execPath, resolve(process.argv[1] ?? __filename)],
  pid: () => process.pid,
  uid: () => process.geteuid?.(),
  now: () => Date.now(),
  sleep: (ms) => Atomics.wait(sleeper, 0, 0, ms),
  stdout: (text) => {
    if (!outputFailed) process.stdout.write(text);
  },
  stderr,
  stderrIsTerminal: () => process.stderr.isTTY === true,
};

/**
 * V8 flags for a process that runs one short `hook …` command: the module
 * validated function by function as they first run, instead of all 1.5 MB
 * up front, and no optimizing tier (on Node 20 it compiled the state's
 * JSON reader and writer in the background, for a process that ends
 * before they run again). Set before the module compiles; measured
 * together with skipping clap at ≈ 35 ms of CPU a hook event
 * (docs/performance.md). Only where the flags were checked to exist (V8
 * 11 to 13: Node 20, 22 and 24), since V8 prints an unknown one on stderr.
 */
function briefRun() {
  const major = Number(process.versions.v8?.split('.')[0]);
  if (process.release?.name !== 'node' || !(major >= 11 && major <= 13)) return;
  try {
    require('node:v8').setFlagsFromString('--wasm-lazy-validation --liftoff-only');
  } catch {
    // Only slower without them.
  }
}

/**
 * `doomloop hook …`: the module's glue alone (no detector shim: nothing
 * here uses it), and an agent's event answered without clap (`hookMain`;
 * any other `hook` line goes to `cliMain`). An agent's hook never fails
 * the agent: whatever goes wrong answering its event allows the call, with
 * one line on stderr and exit status 0 (an agent reads 2 as "block").
 */
function hookMain(argv) {
  let event = true;
  try {
    briefRun();
    const core = require('./doom_loop_full_node.cjs');
    const status = core.hookMain(argv, host);
    event = status >= 0;
    process.exitCode = event ? status : core.cliMain(argv, host);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (event) {
      stderr(`doomloop hook: ${message.replace(/\n/g, ' ')}; allowing the call\n`);
      process.exitCode = 0;
    } else {
      stderr(`doomloop: ${message}\n`);
      process.exitCode = EXIT_ERROR;
    }
  }
}

/** `doomloop proxy`: the gateway server is Node's (an HTTP server and client), an ES module of its own. */
async function proxy(argv) {
  try {
    const { main } = await import('./proxy.mjs');
    const status = await main(argv);
    if (status !== undefined) process.exitCode = status;
  } catch (error) {
    stderr(`doomloop proxy: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(EXIT_ERROR);
  }
}

if (process.argv[2] === 'proxy') {
  proxy(process.argv.slice(3));
} else if (process.argv[2] === 'hook') {
  hookMain(process.argv.slice(2));
} else try {
  // The full module's exports, behind the replay entry's trap guard (it
  // guards them in place: after a trap, every call throws one named error).
  require('./replay-node.cjs');
  const core = require('./doom_loop_full_node.cjs');
  process.exitCode = core.cliMain(process.argv.slice(2), host);
} catch (error) {
  // Not reached by any input (the command answers every argv with a
  // status); a trap or a broken package still ends cleanly.
  stderr(`doomloop: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = EXIT_ERROR;
}
