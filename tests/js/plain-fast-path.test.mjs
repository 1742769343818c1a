// The plain-data fast path of key material (js/lower.js, issue 18): plain
// data is lowered by JSON.stringify, everything else by the walk that reads
// as the reference reads. Each case sits on an edge of the check — a
// pollution JSON.stringify would obey, a getter it would run once, a key
// order it would keep, a value it would write differently — and states the
// reference's answer (canonical text, or error, and the reads it makes).
// With REF_MODULE set (the reference doom-loop module, see
// tests/differential/fuzz.mjs) every case is also run through the
// reference and must agree with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import * as api from '../../pkg/node.mjs';

const reference = process.env.REF_MODULE ? await import(pathToFileURL(resolve(process.env.REF_MODULE)).href) : null;

const sha = (text) => createHash('sha256').update(text).digest('hex');

/**
 * Runs `make()` (a fresh value and its read log) through the package and,
 * when available, the reference; both must give `expected` (canonical text
 * or an error pattern) and make the reads `reads`.
 */
async function agree(make, expected, reads) {
  const answers = [['package', (v) => api.canonicalizeKeyMaterial(v)]];
  if (reference) answers.push(['reference', (v) => reference.canonicalizeKeyMaterial(v)]);
  for (const [who, canon] of answers) {
    const { value, log = [] } = make();
    if (expected instanceof RegExp) {
      assert.throws(() => canon(value), expected, who);
    } else {
      assert.equal(canon(value), expected, who);
    }
    if (reads !== undefined) assert.deepEqual(log, reads, `${who} reads`);
  }
  // The fingerprint hashes the same text (the hot path, not the string API).
  if (!(expected instanceof RegExp)) {
    const { value } = make();
    assert.equal(api.fingerprintToolCallSync('edit', value), sha(`edit\n${expected}`));
    if (reference) assert.equal(await reference.fingerprintToolCall('edit', make().value), sha(`edit\n${expected}`));
  }
}

/** Runs `body` with `key` defined on `target` (non-enumerable), then puts back what was there. */
async function withPolluted(target, key, descriptor, body) {
  const original = Object.getOwnPropertyDescriptor(target, key);
  // A null-prototype descriptor: a polluted `Object.prototype.value` or
  // `.get` would otherwise be read into it.
  Object.defineProperty(target, key, Object.assign(Object.create(null), { configurable: true, enumerable: false }, descriptor));
  try {
    await body();
  } finally {
    delete target[key];
    if (original !== undefined) Object.defineProperty(target, key, original);
  }
}

test('plain data: integer-like keys, -0, exponents, lone surrogates, null prototypes', async () => {
  await agree(() => ({ value: { b: 1, a: 2, 10: 3, 9: 4, '01': 5, '': 6 } }), '{"":6,"01":5,"10":3,"9":4,"a":2,"b":1}');
  await agree(() => ({ value: { z: -0, e: 1e21, t: 5e-324, n: -1e-7, f: 0.1 + 0.2, big: 2 ** 53 + 2 } }), '{"big":9007199254740994,"e":1e+21,"f":0.30000000000000004,"n":-1e-7,"t":5e-324,"z":0}');
  await agree(() => ({ value: { '\ud800': ['\udfff', 'é😀', '\u0000\u001f"\\\n'] } }), '{"\\ud800":["\\udfff","é😀","\\u0000\\u001f\\"\\\\\\n"]}');
  await agree(() => ({ value: Object.assign(Object.create(null), { b: [], a: {} }) }), '{"a":{},"b":[]}');
  await agree(() => ({ value: { é: 1, z: 2, '😀': 3, '\uffff': 4 } }), '{"z":2,"é":1,"😀":3,"\uffff":4}');
});

test('nesting at the limit: 64 levels are plain, 65 are the reference error', async () => {
  const nest = (levels) => {
    let value = 1;
    for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { k: value };
    return value;
  };
  const text = (levels) => {
    let out = '1';
    for (let i = 0; i < levels; i++) out = i % 2 ? `[${out}]` : `{"k":${out}}`;
    return out;
  };
  await agree(() => ({ value: nest(64) }), text(64));
  await agree(() => ({ value: nest(65) }), /nested deeper than 64 levels/);
});

test('what JSON.stringify would write differently takes the walk', async () => {
  // eslint-disable-next-line no-sparse-arrays
  await agree(() => ({ value: { a: [1, , 3] } }), '{"a":[1,,3]}');
  await agree(() => ({ value: { a: [undefined, () => 1, Symbol('s')], b: undefined, c: () => 1 } }), '{"a":[null,null,null]}');
  await agree(() => ({ value: { d: new Date(0), n: new Number(1), s: new String('x') } }), '{"d":{},"n":{},"s":{"0":"x"}}');
  await agree(() => ({ value: { a: NaN } }), /non-finite number/);
  await agree(() => ({ value: { a: 1n } }), /bigint/);
  await agree(() => {
    const value = { a: { b: {} } };
    value.a.b.c = value;
    return { value };
  }, /circular/);
  // A shared (acyclic) object is plain, twice.
  await agree(() => {
    const shared = { x: 1 };
    return { value: { a: shared, b: [shared] } };
  }, '{"a":{"x":1},"b":[{"x":1}]}');
});

test('toJSON is never called: own, non-enumerable, on Object.prototype or Array.prototype', async () => {
  await agree(() => ({ value: Object.defineProperty({ a: 1 }, 'toJSON', { value: () => 'x' }) }), '{"a":1}');
  await agree(() => ({ value: { a: Object.defineProperty([1], 'toJSON', { value: () => 'x' }) } }), '{"a":[1]}');
  for (const proto of [Object.prototype, Array.prototype]) {
    await withPolluted(proto, 'toJSON', { value: () => 'polluted', writable: true }, () =>
      agree(() => ({ value: { a: [1, { b: 2 }] } }), '{"a":[1,{"b":2}]}'),
    );
  }
});

test('getters run as the reference runs them: twice per object member, once per array index', async () => {
  await agree(() => {
    const log = [];
    const value = {
      get b() {
        log.push('b');
        return 1;
      },
      a: 2,
      get c() {
        log.push('c');
        return undefined;
      },
    };
    return { value, log };
  }, '{"a":2,"b":1}', ['b', 'c', 'b']);
  await agree(() => {
    const log = [];
    const value = [1, 2];
    Object.defineProperty(value, 1, { get: () => (log.push(1), 'x'), enumerable: true });
    return { value: { list: value }, log };
  }, '{"list":[1,"x"]}', [1]);
  // A descriptor check that read `descriptor.get` or `.value` through the
  // prototype would run these; `Object.hasOwn` does not.
  const log = [];
  await withPolluted(Object.prototype, 'value', { get: () => (log.push('value'), 1) }, () =>
    withPolluted(Object.prototype, 'get', { get: () => (log.push('get'), undefined) }, () =>
      agree(() => ({ value: { a: { get x() { return 1; } } } }), '{"a":{"x":1}}'),
    ),
  );
  assert.deepEqual(log, []);
});

test('an enumerable key on Object.prototype: own keys only, and an inherited getter never runs', async () => {
  // The check lists an object's keys with for…in, which would add these.
  await withPolluted(Object.prototype, 'extra', { value: { x: 1 }, enumerable: true, writable: true }, () =>
    agree(() => ({ value: { a: 1, b: { c: [2] } } }), '{"a":1,"b":{"c":[2]}}'),
  );
  const log = [];
  await withPolluted(Object.prototype, 'evil', { get: () => (log.push('evil'), 1), enumerable: true }, () =>
    agree(() => ({ value: { a: 1, b: Object.assign(Object.create(null), { c: 2 }) } }), '{"a":1,"b":{"c":2}}'),
  );
  assert.deepEqual(log, []);
});

test('accessors without a getter read as undefined, and a replaced __lookupGetter__ is never called', async () => {
  await agree(() => {
    const log = [];
    const value = { a: 1 };
    Object.defineProperty(value, 'b', { set: () => log.push('set b'), enumerable: true });
    const list = [1, 2];
    Object.defineProperty(list, 1, { set: () => log.push('set 1'), enumerable: true });
    return { value: { value, list }, log };
  }, '{"list":[1,null],"value":{"a":1}}', []);
  // The plainness check holds the intrinsic from load time; a replacement
  // installed later (user code) must not run.
  const log = [];
  await withPolluted(Object.prototype, '__lookupGetter__', { value: () => (log.push('lookup'), undefined), writable: true }, () =>
    agree(() => ({ value: { a: [1, { b: 2 }], get c() { return 3; } } }), '{"a":[1,{"b":2}],"c":3}'),
  );
  assert.deepEqual(log, []);
});

test('a Proxy is read through its traps in the reference order', async () => {
  await agree(() => {
    const log = [];
    const value = new Proxy(
      { b: 1, a: 2 },
      {
        get: (target, key) => (log.push(`get ${String(key)}`), target[key]),
        ownKeys: (target) => (log.push('ownKeys'), Reflect.ownKeys(target)),
      },
    );
    return { value: { p: value }, log };
  }, '{"p":{"a":2,"b":1}}', ['ownKeys', 'get b', 'get a', 'get a', 'get b']);
});

test('arrays are read through their map: a replaced map or species is met', async () => {
  const calls = [];
  const map = Array.prototype.map;
  await withPolluted(Array.prototype, 'map', { value: function (...args) { calls.push('map'); return map.apply(this, args); }, writable: true }, () =>
    agree(() => ({ value: { a: [1, 2] } }), '{"a":[1,2]}'),
  );
  assert.ok(calls.length >= 2, 'the replaced map is called');
  const species = Object.getOwnPropertyDescriptor(Array, Symbol.species);
  const reads = [];
  Object.defineProperty(Array, Symbol.species, { configurable: true, get() { reads.push('species'); return this; } });
  try {
    await agree(() => ({ value: { a: [1] } }), '{"a":[1]}');
  } finally {
    Object.defineProperty(Array, Symbol.species, species);
  }
  assert.ok(reads.length >= 1, 'Array[Symbol.species] is read, as map reads it');
});

// --- A restored state's call counts (js/lower.js plainCountsJson) ----------

/**
 * Restores `{tools: {t: {fingerprint: 'fx', streak: 2, callStreaks}}}` with the
 * counts `make()` builds (a fresh object and its read log) into the package
 * and, when available, the reference; each must keep `expected` and make
 * the reads `reads`.
 */
async function restoresCounts(make, expected, reads) {
  const monitors = [['package', api]];
  if (reference) monitors.push(['reference', reference]);
  for (const [who, M] of monitors) {
    const { counts, log = [] } = make();
    const monitor = new M.DoomLoopMonitor(M.resolveDoomLoopOption(true));
    monitor.restore({ tools: { t: { fingerprint: 'fx', streak: 2, callStreaks: counts } } });
    assert.deepEqual(monitor.getState().tools.t.callStreaks, expected, who);
    if (reads !== undefined) assert.deepEqual(log, reads, `${who} reads`);
  }
}

test('a state\'s call counts: one stringify when every count is valid, the reference\'s reads otherwise', async () => {
  const valid = () => ({ f0: 2, 10: 3.7, __proto__x: 1e7, '\uD800': 1 });
  const kept = { 10: 3, f0: 2, __proto__x: 1e7, '\uD800': 1 };
  await restoresCounts(() => ({ counts: valid() }), kept);
  await restoresCounts(() => ({ counts: Object.assign(Object.create(null), valid()) }), kept);
  // An own "__proto__" key (as JSON.parse makes one) is a count like any other.
  await restoresCounts(() => ({ counts: JSON.parse('{"__proto__":2,"f0":3}') }), { ['__proto__']: 2, f0: 3 });
  // Invalid counts are dropped (the core's filter, as the reference's).
  await restoresCounts(() => ({ counts: { f0: 2, f1: 0, f2: -1, f3: NaN, f4: '3', f5: { n: 2 }, f6: [2], f7: null, f8: undefined, f9: 2n } }), { f0: 2 });
  // A getter runs once, in key order; a Proxy is read as Object.entries reads it (never its toJSON).
  await restoresCounts(() => {
    const log = [];
    const counts = { f0: 2 };
    Object.defineProperty(counts, 'f1', { enumerable: true, get: () => (log.push('get f1'), 3) });
    return { counts, log };
  }, { f0: 2, f1: 3 }, ['get f1']);
  await restoresCounts(() => {
    const log = [];
    const counts = new Proxy(valid(), {
      get: (target, key) => (log.push(`get ${String(key)}`), target[key]),
      ownKeys: (target) => (log.push('ownKeys'), Reflect.ownKeys(target)),
    });
    return { counts, log };
  }, kept, ['ownKeys', 'get 10', 'get f0', 'get __proto__x', 'get \uD800']);
  // What a stringify would obey and Object.entries does not: an inherited
  // enumerable key, an own or inherited toJSON.
  await withPolluted(Object.prototype, 'extra', { value: 5, enumerable: true, writable: true }, () =>
    restoresCounts(() => ({ counts: valid() }), kept),
  );
  const log = [];
  await withPolluted(Object.prototype, 'toJSON', { value: () => (log.push('toJSON'), { f0: 9 }), writable: true }, () =>
    restoresCounts(() => ({ counts: valid() }), kept),
  );
  assert.deepEqual(log, []);
  await restoresCounts(() => ({ counts: { ...valid(), toJSON: () => ({ f0: 9 }) } }), kept);
  // An array's indexes are its keys, holes skipped.
  await restoresCounts(() => ({ counts: [2, , 3] }), { 0: 2, 2: 3 });
});
