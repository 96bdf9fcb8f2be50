// Anthropic list prices in US dollars per million tokens, and context windows in tokens.
//
// Source: Anthropic's pricing page (https://platform.claude.com/docs/en/about-claude/pricing)
// and the per-model overview pages (https://platform.claude.com/docs/en/models/<model>/overview).
// Checked 2026-12-03 (Sonnet 5.5 $2/$10 with $0.10 cache reads; Fable/Mythos 5.2, released 2026-11-09, $8/$40).
//
// - cacheWrite is the 5-minute-TTL cache write (1.25x input); 1-hour writes are not modelled.
// - cacheRead is the published cache-hit price. It is 0.1x input for most models, but lower for
//   some recent ones: Fable/Mythos 5.2 and 5.1 (0.025x), Opus 5.5 and Sonnet 5.5 (0.05x; the Sonnet 5.5
//   cut to $0.10 applies from 2026-10-07).
// - Long-context premium pricing (requests over 200K input tokens on the models that have one)
//   is not modelled, and neither are Batch, fast-mode, US-only-inference or data-residency rates.
// - Haiku 5.5 is priced by prompt length: the figures here are for prompts up to 100K tokens;
//   a turn whose prompt (input + cache reads + cache writes) is longer costs 5x as much, so an
//   estimate for it is a lower bound.
// - Retired and deprecated models stay listed: they are still served on some platforms (Bedrock,
//   Google Cloud), and old transcripts keep their cost.
//
// Keys are model ids without a date suffix. cost.ts matches them against dated ids, `-latest`
// aliases and Bedrock/Vertex ids (longest key wins).
//
// To update: add or change one line below (dollars per million tokens: base input, output,
// 5-minute cache write, cache hit; and the context window), update the "Checked" date above,
// then `npm test -- __tests__/cost.test.ts` (it checks every entry is a bare id and its cache
// prices are consistent) and `npm run build`. A model missing here still runs: its report shows
// tokens without a cost, cost-usd is empty, max-cost-usd cannot stop it, and its context window
// is taken to be 200,000 tokens.

/** Dollars per million tokens, and the context window in tokens. */
export interface ModelPrice {
  input: number
  output: number
  /** 5-minute-TTL cache write */
  cacheWrite: number
  cacheRead: number
  contextWindow: number
}

const M = 1_000_000
const K200 = 200_000

export const PRICES: Readonly<Record<string, ModelPrice>> = {
  // Fable / Mythos (Mythos is limited availability; same prices as the Fable of the same version)
  'claude-fable-5-2': { input: 8, output: 40, cacheWrite: 10, cacheRead: 0.2, contextWindow: M },
  'claude-mythos-5-2': { input: 8, output: 40, cacheWrite: 10, cacheRead: 0.2, contextWindow: M },
  'claude-fable-5-1': { input: 10, output: 50, cacheWrite: 12.5, cacheRead: 0.25, contextWindow: M },
  'claude-mythos-5-1': { input: 10, output: 50, cacheWrite: 12.5, cacheRead: 0.25, contextWindow: M },
  'claude-fable-5': { input: 10, output: 50, cacheWrite: 12.5, cacheRead: 1, contextWindow: M },
  'claude-mythos-5': { input: 10, output: 50, cacheWrite: 12.5, cacheRead: 1, contextWindow: M },

  // Opus
  'claude-opus-5-5': { input: 4, output: 20, cacheWrite: 5, cacheRead: 0.2, contextWindow: M },
  'claude-opus-5': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5, contextWindow: M },
  'claude-opus-4-8': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5, contextWindow: M },
  'claude-opus-4-7': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5, contextWindow: M },
  'claude-opus-4-6': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5, contextWindow: M },
  'claude-opus-4-5': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5, contextWindow: K200 },
  'claude-opus-4-1': { input: 15, output: 75, cacheWrite: 18.75, cacheRead: 1.5, contextWindow: K200 },
  'claude-opus-4': { input: 15, output: 75, cacheWrite: 18.75, cacheRead: 1.5, contextWindow: K200 },

  // Sonnet
  'claude-sonnet-5-5': { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.1, contextWindow: M },
  'claude-sonnet-5': { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.2, contextWindow: M },
  'claude-sonnet-4-6': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3, contextWindow: M },
  'claude-sonnet-4-5': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3, contextWindow: K200 },
  'claude-sonnet-4': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3, contextWindow: K200 },

  // Haiku
  'claude-haiku-5-5': { input: 0.1, output: 0.5, cacheWrite: 0.125, cacheRead: 0.01, contextWindow: M },
  'claude-haiku-4-5': { input: 1, output: 5, cacheWrite: 1.25, cacheRead: 0.1, contextWindow: K200 },

  // Claude 3.x
  'claude-3-7-sonnet': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3, contextWindow: K200 },
  'claude-3-5-sonnet': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3, contextWindow: K200 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cacheWrite: 1, cacheRead: 0.08, contextWindow: K200 },
  'claude-3-opus': { input: 15, output: 75, cacheWrite: 18.75, cacheRead: 1.5, contextWindow: K200 },
  'claude-3-haiku': { input: 0.25, output: 1.25, cacheWrite: 0.3, cacheRead: 0.03, contextWindow: K200 }
}
