#!/usr/bin/env node
// `npx doomloop`: the package's CLI. The same subcommands, and the same
// output, as the native `doomloop` (both print what the core renders).
import { readFileSync } from 'node:fs';
import { fingerprintToolCallSync, canonicalizeKeyMaterial } from './node.mjs';
import { replayTranscript } from './replay-node.mjs';

const USAGE = `usage:
  doomloop replay [FILE] [--json]  replay a transcript (default: the billing-agent example)
  doomloop fingerprint TOOL JSON   print sha256(TOOL + "\\n" + jcs(JSON))
  doomloop canonicalize JSON       print the RFC 8785 canonical form of JSON`;

function main([command, ...args]) {
  switch (command) {
    case 'replay': {
      const file = args.find((a) => a !== '--json');
      const source = file ?? new URL('./billing-agent.json', import.meta.url);
      const timeline = replayTranscript(JSON.parse(readFileSync(source, 'utf8')));
      if (args.includes('--json')) {
        const { text, ...json } = timeline;
        console.log(JSON.stringify(json));
      } else {
        process.stdout.write(timeline.text);
      }
      return;
    }
    case 'fingerprint':
      if (args.length !== 2) break;
      console.log(fingerprintToolCallSync(args[0], JSON.parse(args[1])));
      return;
    case 'canonicalize':
      if (args.length !== 1) break;
      console.log(canonicalizeKeyMaterial(JSON.parse(args[0])));
      return;
    case '-h':
    case '--help':
    case 'help':
      console.log(USAGE);
      return;
  }
  console.error(USAGE);
  process.exitCode = 1;
}

try {
  main(process.argv.slice(2));
} catch (error) {
  console.error(`doomloop: ${error.message}`);
  process.exitCode = 1;
}
