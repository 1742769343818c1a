// `make bench`'s last step: issue 18's targets, each beside this run's
// measurement and whether it is met — read from what the run wrote
// (`peers.mjs --json`, `startup.mjs --json`, Criterion's estimates of the
// `serde_json_value` groups), so the verdicts are never typed by hand.
// A row the run did not measure says so; it never counts as met.
//
// Under a target the run misses, what stands in its way, from the same
// run: the time the target allows beside work this design cannot skip
// (for a fingerprint, the shim's lowering and the cheapest SHA-256 of the
// canonical text; for a record, the same for its arguments, their parse
// included; for a cold start, Node's ES module loader and compiling the
// module). It is `bounded` when that work alone takes longer than the
// target allows: no tuning of the rest can meet it.
//
// Usage: node benches/js/targets.mjs PEERS.json STARTUP.json CRITERION_DIR [--json FILE]

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The fingerprint rows of `peers.mjs`, and which of them are large (within 3× of the floor). */
export const FINGERPRINT_ROWS = [
  ['fingerprint, 150 B object', false],
  ['fingerprint, 1.4 MB, 20k rows × 4 fields', true],
  ['fingerprint, 1 MB string argument', true],
  ['fingerprint, 60 levels of nesting', false],
];
export const RECORD_ROWS = ['recordToolCall, repeated (a loop)', 'recordToolCall, distinct calls'];
export const NATIVE_INPUTS = ['small', 'large'];

/**
 * Every target of issue 18 as `{target, measured, met}`: `met` is true,
 * false, or null when the run has no measurement for it.
 * @param {{rows: object[]}|undefined} peers `peers.mjs --json`
 * @param {object|undefined} startup `startup.mjs --json`
 * @param {Record<string, {package: number, baseline: number}>} native ns per call by input
 */
export function score(peers, startup, native) {
  const out = [];
  const row = (name) => peers?.rows?.find((r) => r.operation === name);
  const check = (target, value, good, show, bound) => {
    if (!Number.isFinite(value)) return out.push({ target, measured: 'not measured', met: null });
    const met = good(value);
    const inTheWay = met ? undefined : bound?.();
    out.push(inTheWay ? { target, measured: show(value), met, bound: inTheWay } : { target, measured: show(value), met });
  };
  const times = (x) => `${x.toFixed(2)}×`;
  // Work every fingerprint of this design does, whatever the rest costs.
  const unskippable = (r, lowering) => [
    [lowering, r?.times?.lowering],
    ['SHA-256 of the canonical text (the cheapest hash)', r?.times?.hash],
  ];
  for (const [name, large] of FINGERPRINT_ROWS) {
    const r = row(name);
    const label = name.replace('fingerprint, ', '');
    const parts = unskippable(r, 'lowering (JSON.stringify + the parity check)');
    const within = (peer, factor) => () => obstacle(r?.times?.[peer] / factor, parts, fmtNs, r?.times?.package);
    check(`${label}: ≥ 2× canonicalize + node:crypto`, r?.vsNodeCrypto, (x) => x >= 2, times, within('canonicalize+node:crypto', 2));
    check(`${label}: ≥ 2× canonicalize + @noble/hashes`, r?.vsNoble, (x) => x >= 2, times, within('canonicalize+noble', 2));
    check(`${label}: ≥ 2× the reference`, r?.vsReference, (x) => x >= 2, times, within('reference', 2));
    if (large) check(`${label}: within 3× the floor`, r?.floorMultiple, (x) => x <= 3, (x) => `${times(x)} the floor`, within('floor', 1 / 3));
  }
  for (const name of RECORD_ROWS) {
    const r = row(name);
    // The arguments' parse is in both contenders' times (an SDK parses them).
    check(`${name}: ≥ 20× the reference`, r?.vsReference, (x) => x >= 20, times, () =>
      obstacle(r?.times?.reference / 20, unskippable(r, 'JSON.parse + lowering of the arguments'), fmtNs, r?.times?.package),
    );
  }
  for (const input of NATIVE_INPUTS) {
    const n = native?.[input];
    check(
      `native fingerprint of a serde_json::Value (${input}): ≥ 2× serde_jcs + sha2`,
      n ? n.baseline / n.package : undefined,
      (x) => x >= 2,
      (x) => `${times(x)} (${fmtNs(n.package)} vs ${fmtNs(n.baseline)})`,
    );
  }
  check('detector module ≤ 64 KiB gzipped', startup?.gzip, (x) => x <= (startup.sizeTarget ?? 65536), (x) => `${x} B`, () => ({
    text: 'not timed by this run (docs/performance.md: what each group of exports costs, measured by removing it)',
    bounded: null,
  }));
  check('cold import + first fingerprint ≤ 5 ms', startup?.coldMs, (x) => x <= (startup.coldTargetMs ?? 5), (x) => `${x.toFixed(2)} ms`, () =>
    obstacle(
      startup.coldTargetMs ?? 5,
      [
        ["Node's ES module loader (an empty .mjs)", startup.emptyImportMs],
        ['compiling the detector module', startup.compileMs],
      ],
      (ms) => `${ms.toFixed(2)} ms`,
      startup.coldMs,
    ),
  );
  return out;
}

/**
 * The work in a missed target's way beside the time the target allows:
 * `{text, bounded}`, `bounded` true when that work alone exceeds the
 * allowance (null when the run did not time all of it). Otherwise the text
 * says how much faster everything else the package does (its time less
 * that work) would have to get.
 * @param {number} allowed what the target allows, in the unit of `parts`
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

const fmtNs = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);

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
  const [peersFile, startupFile, criterionDir] = process.argv.slice(2);
  const rows = score(readJson(peersFile), readJson(startupFile), criterionDir ? readNative(criterionDir) : {});
  const width = Math.max(...rows.map((r) => r.target.length));
  console.log(`\nissue 18's targets, this run (Node ${readJson(peersFile)?.node ?? '?'}):`);
  for (const r of rows) {
    console.log(`  ${r.target.padEnd(width)}  ${r.measured.padEnd(28)}  ${r.met === null ? 'not measured' : r.met ? 'met' : 'not met'}`);
    if (r.bound) console.log(`      in its way: ${r.bound.text}`);
  }
  const met = rows.filter((r) => r.met === true).length;
  const missed = rows.filter((r) => r.met === false);
  const outOfReach = missed.filter((r) => r.bound?.bounded === true).length;
  console.log(`  ${met} of ${rows.length} met; of the ${missed.length} not met, ${outOfReach} out of reach by work this run timed`);
  const at = process.argv.indexOf('--json');
  if (at > 0 && process.argv[at + 1]) writeFileSync(process.argv[at + 1], `${JSON.stringify(rows, null, 1)}\n`);
}
