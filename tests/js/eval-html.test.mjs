// `doomloop eval --html FILE` (issue 16): the page renders in headless
// Debian Chromium with no console error and no request, shows the totals of
// each option, and draws one cell per tool call of each session with a
// verdict, coloured by rung, with the calls after a stop as "would not have
// run". Needs target/release/doomloop (make conformance builds it) and
// /usr/bin/chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('../..', import.meta.url));
const native = join(root, 'target/release/doomloop');
const CHROMIUM = '/usr/bin/chromium';

/** A looping session (six identical failing calls) and a working one. */
function history(dir) {
  const failing = { toolName: 'get_invoice', args: '{"id":"INV-1"}' };
  writeFileSync(join(dir, 'loop.json'), JSON.stringify({
    rounds: Array.from({ length: 14 }, () => ({ calls: [failing], results: ['error: timeout'] })),
  }));
  writeFileSync(join(dir, 'paging.json'), JSON.stringify({
    rounds: Array.from({ length: 5 }, (_, i) => ({ calls: [{ toolName: 'scroll_down', args: '{}' }], results: [`page ${i}`] })),
  }));
  writeFileSync(join(dir, 'quiet.json'), JSON.stringify({ rounds: [{ calls: [{ toolName: 'ls', args: '{}' }] }] }));
}

test('eval --html writes one self-contained page that renders every session with a verdict', { timeout: 90_000 }, async () => {
  assert.ok(existsSync(native), `${native} is missing: cargo build --release -p doom-loop-cli --bin doomloop`);
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: bash scripts/install-tools.sh chromium`);
  const dir = mkdtempSync(join(tmpdir(), 'doomloop-html-'));
  const sessions = join(dir, 'sessions');
  mkdirSync(sessions);
  history(sessions);
  const page = join(dir, 'report.html');
  const r = spawnSync(native, ['eval', sessions, '--compare', '--html', page], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const html = readFileSync(page, 'utf8');
  assert.doesNotMatch(html, /https?:\/\//, 'the page loads nothing from anywhere');

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    timeout: 30_000,
  });
  try {
    const tab = await browser.newPage();
    const problems = [];
    tab.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
    tab.on('pageerror', (e) => problems.push(String(e)));
    await tab.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) return route.continue();
      problems.push(`request: ${url}`);
      return route.abort();
    });
    await tab.goto(pathToFileURL(page).href);
    const shown = await tab.evaluate(() => ({
      cards: [...document.querySelectorAll('.card h2')].map((h) => h.textContent),
      rows: [...document.querySelectorAll('.r .name')].map((n) => n.textContent),
      cells: [...document.querySelectorAll('.r')].map((row) => [...row.querySelectorAll('.track')].map((t) =>
        [...t.querySelectorAll('.cells i')].map((i) => i.className.replace('k-', '')).join(' '))),
      tail: document.querySelector('#sessions p.sub').textContent,
    }));
    assert.deepEqual(problems, []);
    assert.deepEqual(shown.cards, ['defaults', 'recommended']);
    // Worst first: the loop is stopped under both; paging only under the defaults.
    assert.match(shown.rows[0], /loop\.json$/);
    assert.match(shown.rows[1], /paging\.json$/);
    assert.equal(shown.rows.length, 2);
    // The reference's defaults stop at the 6th call (8 later calls would not
    // have run); RECOMMENDED refuses from the 3rd and stops at its own rung.
    assert.equal(shown.cells[0][0], 'none o b b b S x x x x x x x x');
    assert.match(shown.cells[0][1], /^none o b( b)* S( x)*$/);
    assert.equal(shown.cells[0][1].split(' ').length, 14);
    // The defaults (the reference's, fixed forever) block the paging agent;
    // the recommended option lets it page.
    assert.equal(shown.cells[1][0], 'none o b b b');
    assert.doesNotMatch(shown.cells[1][1], /\b[bS]\b/);
    assert.equal(shown.cells[1][1].split(' ').length, 5);
    assert.match(shown.tail, /1 sessions reached no verdict/);
  } finally {
    await browser.close();
  }
});

test('eval --sessions lists each session with a block or stop and what a stop would have saved', () => {
  const dir = mkdtempSync(join(tmpdir(), 'doomloop-sessions-'));
  history(dir);
  const r = spawnSync(native, ['eval', dir, '--compare', '--sessions'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /sessions with a block or stop: 2 of 3/);
  assert.match(r.stdout, /loop .*defaults: stop \(first block or stop at round 3; 8 calls saved\); recommended: stop/);
  assert.match(r.stdout, /paging .*defaults: block at round 3; recommended: -/);
});

test('eval --html draws every session whatever its tool names and file names hold', { timeout: 90_000 }, async () => {
  assert.ok(existsSync(native), `${native} is missing: cargo build --release -p doom-loop-cli --bin doomloop`);
  const dir = mkdtempSync(join(tmpdir(), 'doomloop-html-hostile-'));
  const sessions = join(dir, 'sessions');
  mkdirSync(sessions);
  // Each name, in a tool name (quoted by the stop's message) and in a file
  // name: comment openers that would put the tokenizer in a state where
  // the data element no longer ends at its own `</script>`, closers, markup,
  // entities and the two line terminators JavaScript once refused in strings.
  const names = ['<!--<script>', '<!--', '</script><script>document.title="owned"</script>', '<script>', '-->',
    '<img src=x onerror="document.title=1">', '&amp;&lt;', ']]>', 'a\u2028b\u2029c', 'get_invoice'];
  names.forEach((name, i) => {
    const failing = { toolName: name, args: '{"id":"INV-1"}' };
    writeFileSync(join(sessions, `${i} ${name.replaceAll('/', '_')}.json`), JSON.stringify({
      rounds: Array.from({ length: 8 }, () => ({ calls: [failing], results: ['error: timeout'] })),
    }));
  });
  const page = join(dir, 'report.html');
  const r = spawnSync(native, ['eval', sessions, '--html', page], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const html = readFileSync(page, 'utf8');
  const data = html.slice(html.indexOf('<script id="data"'), html.indexOf('</script>'));
  assert.doesNotMatch(data.slice(data.indexOf('>') + 1), /[<>&\u2028\u2029]/, 'the data holds no character the tokenizer reads');

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'], timeout: 30_000 });
  try {
    const tab = await browser.newPage();
    const problems = [];
    tab.on('pageerror', (e) => problems.push(String(e)));
    tab.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    await tab.goto(pathToFileURL(page).href);
    const shown = await tab.evaluate(() => ({
      title: document.title,
      cards: document.querySelectorAll('.card').length,
      rows: [...document.querySelectorAll('.r .name')].map((n) => n.textContent),
      images: document.querySelectorAll('img').length,
    }));
    assert.deepEqual(problems, []);
    assert.equal(shown.title, 'doomloop eval');
    assert.equal(shown.cards, 1);
    assert.equal(shown.images, 0);
    // Every session is drawn, its file name shown as written.
    assert.equal(shown.rows.length, names.length);
    names.forEach((name, i) => assert.ok(shown.rows.some((row) => row.includes(`${i} ${name.replaceAll('/', '_')}`)), `${name}: ${shown.rows}`));
  } finally {
    await browser.close();
  }
});
