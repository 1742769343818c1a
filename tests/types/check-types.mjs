// Compiles the type tests in this folder with tsc --strict under each module
// resolution a consumer may use (bundler, node16, nodenext):
//
// - reference-types.mts, opt-in.mts: the package's types against the
//   reference's declarations (reference-doom-loop.d.ts), with `lib: es2022`
//   and no ambient types at all — the package needs no DOM or Node types;
// - adapter.mts: the adapter against the real @openrouter/agent@0.8.0 and
//   zod, with @types/node and the DOM lib (the SDK's own declarations name
//   fetch's globals, some of which only the DOM lib declares).
//
// `doom-loop-wasm` resolves to js/index.d.ts (the file the package ships),
// or to `<dir>/index.d.ts` with `--types-dir <dir>` (e.g. pkg/).
// Prints one line per compilation and ends with `N passed, M failed`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const typesDirFlag = process.argv.indexOf('--types-dir');
const typesDir = typesDirFlag > 0 ? resolve(process.argv[typesDirFlag + 1]) : join(root, 'js');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

const MODES = [
  { resolution: 'bundler', module: 'esnext' },
  { resolution: 'node16', module: 'node16' },
  { resolution: 'nodenext', module: 'nodenext' },
];
const GROUPS = [
  { name: 'reference types', files: ['reference-types.mts', 'opt-in.mts'], types: [], lib: ['es2022'] },
  { name: 'adapter with @openrouter/agent', files: ['adapter.mts'], types: ['node'], lib: ['es2022', 'dom'] },
];

const scratch = mkdtempSync(join(tmpdir(), 'doom-loop-types-'));
let passed = 0;
let failed = 0;
try {
  for (const group of GROUPS) {
    for (const mode of MODES) {
      const config = join(scratch, `tsconfig.${group.files[0]}.${mode.resolution}.json`);
      writeFileSync(
        config,
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'es2022',
            lib: group.lib,
            types: group.types,
            typeRoots: [join(root, 'node_modules/@types')],
            module: mode.module,
            moduleResolution: mode.resolution,
            paths: { 'doom-loop-wasm': [join(typesDir, 'index.d.ts')] },
          },
          files: group.files.map((file) => join(here, file)),
        }),
      );
      const run = spawnSync(process.execPath, [tsc, '-p', config, '--pretty', 'false'], { cwd: root, encoding: 'utf8' });
      const label = `${group.name} (${mode.resolution})`;
      if (run.status === 0) {
        passed++;
        console.log(`ok   ${label}`);
      } else {
        failed++;
        console.log(`FAIL ${label}\n${run.stdout}${run.stderr}`);
      }
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
