// The native platform packages (npm/<platform>/package.json: one per
// platform, `os`/`cpu` fields, its Rust target): writes one package folder
// around a built `doomloop` binary, at the main package's version, ready
// for `npm pack`. `make release` runs it for every cross-built target,
// tests/hooks/npm-native.test.mjs for the host's own release binary.
//
// Usage:
//   node scripts/platform-pkg.mjs --list                  "PLATFORM RUST_TARGET" per line
//   node scripts/platform-pkg.mjs --host                  this machine's platform, or nothing
//   node scripts/platform-pkg.mjs PLATFORM BINARY OUT     writes OUT/doom-loop-wasm-PLATFORM/, prints its path
import { chmodSync, copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { version } = JSON.parse(readFileSync(join(root, 'js/package.json'), 'utf8'));

/** The platform packages' templates, by platform name (npm/<platform>/). */
export function platforms() {
  const dirs = readdirSync(join(root, 'npm'), { withFileTypes: true }).filter((d) => d.isDirectory());
  return Object.fromEntries(dirs.map((d) => [d.name, JSON.parse(readFileSync(join(root, 'npm', d.name, 'package.json'), 'utf8'))]));
}

/** Writes the package folder for `platform` around `binary` under `out`; returns its path. */
export function writePackage(platform, binary, out) {
  const template = platforms()[platform];
  if (!template) throw new Error(`no platform package '${platform}' (npm/ has: ${Object.keys(platforms()).join(', ')})`);
  const { rustTarget, ...fields } = template;
  const exe = template.os[0] === 'win32' ? 'doomloop.exe' : 'doomloop';
  const dir = join(out, template.name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'bin'), { recursive: true });
  const { name, description, ...rest } = fields;
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name, version, description, ...rest }, null, 2)}\n`);
  const about = description.replace(/^The native doomloop binary for (.*?); .*$/, '$1');
  const readme = readFileSync(join(root, 'npm/README.md'), 'utf8')
    .replaceAll('RUST_TARGET', rustTarget).replaceAll('PLATFORM', platform).replaceAll('DESCRIPTION', about)
    .replaceAll('BINARY', exe).replaceAll('VERSION', version);
  writeFileSync(join(dir, 'README.md'), readme);
  for (const file of ['LICENSE-MIT', 'LICENSE-APACHE']) copyFileSync(join(root, file), join(dir, file));
  copyFileSync(binary, join(dir, 'bin', exe));
  chmodSync(join(dir, 'bin', exe), 0o755);
  return dir;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [first, binary, out] = process.argv.slice(2);
  const all = platforms();
  if (first === '--list') {
    for (const [platform, { rustTarget }] of Object.entries(all)) console.log(`${platform} ${rustTarget}`);
  } else if (first === '--host') {
    const host = `${process.platform}-${process.arch}`;
    if (all[host]) console.log(host);
  } else if (first && binary && out) {
    console.log(writePackage(first, binary, out));
  } else {
    console.error('usage: node scripts/platform-pkg.mjs --list | --host | PLATFORM BINARY OUT');
    process.exit(2);
  }
}
