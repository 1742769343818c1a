// A bundler that moves the Node entry away from doom_loop_bg.wasm (Next.js's
// webpack build without serverExternalPackages, one-file server bundles)
// used to leave a bare ENOENT naming a path nobody wrote. Both Node entries
// now say what happened and the fix, with the original error as its cause;
// any other failure to load passes through unchanged. Both load the module
// when a call first needs it (node.cjs: its first call that needs the core;
// node-bundler.mjs, the `module` condition: its first call), so an import
// where nothing is called (a Next.js client component rendered on the
// server) never fails. tests/bundlers runs the real Next.js cases.

import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const pkg = fileURLToPath(new URL('../../pkg/', import.meta.url));

/** Runs `use(api)` on a copy of the package, changed by `alter(dir)`, required fresh. */
async function withCopy(alter, use) {
  const dir = mkdtempSync(join(tmpdir(), 'moved-entry-'));
  try {
    cpSync(pkg, dir, { recursive: true });
    alter(dir);
    return await use(createRequire(join(dir, 'x.cjs'))('./node.cjs'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const moved = (error) => {
  assert.match(error.message, /^doom-loop-wasm: cannot read its WebAssembly module at .*doom_loop_bg\.wasm: a bundler moved/);
  assert.match(error.message, /serverExternalPackages: \['doom-loop-wasm'\]/);
  assert.match(error.message, /import 'doom-loop-wasm\/inline'/);
  assert.equal(error.cause?.code, 'ENOENT');
  return true;
};

test('a missing doom_loop_bg.wasm is named, with the fix for Next.js and one-file bundles, by every call that needs the module', async () => {
  // node.cjs loads the module when a call first needs it: the require
  // succeeds, and `init()`, a session, a monitor and a fingerprint the
  // shim cannot take alone throw the error, each time.
  await withCopy(
    (dir) => rmSync(join(dir, 'doom_loop_bg.wasm')),
    async (api) => {
      await assert.rejects(api.init(), moved);
      assert.throws(() => new api.DoomLoopSession({}), moved);
      assert.throws(() => new api.DoomLoopMonitor({}), moved);
      assert.throws(() => api.resolveDoomLoopOption(true), moved);
      assert.throws(() => api.fingerprintToolCallSync('bash', { a: 1, gone: undefined }), moved);
      assert.throws(() => api.canonicalizeKeyMaterial({ a: 1 }), moved);
    },
  );
});

test('any other failure to load the glue passes through as it was', async () => {
  await withCopy(
    (dir) => writeFileSync(join(dir, 'doom_loop_bg.wasm'), 'not wasm'),
    async (api) => {
      await assert.rejects(api.init(), (error) => {
        assert.ok(error instanceof WebAssembly.CompileError, String(error));
        return true;
      });
      assert.throws(() => new api.DoomLoopSession({}), WebAssembly.CompileError);
    },
  );
});

test('the package as built loads', async () => {
  await withCopy(
    () => {},
    async (api) => {
      await api.init();
      assert.equal(typeof api.fingerprintToolCallSync('bash', { a: 1, gone: undefined }), 'string');
      assert.equal(typeof new api.DoomLoopSession({}).onResponse, 'function');
    },
  );
});

test('the bundlers\' entry imports without its .wasm, and its first call (or init) throws the same error until the file is back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'moved-bundler-entry-'));
  try {
    cpSync(pkg, dir, { recursive: true });
    renameSync(join(dir, 'doom_loop_bg.wasm'), join(dir, 'away.wasm'));
    const api = await import(pathToFileURL(join(dir, 'node-bundler.mjs')).href);
    const moved = { message: /^doom-loop-wasm: cannot read its WebAssembly module at .*doom_loop_bg\.wasm: a bundler moved/ };
    await assert.rejects(api.init(), moved);
    assert.throws(() => api.fingerprintToolCallSync('bash', { a: 1 }), moved);
    assert.throws(() => new api.DoomLoopSession({}), moved, 'the session engine loads the same way');
    renameSync(join(dir, 'away.wasm'), join(dir, 'doom_loop_bg.wasm'));
    const expected = createRequire(import.meta.url)('../../pkg/node.cjs').fingerprintToolCallSync('bash', { a: 1 });
    assert.equal(api.fingerprintToolCallSync('bash', { a: 1 }), expected);
    assert.equal(typeof new api.DoomLoopSession({}).onResponse, 'function');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
