// Issue 20 (reliability of the trace tooling), the JS halves: the trap
// guard on every wasm entry (main, /inline, /replay in Node and as the
// browser ESM entry, the npm CLI's instance), Node's own gunzip under the
// core's 1 GiB limit, `evaluateTranscripts` on a list of runs, and both
// CLIs on the walk and `eval` findings (directory links, FIFOs, an
// unreadable file, a header line, an invalid option, `--version` under
// `ulimit -v`). The Rust halves are in trace/tests/reliability.rs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadReplayEntry } from './replay-entry.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = join(root, 'pkg');
const native = join(root, 'target/release/doomloop');
const CLIS = { native: [native], npm: [process.execPath, join(pkg, 'cli.mjs')] };
const dir = mkdtempSync(join(tmpdir(), 'doomloop-trace-reliability-'));
const RUN = JSON.stringify({ rounds: [{ calls: [{ toolName: 't', args: {} }] }] });
const DEAD = /^doom-loop-wasm: the WebAssembly instance trapped \(RuntimeError: unreachable\)/;

/** Runs `script` (CommonJS, `pkg` bound to the package folder) in a child Node; its stdout parsed. */
function child(script, args = []) {
  const run = spawnSync(process.execPath, [...args, '-e', `const pkg = ${JSON.stringify(pkg + '/')};\n${script}`], {
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout);
}

/** Both CLIs on one argv: `[native, npm]`. */
function both(args, options = {}) {
  return Object.values(CLIS).map(([cmd, ...pre]) =>
    spawnSync(cmd, [...pre, ...args], { encoding: 'utf8', timeout: 20000, ...options }),
  );
}

const totals = (r) => JSON.parse(r.stdout).options[0].total;

test('replay_entry_trap_unguarded: the /replay entry (CommonJS) is guarded: after a trap, one named error forever', () => {
  const out = child(`
    const replay = require(pkg + 'replay-node.cjs');
    const glue = require(pkg + 'doom_loop_full_node.cjs');
    const out = { before: replay.replayTranscript(${JSON.stringify(RUN)}).rounds.length };
    try { glue.__trapForTests(); } catch (e) { out.trap = e.constructor.name + ': ' + e.message; }
    out.after = [];
    for (const f of [() => replay.replayTranscript(${JSON.stringify(RUN)}), () => replay.importTranscript(${JSON.stringify(RUN)}),
                     () => replay.evaluateTranscripts([${JSON.stringify(RUN)}])]) {
      try { f(); out.after.push('answered'); } catch (e) { out.after.push(e.constructor.name + ': ' + e.message); }
    }
    console.log(JSON.stringify(out));
  `);
  assert.equal(out.before, 1);
  assert.match(out.trap, /^Error: doom-loop-wasm: the WebAssembly instance trapped \(RuntimeError: unreachable\)/);
  for (const after of out.after) assert.match(after.replace(/^Error: /, ''), DEAD);
});

test('replay_entry_trap_unguarded: the browser /replay entry (ESM, init from bytes) is guarded too', async () => {
  const script = `
    const { readFileSync } = await import('node:fs');
    const replay = await import(${JSON.stringify(pathToFileURL(join(pkg, 'replay-browser.mjs')).href)});
    const { toolingCore } = await import(${JSON.stringify(pathToFileURL(join(pkg, 'tooling.js')).href)});
    await replay.init(readFileSync(${JSON.stringify(join(pkg, 'doom_loop_full_bg.wasm'))}));
    const out = { before: replay.replayTranscript(${JSON.stringify(RUN)}).rounds.length };
    try { toolingCore().__trapForTests(); } catch (e) { out.trap = e.message; }
    try { replay.replayTranscript(${JSON.stringify(RUN)}); out.after = 'answered'; } catch (e) { out.after = e.message; }
    console.log(JSON.stringify(out));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  assert.equal(out.before, 1);
  assert.match(out.trap, DEAD);
  assert.match(out.after, DEAD);
});

test('the /inline entry is guarded: after a trap, one named error forever', () => {
  const script = `
    const api = await import(${JSON.stringify(pathToFileURL(join(pkg, 'inline.mjs')).href)});
    const { core } = await import(${JSON.stringify(pathToFileURL(join(pkg, 'core.js')).href)});
    const out = { before: api.fingerprintToolCallSync('t', {}).length };
    try { core.__trapForTests(); } catch (e) { out.trap = e.message; }
    try { api.fingerprintToolCallSync('t', {}); out.after = 'answered'; } catch (e) { out.after = e.message; }
    console.log(JSON.stringify(out));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  assert.equal(out.before, 64);
  assert.match(out.trap, DEAD);
  assert.match(out.after, DEAD);
});

test("replay_entry_trap_unguarded: npx doomloop's instance is the guarded one: a trap is one named error, exit 2, no stack", () => {
  // Preloaded: the raw glue's replay is made to trap, before the CLI loads
  // the replay entry (which guards the same object in place).
  const preload = join(dir, 'trap-preload.cjs');
  writeFileSync(
    preload,
    `const glue = require(${JSON.stringify(join(pkg, 'doom_loop_full_node.cjs'))});\nglue.cliMain = () => glue.__trapForTests();\n`,
  );
  const run = spawnSync(process.execPath, ['--require', preload, join(pkg, 'cli.mjs'), 'replay'], { encoding: 'utf8' });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /^doomloop: doom-loop-wasm: the WebAssembly instance trapped \(RuntimeError: unreachable\)/);
  assert.doesNotMatch(run.stderr, /\n\s+at /);
});

test("replay_gzip_limit_bypassed: Node's own gunzip gets the core's limit, and past it the core's refusal", () => {
  // zlib.gunzipSync is wrapped before the package loads: the option it is
  // given is recorded, and past the limit it fails as Node fails.
  const out = child(`
    const zlib = require('node:zlib');
    const real = zlib.gunzipSync;
    const seen = [];
    zlib.gunzipSync = (bytes, options) => {
      seen.push(options?.maxOutputLength);
      if (globalThis.overLimit) {
        const error = new RangeError('Cannot create a Buffer larger than ' + options.maxOutputLength + ' bytes');
        error.code = 'ERR_BUFFER_TOO_LARGE';
        throw error;
      }
      return real(bytes, options);
    };
    const replay = require(pkg + 'replay-node.cjs');
    const gz = zlib.gzipSync(Buffer.from(${JSON.stringify(RUN)}));
    const out = { small: replay.importTranscript(gz).transcript.rounds.length };
    globalThis.overLimit = true;
    try { replay.importTranscript(gz, { name: 'bomb.json.gz' }); out.refused = 'accepted'; } catch (e) { out.refused = e.message; }
    try { replay.replayTranscript(gz, { name: 'bomb.json.gz' }); out.replay = 'accepted'; } catch (e) { out.replay = e.message; }
    const report = replay.evaluateTranscripts([{ name: 'bomb.json.gz', data: gz }, ${JSON.stringify(RUN)}]);
    out.evaluated = [report.options[0].total.runs, report.options[0].total.failed, report.failures[0]?.error];
    out.seen = seen;
    console.log(JSON.stringify(out));
  `);
  const refusal = 'bomb.json.gz: gzip: more than 1073741824 bytes decompressed';
  assert.equal(out.small, 1);
  assert.equal(out.refused, refusal);
  assert.equal(out.replay, refusal);
  assert.deepEqual(out.evaluated, [1, 1, refusal]);
  assert.ok(out.seen.length >= 4 && out.seen.every((limit) => limit === 2 ** 30), String(out.seen));
});

test('evaluate_list_with_type_field: a list of runs stays a list when one run has a `type` key', async () => {
  const { evaluateTranscripts } = await loadReplayEntry(pkg);
  const rounds = [1, 2, 3].map(() => ({ calls: [{ toolName: 't', args: {} }] }));
  const runs = [{ id: 'a', rounds }, { id: 'b', type: 'run', rounds }, { id: 'c', rounds }];
  const report = evaluateTranscripts(runs);
  assert.equal(report.options[0].total.runs, 3);
  assert.equal(report.options[0].total.failed, 0);
  assert.deepEqual(report.options[0].total, evaluateTranscripts(JSON.stringify(runs)).options[0].total);
  // A message list is still one run.
  const chat = [{ role: 'assistant', tool_calls: [{ id: '1', type: 'function', function: { name: 'a', arguments: '{}' } }] }];
  assert.equal(evaluateTranscripts(chat).options[0].total.runs, 1);
});

test('npm_cli_stack_trace_under_ulimit: a module that cannot load is one line, exit 2, for every command', () => {
  // `--version` and `--help` are clap's too now (the command is in the full
  // module), so they need the module like every command: under a ulimit
  // that refuses wasm memory they fail the same clean way (docs/limits.md).
  for (const args of ['--version', 'replay']) {
    const r = spawnSync('bash', ['-c', `ulimit -v 4000000; "${process.execPath}" "${join(pkg, 'cli.mjs')}" ${args}`], {
      encoding: 'utf8',
    });
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    if (r.status === 0) continue;
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^doomloop: [^\n]*\n$/);
  }
});

test('eval_symlink_loops: both CLIs skip links to folders (named in a warning) and finish', () => {
  const loops = join(dir, 'loops');
  mkdirSync(loops);
  writeFileSync(join(loops, 'a.json'), RUN);
  symlinkSync('.', join(loops, 'l1'));
  symlinkSync('.', join(loops, 'l2'));
  const [a, b] = both(['eval', loops, '--json']);
  for (const r of [a, b]) {
    assert.equal(r.status, 0, r.stderr);
    assert.equal(totals(r).runs, 1);
  }
  assert.equal(
    a.stderr,
    `warning: ${loops}/l1: skipped, a link to a directory (directory links are not followed)\n` +
      `warning: ${loops}/l2: skipped, a link to a directory (directory links are not followed)\n`,
  );
  assert.equal(b.stderr, a.stderr);
  assert.equal(b.stdout, a.stdout);
});

test('eval_special_files: both CLIs skip a FIFO and a link to a device with a warning', () => {
  const special = join(dir, 'special');
  mkdirSync(special);
  writeFileSync(join(special, 'a.json'), RUN);
  assert.equal(spawnSync('mkfifo', [join(special, 'pipe.json')]).status, 0);
  symlinkSync('/dev/zero', join(special, 'zero.json'));
  const [a, b] = both(['eval', special, '--json']);
  for (const r of [a, b]) {
    assert.equal(r.status, 0, r.stderr);
    assert.equal(totals(r).runs, 1);
  }
  assert.match(a.stderr, /pipe\.json: skipped, not a regular file \(a FIFO\)\n.*zero\.json: skipped, not a regular file \(a device\)\n$/);
  assert.equal(b.stderr, a.stderr);
});

test('eval_one_unreadable_file_aborts: a dangling link is a failed run in both CLIs, the other runs evaluated', () => {
  const runs = join(dir, 'unreadable');
  mkdirSync(runs);
  for (const i of [1, 2, 3]) writeFileSync(join(runs, `run${i}.json`), RUN);
  symlinkSync(join(dir, 'gone.json'), join(runs, 'stale.json'));
  const [a, b] = both(['eval', runs, '--json']);
  for (const r of [a, b]) {
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual([totals(r).runs, totals(r).failed], [3, 1]);
    assert.match(JSON.parse(r.stdout).failures[0].error, /stale\.json: No such file or directory \(os error 2\)$/);
  }
  assert.equal(b.stdout, a.stdout);
});

test('jsonl_header_line_drops_runs: a header line is one failed entry, every run evaluated (both CLIs)', () => {
  const file = join(dir, 'header.jsonl');
  writeFileSync(file, `{"version":1,"generator":"my-harness"}\n${`${RUN}\n`.repeat(5)}`);
  const [a, b] = both(['eval', file, '--json']);
  for (const r of [a, b]) {
    assert.deepEqual([totals(r).runs, totals(r).failed], [5, 1]);
    assert.match(JSON.parse(r.stdout).failures[0].error, /header\.jsonl:1: not a run \(an object with keys version, generator\)/);
  }
});

test('eval_invalid_option_exit: an invalid --option is a usage error (exit 2) in both CLIs, as for replay', () => {
  const file = join(dir, 'three.jsonl');
  writeFileSync(file, `${RUN}\n`.repeat(3));
  for (const r of both(['eval', file, '--option', 'null', '--fail-on', 'stop'])) {
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^doomloop: --option: /);
    assert.equal(r.stdout, '');
  }
});

test('eval_failure_amplification: a file of failing lines gives a short report in both CLIs', () => {
  const file = join(dir, 'empties.jsonl');
  writeFileSync(file, '[]\n'.repeat(30000));
  const [a, b] = both(['eval', file]);
  for (const r of [a, b]) {
    assert.equal(r.status, 1, r.stderr);
    assert.ok(r.stdout.length < 30000, `${r.stdout.length} bytes`);
    assert.match(r.stdout, /30000 run\(s\) failed \(the first 100 listed\):/);
  }
  assert.equal(b.stdout, a.stdout);
  assert.equal(readFileSync(file).length, 90000);
});
