// The public API of the reference, `@openrouter/agent/doom-loop`
// (packages/agent/src/lib/doom-loop.ts of OpenRouterTeam/typescript-agent),
// declared by hand for the type tests in this folder: every exported type,
// constant, function and the DoomLoopMonitor class with its public members,
// written from that module's signatures (no implementation, no prose).
// What tsc would emit for the module's declarations, minus private members.

export type DoomLoopAction = 'observe' | 'steer' | 'escalate' | 'block' | 'stop';

export type DoomLoopDetectorKind =
  | 'tool-fingerprint'
  | 'server-tool-fingerprint'
  | 'text-repetition'
  | 'text-streak';

export interface DoomLoopVerdict {
  detector: DoomLoopDetectorKind;
  action: DoomLoopAction;
  streak: number;
  fingerprint: string;
  toolName?: string;
  message: string;
}

export interface DoomLoopCallRecord {
  fingerprint: string;
  streak: number;
  duplicateInRound: boolean;
  verdict?: DoomLoopVerdict;
}

export interface DoomLoopLadder {
  observe?: number | false;
  steer?: number | false;
  escalate?: number | false;
  block?: number | false;
  stop?: number | false;
}

export interface DoomLoopEscalationConfig {
  model?: string;
  advisor?: boolean | Record<string, unknown>;
  maxEscalations?: number;
}

export interface DoomLoopTextOptions {
  enabled?: boolean;
  maxPeriodTokens?: number;
  minRepeats?: number;
  minCoveredTokens?: number;
  maxWindowTokens?: number;
}

export interface DoomLoopConfig {
  ladder?: DoomLoopLadder;
  text?: boolean | DoomLoopTextOptions;
  escalation?: DoomLoopEscalationConfig;
}

export type DoomLoopOption = boolean | DoomLoopConfig;

export interface DoomLoopStreak {
  fingerprint: string;
  streak: number;
  roundFingerprints?: readonly string[];
  callStreaks?: Record<string, number>;
}

export interface DoomLoopSerializedState {
  tools: Record<string, DoomLoopStreak>;
  text?: DoomLoopStreak;
  stopVerdict?: DoomLoopVerdict;
  pendingSteer?: string[];
  escalationsUsed?: number;
}

export type LoopKeyResolution =
  | { kind: 'exempt' }
  | { kind: 'key'; keyMaterial: unknown }
  | { kind: 'fallback'; keyMaterial: unknown; warning: string };

export declare const DEFAULT_DOOM_LOOP_LADDER: Readonly<Required<DoomLoopLadder>>;
export declare const DEFAULT_MAX_ESCALATIONS = 2;

export interface ResolvedEscalationConfig {
  model?: string;
  advisor?: boolean | Record<string, unknown>;
  maxEscalations: number;
}

export interface ResolvedDoomLoopConfig {
  ladder: Required<DoomLoopLadder>;
  text: Required<DoomLoopTextOptions>;
  escalation: ResolvedEscalationConfig | null;
}

export declare function resolveDoomLoopOption(option: DoomLoopConfig | true): ResolvedDoomLoopConfig;
export declare function resolveDoomLoopOption(option: DoomLoopOption | undefined): ResolvedDoomLoopConfig | null;

export declare function resolveLoopKeyMaterial(loopKey: unknown, args: Record<string, unknown>): LoopKeyResolution;

export declare const MAX_CANONICALIZE_DEPTH = 64;

export declare function canonicalizeKeyMaterial(value: unknown): string;
export declare function fingerprintKeyMaterial(keyMaterial: unknown): Promise<string>;
export declare function fingerprintToolCall(toolName: string, keyMaterial: unknown): Promise<string>;

export interface TextRepetitionResult {
  repeats: number;
  periodTokens: number;
  coveredTokens: number;
  sample: string;
}

export declare function detectTextRepetition(
  text: string,
  options?: Partial<DoomLoopTextOptions>,
): TextRepetitionResult | null;

export declare function resolveLadderAction(
  ladder: Required<DoomLoopLadder>,
  streak: number,
  options: { allowBlock: boolean; allowEscalate?: boolean },
): DoomLoopAction | undefined;

export declare class DoomLoopMonitor {
  constructor(config: ResolvedDoomLoopConfig, initialState?: unknown);
  declareRound(round: number, calls: readonly { toolName: string; keyMaterial: unknown }[]): Promise<void>;
  canEscalate(): boolean;
  consumeEscalation(): void;
  getState(): DoomLoopSerializedState;
  restore(state: unknown): void;
  recordToolCall(
    toolName: string,
    keyMaterial: unknown,
    round: number,
    options?: {
      allowBlock?: boolean;
      detector?: Extract<DoomLoopDetectorKind, 'tool-fingerprint' | 'server-tool-fingerprint'>;
    },
  ): Promise<DoomLoopCallRecord>;
  resetTextStreak(): void;
  recordAssistantText(text: string): Promise<DoomLoopVerdict | undefined>;
}
