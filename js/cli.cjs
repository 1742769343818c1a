#!/usr/bin/env node
// `doomloop`, the npm package's bin: a launcher. Where this platform's
// native package is installed (an optional dependency: npm installs the
// one whose `os`/`cpu` fit; native.cjs finds it), it runs that binary —
// arguments as given, stdin, stdout and stderr inherited, its exit status
// passed through — so a hook costs a native process, not a Node start
// per call (`hook install` run this way writes the binary's own path).
// Otherwise, or with DOOMLOOP_WASM=1, it runs the wasm CLI in this
// process (cli-wasm.cjs): the same Rust command, the same state files.
// `doomloop --version` names which one answered. `doomloop proxy` (the
// gateway's HTTP server) is Node's own: the JS CLI runs it either way.
//
// CommonJS, and nothing loaded that the path taken does not use: Node 20
// starts an ES module entry for ≈ 10 ms more CPU, which every hook event
// of the wasm fallback would pay (docs/performance.md).
'use strict';

const forceWasm = !['', '0', undefined].includes(process.env.DOOMLOOP_WASM);
const nodeOnly = process.argv[2] === 'proxy';
const native = forceWasm || nodeOnly ? null : require('./native.cjs').path;

/** The native binary's exit status, or null when it could not start. */
function runNative(binary) {
  const run = require('node:child_process').spawnSync(binary, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });
  if (run.error) {
    process.stderr.write(`doomloop: cannot start ${binary} (${run.error.code ?? run.error.message}); running the wasm CLI\n`);
    return null;
  }
  // Killed by a signal: the status a shell reports for it (128 + its number).
  return run.status ?? 128 + (require('node:os').constants.signals[run.signal] ?? 0);
}

const status = native === null ? null : runNative(native);
if (status === null) {
  require('./cli-wasm.cjs');
} else {
  process.exitCode = status;
}
