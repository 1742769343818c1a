// Scenarios for the reliability findings of issue 12 (../shared/repros/):
// each runs the same calls on a module with the reference's API (the
// package, or the reference itself when tests/differential/ compares) and
// returns what came out, as plain data. tests/js/reliability.test.mjs
// checks the package against the reference's observed output
// (reliability.expected.json, recorded from the reference).
const ser = (v) =>
  JSON.stringify(v, (k, x) =>
    typeof x === 'bigint' ? x + 'n' : typeof x === 'symbol' ? x.toString() : typeof x === 'function' ? 'fn' : x,
  );
const ca = async (f) => {
  try {
    return 'ok ' + ser(await f());
  } catch (e) {
    return `err ${e.constructor.name}: ${e.message}`;
  }
};
const quiet = async (f) => {
  const w = console.warn;
  const out = [];
  console.warn = (...a) => out.push(a.map((x) => (x instanceof Error ? 'Error(' + x.message + ')' : String(x))).join(' '));
  try {
    return [await f(), out];
  } finally {
    console.warn = w;
  }
};
const nest = (n, leaf) => {
  let o = leaf;
  for (let i = 0; i < n; i++) o = { a: o };
  return o;
};

/** Canonical forms (or errors) of hostile key material: tojson, depth_filter, hostile1. */
export function canonScenarios(M) {
  const canonCases = {
  'array own toJSON': () => Object.assign([1, 2], { toJSON: () => 'x' }),
  'nested array toJSON undefined': () => ({ k: Object.assign([1, 2], { toJSON: () => undefined }) }),
  'array toJSON undefined': () => Object.assign([1, 2], { toJSON: () => undefined }),
  'depth 64 {k: undefined}': () => nest(64, { k: undefined }),
  'depth 64 {k: fn}': () => nest(64, { k: () => 1 }),
  'depth 64 {k: symbol}': () => nest(64, { k: Symbol('s') }),
  'depth 64 {k: 1}': () => nest(64, { k: 1 }),
  'NaN beats a filtered deep undefined': () => ({ a: nest(63, { k: undefined }), b: NaN }),
  'getter undefined then 1': () => { let n = 0; return { get a() { return n++ ? 1 : undefined; } }; },
  'getter 1 then undefined': () => { let n = 0; return { get a() { return n++ ? undefined : 1; } }; },
  'getter 1 then NaN': () => { let n = 0; return { get a() { return n++ ? NaN : 1; } }; },
  'getter 1 then fn': () => { let n = 0; return { get a() { return n++ ? (() => 1) : 1; } }; },
  'proxy throwing getPrototypeOf': () => new Proxy({ a: 1 }, { getPrototypeOf() { throw new Error('gpo trap'); } }),
  'proxy throwing has': () => new Proxy({ a: 1 }, { has() { throw new Error('has trap'); } }),
  'proxy array get toJSON': () => new Proxy([1, 2], { get(t, k) { return k === 'toJSON' ? () => 'hacked' : t[k]; } }),
  'NaN in a, getter throws in b (sorted order)': () => ({ a: NaN, b: { get c() { throw new Error('C'); } } }),
  'sparse array': () => [1, , 3, , ],
  'array without map': () => Object.assign([1], { map: 5 }),
};
  const out = {};
  for (const [k, f] of Object.entries(canonCases)) out[k] = ca(() => M.canonicalizeKeyMaterial(f()));
  Array.prototype.toJSON = function () {
    return 'polluted';
  };
  try {
    out['Array.prototype.toJSON {ids:[1,2]}'] = ca(() => M.canonicalizeKeyMaterial({ ids: [1, 2] }));
  } finally {
    delete Array.prototype.toJSON;
  }
  return Promise.all(Object.entries(out).map(async ([k, v]) => [k, await v])).then(Object.fromEntries);
}

/** Monitor-level scenarios: rounds, options, tool names, text, config, ctor, restore, loop keys, memo. */
export async function monitorScenarios(M) {
  const out = {};
const mon = () => new M.DoomLoopMonitor(M.resolveDoomLoopOption(true));
// rounds
for (const [label, rounds] of Object.entries({ 'a,a': ['a', 'a'], 'null,0': [null, 0], '"1",1': ['1', 1], 'undefined': [undefined], 'obj same': (() => { const o = {}; return [o, o]; })(), '1n,1n': [1n, 1n] })) {
  const m = mon(); const r = [];
  for (const round of rounds) r.push(await ca(() => m.recordToolCall('t', { a: 1 }, round).then(x => x.streak)));
  out['rounds ' + label] = r;
}
// options
for (const [label, o] of Object.entries({ 'allowBlock 0n': { allowBlock: 0n }, 'detector fn': { detector() {} }, 'detector 5': { detector: 5 }, 'getter throws': { get allowBlock() { throw new Error('ab getter'); } } })) {
  const m = mon(); const r = [];
  for (const round of [1, 2, 3]) r.push(await ca(() => m.recordToolCall('t', { a: 1 }, round, o).then(x => x.verdict ? [x.verdict.action, typeof x.verdict.detector] : x.streak)));
  r.push(ser(m.getState()));
  out['options ' + label] = r;
}
// tool names
{ const m = mon(); out['tool 5 then "5"'] = [await ca(() => m.recordToolCall(5, {}, 1).then(x => x.streak)), await ca(() => m.recordToolCall('5', {}, 2).then(x => x.streak)), await ca(() => m.recordToolCall(5, {}, 2).then(x => [x.streak, typeof x.verdict?.toolName]))]; }
out['tool symbol'] = await ca(() => mon().recordToolCall(Symbol('s'), {}, 1));
out['fp tool symbol'] = await ca(() => M.fingerprintToolCall(Symbol('s'), {}));
out['fp tool throwing toString vs NaN'] = await ca(() => M.fingerprintToolCall({ toString() { throw new Error('ts'); } }, NaN));
// text
for (const text of [null, undefined, 5]) for (const enabled of [true, false]) out[`text ${text} ${enabled}`] = await ca(() => new M.DoomLoopMonitor(M.resolveDoomLoopOption({ text: enabled })).recordAssistantText(text));
out['text new String'] = await ca(async () => { const m = new M.DoomLoopMonitor(M.resolveDoomLoopOption(true)); const t = new String('I am stuck. '.repeat(5)); await m.recordAssistantText(t); return (await m.recordAssistantText(t))?.action; });
// config
for (const [label, opt] of Object.entries({ 'enabled Infinity': { text: { enabled: Infinity } }, 'enabled 1n': { text: { enabled: 1n } }, 'maxPeriodTokens Infinity': { text: { maxPeriodTokens: Infinity } }, 'model fn': { ladder: { escalate: 2 }, escalation: { model() {} } }, 'advisor symbol': { ladder: { escalate: 2 }, escalation: { advisor: Symbol('a') } } })) {
  const [c, w] = await quiet(() => M.resolveDoomLoopOption(opt));
  const m = new M.DoomLoopMonitor(c); const v = [];
  for (let i = 0; i < 3; i++) v.push((await m.recordAssistantText('I am stuck. '.repeat(3) + 'x'))?.action ?? '-');
  out['config ' + label] = [ser(c), w.length, v.join(','), m.canEscalate()];
}
// ctor
for (const [label, c] of Object.entries({ undefined: undefined, null: null, '{}': {} })) {
  let m; try { m = new M.DoomLoopMonitor(c); } catch (e) { out['ctor ' + label] = 'ctor threw'; continue; }
  out['ctor ' + label] = [await ca(() => m.recordToolCall('t', {}, 1)), await ca(() => m.recordAssistantText('hi')), await ca(() => m.canEscalate()), ser(m.getState())];
}
// restore
const fp = await M.fingerprintToolCall('t', {});
const valid = () => ({ fingerprint: fp, streak: 2 });
for (const [label, mk] of Object.entries({
  'throwing getter elsewhere': () => ({ tools: { t: valid() }, get junk() { throw new Error('junk'); } }),
  'revoked proxy elsewhere': () => { const r = Proxy.revocable({}, {}); r.revoke(); return { tools: { t: valid() }, junk: r.proxy }; },
  'inherited tools': () => Object.create({ tools: { t: valid() } }),
  'inherited entry fields': () => ({ tools: { t: Object.create(valid()) } }),
  'throwing getter on tools': () => ({ get tools() { throw new Error('tools getter'); } }),
  'cyclic elsewhere': () => { const o = { tools: { t: valid() } }; o.self = o; return o; },
})) {
  const m = mon(); out['restore ' + label] = [await ca(() => m.restore(mk())), ser(m.getState()), await ca(() => m.recordToolCall('t', {}, 1).then(x => x.streak))];
}
// loop keys
for (const [label, f, a] of [['constructor on null-proto', ['constructor'], Object.create(null)], ['__proto__ on null-proto', ['__proto__'], Object.assign(Object.create(null), { x: 1 })], ['inherited', ['inherited'], Object.create({ inherited: 1 })], ['toString on plain', ['toString'], {}]]) {
  const r = M.resolveLoopKeyMaterial(f, a); out['loopKey ' + label] = [r.kind, r.warning ?? null, await ca(() => M.canonicalizeKeyMaterial(r.keyMaterial))];
}
// memo
{ const m = mon(); const args = { page: 1 }; const r = []; for (let round = 1; round <= 3; round++) { args.page = round; r.push((await m.recordToolCall('list', args, round)).streak); } out['memo mutation'] = r; }
  return out;
}
