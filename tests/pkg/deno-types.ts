// Deno, importing the built package by path (no package.json resolution),
// finds its types through the entries' `@ts-self-types` headers: checked by
// `deno check` in scripts/check-pkg.sh. Each @ts-expect-error fails the
// check if the types were not found (everything would be `any`).
import { fingerprintToolCallSync } from '../../pkg/node.mjs';
import { replayTranscript } from '../../pkg/replay-node.mjs';
import { DoomLoopMonitor } from '../../pkg/inline.mjs';
import { init } from '../../pkg/replay-browser.mjs';

const fingerprint: string = fingerprintToolCallSync('bash', { command: 'ls' });
// @ts-expect-error a fingerprint is a string
const wrong: number = fingerprintToolCallSync('bash', { command: 'ls' });
const rounds: number = replayTranscript({ rounds: [] }).totalRounds;
// @ts-expect-error totalRounds is a number
const wrongRounds: string = replayTranscript({ rounds: [] }).totalRounds;
const ready: Promise<void> = init();
export { DoomLoopMonitor, fingerprint, ready, rounds, wrong, wrongRounds };
