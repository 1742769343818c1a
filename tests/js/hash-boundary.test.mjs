// Fingerprints on both sides of the size from which the Node entry hands
// SHA-256 to node:crypto instead of hashing in wasm (BACKEND_THRESHOLD in
// src/parity/fingerprint.rs, 1 KiB of `toolName + "\n" + canonical JSON`),
// and strings dense with escapes (source code in an edit), which the core
// copies verbatim while it scans them: each must equal what the reference
// computes, `canonicalize` + SHA-256 of the UTF-8 bytes. A wrong backend
// choice, a digest read from the wrong address or a scanner that stops at
// the wrong byte shows here as a different fingerprint.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import canonicalize from 'canonicalize';
import * as pkg from '../../pkg/node.mjs';

const expected = (tool, value) => createHash('sha256').update(`${tool}\n${canonicalize(value)}`).digest('hex');

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
    }
  }
});
