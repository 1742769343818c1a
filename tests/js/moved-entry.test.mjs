// A bundler that moves the Node entry away from doom_loop_bg.wasm (Next.js's
// webpack build without serverExternalPackages, one-file server bundles)
// used to leave a bare ENOENT naming a path nobody wrote. Both Node entries
// now say what happened and the fix, with the original error as its cause;
// any other failure to load passes through unchanged. The bundlers' entry
// (node-bundler.mjs, the `module` condition) loads on the first call, so an
// import where nothing is called (a Next.js client component rendered on the
// server) never fails. tests/bundlers runs the real Next.js cases.

import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const pkg = fileURLToPath(new URL('../../pkg/', import.meta.url));

/** A copy of the package, changed by `alter(dir)`, required fresh. */
function requireCopy(alter) {
  const dir = mkdtempSync(join(tmpdir(), 'moved-entry-'));
  try {
    cpSync(pkg, dir, { recursive: true });
    alter(dir);
    return createRequire(join(dir, 'x.cjs'))('./node.cjs');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a missing doom_loop_bg.wasm is named, with the fix for Next.js and one-file bundles', () => {
  assert.throws(
    () => requireCopy((dir) => rmSync(join(dir, 'doom_loop_bg.wasm'))),
    (error) => {
      assert.match(error.message, /^doom-loop-wasm: cannot read its WebAssembly module at .*doom_loop_bg\.wasm: a bundler moved/);
      assert.match(error.message, /serverExternalPackages: \['doom-loop-wasm'\]/);
      assert.match(error.message, /import 'doom-loop-wasm\/inline'/);
      assert.equal(error.cause?.code, 'ENOENT');
      return true;
    },
  );
});

test('any other failure to load the glue passes through as it was', () => {
  assert.throws(
    () => requireCopy((dir) => writeFileSync(join(dir, 'doom_loop_bg.wasm'), 'not wasm')),
    (error) => {
      assert.ok(error instanceof WebAssembly.CompileError, String(error));
      return true;
    },
  );
});

test('the package as built loads', () => {
  const api = requireCopy(() => {});
  assert.equal(typeof api.fingerprintToolCallSync('bash', { a: 1 }), 'string');
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
