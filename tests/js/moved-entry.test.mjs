// A bundler that moves the Node entry away from doom_loop_bg.wasm (Next.js
// without serverExternalPackages, one-file server bundles) used to leave a
// bare ENOENT naming a path nobody wrote. The entry now says what happened
// and the fix, with the original error as its cause; any other failure to
// load passes through unchanged. tests/bundlers runs the real Next.js case.

import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

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
