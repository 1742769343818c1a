// The checks of `make release` (scripts/release.sh) on the folder of
// tarballs it wrote: each platform package unpacked as npm would, its
// manifest against its template (npm/<platform>/package.json), its binary's
// format and architecture read from the file's own headers (ELF: machine,
// static — no interpreter; Mach-O: CPU type, code signature, which macOS on
// arm64 requires; PE: machine, console subsystem) beside `file`'s verdict,
// then run where this machine can: linux-x64 natively, linux-arm64 under
// qemu-aarch64, win32-x64 under Wine if Wine starts it — `--version` naming
// its platform and the hook scenario (an identical failing command refused
// at the third call). darwin is checked by format only. Last, the main
// package and this machine's platform package installed into a scratch
// global prefix offline: `doomloop --version` answers natively.
//
// Usage: node scripts/check-release.mjs DIR     (exit 1 on any failure)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failingLoop } from '../tests/hooks/scenario.mjs';
import { platforms } from './platform-pkg.mjs';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/check-release.mjs DIR');
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'doomloop-release-check-'));
const { version } = JSON.parse(readFileSync(new URL('../js/package.json', import.meta.url), 'utf8'));

/** ELF: machine and whether it asks for an interpreter (dynamically linked). */
function elf(b) {
  assert.equal(b[4], 2, 'ELF: not 64-bit');
  const machine = { 0x3e: 'x64', 0xb7: 'arm64' }[b.readUInt16LE(18)] ?? `machine ${b.readUInt16LE(18)}`;
  const [phoff, phentsize, phnum] = [Number(b.readBigUInt64LE(32)), b.readUInt16LE(54), b.readUInt16LE(56)];
  const PT_INTERP = 3;
  const interp = Array.from({ length: phnum }, (_, i) => b.readUInt32LE(phoff + i * phentsize)).includes(PT_INTERP);
  return { os: 'linux', cpu: machine, detail: interp ? 'dynamically linked' : 'static' };
}

/** Mach-O (64-bit, little-endian): CPU type, executable, and whether it carries a code signature. */
function macho(b) {
  const cpu = { 0x01000007: 'x64', 0x0100000c: 'arm64' }[b.readUInt32LE(4)] ?? `cputype ${b.readUInt32LE(4)}`;
  assert.equal(b.readUInt32LE(12), 2, 'Mach-O: not an executable (MH_EXECUTE)');
  const LC_CODE_SIGNATURE = 0x1d;
  let signed = false;
  for (let i = 0, at = 32; i < b.readUInt32LE(16); i++, at += b.readUInt32LE(at + 4)) {
    if (b.readUInt32LE(at) === LC_CODE_SIGNATURE) signed = true;
  }
  return { os: 'darwin', cpu, detail: signed ? 'code-signed (ad hoc)' : 'UNSIGNED' };
}

/** PE: machine and subsystem. */
function pe(b) {
  const at = b.readUInt32LE(0x3c);
  assert.equal(b.toString('latin1', at, at + 4), 'PE\0\0', 'PE: no PE header');
  const cpu = { 0x8664: 'x64', 0xaa64: 'arm64' }[b.readUInt16LE(at + 4)] ?? `machine ${b.readUInt16LE(at + 4)}`;
  const subsystem = b.readUInt16LE(at + 24 + 68);
  return { os: 'win32', cpu, detail: subsystem === 3 ? 'console' : `subsystem ${subsystem}` };
}

/** The binary's platform from its headers. */
function format(path) {
  const b = readFileSync(path);
  if (b.readUInt32BE(0) === 0x7f454c46) return elf(b);
  if (b.readUInt32LE(0) === 0xfeedfacf) return macho(b);
  if (b.toString('latin1', 0, 2) === 'MZ') return pe(b);
  throw new Error(`${path}: neither ELF, Mach-O nor PE`);
}

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const host = `${process.platform}-${process.arch}`;
/** How this machine runs a binary of `platform`: [prefix words, how], or null. */
function runner(platform, binary) {
  if (platform === host) return [[], 'natively'];
  if (platform === 'linux-arm64' && has('qemu-aarch64')) return [['qemu-aarch64'], 'under qemu-aarch64'];
  if (platform === 'win32-x64' && has('wine')) {
    const env = { ...process.env, WINEDEBUG: '-all,err+module' };
    const probe = spawnSync('wine', [binary, '--version'], { encoding: 'utf8', env, timeout: 300_000 });
    if (probe.status === 0 && probe.stdout.startsWith('doomloop ')) return [['wine'], 'under Wine'];
    // Wine's own first-run chatter comes first: the loader's reason is the line to show.
    const lines = (probe.stderr || String(probe.error)).trim().split('\n');
    const why = lines.find((l) => /not found/.test(l)) ?? lines.at(-1) ?? `exit status ${probe.status}`;
    return [null, `format only: Wine did not run it (${why.replace(/^[0-9a-f]+:err:\w+:\w+ /, '')})`];
  }
  return [null, 'format only'];
}

/** --version and the hook scenario, run by `prefix` (qemu, wine, or nothing). */
function run(platform, binary, prefix) {
  const env = { ...process.env, WINEDEBUG: '-all' };
  const exec = (args, input = '') => {
    const [cmd, ...pre] = [...prefix, binary];
    return spawnSync(cmd, [...pre, ...args], { input, encoding: 'utf8', env, timeout: 120_000 });
  };
  const v = exec(['--version']);
  assert.equal(v.stdout.replace(/\r\n/g, '\n'), `doomloop ${version} (native ${platform})\n`, v.stderr);
  const state = mkdtempSync(join(work, `state-${platform}-`));
  const answers = failingLoop((turn, event, input) => {
    const r = exec(['hook', 'claude-code', '--state-dir', state], input);
    return { ...r, stdout: r.stdout.replace(/\r\n/g, '\n') };
  }, 's', 3);
  assert.deepEqual(answers, ['allow', 'allow', 'deny']);
  assert.ok(existsSync(join(state, 'claude-code-s.json')), 'no state file');
  return `--version ok, hook: ${answers.join(' ')}`;
}

const unpack = (tarball, name) => {
  const to = join(work, name);
  spawnSync('mkdir', ['-p', to]);
  const r = spawnSync('tar', ['-xzf', tarball, '-C', to]);
  assert.equal(r.status, 0, `tar ${tarball}`);
  return join(to, 'package');
};

const rows = [];
let failed = 0;
const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
for (const [platform, template] of Object.entries(platforms())) {
  const file = `${template.name}-${version}.tgz`;
  try {
    assert.ok(tarballs.includes(file), `${file} missing from ${dir}`);
    const pkg = unpack(join(dir, file), platform);
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
    assert.deepEqual([manifest.name, manifest.version, manifest.os, manifest.cpu], [template.name, version, template.os, template.cpu]);
    const binary = join(pkg, 'bin', template.os[0] === 'win32' ? 'doomloop.exe' : 'doomloop');
    const found = format(binary);
    assert.deepEqual([found.os, found.cpu], [template.os[0], template.cpu[0]], `${binary} is ${found.os}-${found.cpu}`);
    if (found.os === 'linux') assert.equal(found.detail, 'static');
    if (found.os === 'darwin' && found.cpu === 'arm64') assert.equal(found.detail, 'code-signed (ad hoc)');
    const described = spawnSync('file', ['-b', binary], { encoding: 'utf8' }).stdout.trim();
    const [prefix, how] = runner(platform, binary);
    const ran = prefix ? `run ${how}: ${run(platform, binary, prefix)}` : how;
    rows.push([platform, `${found.os}-${found.cpu}, ${found.detail}`, `${(statSync(binary).size / 1e6).toFixed(2)} MB`, ran, described]);
  } catch (error) {
    failed++;
    rows.push([platform, 'FAILED', '', error.message.split('\n')[0], '']);
  }
}

// The release as a user installs it: the main package and this machine's
// platform package into a scratch global prefix, offline.
const main = `doom-loop-wasm-${version}.tgz`;
try {
  assert.ok(tarballs.includes(main), `${main} missing from ${dir}`);
  const own = platforms()[host];
  const extra = own ? [join(dir, `${own.name}-${version}.tgz`)] : [];
  const prefix = join(work, 'prefix');
  const npm = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', join(dir, main), ...extra], { encoding: 'utf8' });
  assert.equal(npm.status, 0, npm.stderr);
  const v = spawnSync(join(prefix, 'bin/doomloop'), ['--version'], { encoding: 'utf8' });
  assert.equal(v.stdout, `doomloop ${version} (${own ? `native ${host}` : 'wasm'})\n`, v.stderr);
  rows.push(['main', 'doom-loop-wasm', `${(statSync(join(dir, main)).size / 1e6).toFixed(2)} MB`, `npm install -g (offline) with ${own ? own.name : 'no platform package'}: ${v.stdout.trim()}`, '']);
} catch (error) {
  failed++;
  rows.push(['main', 'FAILED', '', error.message.split('\n')[0], '']);
}

console.log(`release ${version}: ${tarballs.length} tarballs in ${dir}`);
for (const [platform, what, size, ran, described] of rows) {
  console.log(`  ${platform.padEnd(13)} ${what.padEnd(34)} ${size.padStart(8)}  ${ran}`);
  if (described) console.log(`  ${''.padEnd(13)} file: ${described}`);
}
console.log(`${rows.length - failed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
