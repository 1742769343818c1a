// The package as the playground reaches it: the detector's entry
// (`pkg/browser.mjs`: resolveDoomLoopOption, DoomLoopMonitor, and
// RECOMMENDED_DOOM_LOOP_OPTION where the package defines it) and the trace
// tooling (importTranscript / replayTranscript for every trace format).
//
// The tooling comes from the package's `doom-loop-wasm/replay` entry when
// its package.json has one; a build without it carries the tooling in its
// one (full) wasm module, reached through the entry's installed exports.

const encoder = new TextEncoder();
const isBinary = (x) => x instanceof ArrayBuffer || ArrayBuffer.isView(x);
const bytesOf = (x) => (typeof x === 'string' ? encoder.encode(x) : x instanceof Uint8Array ? x : new Uint8Array(x.buffer ?? x));

/** The browser file of the package's `./replay` export, if it has one. */
async function replayEntryPath() {
  const response = await fetch('./pkg/package.json');
  if (!response.ok) return undefined;
  let entry = (await response.json()).exports?.['./replay'];
  while (entry !== undefined && typeof entry !== 'string') entry = entry.browser ?? entry.import ?? entry.default;
  return entry;
}

/** The tooling API over the full module's wasm-bindgen exports (a package without a replay entry). */
async function overFullModule() {
  const { core } = await import('./pkg/core.js');
  if (typeof core?.importTranscript !== 'function') {
    throw new Error('this build of the package has no trace tooling (importTranscript)');
  }
  const text = (input) => typeof input === 'string' || isBinary(input);
  const option = (doomLoop) => (doomLoop === undefined ? undefined : JSON.stringify(doomLoop));
  return {
    importTranscript(input, { name = '<input>' } = {}) {
      return JSON.parse(
        text(input) ? core.importTranscriptBytes(bytesOf(input), name) : core.importTranscript(JSON.stringify(input)),
      );
    },
    replayTranscript(input, { doomLoop, name = '<input>' } = {}) {
      return JSON.parse(
        text(input)
          ? core.replayTranscriptBytes(bytesOf(input), name, option(doomLoop))
          : core.replayTranscript(JSON.stringify(input), option(doomLoop)),
      );
    },
  };
}

/**
 * Loads both modules: `{detector, tooling, recommended, source}` —
 * `recommended` is the package's RECOMMENDED_DOOM_LOOP_OPTION, or
 * undefined in a build that does not define it.
 */
export async function loadPackage() {
  const detector = await import('./pkg/browser.mjs');
  await detector.init();
  const path = await replayEntryPath().catch(() => undefined);
  let tooling;
  let source = 'the package’s main module';
  if (path !== undefined) {
    const entry = await import(`./pkg/${path.replace(/^\.\//, '')}`);
    if (typeof entry.importTranscript === 'function') {
      await entry.init?.();
      tooling = entry;
      source = 'doom-loop-wasm/replay';
    }
  }
  tooling ??= await overFullModule();
  const recommended = detector.RECOMMENDED_DOOM_LOOP_OPTION ?? tooling.RECOMMENDED_DOOM_LOOP_OPTION;
  return { detector, tooling, recommended, source };
}
