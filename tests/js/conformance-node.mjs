// `node tests/js/conformance-node.mjs PATH...`: the corpus through the built
// package (pkg/) under Node; prints per-file tallies and, last,
// `N passed, M failed`; exits non-zero on any failure.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as api from '../../pkg/node.mjs';
import { runDocument } from './corpus.mjs';

const files = process.argv.slice(2).flatMap((p) =>
  statSync(p).isDirectory()
    ? readdirSync(p).filter((f) => f.endsWith('.json')).sort().map((f) => join(p, f))
    : [p],
);
let passed = 0;
let failed = 0;
for (const file of files) {
  const result = runDocument(api, JSON.parse(readFileSync(file, 'utf8')), file);
  for (const failure of result.failures.slice(0, 20)) console.log(`FAIL ${failure}`);
  console.log(`${file} (wasm): ${result.passed} passed, ${result.failures.length} failed`);
  passed += result.passed;
  failed += result.failures.length;
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
