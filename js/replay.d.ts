// Types of `doom-loop-wasm/replay`: the trace tooling (the full module).
import type { Timeline, init as initDetector } from './index.js';

export type { Timeline } from './index.js';

/**
 * Loads the full wasm module (detector + trace tooling) in browsers and
 * bundlers; a no-op in Node, Bun, Deno and Workers, where the module loads
 * at import. Once it has resolved, the main entry's `replayTranscript`
 * works too.
 */
export declare function init(input?: Parameters<typeof initDetector>[0]): Promise<void>;

/**
 * Replays a transcript — `{doomLoop?, loopKeys?, rounds: [{text?, calls: [{toolName, args}]}]}`,
 * or a chat / Responses message list — through a fresh detector.
 */
export declare function replayTranscript(transcript: unknown): Timeline;
