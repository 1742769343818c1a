'use strict';
// `doom-loop-wasm/native`: where this machine's native `doomloop` is, if
// its platform package is installed. The native binaries ship the way
// esbuild's and biome's do: one package per platform
// (doom-loop-wasm-linux-x64, …-linux-arm64, …-darwin-x64, …-darwin-arm64,
// …-win32-x64; `os`/`cpu` fields), each an exact-version optional
// dependency of this package, so npm installs only the one that fits.
// The `doomloop` bin (cli.cjs) runs the binary found here, else the wasm
// CLI; scripts read `require('doom-loop-wasm/native').path` (docs/install.md).
// Nothing here starts a process or throws: a platform without a package,
// a package not installed or of another version is `path: null`.
const { existsSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

/** The platforms with a native package (npm's names: process.platform-process.arch). */
const PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'];

const platform = `${process.platform}-${process.arch}`;
const packageName = PLATFORMS.includes(platform) ? `doom-loop-wasm-${platform}` : null;

/** The installed platform package's binary, when its version is this package's. */
function find() {
  if (packageName === null) return null;
  try {
    const manifest = require.resolve(`${packageName}/package.json`);
    const { version } = JSON.parse(readFileSync(manifest, 'utf8'));
    if (version !== require('./package.json').version) return null;
    const binary = join(dirname(manifest), 'bin', process.platform === 'win32' ? 'doomloop.exe' : 'doomloop');
    return existsSync(binary) ? binary : null;
  } catch {
    return null;
  }
}

exports.platforms = PLATFORMS;
exports.platform = platform;
exports.packageName = packageName;
exports.path = find();
