// What a run cost: price lookup by model id, dollars for a usage, and the small sums around it.
import type { Usage } from '../types'
import { PRICES, type ModelPrice } from './prices'

export type { ModelPrice }

const DEFAULT_CONTEXT_WINDOW = 200_000

// Longest first, so `claude-opus-4-1` is tried before `claude-opus-4`.
const KEYS = Object.keys(PRICES).sort((a, b) => b.length - a.length)

const isIdChar = (c: string | undefined): boolean => c !== undefined && /[a-z0-9]/.test(c)

/**
 * The price of a model, or undefined when it is not in the table. Matches the bare id
 * (`claude-sonnet-4-5`), dated ids (`claude-sonnet-4-5-20250929`), `-latest` aliases, Bedrock ids
 * (`anthropic.claude-sonnet-4-5-20250929-v1:0`, `us.anthropic...`, inference-profile ARNs),
 * Vertex ids (`claude-sonnet-4-5@20250929`) and `[1m]` suffixes. The longest key that occurs in
 * the id as a whole segment wins: `claude-opus-4-1-20250805` is Opus 4.1, not Opus 4, and
 * `claude-opus-4-20250514` is Opus 4.
 */
export function priceOf(model: string): ModelPrice | undefined {
  const key = matchModelKey(model, KEYS)
  return key === undefined ? undefined : PRICES[key]
}

/**
 * The longest of `keys` (bare model ids) that occurs in `model` as a whole segment, the way
 * priceOf matches: dated ids, `-latest`, Bedrock and Vertex ids, `4.5` spelled with a dot.
 */
export function matchModelKey(model: string, keys: readonly string[]): string | undefined {
  // Lower case, and `4.5` written as `4-5` (some gateways spell versions with a dot).
  const id = model
    .trim()
    .toLowerCase()
    .replace(/(\d)\.(?=\d)/g, '$1-')
  if (!id) return undefined
  for (const key of [...keys].sort((a, b) => b.length - a.length)) {
    let at = id.indexOf(key)
    while (at !== -1) {
      if (!isIdChar(id[at - 1]) && !isIdChar(id[at + key.length])) return key
      at = id.indexOf(key, at + 1)
    }
  }
  return undefined
}

/** Estimated dollars for `usage` on `model`; null when the model's prices are unknown. */
export function estimateCost(model: string, usage: Usage): number | null {
  const p = priceOf(model)
  if (!p) return null
  return (
    (usage.inputTokens * p.input +
      usage.outputTokens * p.output +
      usage.cacheCreationTokens * p.cacheWrite +
      usage.cacheReadTokens * p.cacheRead) /
    1_000_000
  )
}

/** Dollars as a plain decimal with 4 places: `0.0421`, `0.0000` for 0. No currency sign. */
export function formatUsd(n: number): string {
  if (!Number.isFinite(n)) return '0.0000'
  const s = n.toFixed(4)
  return s === '-0.0000' ? '0.0000' : s
}

/** Adds an API response's usage (snake_case, fields may be null or missing) into `total`. */
export function addUsage(
  total: Usage,
  u: {
    input_tokens?: number | null
    output_tokens?: number | null
    cache_read_input_tokens?: number | null
    cache_creation_input_tokens?: number | null
  }
): void {
  total.inputTokens += u.input_tokens ?? 0
  total.outputTokens += u.output_tokens ?? 0
  total.cacheReadTokens += u.cache_read_input_tokens ?? 0
  total.cacheCreationTokens += u.cache_creation_input_tokens ?? 0
}

/**
 * Input tokens weighted by what they are billed at relative to plain input, with Anthropic's
 * published prompt-caching multipliers: a 5-minute cache write costs 1.25x input, a cache read
 * 0.1x. The same multipliers for every model, so the benchmark compares runs, not price lists.
 */
export function billedInputTokens(usage: Usage): number {
  return usage.inputTokens + 1.25 * usage.cacheCreationTokens + 0.1 * usage.cacheReadTokens
}

/** The model's context window in tokens; 200000 when the model is unknown. */
export function contextWindowOf(model: string): number {
  return priceOf(model)?.contextWindow ?? DEFAULT_CONTEXT_WINDOW
}
