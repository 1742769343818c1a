// Bundling a Worker the way wrangler does, for the workerd tests (the Worker
// example's and the gateway Worker template's): esbuild with wrangler's build
// conditions (so the package's `workerd` entry is picked), Node built-ins left
// to workerd's nodejs_compat, and each imported .wasm kept as a separate
// CompiledWasm module beside the bundle. The package is found the way `npm
// install` (file:../pkg) lays it out: WORK/node_modules/doom-loop-wasm -> pkg.
import { mkdirSync, symlinkSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { basename, join, resolve } from 'node:path';

/**
 * Bundles `entry` into `outdir/index.js`; returns the bundle's file name.
 * @param {{ entry: string, outdir: string, workDir: string, pkg: string }} options
 */
export async function bundleLikeWrangler({ entry, outdir, workDir, pkg }) {
  const modules = join(workDir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  symlinkSync(pkg, join(modules, 'doom-loop-wasm'), 'dir');
  const { build } = await import('esbuild');
  await build({
    entryPoints: [entry],
    outfile: join(outdir, 'index.js'),
    bundle: true,
    format: 'esm',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'], // wrangler's build conditions
    nodePaths: [modules],
    external: ['cloudflare:*', 'node:*'],
    logLevel: 'silent',
    plugins: [
      {
        // nodejs_compat: workerd provides the Node built-ins (`path` is `node:path`).
        name: 'node-builtins',
        setup(b) {
          const names = new Set(builtinModules);
          b.onResolve({ filter: /^[a-z_/]+$/ }, (args) => (names.has(args.path) ? { path: `node:${args.path}`, external: true } : undefined));
        },
      },
      {
        // What wrangler does with a CompiledWasm import: keep it a separate module next to the bundle.
        name: 'compiled-wasm',
        setup(b) {
          b.onResolve({ filter: /\.wasm$/ }, async (args) => {
            const source = resolve(args.resolveDir, args.path);
            await copyFile(source, join(outdir, basename(source)));
            return { path: `./${basename(source)}`, external: true };
          });
        },
      },
    ],
  });
  return 'index.js';
}
