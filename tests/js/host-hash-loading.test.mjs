// When the Node entry hands SHA-256 to node:crypto (js/entries/node-sha256.cjs):
// once the module is loaded, never by loading it for a small input (loading
// it costs ≈ 2.5 ms of a cold start), but from the first call when the
// process has already loaded it (an agent's first `fetch` does), from the
// next call after something else loads it, and on the first input of 1 KiB
// or more; before the module is loaded, a small plain value loads it instead
// of the module, which costs three times as much. Each case runs in a fresh
// process, where what node:crypto has loaded is known; every fingerprint
// must still be the reference's.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../../pkg/node.cjs', import.meta.url));

/** Runs `body` in a fresh CommonJS process after its prelude; answers what it printed, as JSON. */
function run(body) {
  const script = `
    const isLoaded = () => process.moduleLoadList.includes('NativeModule crypto');
    let hashes = 0;
    function countHashes(crypto) {
      const real = crypto.hash;
      crypto.hash = (algorithm, ...rest) => (hashes++, real(algorithm, ...rest));
    }
    function check(pkg, value) {
      const crypto = require('node:crypto');
      const got = pkg.fingerprintToolCallSync('edit', value);
      return got === crypto.createHash('sha256').update('edit\\n' + JSON.stringify(value)).digest('hex');
    }
    // One key, no escapes: its canonical JSON is JSON.stringify's.
    const sized = (bytes) => ({ content: 'x'.repeat(bytes - 20) });
    // The same canonical JSON from a value that is not plain data (an
    // undefined member): never fingerprinted without wasm, so its hash is
    // the core's choice.
    const walked = (bytes) => ({ content: 'x'.repeat(bytes - 20), gone: undefined });
    ${body}
  `;
  // A file, not \`node -e\`, which loads node:crypto itself.
  const dir = mkdtempSync(join(tmpdir(), 'host-hash-'));
  try {
    writeFileSync(join(dir, 'case.cjs'), script);
    return JSON.parse(execFileSync(process.execPath, [join(dir, 'case.cjs')], { encoding: 'utf8' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('node:crypto already loaded: the core hands it inputs from 256 bytes, and small plain values go to it without wasm, from the first call', () => {
  const out = run(`
    const crypto = require('node:crypto');
    countHashes(crypto);
    const pkg = require(${JSON.stringify(entry)});
    pkg.fingerprintToolCallSync('edit', walked(150));
    const atSmall = hashes;
    pkg.fingerprintToolCallSync('edit', walked(400));
    const atMid = hashes;
    pkg.fingerprintToolCallSync('edit', sized(150));
    const atPlain = hashes;
    const right = [150, 400].every((n) => check(pkg, sized(n)) && check(pkg, walked(n)));
    console.log(JSON.stringify({ loaded: isLoaded(), atSmall, atMid, atPlain, right }));
  `);
  assert.deepEqual(out, { loaded: true, atSmall: 0, atMid: 1, atPlain: 2, right: true });
});

test('node:crypto not loaded, the module loaded (a session): small and mid-sized inputs never load it; loaded later by the host, it is used', () => {
  const out = run(`
    const before = isLoaded();
    const pkg = require(${JSON.stringify(entry)});
    new pkg.DoomLoopSession({});
    const fingerprints = [150, 400, 900].map((n) => pkg.fingerprintToolCallSync('edit', sized(n)));
    const afterSmall = isLoaded();
    // The host loads it now (as an agent's first fetch does).
    const crypto = require('node:crypto');
    countHashes(crypto);
    const again = [150, 400, 900].map((n) => pkg.fingerprintToolCallSync('edit', sized(n)));
    console.log(JSON.stringify({ before, afterSmall, hashes, same: fingerprints.every((f, i) => f === again[i]), right: check(pkg, sized(900)) }));
  `);
  // All three once it is loaded: 150 and 400 bytes are small plain values
  // (hashed by it without wasm), 900 bytes carry a string long enough to
  // cross raw into the core, which hands it over from 256 bytes.
  assert.deepEqual(out, { before: false, afterSmall: false, hashes: 3, same: true, right: true });
});

test('node:crypto not loaded: the first input of 1 KiB loads it', () => {
  const out = run(`
    const before = isLoaded();
    const pkg = require(${JSON.stringify(entry)});
    pkg.fingerprintToolCallSync('edit', sized(2000));
    const after = isLoaded();
    console.log(JSON.stringify({ before, after, right: check(pkg, sized(2000)) }));
  `);
  assert.deepEqual(out, { before: false, after: true, right: true });
});

test('node:crypto not loaded, the module not loaded yet: the first small plain value loads node:crypto, not the module', () => {
  // Loading node:crypto costs a third of reading, compiling and
  // instantiating the .wasm, which that fingerprint then never needs.
  const out = run(`
    const compiled = () => Object.keys(require.cache).some((file) => file.endsWith('doom_loop_node.cjs'));
    const pkg = require(${JSON.stringify(entry)});
    const atImport = isLoaded();
    const right = check(pkg, sized(150));
    const afterSmall = { crypto: isLoaded(), module: compiled() };
    // A value that is not plain data needs the module; node:crypto, in use
    // now, then hashes for the core from 256 bytes.
    const walkedRight = [150, 400].every((n) => pkg.fingerprintToolCallSync('edit', walked(n)) === pkg.fingerprintToolCallSync('edit', sized(n)));
    countHashes(require('node:crypto'));
    pkg.fingerprintToolCallSync('edit', walked(150));
    const atSmall = hashes;
    pkg.fingerprintToolCallSync('edit', walked(400));
    console.log(JSON.stringify({ atImport, right, afterSmall, module: compiled(), walkedRight, atSmall, atMid: hashes }));
  `);
  assert.deepEqual(out, {
    atImport: false,
    right: true,
    afterSmall: { crypto: true, module: false },
    module: true,
    walkedRight: true,
    atSmall: 0,
    atMid: 1,
  });
});
