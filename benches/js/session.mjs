// `make bench` (session row, issue 15): the per-call cost of the session
// engine (`DoomLoopSession`: a response's calls as one round, each decided,
// each result fed) beside the bare monitor doing the same detector work by
// hand (declareRoundSync + recordToolCallSync + recordToolResultSync), in
// one process, alternating A/B trials after a warm-up; medians, the added
// µs per call and the ratio. A benchmark, not a timed test.
import * as pkg from '../../pkg/node.mjs';

const { DoomLoopSession, DoomLoopMonitor, RECOMMENDED_DOOM_LOOP_OPTION, resolveDoomLoopOption } = pkg;
const ROUNDS = 200;
const CALLS = 3;
const TRIALS = Number(process.env.SESSION_BENCH_TRIALS ?? 15);

/** A run: each round three calls (one an in-round duplicate), paging results. */
const script = Array.from({ length: ROUNDS }, (_, r) =>
  Array.from({ length: CALLS }, (_, c) => ({
    id: `r${r}c${c}`,
    toolName: c === 2 ? 'search' : 'get_invoice',
    args: c === 2 ? { q: `page ${r}` } : { invoice_id: `INV-${r % 7}` },
    result: { lines: `${r * 100}-${r * 100 + 99}` },
  })),
);

function withSession(option) {
  const session = new DoomLoopSession({ doomLoop: option });
  for (const round of script) {
    const calls = round.map(({ id, toolName, args }) => ({ id, toolName, args }));
    const { decisions } = session.onResponse({ calls });
    decisions.forEach((decision, i) => {
      if (decision.action === 'run') session.onResult(decision.id, round[i].result);
    });
  }
  session.free();
}

function withMonitor(config) {
  const monitor = new DoomLoopMonitor(config);
  script.forEach((round, r) => {
    monitor.declareRoundSync(r + 1, round.map(({ toolName, args }) => ({ toolName, keyMaterial: args })));
    const records = round.map(({ toolName, args }) => monitor.recordToolCallSync(toolName, args, r + 1));
    records.forEach((record, i) => {
      const action = record.verdict?.action;
      if (action !== 'block' && action !== 'stop') {
        monitor.recordToolResultSync(round[i].toolName, record.fingerprint, round[i].result, false, r + 1);
      }
    });
  });
  monitor.free();
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (fn) => {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e3; // µs
};

for (const [label, option] of [
  ['defaults', true],
  ['RECOMMENDED', RECOMMENDED_DOOM_LOOP_OPTION],
]) {
  const config = resolveDoomLoopOption(option);
  for (let i = 0; i < 5; i++) {
    withSession(option);
    withMonitor(config);
  }
  const session = [];
  const monitor = [];
  for (let i = 0; i < TRIALS; i++) {
    session.push(time(() => withSession(option)));
    monitor.push(time(() => withMonitor(config)));
  }
  const calls = ROUNDS * CALLS;
  const s = median(session) / calls;
  const m = median(monitor) / calls;
  console.log(
    `session ${label.padEnd(11)} ${s.toFixed(2)} µs/call; bare monitor ${m.toFixed(2)} µs/call; ` +
      `added ${(s - m).toFixed(2)} µs/call; ratio ${(s / m).toFixed(2)}×`,
  );
}
