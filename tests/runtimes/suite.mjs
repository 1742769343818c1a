// The runtime test suite of doom-loop-wasm: ONE runtime-neutral module (no
// fs, no node: imports) that every runner (Node ESM/CJS, Bun, Deno, workerd,
// Chromium, a Vite build) hands the package namespace it resolved by bare
// name through the exports map, plus the data it loaded (see data.mjs).
//
//   const summary = await runSuite(api, data, { runtime, browser });
//
// `browser: true` means the entry loads the .wasm asynchronously
// (browser.mjs): a sync call before `await init()` must throw a clear error,
// and the suite calls `init()` itself. Otherwise every function must work at
// import time, before any `init()`.
//
// Returns {runtime, passed, failed, failures: [string], sections: {name:
// {passed, failed}}}; it never throws (a crash is recorded as a failure).
import { runDocument } from '../js/corpus.mjs';

const INIT_ERROR = /not initialised yet.*await init\(\)/s;

export async function runSuite(api, data, { runtime = 'unknown', browser = false, extra = [], replay } = {}) {
  const summary = { runtime, passed: 0, failed: 0, failures: [], sections: {} };
  const tally = (section, passed, failures) => {
    const s = (summary.sections[section] ??= { passed: 0, failed: 0 });
    s.passed += passed;
    s.failed += failures.length;
    summary.passed += passed;
    summary.failed += failures.length;
    for (const f of failures) summary.failures.push(`[${section}] ${f}`);
  };
  const check = async (section, label, fn) => {
    try {
      const ok = await fn();
      if (ok === false) throw new Error('check returned false');
      tally(section, 1, []);
    } catch (error) {
      tally(section, 0, [`${label}: ${error?.stack ?? error}`]);
    }
  };

  try {
    // ---------------------------------------------------------- initialisation
    await check('init', 'the namespace exports init()', () => {
      expect(typeof api.init, 'function', 'typeof init');
    });
    if (browser) {
      await check('init', 'a sync call before init() throws a clear error', () => {
        let error;
        try {
          api.canonicalizeKeyMaterial({ a: 1 });
        } catch (e) {
          error = e;
        }
        if (!error) throw new Error('canonicalizeKeyMaterial worked before init()');
        if (!INIT_ERROR.test(error.message)) throw new Error(`unclear error: ${error.message}`);
      });
      await check('init', 'new DoomLoopMonitor before init() throws a clear error', () => {
        let error;
        try {
          new api.DoomLoopMonitor(null);
        } catch (e) {
          error = e;
        }
        if (!error || !INIT_ERROR.test(error.message)) throw new Error(`got ${error?.message ?? 'no error'}`);
      });
      await check('init', 'concurrent init() calls share one load', async () => {
        const a = api.init();
        const b = api.init();
        if (typeof a?.then !== 'function') throw new Error('init() does not return a promise');
        expect(a === b, true, 'init() === init()');
        await Promise.all([a, b]);
      });
    } else {
      await check('init', 'sync API works at import, before any init()', () => {
        expect(api.canonicalizeKeyMaterial({ b: 1, a: [true, null] }), '{"a":[true,null],"b":1}', 'jcs');
      });
    }
    let monitorBefore;
    await check('init', 'init() is idempotent', async () => {
      monitorBefore = new api.DoomLoopMonitor(api.resolveDoomLoopOption(true));
      monitorBefore.recordToolCallSync('search', { q: 'x' }, 1);
      const first = api.fingerprintKeyMaterialSync({ k: 'v' });
      const results = [await api.init(), await api.init(), await api.init()];
      expect(results.every((r) => r === undefined), true, 'init() resolves to undefined');
      expect(api.fingerprintKeyMaterialSync({ k: 'v' }), first, 'fingerprint after re-init');
      // A monitor made before the extra init() calls keeps its state: the
      // wasm instance was not replaced underneath it.
      expect(monitorBefore.recordToolCallSync('search', { q: 'x' }, 2).streak, 2, 'streak across init()');
      monitorBefore.free();
    });

    // ----------------------------------------------------- per-runtime checks
    await check('api', 'lone surrogates survive canonicalization', () => {
      expect(api.canonicalizeKeyMaterial({ '\ud800': '\udfff' }), '{"\\ud800":"\\udfff"}', 'jcs');
    });
    await check('api', 'lone surrogate in a tool name hashes as U+FFFD', () => {
      expect(
        api.fingerprintToolCallSync('a\ud800', { x: 1 }),
        api.fingerprintToolCallSync('a\ufffd', { x: 1 }),
        'fingerprint',
      );
    });
    await check('api', 'non-BMP text and escapes round-trip', () => {
      expect(api.canonicalizeKeyMaterial({ '🎉': 'é\u0000\n' }), '{"🎉":"é\\u0000\\n"}', 'jcs');
    });
    await check('api', 'a monitor blocks on the 3rd identical call', () => {
      const monitor = new api.DoomLoopMonitor(api.resolveDoomLoopOption(true));
      try {
        const verdicts = [1, 2, 3].map((round) => monitor.recordToolCallSync('search', { q: 'same' }, round));
        expect(verdicts.map((v) => v.streak).join(), '1,2,3', 'streaks');
        expect(verdicts[0].verdict, undefined, 'verdict of call 1');
        expect(verdicts[1].verdict?.action, 'observe', 'action of call 2');
        expect(verdicts[2].verdict?.action, 'block', 'action of call 3');
        expect(verdicts[2].verdict?.detector, 'tool-fingerprint', 'detector');
        expect(verdicts[2].verdict?.streak, 3, 'verdict streak');
        expect(verdicts[2].verdict?.toolName, 'search', 'verdict toolName');
      } finally {
        monitor.free();
      }
    });
    await check('api', 'async twins return promises with the sync results', async () => {
      const p = api.fingerprintToolCall('t', { a: 1 });
      expect(typeof p?.then, 'function', 'fingerprintToolCall returns a promise');
      expect(await p, api.fingerprintToolCallSync('t', { a: 1 }), 'fingerprintToolCall');
      expect(await api.fingerprintKeyMaterial([1]), api.fingerprintKeyMaterialSync([1]), 'fingerprintKeyMaterial');
      const monitor = new api.DoomLoopMonitor(api.resolveDoomLoopOption(true));
      try {
        const r = await monitor.recordToolCall('t', { a: 1 }, 1);
        expect(r.streak, 1, 'recordToolCall streak');
      } finally {
        monitor.free();
      }
    });
    await check('api', 'a freed monitor throws', () => {
      const monitor = new api.DoomLoopMonitor(api.resolveDoomLoopOption(true));
      monitor.free();
      monitor.free();
      let threw = false;
      try {
        monitor.canEscalate();
      } catch {
        threw = true;
      }
      expect(threw, true, 'threw after free()');
    });
    await check('api', 'state round-trips through getState/restore', () => {
      const config = api.resolveDoomLoopOption(true);
      const a = new api.DoomLoopMonitor(config);
      a.recordToolCallSync('read', { path: '/x' }, 1);
      a.recordToolCallSync('read', { path: '/x' }, 2);
      const state = JSON.parse(JSON.stringify(a.getState()));
      a.free();
      const b = new api.DoomLoopMonitor(config, state);
      try {
        expect(b.recordToolCallSync('read', { path: '/x' }, 3).verdict?.action, 'block', 'action after restore');
      } finally {
        b.free();
      }
    });
    await check('api', 'exported constants', () => {
      expect(api.MAX_CANONICALIZE_DEPTH, 64, 'MAX_CANONICALIZE_DEPTH');
      expect(api.DEFAULT_DOOM_LOOP_LADDER.block, 3, 'DEFAULT_DOOM_LOOP_LADDER.block');
      expect(Object.isFrozen(api.DEFAULT_DOOM_LOOP_LADDER), true, 'ladder frozen');
    });
    for (const [label, fn] of extra) await check('runtime', label, fn);

    // ------------------------------------------- the trace tooling (./replay)
    // `replay` is the `doom-loop-wasm/replay` namespace, imported but not
    // initialised. Node, Bun and Deno load the tooling on the main entry's
    // first replayTranscript; elsewhere that call needs the replay entry
    // initialised and says so until it is.
    if (replay) {
      const transcript = { rounds: Array.from({ length: 7 }, () => ({ calls: [{ toolName: 'get_invoice', args: { id: 7 } }] })) };
      if (browser) {
        await check('replay', "the main entry's replayTranscript before the replay entry's init() points to it", () => {
          let error;
          try {
            api.replayTranscript(transcript);
          } catch (e) {
            error = e;
          }
          if (!error) throw new Error('replayTranscript worked before the tooling was loaded');
          if (!/doom-loop-wasm\/replay/.test(error.message)) throw new Error(`unclear error: ${error.message}`);
        });
      }
      await check('replay', 'doom-loop-wasm/replay replays a transcript to its stop', async () => {
        await replay.init();
        const timeline = replay.replayTranscript(transcript);
        expect(timeline.stopVerdict?.action, 'stop', 'stopVerdict.action');
        expect(typeof timeline.text, 'string', 'typeof text');
      });
      await check('replay', "the main entry's replayTranscript gives the same timeline", () => {
        expect(JSON.stringify(api.replayTranscript(transcript)), JSON.stringify(replay.replayTranscript(transcript)), 'timeline');
      });
    }

    // --------------------------------------------------------------- corpus
    for (const [name, doc] of Object.entries(data.documents ?? {})) {
      const { passed, failures } = runDocument(api, doc, name);
      tally(name, passed, failures);
    }
  } catch (error) {
    tally('suite', 0, [`crashed: ${error?.stack ?? error}`]);
  }
  if (!summary.sections['upstream-vectors']?.passed) {
    tally('suite', 0, ['no upstream vectors were run']);
  }
  return summary;
}

function expect(actual, expected, label) {
  if (actual !== expected) {
    throw new Error(`${label}: got ${JSON.stringify(actual)} want ${JSON.stringify(expected)}`);
  }
}

/** Adds checks a runner made outside the runtime ([label, ok] pairs) to a summary. */
export function addRunnerChecks(summary, checks, section = 'runner') {
  for (const [label, ok] of checks) {
    const s = (summary.sections[section] ??= { passed: 0, failed: 0 });
    s[ok ? 'passed' : 'failed']++;
    summary[ok ? 'passed' : 'failed']++;
    if (!ok) summary.failures.push(`[${section}] ${label}`);
  }
  return summary;
}

/** A summary for a runner that could not run the suite at all. */
export const crashed = (runtime, error) => ({
  runtime,
  passed: 0,
  failed: 1,
  sections: {},
  failures: [`runner crashed: ${error?.stack ?? error}`],
});

/** The lines a runner prints; the last is `RUNTIME: N passed, M failed`. */
export function report(summary, maxFailures = 20) {
  const lines = summary.failures.slice(0, maxFailures).map((f) => `FAIL ${summary.runtime} ${f}`);
  if (summary.failures.length > maxFailures) {
    lines.push(`FAIL ${summary.runtime} … ${summary.failures.length - maxFailures} more`);
  }
  const sections = Object.entries(summary.sections)
    .map(([k, v]) => `${k} ${v.passed}${v.failed ? `/${v.failed} failed` : ''}`)
    .join(', ');
  lines.push(`  ${summary.runtime}: ${sections}`);
  lines.push(`${summary.runtime}: ${summary.passed} passed, ${summary.failed} failed`);
  return lines.join('\n');
}
