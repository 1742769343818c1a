// Fingerprints on both sides of the size from which the Node entry hands
// SHA-256 to node:crypto instead of hashing in wasm (1 KiB of
// `toolName + "\n" + canonical JSON` until node:crypto is in use, 256 bytes
// from then on: DEFAULT_BACKEND_MIN in src/parity/fingerprint.rs,
// js/entries/node-sha256.cjs),
// and strings dense with escapes (source code in an edit), which the core
// copies verbatim while it scans them: each must equal what the reference
// computes, `canonicalize` + SHA-256 of the UTF-8 bytes. A wrong backend
// choice, a digest read from the wrong address or a scanner that stops at
// the wrong byte shows here as a different fingerprint.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import canonicalize from 'canonicalize';
import * as pkg from '../../pkg/node.mjs';

const expected = (tool, value) => createHash('sha256').update(`${tool}\n${canonicalize(value)}`).digest('hex');
// The core's own path (wasm, its hash backend): small plain values are
// fingerprinted by the shim without it once node:crypto is in use
// (js/lower.js, canonicalPlainText), so the thresholds inside the core are
// asserted through its string API as well.
const glue = createRequire(import.meta.url)('../../pkg/doom_loop_node.cjs');
const viaCore = (tool, value) => glue.fingerprintToolCall(JSON.stringify(tool), JSON.stringify(value));

test('fingerprints straddling the host-hash threshold equal canonicalize + SHA-256', () => {
  const tool = 'edit';
  // `edit\n` + `"` + body + `"`: hashed lengths from 1,000 to 1,048 bytes,
  // then around every larger power of two up to 64 KiB.
  const lengths = [];
  for (let total = 1000; total <= 1048; total++) lengths.push(total);
  for (let power = 11; power <= 16; power++) lengths.push((1 << power) - 1, 1 << power, (1 << power) + 1);
  for (const total of lengths) {
    const body = 'x'.repeat(total - tool.length - 3);
    assert.equal(Buffer.byteLength(`${tool}\n${canonicalize(body)}`), total);
    assert.equal(pkg.fingerprintToolCallSync(tool, body), expected(tool, body), `${total} bytes hashed`);
  }
});

test('multi-byte and astral text across the threshold hashes its UTF-8 bytes', () => {
  for (const unit of ['é', '€', '😀', 'a\u0301']) {
    for (const count of [200, 255, 256, 257, 300, 4096]) {
      const value = { path: 'notes.md', content: unit.repeat(count) };
      assert.equal(pkg.fingerprintToolCallSync('write', value), expected('write', value), `${JSON.stringify(unit)} × ${count}`);
      assert.equal(viaCore('write', value), expected('write', value), `${JSON.stringify(unit)} × ${count}, the core`);
    }
  }
});

test('strings dense with escapes are fingerprinted as the reference does', () => {
  const shapes = [
    'x = "y"\n',
    '\\"\\\\\t\r\n\b\f',
    'say "\u0001" then \u001f',
    'ok\u2028\u2029"',
    '\u00e9\u20ac\ud83d\ude00 "wide"',
  ];
  for (const shape of shapes) {
    for (const count of [1, 7, 8, 9, 100, 1000]) {
      const value = { old_string: shape.repeat(count), new_string: `${shape}!`.repeat(count) };
      assert.equal(pkg.fingerprintToolCallSync('edit', value), expected('edit', value), `${JSON.stringify(shape)} × ${count}`);
      assert.equal(viaCore('edit', value), expected('edit', value), `${JSON.stringify(shape)} × ${count}, the core`);
    }
  }
});

test('once node:crypto is loaded, fingerprints straddling the lower threshold (256 bytes) are unchanged', () => {
  const tool = 'edit';
  pkg.fingerprintToolCallSync(tool, 'x'.repeat(4096)); // loads node:crypto, lowers the threshold
  for (let total = 236; total <= 276; total++) {
    const body = 'y'.repeat(total - tool.length - 3);
    assert.equal(pkg.fingerprintToolCallSync(tool, body), expected(tool, body), `${total} bytes hashed`);
    assert.equal(viaCore(tool, body), expected(tool, body), `${total} bytes hashed by the core`);
    const value = { n: total, body: body.slice(12) };
    assert.equal(pkg.fingerprintToolCallSync(tool, value), expected(tool, value), `object, ${total} bytes`);
    assert.equal(viaCore(tool, value), expected(tool, value), `object, ${total} bytes, by the core`);
  }
});

test('regression: a host hash that answers anything but 64 lowercase hex digits is not trusted (sha2 hashes instead)', () => {
  const require = createRequire(import.meta.url);
  // The glue the Node entry installed (one instance per process): `glue` above.
  const heap = () => new Uint8Array(glue.ioMemory().buffer);
  const write = (out, text) => heap().set(Buffer.from(text, 'latin1'), out);
  const right = (address, length) => createHash('sha256').update(heap().subarray(address, address + length)).digest('hex');
  // Each host answers (address, length, out) wrongly in its own way.
  const hosts = {
    'writes nothing, returns true': () => true,
    'uppercase digits': (address, length, out) => (write(out, right(address, length).toUpperCase()), true),
    '63 digits': (address, length, out) => (write(out, right(address, length).slice(1)), true),
    'a non-hex digit': (address, length, out) => (write(out, `g${right(address, length).slice(1)}`), true),
    'the right digits, then declines': (address, length, out) => (write(out, right(address, length)), false),
    'a number for true': () => 42,
    'null': () => null,
    'an object': () => ({}),
  };
  try {
    for (const [name, host] of Object.entries(hosts)) {
      let asked = 0;
      glue.setHostSha256((...args) => {
        asked++;
        return host(...args);
      });
      glue.setHostSha256Min(0);
      // Wrong digits in the host's place: a fingerprint that is not the reference's.
      const value = { host: name };
      const fingerprint = viaCore('t', value);
      assert.equal(asked, 1, `${name}: the host was asked`);
      if (name !== 'the right digits, then declines') assert.equal(fingerprint, expected('t', value), `host: ${name}`);
      else assert.equal(fingerprint, expected('t', value), 'a declined input is hashed by sha2, whatever the host wrote');
    }
    glue.setHostSha256(() => {
      throw new Error('host failure');
    });
    assert.equal(viaCore('t', 'z'), expected('t', 'z'), 'a host that throws');
    // A host that answers right is trusted: the digits it writes are the fingerprint.
    let asked = 0;
    glue.setHostSha256((address, length, out) => {
      asked++;
      write(out, right(address, length).replace(/^./, (c) => (c === '0' ? '1' : '0')));
      return true;
    });
    const trusted = viaCore('t', 'trusted');
    assert.equal(asked, 1);
    assert.notEqual(trusted, expected('t', 'trusted'), 'the host\'s (altered) digits were used');
    assert.equal(trusted.slice(1), expected('t', 'trusted').slice(1));
  } finally {
    require('../../pkg/node-sha256.cjs')(glue);
  }
  const large = 'w'.repeat(5000);
  assert.equal(pkg.fingerprintToolCallSync('t', large), expected('t', large), 'the real host again');
});
