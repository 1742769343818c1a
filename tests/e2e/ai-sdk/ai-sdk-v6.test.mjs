// The AI SDK adapter against `ai` 6.x (Node ≥ 20): see cases.mjs.
import * as ai from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { defineAiSdkSuite } from './cases.mjs';

defineAiSdkSuite({ label: `ai@${ai.VERSION ?? '6'}`, ai, createOpenAICompatible });
