// What each model accepts beside its prices (prices.ts): the most output tokens one
// request may ask for, and whether it can return only its progress notes.
//
// Source: Anthropic's models overview and per-model pages
// (https://platform.claude.com/docs/en/about-claude/models/overview,
// https://platform.claude.com/docs/en/models/<model>/overview), "Max output". Checked 2026-12-03.
// Keys match model ids the way prices are matched (dated ids, Bedrock/Vertex ids; longest key wins).
import { matchModelKey } from './cost'

/** Max output tokens of one request. */
export const MAX_OUTPUT_TOKENS: Readonly<Record<string, number>> = {
  'claude-fable-5-2': 128_000,
  'claude-mythos-5-2': 128_000,
  'claude-fable-5-1': 128_000,
  'claude-mythos-5-1': 128_000,
  'claude-fable-5': 128_000,
  'claude-mythos-5': 128_000,
  'claude-opus-5-5': 128_000,
  'claude-opus-5': 128_000,
  'claude-opus-4-8': 128_000,
  'claude-opus-4-7': 128_000,
  'claude-opus-4-6': 128_000,
  'claude-opus-4-5': 64_000,
  'claude-opus-4-1': 32_000,
  'claude-opus-4': 32_000,
  'claude-sonnet-5-5': 128_000,
  'claude-sonnet-5': 128_000,
  'claude-sonnet-4-6': 64_000,
  'claude-sonnet-4-5': 64_000,
  'claude-sonnet-4': 64_000,
  'claude-haiku-5-5': 64_000,
  'claude-haiku-4-5': 64_000,
  'claude-3-7-sonnet': 64_000,
  'claude-3-5-sonnet': 8_192,
  'claude-3-5-haiku': 8_192,
  'claude-3-opus': 4_096,
  'claude-3-haiku': 4_096
}

/** For a model not listed: what every current model allows. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 64_000

/** The most `max_tokens` one request to `model` may ask for. */
export function maxOutputOf(model: string): number {
  const key = matchModelKey(model, Object.keys(MAX_OUTPUT_TOKENS))
  return key ? MAX_OUTPUT_TOKENS[key] : DEFAULT_MAX_OUTPUT_TOKENS
}

/**
 * Models that return their notes between tool calls with `thinking.display: "updates"`
 * (beta `thinking-display-updates-2026-08-18`): Claude Sonnet 5.5, Opus 5.5 and Fable 5.x
 * (https://platform.claude.com/docs/en/build-with-claude/thinking#controlling-thinking-display).
 * Any other model is sent no `thinking` field at all (its own default), since an unknown
 * display value or beta would be refused.
 */
const DISPLAY_UPDATES = [
  'claude-sonnet-5-5',
  'claude-opus-5-5',
  'claude-fable-5-2',
  'claude-mythos-5-2',
  'claude-fable-5-1',
  'claude-mythos-5-1',
  'claude-fable-5',
  'claude-mythos-5'
]

export function returnsProgressUpdates(model: string): boolean {
  return matchModelKey(model, DISPLAY_UPDATES) !== undefined
}
