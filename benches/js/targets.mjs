// `make bench`'s last step: the performance goals, each stated as what a
// user gets, beside this run's measurement and whether it is met — read
// from what the run wrote (`peers.mjs --json`, `startup.mjs --json`,
// Criterion's estimates of the `serde_json_value` groups, and the hook
// benchmark's JSON when it ran), so the verdicts are never typed by hand.
// A goal the run did not measure says so; it never counts as met.
//
// The anchor is the floor, taken strictly: `JSON.stringify` of the value
// and one one-shot SHA-256 of its text — the least a fingerprint of the
// value's JSON could cost on this runtime — with the peers (what a user
// would write instead) as a guard. Under a goal the run misses, what stands
// in its way, from the same run: the time the goal allows beside work the
// package cannot skip while it reads values as the reference reads them
// (`JSON.stringify`, the read-only parity check, one SHA-256 of the
// canonical text). It is `bounded` when that work alone takes longer than
// the goal allows: no tuning of the rest can meet it.
//
// Usage: node benches/js/targets.mjs PEERS.json STARTUP.json CRITERION_DIR [HOOK.json]
//          [--gateway GATEWAY.json] [--python PYTHON.json] [--json FILE]

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The fingerprint rows of `peers.mjs`. */
export const FINGERPRINT_ROWS = [
  'fingerprint, 150 B object',
  'fingerprint, 1.4 MB, 20k rows × 4 fields',
  'fingerprint, 1 MB string argument',
  'fingerprint, 60 levels of nesting',
];
/** The peers a fingerprint must never be slower than: `peers.mjs` ratio field and label. */
export const PEERS = [
  ['vsNodeCrypto', 'canonicalize + node:crypto'],
  ['vsNoble', 'canonicalize + @noble/hashes'],
  ['vsReference', 'the reference'],
];
/** A fingerprint's goal: at most this multiple of the strict floor. */
export const FLOOR_GOAL = 2.5;
/**
 * A session response with one call: at most this multiple of a bare
 * fingerprint of its arguments plus one wasm round trip carrying the
 * response (the crossing the session cannot skip).
 */
export const SESSION_GOAL = 2;
/**
 * Loading the package: at most this multiple of reading and compiling its
 * .wasm alone — for a first fingerprint, and for what an adapter pays
 * before its first decision (a session's first response, which needs the
 * module): the same goal, since that is the cold start an agent meets.
 */
export const LOAD_GOAL = 1.5;
/** The crate's fingerprint against `serde_jcs` + `sha2`: at least this many times faster. */
export const NATIVE_GOAL = 2;
export const NATIVE_INPUTS = ['small', 'large'];
/** The gateway's added latency per request: at most this multiple of a bare relay's (`gateway.mjs`). */
export const GATEWAY_GOAL = 2;
/** The Python wheel's fingerprint, from text and from a value: no slower than either peer (`benches/python/bench.py`). */
export const PYTHON_PEERS = [
  ['jcs', 'jcs + hashlib'],
  ['canonicaljson', 'canonicaljson + hashlib'],
];
/** The session onResponse row of `peers.mjs`. */
export const SESSION_ROW = 'session onResponse, one 150 B call';

const times = (x) => `${x.toFixed(2)}×`;
const fmtSeconds = (s) => fmtNs(s * 1e9);
const fmtNs = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);

/**
 * Every goal as `{target, measured, met}` (and `bound` under a missed one):
 * `met` is true, false, or null when the run has no measurement for it.
 * @param {{rows: object[]}|undefined} peers `peers.mjs --json`
 * @param {object|undefined} startup `startup.mjs --json`
 * @param {Record<string, {package: number, baseline: number}>} native ns per call by input
 * @param {{paths?: {name: string, cpuOverBaselineMs: number, goalMs?: number}[]}} [hook] the hook benchmark's JSON
 */
export function score(peers, startup, native, hook) {
  const out = [];
  const row = (name) => peers?.rows?.find((r) => r.operation === name);
  const check = (target, value, good, show, bound) => {
    if (!Number.isFinite(value)) return out.push({ target, measured: 'not measured', met: null });
    const met = good(value);
    const inTheWay = met ? undefined : bound?.();
    out.push(inTheWay ? { target, measured: show(value), met, bound: inTheWay } : { target, measured: show(value), met });
  };
  for (const name of FINGERPRINT_ROWS) {
    const r = row(name);
    const label = name.replace('fingerprint, ', '');
    const slowest = slowestPeer(r);
    check(`${label}: no slower than any peer`, slowest?.ratio, (x) => x >= 1, (x) => `${times(x)} ${slowest.label}`);
    const t = r?.times ?? {};
    check(
      `${label}: within ${FLOOR_GOAL}× the strict floor`,
      r?.strictFloorMultiple,
      (x) => x <= FLOOR_GOAL,
      (x) => `${times(x)} (parity check ${share(t.lowering - t.stringify, t.package)})`,
      () => obstacle(t.strictFloor * FLOOR_GOAL, floorParts(t, r.path), fmtNs, t.package),
    );
  }
  // The session must cross into wasm (its state lives there) where a bare
  // fingerprint of small arguments no longer does: its anchor is that
  // fingerprint plus one round trip into wasm carrying the response.
  const st = row(SESSION_ROW)?.times ?? {};
  const anchor = st.fingerprint + st.crossing;
  check(
    `one call through the session engine: within ${SESSION_GOAL}× a bare fingerprint + one wasm round trip`,
    st.package / anchor,
    (x) => x <= SESSION_GOAL,
    (x) => `${times(x)} (${fmtNs(st.package)} vs ${fmtNs(st.fingerprint)} + ${fmtNs(st.crossing)})`,
    () =>
      obstacle(
        SESSION_GOAL * anchor,
        [
          ['the fingerprint of its arguments', st.fingerprint],
          ['one wasm round trip with the response', st.crossing],
        ],
        fmtNs,
        st.package,
      ),
  );
  const ms = (x) => `${x.toFixed(2)} ms`;
  for (const [kind, what] of [
    ['loads', 'first fingerprint'],
    ['sessions', "a session's first response"],
  ]) {
    for (const way of ['require', 'import']) {
      const load = startup?.[kind]?.[way];
      check(
        `${way} + ${what}: within ${LOAD_GOAL}× reading + compiling the .wasm alone`,
        load?.ratio,
        (x) => x <= LOAD_GOAL,
        (x) => `${times(x)} (${ms(load.ms)} vs ${ms(load.compileOnlyMs)})`,
        // Reading and compiling the .wasm is the anchor itself: what the
        // rest (the shim, instantiating, the first call) would have to shed.
        () => obstacle(LOAD_GOAL * load.compileOnlyMs, [['reading + compiling the .wasm', load.compileOnlyMs]], ms, load.ms),
      );
    }
  }
  check(
    `detector module: no growth past ${startup?.sizeGuard ?? '?'} B gzipped`,
    startup?.gzip,
    (x) => x <= startup.sizeGuard,
    (x) => `${x} B`,
  );
  for (const input of NATIVE_INPUTS) {
    const n = native?.[input];
    check(
      `native fingerprint of a serde_json::Value (${input}): ≥ ${NATIVE_GOAL}× serde_jcs + sha2`,
      n ? n.baseline / n.package : undefined,
      (x) => x >= NATIVE_GOAL,
      (x) => `${times(x)} (${fmtNs(n.package)} vs ${fmtNs(n.baseline)})`,
    );
  }
  for (const path of hook?.paths ?? []) {
    if (!Number.isFinite(path.goalMs)) continue;
    check(
      `one hook event, ${path.name}: ≤ ${path.goalMs} ms CPU over ${path.baseline ?? 'its baseline'}`,
      path.cpuOverBaselineMs,
      (x) => x <= path.goalMs,
      (x) => `${x.toFixed(2)} ms`,
    );
  }
  return out;
}

/**
 * The goals of the other ways in, as `score` reports them: the gateway's
 * added latency per request (warm: an agent's next request) beside a bare
 * relay's — the floor of any gateway, Node's HTTP server and `fetch` with
 * no decision — and the Python wheel's fingerprint beside what a Python user
 * would write instead, on each shape, from argument text and from a value,
 * against the faster peer (a value's row, when missed, beside the floor:
 * `json.dumps` of it and one SHA-256).
 * @param {{rows?: {rounds: number, addedWarmMs: number, relayAddedMs?: number, decideWarmMs: number}[]}} [gateway] `gateway.mjs --json`
 * @param {{rows?: {shape: string, wheelText: number, wheelValue: number, jcs: number, canonicaljson: number, floor?: number}[]}} [python] `bench.py --json`
 */
export function scoreOtherWays(gateway, python) {
  const out = [];
  for (const r of gateway?.rows ?? []) {
    const target = `gateway, ${r.rounds} rounds, warm: added latency within ${GATEWAY_GOAL}× a bare relay's`;
    const ratio = r.relayAddedMs > 0 && r.addedWarmMs > 0 ? r.addedWarmMs / r.relayAddedMs : undefined;
    if (ratio === undefined) {
      out.push({ target, measured: 'not measured', met: null });
      continue;
    }
    const ms = (x) => `${x.toFixed(2)} ms`;
    const row = { target, measured: `${times(ratio)} (+${ms(r.addedWarmMs)} vs +${ms(r.relayAddedMs)})`, met: ratio <= GATEWAY_GOAL };
    if (!row.met) row.bound = obstacle(GATEWAY_GOAL * r.relayAddedMs, [['a bare relay', r.relayAddedMs]], ms, r.addedWarmMs);
    out.push(row);
  }
  for (const r of python?.rows ?? []) {
    const [field, label] = PYTHON_PEERS.reduce((a, b) => (r[b[0]] < r[a[0]] ? b : a));
    for (const [input, wheel] of [
      ['argument text', r.wheelText],
      ['a value', r.wheelValue],
    ]) {
      const ratio = r[field] / wheel;
      const target = `Python wheel, ${r.shape}, from ${input}: no slower than jcs or canonicaljson + hashlib`;
      if (!(Number.isFinite(ratio) && ratio > 0)) {
        out.push({ target, measured: 'not measured', met: null });
        continue;
      }
      const row = { target, measured: `${times(ratio)} ${label}`, met: ratio >= 1 };
      // A value is read through `json.dumps` first: the floor (that text and
      // one SHA-256, no canonicalization) beside what the peer takes.
      if (!row.met && input === 'a value') {
        row.bound = obstacle(r[field], [['json.dumps of the value + one SHA-256 (the floor)', r.floor]], fmtSeconds, wheel);
      }
      out.push(row);
    }
  }
  return out;
}

/** The peer the package is slowest against: `{ratio, label}` (ratio = peer time ÷ package time), or undefined. */
export function slowestPeer(r) {
  const ratios = PEERS.filter(([field]) => Number.isFinite(r?.[field])).map(([field, label]) => ({ ratio: r[field], label }));
  if (ratios.length < PEERS.length) return undefined;
  return ratios.reduce((a, b) => (b.ratio < a.ratio ? b : a));
}

/**
 * The work a fingerprint cannot skip while it reads values as the reference
 * does: through wasm, the native stringify, the parity check and one
 * SHA-256; written in JS (`path` 'js'), no stringify — the check's reads
 * and one SHA-256.
 */
function floorParts(t, path) {
  return [
    ...(path === 'js' ? [] : [['JSON.stringify', t.stringify]]),
    ['the parity check', t.lowering - t.stringify],
    ['one SHA-256 of the canonical text', t.hash],
  ];
}

/** `part` as a share of `whole`, or "not timed". */
function share(part, whole) {
  return Number.isFinite(part) && whole > 0 ? `${Math.max(0, (100 * part) / whole).toFixed(0)} % of the time` : 'not timed';
}

/**
 * The work in a missed goal's way beside the time the goal allows:
 * `{text, bounded}`, `bounded` true when that work alone exceeds the
 * allowance (null when the run did not time all of it). Otherwise the text
 * says how much faster everything else the package does (its time less
 * that work) would have to get.
 * @param {number} allowed what the goal allows, in the unit of `parts`
 * @param {[string, number|undefined][]} parts the work no tuning of the rest removes
 * @param {(x: number) => string} show
 * @param {number} [actual] the package's time for the same work, same unit
 */
export function obstacle(allowed, parts, show, actual) {
  if (!Number.isFinite(allowed) || parts.some(([, x]) => !Number.isFinite(x))) {
    return { text: 'not timed by this run', bounded: null };
  }
  const total = parts.reduce((sum, [, x]) => sum + x, 0);
  const sum = `${parts.map(([name, x]) => `${name} ${show(x)}`).join(' + ')}${parts.length > 1 ? ` = ${show(total)}` : ''}`;
  if (total > allowed) return { text: `${sum}, more than the ${show(allowed)} it allows: out of reach`, bounded: true };
  const left = allowed - total;
  return { text: `${sum} of the ${show(allowed)} it allows, ${show(left)} left for the rest${restAgainst(actual - total, left, show)}`, bounded: false };
}

/** How much faster the rest of the package's work (`rest`, NaN when unknown) would have to get to fit in `left`. */
function restAgainst(rest, left, show) {
  if (!(rest > 0)) return '';
  const factor = rest / left;
  return `; the rest takes ${show(rest)}, ${factor > 10 ? 'over 10' : factor.toFixed(1)}× that`;
}

/** Criterion's median estimate (ns) of one benchmark, or undefined when it did not run. */
function criterionMedian(dir, group, name) {
  const file = join(dir, group, name, 'new', 'estimates.json');
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')).median?.point_estimate;
}

/** The `serde_json_value/<input>` groups of `cargo bench --bench core --features serde_json`. */
export function readNative(dir) {
  const native = {};
  for (const input of NATIVE_INPUTS) {
    const group = `serde_json_value_${input}`;
    const ours = criterionMedian(dir, group, 'doom_loop');
    const baseline = criterionMedian(dir, group, 'serde_jcs_sha2');
    if (ours !== undefined && baseline !== undefined) native[input] = { package: ours, baseline };
  }
  return native;
}

const readJson = (file) => (file && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined);

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const flag = (name) => {
    const at = args.indexOf(name);
    return at >= 0 ? args.splice(at, 2)[1] : undefined;
  };
  const jsonOut = flag('--json');
  const gatewayFile = flag('--gateway');
  const pythonFile = flag('--python');
  const [peersFile, startupFile, criterionDir, hookFile] = args;
  const rows = [
    ...score(readJson(peersFile), readJson(startupFile), criterionDir ? readNative(criterionDir) : {}, readJson(hookFile)),
    ...scoreOtherWays(readJson(gatewayFile), readJson(pythonFile)),
  ];
  const width = Math.max(...rows.map((r) => r.target.length));
  console.log(`\nperformance goals, this run (Node ${readJson(peersFile)?.node ?? '?'}):`);
  for (const r of rows) {
    console.log(`  ${r.target.padEnd(width)}  ${r.measured.padEnd(36)}  ${r.met === null ? 'not measured' : r.met ? 'met' : 'not met'}`);
    if (r.bound) console.log(`      in its way: ${r.bound.text}`);
  }
  const met = rows.filter((r) => r.met === true).length;
  const missed = rows.filter((r) => r.met === false);
  const outOfReach = missed.filter((r) => r.bound?.bounded === true).length;
  console.log(`  ${met} of ${rows.length} met; of the ${missed.length} not met, ${outOfReach} bounded by work this run timed`);
  if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify(rows, null, 1)}\n`);
}
