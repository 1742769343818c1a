// The built package's `doom-loop-wasm/replay` entry for Node, found through
// its exports map as Node's ESM loader resolves it (shared by the trace
// tests and the eval benchmark).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Imports the replay entry of the package in `pkg`. */
export async function loadReplayEntry(pkg) {
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  let entry = manifest.exports['./replay'];
  while (typeof entry !== 'string') entry = entry.node ?? entry.import ?? entry.default;
  return import(pathToFileURL(join(pkg, entry)));
}
