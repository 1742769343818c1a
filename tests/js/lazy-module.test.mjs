// The Node entry (node.cjs, and node.mjs over it) loads the detector module
// — reads, compiles and instantiates doom_loop_bg.wasm — when a call first
// needs it, not at import: that is most of a cold start, and a small plain
// value's fingerprint never needs it (written in JS, hashed by node:crypto).
// Checked without timing, in fresh processes run from a file (`node -e`
// loads node:crypto itself): how many WebAssembly modules were compiled,
// and whether the glue (doom_loop_node.cjs) was required. A session
// afterwards loads the module once, detects, and `import` and `require`
// still share that one instance. The callModel adapter's code, likewise, is
// a file of its own (openrouter.cjs) required on its first call.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const pkgDir = fileURLToPath(new URL('../../pkg/', import.meta.url));

/** Counts WebAssembly modules compiled by the code that follows it in a fresh process. */
const PRELUDE = `
  let compiled = 0;
  const Module = WebAssembly.Module;
  WebAssembly.Module = new Proxy(Module, { construct: (target, args, newTarget) => (compiled++, Reflect.construct(target, args, newTarget)) });
  const cryptoLoaded = () => process.moduleLoadList.includes('NativeModule crypto');
  const args = { command: 'grep -rn TODO src/', cwd: '/home/user/project' };
  const invoice = (id) => ({ id, toolName: 'get_invoice', args: { invoice_id: 'INV-2291' } });
`;

/** Runs `source` as file `name` (.cjs or .mjs) in a fresh process; answers what it printed, as JSON. */
function run(name, source) {
  const dir = mkdtempSync(join(tmpdir(), 'lazy-module-'));
  try {
    writeFileSync(join(dir, name), PRELUDE + source);
    return JSON.parse(execFileSync(process.execPath, [join(dir, name)], { encoding: 'utf8' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What every case prints, from the package `pkg` it required or imported. */
const OBSERVE = `
  const atImport = { compiled, crypto: cryptoLoaded() };
  const fingerprint = pkg.fingerprintToolCallSync('bash', args);
  const glueRequired = () => Object.keys(require.cache).some((file) => file.endsWith('doom_loop_node.cjs'));
  const afterFingerprint = { compiled, glue: glueRequired() };
  const session = new pkg.DoomLoopSession();
  const actions = [1, 2, 3].map((i) => session.onResponse({ calls: [invoice('c' + i)] }).decisions[0].action);
  const afterSession = { compiled, glue: glueRequired() };
  // The same fingerprint through the core: a member it drops (undefined) makes the value not plain.
  const same = pkg.fingerprintToolCallSync('bash', { ...args, gone: undefined }) === fingerprint;
  const expected = require('node:crypto').createHash('sha256').update('bash\\n' + JSON.stringify({ command: args.command, cwd: args.cwd })).digest('hex');
`;
const REPORT = `({ atImport, afterFingerprint, actions, afterSession, same, right: fingerprint === expected, compiled })`;
const EXPECTED = {
  atImport: { compiled: 0, crypto: false },
  afterFingerprint: { compiled: 0, glue: false },
  actions: ['run', 'run', 'refuse'],
  afterSession: { compiled: 1, glue: true },
  same: true,
  right: true,
  compiled: 1,
};

test('requiring the main entry compiles no wasm until a call needs it; a session afterwards loads it once and detects', () => {
  const out = run(
    'case.cjs',
    `const pkg = require(${JSON.stringify(join(pkgDir, 'node.cjs'))});
    ${OBSERVE}
    console.log(JSON.stringify(${REPORT}));`,
  );
  assert.deepEqual(out, EXPECTED);
});

test('importing the main entry compiles no wasm until a call needs it; import and require then share the one instance', () => {
  const out = run(
    'case.mjs',
    `import { createRequire } from 'node:module';
    const require = createRequire(import.meta.url);
    const pkg = await import(${JSON.stringify(join(pkgDir, 'node.mjs'))});
    ${OBSERVE}
    const required = require(${JSON.stringify(join(pkgDir, 'node.cjs'))});
    // A session made through require sees the state of the module import loaded.
    const shared = required.DoomLoopSession === pkg.DoomLoopSession && new required.DoomLoopSession().onResponse({ calls: [invoice('c1')] }).decisions[0].action === 'run';
    console.log(JSON.stringify({ ...${REPORT}, shared, compiledAfterRequire: compiled }));`,
  );
  assert.deepEqual(out, { ...EXPECTED, shared: true, compiledAfterRequire: 1 });
});

test('a fingerprint the shim cannot take alone loads the module on that call, and answers as before', () => {
  const out = run(
    'case.cjs',
    `const pkg = require(${JSON.stringify(join(pkgDir, 'node.cjs'))});
    const viaCore = pkg.fingerprintToolCallSync('bash', { ...args, gone: undefined });
    const afterCore = compiled;
    const plain = pkg.fingerprintToolCallSync('bash', args);
    console.log(JSON.stringify({ afterCore, same: viaCore === plain, crypto: cryptoLoaded(), compiled }));`,
  );
  // The module is there: a small plain value no longer loads node:crypto (its
  // own SHA-256 is as fast for small inputs), and nothing compiles twice.
  assert.deepEqual(out, { afterCore: 1, same: true, crypto: false, compiled: 1 });
});

test('the callModel adapter is required on its first call, through stand-ins of the same name and length', () => {
  const out = run(
    'case.cjs',
    `const pkg = require(${JSON.stringify(join(pkgDir, 'node.cjs'))});
    const adapterRequired = () => Object.keys(require.cache).some((file) => file.endsWith('openrouter.cjs'));
    new pkg.DoomLoopSession().onResponse({ calls: [invoice('c1')] });
    const beforeCall = adapterRequired();
    const shape = [pkg.withDoomLoop.name, pkg.withDoomLoop.length, pkg.withLoopKey.name, pkg.withLoopKey.length];
    const request = pkg.withDoomLoop({ model: 'm', input: 'hi', tools: [] });
    let error;
    try {
      pkg.withLoopKey(null, {});
    } catch (e) {
      error = e.constructor.name + ': ' + e.message;
    }
    console.log(JSON.stringify({ beforeCall, shape, afterCall: adapterRequired(), wired: typeof request.onTurnStart === 'function' && typeof request.stopWhen !== 'undefined', error }));`,
  );
  assert.deepEqual(out, {
    beforeCall: false,
    shape: ['withDoomLoop', 1, 'withLoopKey', 2],
    afterCall: true,
    wired: true,
    error: 'TypeError: withLoopKey(tool, keys): tool must be a function tool (an object with a `function` object, as tool() returns)',
  });
});
