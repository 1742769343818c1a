// Key material from a `loopKey` function can be any JS value. Each row's
// expected canonical form is the reference's own output for that value
// (issue 3's table); the package must agree byte for byte, and hostile
// values must throw the reference's messages without hurting the instance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as api from '../../pkg/node.mjs';

const { canonicalizeKeyMaterial: canon } = api;

test('values JSON cannot hold canonicalize as the reference does', () => {
  const sym = Symbol('s');
  const f = () => 1;
  const rows = [
    [undefined, 'null'],
    [f, 'null'],
    [sym, 'null'],
    [new Date(0), '{}'],
    [new Map([[1, 2]]), '{}'],
    [new Set([1]), '{}'],
    [/re/g, '{}'],
    [new Error('boom'), '{}'],
    [new Number(5), '{}'],
    [new String('hi'), '{"0":"h","1":"i"}'],
    [new Uint8Array([1, 2]), '{"0":1,"1":2}'],
    [[undefined, f, sym], '[null,null,null]'],
    [{ a: undefined, b: f, c: sym, d: 1 }, '{"d":1}'],
    // A reference quirk kept for parity: holes are skipped by its `map`.
    // eslint-disable-next-line no-sparse-arrays
    [[1, , 3], '[1,,3]'],
    [-0, '0'],
    [1e21, '1e+21'],
    [5e-324, '5e-324'],
    [{ '\ud800': '\udfff' }, '{"\\ud800":"\\udfff"}'],
    [{ b: 1, a: 2, 10: 3, 9: 4 }, '{"10":3,"9":4,"a":2,"b":1}'],
  ];
  for (const [value, expected] of rows) assert.equal(canon(value), expected, String(expected));
});

test('toJSON is not called, prototype getters and hidden keys are skipped', () => {
  assert.equal(canon({ toJSON: () => 'x', a: 1 }), '{"a":1}');
  class WithGetter {
    get hidden() {
      return 1;
    }
  }
  const o = new WithGetter();
  o.own = 2;
  Object.defineProperty(o, 'nonEnumerable', { value: 3, enumerable: false });
  o[Symbol('k')] = 4;
  assert.equal(canon(o), '{"own":2}');
});

test('unrepresentable values throw the reference messages', () => {
  const circular = {};
  circular.self = circular;
  let deep = 0;
  for (let i = 0; i < 65; i++) deep = [deep];
  const cases = [
    [NaN, /non-finite number/],
    [{ x: Infinity }, /non-finite number/],
    [10n, /bigint/],
    [circular, /circular key material/],
    [deep, /nested deeper than 64 levels/],
  ];
  for (const [value, message] of cases) assert.throws(() => canon(value), message);
  // Errors surface in the reference's traversal order (sorted keys).
  assert.throws(() => canon({ b: NaN, a: 1n }), /bigint/);
  let ok = 0;
  for (let i = 0; i < 64; i++) ok = [ok];
  assert.equal(canon(ok).length, 129);
});

test('hostile JS input never traps the instance', () => {
  const throwing = {
    get boom() {
      throw new Error('getter threw');
    },
  };
  assert.throws(() => canon(throwing), /getter threw/);
  const proxy = new Proxy({}, {
    ownKeys() {
      throw new Error('trap threw');
    },
  });
  assert.throws(() => canon(proxy), /trap threw/);
  const huge = { list: Array.from({ length: 200_000 }, (_, i) => i) };
  assert.equal(canon(huge).length, JSON.stringify(huge).length);
  let veryDeep = {};
  for (let i = 0; i < 100_000; i++) veryDeep = { d: veryDeep };
  assert.throws(() => canon(veryDeep), /nested deeper than 64 levels/);
  // A later call still works.
  assert.equal(canon({ ok: true }), '{"ok":true}');
  const monitor = new api.DoomLoopMonitor(api.resolveDoomLoopOption(true));
  assert.rejects(monitor.recordToolCall('t', throwing, 1));
  assert.equal(monitor.recordToolCallSync('t', { ok: 1 }, 1).streak, 1);
});

test('loopKey function results follow the reference fallback rules', () => {
  const args = { id: 'INV-1', ts: 5 };
  assert.deepEqual(api.resolveLoopKeyMaterial(() => null, args), { kind: 'exempt' });
  const key = api.resolveLoopKeyMaterial(({ id }) => id.toLowerCase(), args);
  assert.deepEqual(key, { kind: 'key', keyMaterial: 'inv-1' });
  const missing = api.resolveLoopKeyMaterial(() => undefined, args);
  assert.equal(missing.kind, 'fallback');
  assert.equal(missing.keyMaterial, args, 'falls back to the very same arguments object');
  assert.match(missing.warning, /^loopKey returned undefined/);
  const threw = api.resolveLoopKeyMaterial(() => {
    throw new Error('nope');
  }, args);
  assert.equal(threw.warning, 'loopKey threw (nope); falling back to full arguments');
  const fields = api.resolveLoopKeyMaterial(['id', 'missing'], args);
  assert.deepEqual({ ...fields.keyMaterial }, { id: 'INV-1' });
  assert.equal(Object.getPrototypeOf(fields.keyMaterial), null);
  assert.deepEqual(api.resolveLoopKeyMaterial(false, args), { kind: 'exempt' });
  assert.equal(api.resolveLoopKeyMaterial(undefined, args).keyMaterial, args);
});

test('strings with lone surrogates cross the boundary intact', () => {
  const tool = 'to\ud800ol';
  const monitor = new api.DoomLoopMonitor(api.resolveDoomLoopOption(true));
  monitor.recordToolCallSync(tool, {}, 1);
  const record = monitor.recordToolCallSync(tool, {}, 2);
  assert.equal(record.verdict.toolName, tool);
  assert.ok(record.verdict.message.includes(`"${tool}"`));
  assert.deepEqual(Object.keys(monitor.getState().tools), [tool]);
  // A tool name is hashed as TextEncoder does (U+FFFD), key material escaped.
  assert.equal(api.fingerprintToolCallSync(tool, 1), api.fingerprintToolCallSync('to\ufffdol', 1));
  const text = 'stuck\ud83c '.repeat(20);
  assert.equal(api.detectTextRepetition(text).sample, 'stuck\ud83c');
});

test('a million records keep wasm memory flat', () => {
  const monitor = new api.DoomLoopMonitor(api.resolveDoomLoopOption({ ladder: { stop: false } }));
  const args = { path: '/tmp/x' };
  const memory = () => process.memoryUsage().arrayBuffers;
  for (let i = 0; i < 50_000; i++) monitor.recordToolCallSync(`tool${i % 8}`, args, i);
  const before = memory();
  for (let i = 50_000; i < 1_000_000; i++) monitor.recordToolCallSync(`tool${i % 8}`, args, i);
  const grown = memory() - before;
  assert.ok(grown < 1 << 20, `wasm memory grew by ${grown} bytes`);
  monitor.free();
  assert.throws(() => monitor.getState(), /freed/);
});

test('large inputs (hashed by the native SHA-256 of the runtime) fingerprint the same bytes', async () => {
  const { createHash } = await import('node:crypto');
  const big = { rows: Array.from({ length: 5000 }, (_, i) => ({ id: i, s: `é🎉\ud800${i}` })) };
  const expected = createHash('sha256').update(`tool\n${api.canonicalizeKeyMaterial(big)}`).digest('hex');
  assert.equal(api.fingerprintToolCallSync('tool', big), expected);
  // Distinct words: no within-response repetition, so the verdict is the
  // text streak's, whose fingerprint is of the whole normalised response.
  const text = Array.from({ length: 30_000 }, (_, i) => `w${i}`).join('  ');
  const monitor = new api.DoomLoopMonitor(api.resolveDoomLoopOption({ ladder: { observe: 1 } }));
  const verdict = monitor.recordAssistantTextSync(text);
  assert.equal(verdict.fingerprint, createHash('sha256').update(api.canonicalizeKeyMaterial(text.replaceAll('  ', ' '))).digest('hex'));
});

test('the buffer fast path and the string API give the same records', () => {
  // A tool name with a lone surrogate takes the string API; the same name
  // with U+FFFD (what the hash sees for both) takes the buffer path. Every
  // record must then agree but for the name itself.
  const config = api.resolveDoomLoopOption({ ladder: { observe: 2, steer: 3, block: 4, stop: 9 } });
  const fast = new api.DoomLoopMonitor(config);
  const slow = new api.DoomLoopMonitor(config);
  const [fastName, slowName] = ['wr\ufffdte', 'wr\ud800te'];
  const options = [undefined, {}, { allowBlock: false }, { detector: 'custom' }, { detector: { nested: [1] } }];
  for (let round = 1; round <= 12; round++) {
    const calls = [
      [{ path: `/f${round % 3 === 0 ? round : ''}` }, options[round % options.length]],
      [{ path: '/f' }, undefined], // a duplicate within the round, at times
      [{ text: 'é🎉'.repeat(round * 40), n: round > 6 ? 1 : round }, { allowBlock: round % 2 === 0 }],
    ];
    for (const [args, opts] of calls) {
      const a = fast.recordToolCallSync(fastName, args, round, opts);
      const b = slow.recordToolCallSync(slowName, args, round, opts);
      const rename = (r) => JSON.parse(JSON.stringify(r).replaceAll('wr\\ud800te', fastName));
      assert.deepEqual(a, rename(b));
    }
  }
  assert.equal(JSON.stringify(fast.getState()), JSON.stringify(slow.getState()).replaceAll('wr\\ud800te', fastName));
});

test('the buffer path survives memory growth and failures', async () => {
  const { createHash } = await import('node:crypto');
  const sha = (text) => createHash('sha256').update(text).digest('hex');
  const small = { a: [1, 'x'] };
  const before = api.fingerprintToolCallSync('t', small);
  // Large enough to grow the buffer and wasm memory (detaching old views).
  const huge = { blob: 'z'.repeat(6_000_000), more: Array.from({ length: 20_000 }, (_, i) => ({ i })) };
  assert.equal(api.fingerprintToolCallSync('t', huge), sha(`t\n${api.canonicalizeKeyMaterial(huge)}`));
  assert.equal(api.fingerprintToolCallSync('t', small), before);
  assert.equal(before, sha(`t\n${api.canonicalizeKeyMaterial(small)}`));

  const monitor = new api.DoomLoopMonitor(api.resolveDoomLoopOption(true));
  monitor.recordToolCallSync('t', small, 1);
  const state = monitor.getState();
  assert.throws(() => monitor.recordToolCallSync('t', { bad: NaN }, 2), /non-finite number/);
  assert.throws(() => api.fingerprintToolCallSync('t', [1n]), /bigint/);
  assert.deepEqual(monitor.getState(), state, 'a failed record changes nothing');
  assert.equal(monitor.recordToolCallSync('t', small, 2).streak, 2);
  assert.equal(monitor.recordToolCallSync('t', huge, 3).fingerprint, sha(`t\n${api.canonicalizeKeyMaterial(huge)}`));
});
