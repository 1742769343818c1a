// The playground in headless Debian Chromium (playwright-core), served by
// scripts/serve-playground.mjs on 127.0.0.1 (ephemeral port). Needs pkg/
// (bash scripts/build-pkg.sh) and /usr/bin/chromium (bash scripts/install-tools.sh chromium).
//
//   node --test tests/playground/
//
// Writes tests/artifacts/playground.png and checks it by decoding the PNG:
// not blank, and the block and stop badge colours inside the timeline.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'node:http';
import { chromium } from 'playwright-core';
import { startPlaygroundServer } from '../../scripts/serve-playground.mjs';
import { decodePng, countColour, hexToRgb, variety } from './png.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ARTIFACTS = join(ROOT, 'tests', 'artifacts');
const SCREENSHOT = join(ARTIFACTS, 'playground.png');
const CHROMIUM = '/usr/bin/chromium';
const STEP_TIMEOUT_MS = 15_000;
const TEST_TIMEOUT_MS = 60_000;

// The badge colours of playground.css (--block, --stop).
const BLOCK = '#c2410c';
const STOP = '#b91c1c';

let server;
let browser;
let page;
let origin;
const problems = [];

before(async () => {
  for (const file of ['pkg/browser.mjs', 'pkg/doom_loop_bg.wasm', 'pkg/billing-agent.json']) {
    assert.ok(existsSync(join(ROOT, file)), `${file} is missing: build the package first (bash scripts/build-pkg.sh)`);
  }
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: bash scripts/install-tools.sh chromium`);
  server = await startPlaygroundServer({ port: 0 });
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
    timeout: 30_000,
  });
  const context = await browser.newContext({ viewport: { width: 1360, height: 1000 }, deviceScaleFactor: 1 });
  page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  // Loopback only: anything else is refused (and reported).
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin === origin || url.protocol === 'blob:' || url.protocol === 'data:') return route.continue();
    problems.push(`non-loopback request: ${url.href}`);
    return route.abort();
  });
  await page.addInitScript(() => {
    window.__wasmStreaming = 0;
    const original = WebAssembly.instantiateStreaming;
    WebAssembly.instantiateStreaming = (...args) => {
      window.__wasmStreaming++;
      return original.apply(WebAssembly, args);
    };
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  await page.goto(`${origin}/`, { waitUntil: 'load' });
  await page.waitForSelector('html[data-ready="true"]');
});

after(async () => {
  await browser?.close();
  if (server) {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  }
});

const texts = (selector) => page.locator(selector).allTextContents();
const count = (selector) => page.locator(selector).count();

/** A raw GET (no URL normalisation, unlike fetch), with a bounded wait. */
function rawGet(path) {
  return new Promise((ok, fail) => {
    const req = request({ host: '127.0.0.1', port: server.address().port, path, timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => ok([res.statusCode, res.headers['content-type']]));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', fail);
    req.end();
  });
}

test('the server: the page, the module and the wasm with the right types; nothing outside', { timeout: TEST_TIMEOUT_MS }, async () => {
  assert.deepEqual(await rawGet('/'), [200, 'text/html; charset=utf-8']);
  assert.deepEqual(await rawGet('/playground.mjs'), [200, 'text/javascript; charset=utf-8']);
  assert.deepEqual(await rawGet('/pkg/browser.mjs'), [200, 'text/javascript; charset=utf-8']);
  assert.deepEqual(await rawGet('/pkg/doom_loop_bg.wasm'), [200, 'application/wasm']);
  assert.deepEqual(await rawGet('/pkg/billing-agent.json'), [200, 'application/json; charset=utf-8']);
  for (const path of ['/../package.json', '/pkg/../package.json', '/pkg/%2e%2e/package.json', '/%2e%2e/Cargo.toml', '/nope.html']) {
    assert.equal((await rawGet(path))[0], 404, path);
  }
  assert.equal(server.address().address, '127.0.0.1');
  // The page compiled the wasm with instantiateStreaming (the glue only does so for application/wasm):
  // the detector module (main entry) and the trace tooling's (doom-loop-wasm/replay).
  assert.equal(await page.evaluate(() => window.__wasmStreaming), 2);
  assert.deepEqual(await rawGet('/pkg/doom_loop_full_bg.wasm'), [200, 'application/wasm']);
});

test('the billing example renders a timeline with block and stop', { timeout: TEST_TIMEOUT_MS }, async () => {
  assert.equal(await page.locator('#example').inputValue(), 'billing');
  const reached = await count('#timeline tbody.round:not(.not-reached)');
  assert.equal(reached, 6, 'rounds 1–6 replayed');
  assert.equal(await count('#timeline tbody.not-reached'), 2, 'rounds 7 and 8 greyed');
  assert.ok((await count('#timeline .badge-block')) >= 1, 'a block badge');
  assert.equal(await count('#timeline tr.call .badge-stop'), 1, 'one stop badge on a call');
  assert.ok((await count('#timeline .badge-observe')) >= 1, 'an observe badge');
  const banner = await page.locator('#timeline .stop-banner').textContent();
  assert.match(banner, /stopped: doom_loop at round 6 of 8/);
  assert.match(await page.locator('#summary').textContent(), /Stopped: doom_loop at round 6 of 8/);
  // Fingerprint prefixes, with the full fingerprint in the title.
  const code = page.locator('#timeline td.fingerprint code').first();
  assert.match(await code.textContent(), /^[0-9a-f]{8}…$/);
  assert.match(await code.getAttribute('title'), /^[0-9a-f]{64}$/);
  // Verdict text from the core.
  const verdicts = (await texts('#timeline td.verdict')).join('\n');
  assert.match(verdicts, /tool "get_invoice" was invoked in 3 consecutive rounds/);
  // The round-3 get_invoice call is the first block, with streak 3.
  const round3 = page.locator('#timeline tbody[data-round="3"] tr.call', { hasText: 'get_invoice' });
  assert.equal((await round3.locator('td.streak').textContent()).trim(), '3');
  assert.equal((await round3.locator('.badge').textContent()).trim(), 'block');
  // The terminal rendering agrees.
  assert.match(await page.locator('#timeline-text').textContent(), /stopped: doom_loop at round 6 of 8/);
  // The ladder editor shows the resolved defaults.
  assert.equal(await page.locator('#rung-block').inputValue(), '3');
  assert.equal(await page.locator('#rung-stop').inputValue(), '6');
  assert.ok(await page.locator('#rung-steer-off').isChecked());
});

test('the screenshot is not blank and shows the block and stop badge colours in the timeline', { timeout: TEST_TIMEOUT_MS }, async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.evaluate(() => window.scrollTo(0, 0));
  const box = await page.evaluate(() => {
    const r = document.getElementById('timeline').getBoundingClientRect();
    return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
  });
  await page.screenshot({ path: SCREENSHOT, fullPage: true, animations: 'disabled' });
  const image = decodePng(readFileSync(SCREENSHOT));
  assert.ok(image.width >= 1000 && image.height >= 800, `screenshot ${image.width}×${image.height}`);
  const { distinctColours, nonDominantShare } = variety(image);
  assert.ok(distinctColours > 50, `not blank: ${distinctColours} distinct colours`);
  assert.ok(nonDominantShare > 0.1, `not blank: ${(nonDominantShare * 100).toFixed(1)}% of pixels differ from the background`);
  const block = countColour(image, hexToRgb(BLOCK), { box });
  const stop = countColour(image, hexToRgb(STOP), { box });
  // A badge is ~75×20 px; several block badges, one stop badge plus the banner.
  assert.ok(block > 500, `block colour ${BLOCK} in the timeline: ${block} px`);
  assert.ok(stop > 500, `stop colour ${STOP} in the timeline: ${stop} px`);
  // And the ladder editor's legend shows them too, outside the timeline.
  assert.ok(countColour(image, hexToRgb(BLOCK)) > block, 'block colour also in the ladder editor');
});

test('turning the stop rung off re-runs the replay: no stop, and the resolver warns', { timeout: TEST_TIMEOUT_MS }, async () => {
  await page.locator('#rung-stop-off').check();
  await page.waitForFunction(() => !document.querySelector('#timeline .stop-marker'));
  assert.equal(await count('#timeline .badge-stop'), 0);
  assert.equal(await count('#timeline tbody.not-reached'), 0);
  assert.equal(await count('#timeline tbody.round'), 8);
  assert.match(await page.locator('#summary').textContent(), /Completed: all 8 rounds replayed, no stop/);
  assert.match(await page.locator('#resolver-warnings').textContent(), /block enabled with stop disabled/);
  assert.equal(await page.locator('#rung-stop-resolved').textContent(), 'off');
  assert.ok(await page.locator('#rung-stop').isDisabled());
  assert.equal(await page.locator('#example').inputValue(), 'custom', 'an edited example is custom');
  const doc = JSON.parse(await page.locator('#transcript').inputValue());
  assert.equal(doc.doomLoop.ladder.stop, false, 'the option is written into the transcript');

  // A number edit: block at 4 moves the first block to round 4; a dead rung is warned about.
  await page.locator('#rung-block').fill('4');
  const invoiceBadge = (round) => page.locator(`#timeline tbody[data-round="${round}"] tr.call`, { hasText: 'get_invoice' }).locator('.badge');
  await page.waitForFunction(() => !document.querySelector('#timeline tbody[data-round="3"] .badge-block'));
  assert.equal((await invoiceBadge(3).textContent()).trim(), 'observe');
  assert.equal((await invoiceBadge(4).textContent()).trim(), 'block');
  await page.locator('#rung-observe').fill('5');
  await page.waitForFunction(() => /can never fire/.test(document.getElementById('resolver-warnings').textContent));

  // Back to the defaults: the stop returns.
  await page.locator('#ladder-defaults').click();
  await page.waitForSelector('#timeline .stop-marker');
  assert.equal(await count('#timeline tr.call .badge-stop'), 1);
  assert.equal(await page.locator('#resolver-warnings').textContent(), '');
  assert.ok(!(await page.locator('#rung-stop-off').isChecked()));
});

test('state export and import: a round trip, a corrupt blob, and non-JSON', { timeout: TEST_TIMEOUT_MS }, async () => {
  const exported = JSON.parse(await page.locator('#state-export').textContent());
  assert.equal(exported.tools.get_invoice.streak, 6);

  await page.locator('#state-to-import').click();
  await page.locator('#state-restore').click();
  await page.waitForSelector('#state-restored:not([hidden])');
  assert.match(await page.locator('#restore-warnings').textContent(), /Restored without warnings/);
  assert.deepEqual(JSON.parse(await page.locator('#state-restored').textContent()), exported);

  // Valid JSON, not a state: the library's own warning, and an empty state.
  await page.locator('#state-input').fill('"corrupt"');
  await page.locator('#state-restore').click();
  await page.waitForFunction(() => /Ignoring invalid persisted doom-loop state/.test(document.getElementById('restore-warnings').textContent));
  assert.deepEqual(JSON.parse(await page.locator('#state-restored').textContent()), { tools: {} });

  // A partly bad blob: the bad entry is dropped, the good one kept.
  await page.locator('#state-input').fill(JSON.stringify({
    tools: { good: { fingerprint: 'a'.repeat(64), streak: 2 }, bad: { fingerprint: 42, streak: 'x' } },
  }));
  await page.locator('#state-restore').click();
  await page.waitForFunction(() => /"good"/.test(document.getElementById('state-restored').textContent));
  const restored = JSON.parse(await page.locator('#state-restored').textContent());
  assert.deepEqual(Object.keys(restored.tools), ['good']);
  assert.match(await page.locator('#restore-warnings').textContent(), /Dropped as invalid: tools\["bad"\]/);

  // Not JSON at all.
  await page.locator('#state-input').fill('{tools: oops');
  await page.locator('#state-restore').click();
  await page.waitForSelector('#restore-error:not([hidden])');
  assert.match(await page.locator('#restore-error').textContent(), /not valid JSON/);
});

test('the inline examples: case variants evade, fan-out blocks, the exempt poller completes', { timeout: TEST_TIMEOUT_MS }, async () => {
  await page.locator('#example').selectOption('case-variants');
  await page.waitForFunction(() => /Verdicts: none/.test(document.getElementById('summary').textContent));
  assert.match(await page.locator('#summary').textContent(), /Completed: all 8 rounds/);
  const streaks = await texts('#timeline tr.call td.streak');
  assert.ok(streaks.length === 8 && streaks.every((s) => s.trim() === '1'), `streaks ${streaks}`);
  const prefixes = new Set(await texts('#timeline td.fingerprint code'));
  assert.equal(prefixes.size, 2, 'two identities, one per spelling');

  await page.locator('#example').selectOption('fan-out');
  await page.waitForSelector('#timeline .stop-marker');
  assert.ok((await count('#timeline .badge-block')) >= 3);
  assert.ok((await count('#timeline .tag', )) >= 1);
  assert.match((await texts('#timeline .tag')).join(' '), /duplicate in round/);
  assert.match((await texts('#timeline td.verdict')).join('\n'), /same set of 3 parallel calls/);

  await page.locator('#example').selectOption('poller');
  await page.waitForFunction(() => /Completed/.test(document.getElementById('summary').textContent));
  assert.equal(await count('#timeline .badge-exempt'), 7);
  assert.equal(await count('#timeline .stop-marker'), 0);

  // Paste garbage: a clear error, then a fix re-runs.
  await page.locator('#transcript').fill('{"rounds": [');
  await page.waitForSelector('#transcript-error:not([hidden])');
  assert.match(await page.locator('#transcript-error').textContent(), /Not valid JSON/);
  await page.locator('#transcript').fill('{"rounds": 5}');
  await page.waitForFunction(() => /could not be replayed/.test(document.getElementById('replay-error').textContent));
  assert.ok(await page.locator('#transcript-error').isHidden());
  assert.match(await page.locator('#replay-error').textContent(), /could not be replayed/);

  await page.locator('#example').selectOption('billing');
  await page.waitForSelector('#timeline .stop-marker');
});

const FIXTURES = join(ROOT, 'trace', 'tests', 'fixtures');

test('a trace in another format: the format read, each call’s result, failed calls', { timeout: TEST_TIMEOUT_MS }, async () => {
  await page.locator('#transcript').fill(readFileSync(join(FIXTURES, 'anthropic.json'), 'utf8'));
  await page.waitForFunction(() => /Read as Anthropic Messages/.test(document.getElementById('format-status').textContent));
  assert.equal(
    await page.locator('#format-status').textContent(),
    'Read as Anthropic Messages: 4 rounds, 3 calls, 3 with a recorded result.',
  );
  const results = await texts('#timeline tr.call td.result');
  assert.deepEqual(results, ['failed 1 failed', 'edited', 'all passed']);
  assert.equal(await page.locator('#timeline tr.call td.result code').first().getAttribute('title'), '1 failed');

  // The edit-then-test example: the defaults block the third test run while its output changes.
  await page.locator('#example').selectOption('edit-then-test');
  await page.waitForFunction(() => /Read as Anthropic Messages/.test(document.getElementById('format-status').textContent));
  const pytest = page.locator('#timeline tr.call', { hasText: 'bash' });
  assert.equal(await pytest.count(), 6);
  assert.equal((await pytest.nth(2).locator('.badge').textContent()).trim(), 'block');
  assert.match(await pytest.nth(2).locator('td.result').textContent(), /3 failed, 9 passed/);
  assert.match(await pytest.nth(5).locator('td.result').textContent(), /12 passed/);
});

test('the option switch: reference defaults and RECOMMENDED_DOOM_LOOP_OPTION', { timeout: TEST_TIMEOUT_MS }, async () => {
  await page.locator('#example').selectOption('billing');
  await page.waitForSelector('#timeline .stop-marker');
  assert.equal(await page.locator('#option-preset').inputValue(), 'defaults');
  assert.equal((await page.locator('#option-json').textContent()).trim(), 'true');
  const recommended = page.locator('#option-preset option[value="recommended"]');
  if (await recommended.isDisabled()) {
    // A package without the constant says so instead of guessing an option.
    assert.match(await recommended.textContent(), /not in this build of the package/);
  } else {
    await page.locator('#option-preset').selectOption('recommended');
    await page.waitForFunction(() => document.getElementById('option-json').textContent.trim() !== 'true');
    const option = JSON.parse(await page.locator('#option-json').textContent());
    assert.equal(typeof option, 'object');
    assert.deepEqual(JSON.parse(await page.locator('#transcript').inputValue()).doomLoop, option);
    assert.equal(await page.locator('#option-preset').inputValue(), 'recommended');
    // The billing agent's identical timeouts are still a loop: refused from
    // the third call on (its eight calls end before RECOMMENDED's stop rung).
    await page.waitForSelector('#timeline .badge-block');
    await page.locator('#option-preset').selectOption('defaults');
    await page.waitForFunction(() => document.getElementById('option-json').textContent.trim() === 'true');
  }
  // A ladder edit makes it the transcript's own option.
  await page.locator('#rung-block').fill('4');
  await page.waitForFunction(() => document.getElementById('option-preset').value === 'custom');
  assert.match(await page.locator('#option-json').textContent(), /"block": 4/);
  await page.locator('#option-preset').selectOption('defaults');
  await page.waitForFunction(() => document.getElementById('option-json').textContent.trim() === 'true');
  assert.equal(await page.locator('#rung-block').inputValue(), '3');
});

test('JSON Lines pasted and gzip loaded are converted to the rounds format; unreadable files say why', { timeout: TEST_TIMEOUT_MS }, async () => {
  await page.locator('#transcript').fill(readFileSync(join(FIXTURES, 'chat-messages.jsonl'), 'utf8'));
  await page.waitForFunction(() => /converted to the rounds format/.test(document.getElementById('example-note').textContent));
  assert.match(await page.locator('#example-note').textContent(), /<paste>: read as OpenAI chat messages/);
  const doc = JSON.parse(await page.locator('#transcript').inputValue());
  assert.deepEqual(doc.rounds.map((r) => r.calls[0].result), ['running 10%', 'running 60%', 'done']);
  assert.deepEqual(await texts('#timeline tr.call td.result'), ['running 10%', 'running 60%', 'done']);
  assert.ok(await page.locator('#transcript-error').isHidden());

  const traj = gzipSync(readFileSync(join(FIXTURES, 'swe-agent.traj')));
  await page.locator('#transcript-file').setInputFiles({ name: 'run.traj.gz', mimeType: 'application/gzip', buffer: traj });
  await page.waitForFunction(() => /run\.traj\.gz: read as a SWE-agent trajectory/.test(document.getElementById('example-note').textContent));
  assert.equal(await count('#timeline tbody.round'), 5);
  assert.ok((await count('#timeline .badge-block')) >= 1, 'the third scroll_down is blocked by the defaults');

  const runs = readFileSync(join(FIXTURES, 'tau-bench-results.json'));
  await page.locator('#transcript-file').setInputFiles({ name: 'tau.json', mimeType: 'application/json', buffer: runs });
  await page.waitForFunction(() => /holds 2 runs|list of 2 runs/.test(document.getElementById('replay-error').textContent + document.getElementById('transcript-error').textContent));

  await page.locator('#example').selectOption('billing');
  await page.waitForSelector('#timeline .stop-marker');
});

test('accessibility basics: labelled controls, one h1, a lang', { timeout: TEST_TIMEOUT_MS }, async () => {
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea, button')]
      .filter((c) => !(c.labels?.length > 0 || c.getAttribute('aria-label') || (c.tagName === 'BUTTON' && c.textContent.trim())))
      .map((c) => c.id || c.outerHTML.slice(0, 60)),
  );
  assert.deepEqual(unlabelled, []);
  assert.equal(await count('h1'), 1);
  assert.equal(await page.locator('html').getAttribute('lang'), 'en');
  assert.equal(await page.locator('label[for="rung-block"]').textContent(), 'block threshold');
});

test('no page errors, console errors or non-loopback requests', () => {
  assert.deepEqual(problems, []);
});
