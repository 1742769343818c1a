// The package as the playground reaches it: the detector's browser entry
// (`doom-loop-wasm`: resolveDoomLoopOption, DoomLoopMonitor,
// RECOMMENDED_DOOM_LOOP_OPTION) and the trace tooling's
// (`doom-loop-wasm/replay`: importTranscript / replayTranscript for every
// trace format), each with its own wasm module.

/** Loads both modules: `{detector, tooling, recommended}`. */
export async function loadPackage() {
  const [detector, tooling] = await Promise.all([import('./pkg/browser.mjs'), import('./pkg/replay-browser.mjs')]);
  await Promise.all([detector.init(), tooling.init()]);
  return { detector, tooling, recommended: detector.RECOMMENDED_DOOM_LOOP_OPTION };
}
