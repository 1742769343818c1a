// The data every runtime runs (Node-compatible fs: used by the Node, Bun and
// Deno runners directly, and by the workerd/Chromium runners to hand it over
// as JSON text). Loaded from vectors/ at run time, never copied into the repo:
// the upstream vector file in full, plus the first cases of the reference
// corpus (vectors/FORMAT.md), enough to exercise every code path per runtime.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const vectors = new URL('../../vectors/', import.meta.url);

/** How many leading cases/traces of each reference file every runtime runs. */
export const SLICES = {
  fingerprints: 300,
  'monitor-traces': 40,
  text: 60,
  config: 60,
  'loop-keys': 60,
};

const read = (rel) => JSON.parse(readFileSync(fileURLToPath(new URL(rel, vectors)), 'utf8'));

export function loadData() {
  const documents = { 'upstream-vectors': read('upstream-vectors.json') };
  for (const [name, n] of Object.entries(SLICES)) {
    const doc = read(`reference/${name}.json`);
    const key = doc.traces ? 'traces' : 'cases';
    if (!Array.isArray(doc[key]) || doc[key].length < n) throw new Error(`reference/${name}.json: fewer than ${n} ${key}`);
    documents[name] = { ...doc, [key]: doc[key].slice(0, n) };
  }
  return { documents };
}

/** The same data as JSON text (lone surrogates stay escaped, JSON.parse restores them). */
export const loadDataText = () => JSON.stringify(loadData());
