// `make bench-eval` (JS half): the whole shared trajectory set (961 runs)
// evaluated through the package's `evaluateTranscripts` under the reference
// defaults, in one process: a warm-up, then the median of five runs, for the
// .jsonl.gz bytes as a caller passes them (the shim inflates them with
// node:zlib where the runtime has it, in wasm elsewhere) and for text already
// decompressed (parse + import + replay + count only). Not a test: timings go
// to stdout.
import { readFileSync, readdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadReplayEntry } from '../../tests/js/replay-entry.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = join(root, 'pkg');
const shared = join(root, '../shared/trajectories');


const { evaluateTranscripts } = await loadReplayEntry(pkg);
const files = readdirSync(shared).filter((f) => f.endsWith('.jsonl.gz'));
const gz = files.map((f) => ({ name: f, data: readFileSync(join(shared, f)) }));

function median(label, make) {
  const times = [];
  let runs = 0;
  for (let i = 0; i < 6; i++) {
    const start = performance.now();
    const report = evaluateTranscripts(make());
    const elapsed = performance.now() - start;
    runs = report.options[0].total.runs;
    if (i > 0) times.push(elapsed);
  }
  times.sort((a, b) => a - b);
  console.log(`${label}: ${runs} runs in ${(times[2] / 1000).toFixed(2)} s (median of 5; min ${(times[0] / 1000).toFixed(2)} s)`);
}

median('evaluateTranscripts, .jsonl.gz bytes', () => gz);
const text = gz.map(({ name, data }) => ({ name, data: gunzipSync(data) }));
median('evaluateTranscripts, decompressed bytes', () => text);
