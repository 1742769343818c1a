// How many times the session engine hashes a call. Each call of a response
// is fingerprinted once, for its round's declaration and for its record
// alike; until this release it was canonicalized and hashed twice. In Node
// a hashed text of 1 KiB or more goes to node:crypto (DEFAULT_BACKEND_MIN in
// src/parity/fingerprint.rs; js/entries/node-sha256.cjs), so counting its
// SHA-256 calls (`crypto.hash`, or `createHash` where Node lacks it) counts
// fingerprints of large arguments. This file runs in its own process
// (node --test), so the count starts before the package hashes anything.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';

const require = createRequire(import.meta.url);
const crypto = require('node:crypto');
const realCreateHash = crypto.createHash;
let hashes = 0;
// The Node entry reads node:crypto's exports on each large hash (it loads
// the module on the first, not at import), so replacing them here is what
// it will call.
crypto.createHash = (algorithm, ...rest) => {
  if (algorithm === 'sha256') hashes++;
  return realCreateHash(algorithm, ...rest);
};
const realHash = crypto.hash;
if (typeof realHash === 'function') {
  crypto.hash = (algorithm, ...rest) => {
    if (algorithm === 'sha256') hashes++;
    return realHash(algorithm, ...rest);
  };
}
const pkg = require('../../pkg/node.cjs');

const large = (n) => ({ path: `src/file-${n}.ts`, content: `export const x${n} = 1;\n`.repeat(100) });

test('regression: the session engine hashes each call of a response once (it hashed it twice)', () => {
  const session = new pkg.DoomLoopSession({});
  hashes = 0;
  const { decisions } = session.onResponse({
    calls: [
      { id: 'a', toolName: 'write', args: large(1) },
      { id: 'b', toolName: 'write', args: large(2) },
    ],
  });
  assert.equal(decisions.length, 2);
  assert.ok(decisions.every((d) => d.action === 'run' && typeof d.fingerprint === 'string'));
  assert.equal(hashes, 2, 'one SHA-256 per call');
  // The fingerprint is the one the monitor takes of the same call.
  assert.equal(decisions[0].fingerprint, pkg.fingerprintToolCallSync('write', large(1)));
  session.free();
});

test('a call seen alone (onCall) is hashed once too', () => {
  const session = new pkg.DoomLoopSession({});
  hashes = 0;
  const decision = session.onCall({ id: 'a', toolName: 'write', args: large(3) });
  assert.equal(decision.action, 'run');
  assert.equal(hashes, 1);
  session.free();
});

test('a loop key that narrows the arguments hashes the key, and the full arguments only on a fallback', () => {
  const session = new pkg.DoomLoopSession({ loopKeys: { write: ['content'] } });
  hashes = 0;
  const { decisions } = session.onResponse({ calls: [{ id: 'a', toolName: 'write', args: large(4) }] });
  assert.equal(decisions[0].action, 'run');
  assert.equal(hashes, 1, 'the loop key alone');
  assert.equal(decisions[0].fingerprint, pkg.fingerprintToolCallSync('write', { content: large(4).content }));
  session.free();
});
