// The README's figures, generated from measurements, never drawn by hand.
//
//   node scripts/render-figures.mjs bench FILE     # FILE: `node --expose-gc benches/js/bench.mjs --json FILE`
//   node scripts/render-figures.mjs quality FILE   # FILE: `doomloop eval --compare --json DIR > FILE`
//   node scripts/render-figures.mjs peers FILE     # FILE: `bench-detectors.mjs --json FILE` (../shared/trajectories/peers)
//   node scripts/render-figures.mjs --check        # every docs/assets/<name>.json re-rendered = <name>.svg
//
// `bench` and `quality` write the numbers a figure shows to
// docs/assets/<name>.json (only what the figure needs: our own measurements,
// no recorded run) and the figure to docs/assets/<name>.svg. The SVG is a
// function of that JSON alone: no clock, no randomness, no fonts or network
// (system font stack); the same JSON gives the same bytes, which `--check`
// (and tests/docs/figures.test.mjs) verifies. Colours follow the reader's
// light or dark preference (`prefers-color-scheme`), on a panel of their own
// so text keeps its contrast on any page background.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ASSETS = join(root, 'docs/assets');

const STYLE = `
    .panel { fill: #ffffff; stroke: #d1d9e0; }
    .title { fill: #1f2328; font-size: 15px; font-weight: 600; }
    .text { fill: #1f2328; font-size: 12px; }
    .muted { fill: #59636e; font-size: 11px; }
    .grid { stroke: #d1d9e0; stroke-width: 1; }
    .unity { stroke: #59636e; stroke-width: 1.5; stroke-dasharray: 4 3; }
    .faster { fill: #1a7f37; }
    .slower { fill: #bc4c00; }
    .caught { fill: #0969da; }
    .interrupted { fill: #bc4c00; }
    .ok { fill: #ffffff; fill-opacity: 0.45; }
    @media (prefers-color-scheme: dark) {
      .panel { fill: #0d1117; stroke: #3d444d; }
      .title, .text { fill: #f0f6fc; }
      .muted { fill: #9198a1; }
      .grid { stroke: #3d444d; }
      .unity { stroke: #9198a1; }
      .faster { fill: #3fb950; }
      .slower { fill: #f0883e; }
      .caught { fill: #4493f8; }
      .interrupted { fill: #f0883e; }
      .ok { fill: #0d1117; fill-opacity: 0.45; }
    }`;

const escape = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (x) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
/** A rough width of text in the system sans-serif at `size` px (for layout only). */
const textWidth = (s, size = 12) => [...String(s)].length * size * 0.56;

function svg(width, height, title, body) {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="t">`,
    `  <title id="t">${escape(title)}</title>`,
    `  <style>${STYLE}`,
    `    text { font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }`,
    '  </style>',
    `  <rect class="panel" x="0.5" y="0.5" width="${width - 1}" height="${height - 1}" rx="6"/>`,
    ...body.map((line) => `  ${line}`),
    '</svg>',
    '',
  ].join('\n');
}

/** The benchmark figure: baseline ÷ package per operation, log scale, 1× marked. */
export function renderBench(data) {
  const rows = data.rows;
  const labelWidth = Math.ceil(Math.max(...rows.map((r) => textWidth(r.name))) + 24);
  const plot = 420;
  const width = labelWidth + plot + 70;
  const top = 62;
  const rowHeight = 26;
  const height = top + rows.length * rowHeight + 58;
  const lo = 0.25;
  const hi = Math.max(32, 2 ** Math.ceil(Math.log2(Math.max(...rows.map((r) => r.ratio)))));
  const x = (ratio) => labelWidth + (plot * Math.log(ratio / lo)) / Math.log(hi / lo);
  const body = [
    `<text class="title" x="16" y="26">doom-loop-wasm vs the reference's algorithm, in the same process</text>`,
    `<text class="muted" x="16" y="44">baseline time ÷ package time (higher is faster; log scale; dashed: the same speed)</text>`,
  ];
  const bottom = top + rows.length * rowHeight;
  for (let tick = lo; tick <= hi; tick *= 2) {
    const tx = x(tick).toFixed(1);
    body.push(`<line class="grid" x1="${tx}" y1="${top - 6}" x2="${tx}" y2="${bottom}"/>`);
    body.push(`<text class="muted" x="${tx}" y="${bottom + 14}" text-anchor="middle">${tick < 1 ? tick : num(tick)}×</text>`);
  }
  rows.forEach((row, i) => {
    const y = top + i * rowHeight;
    const start = x(1);
    const end = x(Math.min(Math.max(row.ratio, lo), hi));
    const [from, to] = end >= start ? [start, end] : [end, start];
    body.push(`<text class="text" x="${labelWidth - 10}" y="${y + 14}" text-anchor="end">${escape(row.name)}</text>`);
    body.push(`<rect class="${row.ratio >= 1 ? 'faster' : 'slower'}" x="${from.toFixed(1)}" y="${y + 3}" width="${Math.max(to - from, 1).toFixed(1)}" height="${rowHeight - 8}" rx="2"/>`);
    const labelX = end >= start ? to + 6 : from - 6;
    body.push(`<text class="text" x="${labelX.toFixed(1)}" y="${y + 14}"${end >= start ? '' : ' text-anchor="end"'}>${row.ratio.toFixed(1)}×</text>`);
  });
  const ux = x(1).toFixed(1);
  body.push(`<line class="unity" x1="${ux}" y1="${top - 6}" x2="${ux}" y2="${bottom}"/>`);
  const main = data.modules.find((m) => m.file === 'doom_loop_bg.wasm');
  const facts = [
    `Node ${data.node}, ${data.date}, medians of alternating rounds`,
    data.loadAverage !== undefined ? `load average ${data.loadAverage.toFixed(1)} on 2 cores` : null,
    main ? `detector module ${(main.gzip / 1000).toFixed(1)} kB gzipped` : null,
  ].filter(Boolean);
  body.push(`<text class="muted" x="16" y="${height - 14}">${escape(facts.join(' · '))}</text>`);
  return svg(width, height, 'doom-loop-wasm vs the reference algorithm: speed ratios', body);
}

/** The real-runs figure: per option, first interventions on unchanged output (loops) and on changing output (progress). */
export function renderQuality(data) {
  const rows = data.rows;
  const labelWidth = Math.ceil(Math.max(...rows.flatMap((r) => [textWidth(r.label), textWidth(r.note ?? '', 11)])) + 24);
  const plot = 360;
  const width = Math.ceil(Math.max(labelWidth + plot + 150, textWidth(data.title, 15) + 40, textWidth(data.footnote, 11) + 40));
  const top = 86;
  const barHeight = 16;
  const group = 2 * barHeight + 20;
  const height = top + rows.length * group + 40;
  const max = Math.max(...rows.flatMap((r) => [r.unchanged, r.changing]), 1);
  const scale = plot / max;
  const body = [
    `<text class="title" x="16" y="26">${escape(data.title)}</text>`,
    `<text class="muted" x="16" y="44">${escape(data.subtitle)}</text>`,
    `<rect class="caught" x="16" y="56" width="12" height="12" rx="2"/>`,
    `<text class="text" x="34" y="66">loops caught: the repeated call's results were all the same</text>`,
    `<rect class="interrupted" x="16" y="72" width="12" height="12" rx="2"/>`,
    `<text class="text" x="34" y="82">progress interrupted: its results were changing${data.legendOk === false ? '' : ' (shaded part: successful runs)'}</text>`,
  ];
  rows.forEach((row, i) => {
    const y = top + 8 + i * group;
    body.push(`<text class="text" x="${labelWidth - 10}" y="${y + barHeight - 2}" text-anchor="end">${escape(row.label)}</text>`);
    body.push(`<text class="muted" x="${labelWidth - 10}" y="${y + barHeight + 12}" text-anchor="end">${escape(row.note)}</text>`);
    [
      ['caught', row.unchanged, row.unchangedOk, y],
      ['interrupted', row.changing, row.changingOk, y + barHeight + 2],
    ].forEach(([cls, n, ok, by]) => {
      const w = n * scale;
      body.push(`<rect class="${cls}" x="${labelWidth}" y="${by}" width="${Math.max(w, 1).toFixed(1)}" height="${barHeight}" rx="2"/>`);
      if (ok > 0) body.push(`<rect class="ok" x="${(labelWidth + w - ok * scale).toFixed(1)}" y="${by}" width="${(ok * scale).toFixed(1)}" height="${barHeight}"/>`);
      const count = ok === null ? String(n) : `${n} (${ok} successful)`;
      body.push(`<text class="text" x="${(labelWidth + Math.max(w, 1) + 6).toFixed(1)}" y="${by + 12}">${count}</text>`);
    });
  });
  body.push(`<text class="muted" x="16" y="${height - 14}">${escape(data.footnote)}</text>`);
  return svg(width, height, data.title, body);
}

/** The figure's numbers from `doomloop eval --compare --json`: totals per option. */
export function qualityData(report, command) {
  const names = { defaults: 'reference defaults (doomLoop: true)', recommended: 'RECOMMENDED_DOOM_LOOP_OPTION' };
  const rows = report.options.map(({ label, total }) => ({
    label: names[label] ?? label,
    runs: total.runs,
    resolved: total.resolved,
    blocked: total.blocked,
    stopped: total.stopped,
    unchanged: total.firstIntervention.unchanged,
    unchangedOk: total.firstInterventionResolved.unchanged,
    changing: total.firstIntervention.changing,
    changingOk: total.firstInterventionResolved.changing,
    note: `${total.blocked} runs blocked, ${total.stopped} stopped`,
  }));
  const runs = rows[0]?.runs ?? 0;
  const sources = Object.keys(report.options[0]?.sources ?? {}).length;
  return {
    command,
    title: `First intervention (block or stop) on ${String(runs).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} recorded agent runs`,
    subtitle: `${sources} sources, each call's recorded result replayed; a run counts once, at its first intervention`,
    footnote: `${rows[0]?.resolved ?? 0} of the ${runs} runs successful · generated by scripts/render-figures.mjs from \`${command}\``,
    rows,
  };
}

/**
 * The same figure beside other agents' loop guards, from the peers harness's
 * `--json` (../shared/trajectories/peers/bench-detectors.mjs): its totals per
 * detector only, no run. Successful runs are not split by outcome there.
 */
export function peersData(report, command) {
  const names = {
    'pkg-default': 'doom-loop, reference defaults',
    'pkg-recommended+results': 'doom-loop, RECOMMENDED',
    package: 'doom-loop, reference defaults',
    recommended: 'doom-loop, RECOMMENDED',
  };
  // A rule's variants (masked digits, no thoughts, tool-only) stay in the harness's own table.
  const shown = report.detectors.filter((name) => !/-(masked|nothought|tool)$/.test(name));
  const rows = shown.map((name) => {
    const t = report.total[name];
    return {
      label: names[name] ?? name,
      runs: t.runs,
      resolved: t.resolved,
      unchanged: t.unchanged,
      unchangedOk: null,
      changing: t.changing,
      changingOk: null,
      note: `${t.interv} runs intervened (${t.intervRes} successful), ${t.halted} halted`,
    };
  });
  const runs = rows[0]?.runs ?? 0;
  const sources = Array.isArray(report.runs) ? new Set(report.runs.map((run) => run.source)).size : report.groups.length;
  return {
    command,
    title: `First intervention on ${String(runs).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} recorded runs: doom-loop beside other agents' loop guards`,
    subtitle: `${sources} agents' runs; the other agents' rules re-implemented from their source (PEERS.md of the data set); variants omitted`,
    legendOk: false,
    footnote: `${rows[0]?.resolved ?? 0} of the ${runs} runs successful · generated by scripts/render-figures.mjs from \`${command}\``,
    rows,
  };
}

const KINDS = {
  bench: { render: renderBench, data: (input) => ({ ...input, command: 'node --expose-gc benches/js/bench.mjs --json target/bench.json' }) },
  quality: { render: renderQuality, data: (input) => qualityData(input, 'doomloop eval --compare --json ../shared/trajectories') },
  peers: {
    render: renderQuality,
    data: (input) => peersData(input, 'node ../shared/trajectories/peers/bench-detectors.mjs --pkg pkg/node.cjs --data ../shared/trajectories --json FILE'),
  },
};

const stable = (value) => `${JSON.stringify(value, null, 2)}\n`;

function write(kind, inputFile) {
  const data = KINDS[kind].data(JSON.parse(readFileSync(inputFile, 'utf8')));
  writeFileSync(join(ASSETS, `${kind}.json`), stable(data));
  writeFileSync(join(ASSETS, `${kind}.svg`), KINDS[kind].render(data));
  console.log(`wrote docs/assets/${kind}.json and docs/assets/${kind}.svg`);
}

/** Every committed figure against its data; returns the names that differ. */
export function check(assets = ASSETS) {
  const stale = [];
  for (const file of readdirSync(assets).filter((f) => f.endsWith('.json')).sort()) {
    const kind = file.replace(/\.json$/, '');
    if (!KINDS[kind]) continue;
    const expected = KINDS[kind].render(JSON.parse(readFileSync(join(assets, file), 'utf8')));
    let actual = null;
    try {
      actual = readFileSync(join(assets, `${kind}.svg`), 'utf8');
    } catch {}
    if (actual !== expected) stale.push(kind);
  }
  return stale;
}

function main(argv) {
  if (argv[0] === '--check') {
    const stale = check();
    for (const kind of stale) console.log(`docs/assets/${kind}.svg does not match docs/assets/${kind}.json: run \`node scripts/render-figures.mjs --rerender\``);
    if (stale.length === 0) console.log('figures match their data');
    process.exitCode = stale.length === 0 ? 0 : 1;
  } else if (argv[0] === '--rerender') {
    // After a change to this script: every figure again from its committed data.
    for (const file of readdirSync(ASSETS).filter((f) => f.endsWith('.json'))) {
      const kind = file.replace(/\.json$/, '');
      if (KINDS[kind]) writeFileSync(join(ASSETS, `${kind}.svg`), KINDS[kind].render(JSON.parse(readFileSync(join(ASSETS, file), 'utf8'))));
    }
  } else if (KINDS[argv[0]] && argv[1]) {
    write(argv[0], argv[1]);
  } else {
    throw new Error('usage: render-figures.mjs bench FILE | quality FILE | peers FILE | --check | --rerender');
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
