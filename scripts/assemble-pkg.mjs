// Assembles pkg/ around the wasm-bindgen output: copies the hand-written
// shim, derives its CommonJS twin (the same source, `import`/`export`
// rewritten — so no logic is written twice), and writes package.json.
import { readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = process.argv[2] ?? join(root, 'pkg');
const js = (name) => join(root, 'js', name);

const shim = ['lower.js', 'api.js', 'adapter.js'];
for (const file of shim) copyFileSync(js(file), join(out, file));
copyFileSync(js('cli.mjs'), join(out, 'cli.mjs'));
copyFileSync(join(root, 'examples', 'billing-agent.json'), join(out, 'billing-agent.json'));
for (const file of ['node.mjs', 'workerd.mjs', 'browser.mjs', 'node.cjs']) {
  copyFileSync(js(`entries/${file}`), join(out, file));
}
copyFileSync(js('index.d.ts'), join(out, 'index.d.ts'));
copyFileSync(js('README.md'), join(out, 'README.md'));

/** One CommonJS module from the ESM shim files, in dependency order. */
function commonJs(files) {
  const exported = [];
  const bodies = files.map((file) => {
    const source = readFileSync(js(file), 'utf8');
    return source
      .replace(/^import [^;]+;\n/gm, '')
      .replace(/^export \{[^}]*\};\n/gm, '')
      .replace(/^export (async function|function|class|const|let) (\w+)/gm, (_, kind, name) => {
        exported.push(name);
        return `${kind} ${name}`;
      });
  });
  return `'use strict';\n${bodies.join('\n')}\nmodule.exports = { ${exported.join(', ')} };\n`;
}
writeFileSync(join(out, 'api.cjs'), commonJs(shim));

const version = JSON.parse(readFileSync(join(root, 'js', 'package.json'), 'utf8'));
writeFileSync(join(out, 'package.json'), `${JSON.stringify(version, null, 2)}\n`);
