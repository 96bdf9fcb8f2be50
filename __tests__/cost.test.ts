import { describe, expect, it } from '@jest/globals'
import { addUsage, billedInputTokens, contextWindowOf, estimateCost, formatUsd, priceOf } from '../src/agent/cost'
import { PRICES } from '../src/agent/prices'
import { emptyUsage, type Usage } from '../src/types'

const usage = (u: Partial<Usage>): Usage => ({ ...emptyUsage(), ...u })

describe('priceOf', () => {
  it('knows the default model', () => {
    expect(priceOf('claude-sonnet-4-6')).toEqual({
      input: 3,
      output: 15,
      cacheWrite: 3.75,
      cacheRead: 0.3,
      contextWindow: 1_000_000
    })
  })

  it('matches dated ids, -latest aliases and provider-prefixed ids', () => {
    const sonnet45 = PRICES['claude-sonnet-4-5']
    for (const id of [
      'claude-sonnet-4-5',
      'claude-sonnet-4-5-20250929',
      'claude-sonnet-4-5-latest',
      'anthropic.claude-sonnet-4-5-20250929-v1:0',
      'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/global.anthropic.claude-sonnet-4-5-20250929-v1:0',
      'claude-sonnet-4-5@20250929',
      'Claude-Sonnet-4-5',
      'claude-sonnet-4.5',
      ' claude-sonnet-4-5 '
    ]) {
      expect(priceOf(id)).toBe(sonnet45)
    }
    expect(priceOf('claude-3-5-haiku-latest')).toBe(PRICES['claude-3-5-haiku'])
    expect(priceOf('claude-opus-4-8[1m]')).toBe(PRICES['claude-opus-4-8'])
    expect(priceOf('claude-haiku-4-5@20251001')).toBe(PRICES['claude-haiku-4-5'])
  })

  it('lets the longest matching key win', () => {
    expect(priceOf('claude-opus-4-1')).toBe(PRICES['claude-opus-4-1'])
    expect(priceOf('claude-opus-4-1-20250805')).toBe(PRICES['claude-opus-4-1'])
    expect(priceOf('anthropic.claude-opus-4-1-20250805-v1:0')).toBe(PRICES['claude-opus-4-1'])
    expect(priceOf('claude-opus-4-20250514')).toBe(PRICES['claude-opus-4'])
    expect(priceOf('claude-opus-4-5-20251101')).toBe(PRICES['claude-opus-4-5'])
    expect(priceOf('claude-opus-4-5-20251101')?.input).toBe(5)
    expect(priceOf('claude-opus-4-20250514')?.input).toBe(15)
    expect(priceOf('claude-sonnet-4-20250514')).toBe(PRICES['claude-sonnet-4'])
    expect(priceOf('claude-fable-5-1')).toBe(PRICES['claude-fable-5-1'])
    expect(priceOf('claude-fable-5')).toBe(PRICES['claude-fable-5'])
    expect(priceOf('claude-sonnet-5-5')).toBe(PRICES['claude-sonnet-5-5'])
  })

  it('does not match a key inside a longer version number', () => {
    // `claude-opus-4` must not claim an id whose version goes on with more digits.
    expect(priceOf('claude-opus-45')).toBeUndefined()
    expect(priceOf('xclaude-sonnet-4-5')).toBeUndefined()
  })

  it('returns undefined for unknown models', () => {
    expect(priceOf('gpt-4o')).toBeUndefined()
    expect(priceOf('claude-2.1')).toBeUndefined()
    expect(priceOf('')).toBeUndefined()
  })

  it('has a sane table: every key bare, cache prices below input or at 1.25x', () => {
    for (const [key, p] of Object.entries(PRICES)) {
      expect(key).toMatch(/^claude-[a-z0-9-]+$/)
      expect(key).not.toMatch(/-\d{8}$/)
      expect(p.output).toBeGreaterThan(p.input)
      expect(p.cacheRead).toBeLessThan(p.input)
      expect(p.cacheWrite).toBeGreaterThan(p.input)
      expect(p.cacheWrite).toBeLessThanOrEqual(p.input * 1.25 + 1e-9)
      expect([200_000, 1_000_000]).toContain(p.contextWindow)
    }
  })
})

describe('estimateCost', () => {
  it('prices sonnet by hand: 1M input $3, 1M output $15, cache write $3.75, cache read $0.30', () => {
    expect(estimateCost('claude-sonnet-4-6', usage({ inputTokens: 1_000_000 }))).toBeCloseTo(3, 10)
    expect(estimateCost('claude-sonnet-4-6', usage({ outputTokens: 1_000_000 }))).toBeCloseTo(15, 10)
    expect(estimateCost('claude-sonnet-4-6', usage({ cacheCreationTokens: 1_000_000 }))).toBeCloseTo(3.75, 10)
    expect(estimateCost('claude-sonnet-4-6', usage({ cacheReadTokens: 1_000_000 }))).toBeCloseTo(0.3, 10)
    // 12,000 in, 3,000 out, 40,000 written, 200,000 read:
    // 0.036 + 0.045 + 0.15 + 0.06 = 0.291
    const mixed = usage({ inputTokens: 12_000, outputTokens: 3_000, cacheCreationTokens: 40_000, cacheReadTokens: 200_000 })
    expect(estimateCost('claude-sonnet-4-5-20250929', mixed)).toBeCloseTo(0.291, 10)
    expect(estimateCost('anthropic.claude-sonnet-4-5-20250929-v1:0', mixed)).toBeCloseTo(0.291, 10)
  })

  it('prices haiku 4.5 and opus 4.1 by hand', () => {
    // haiku 4.5: 100k in * $1 + 10k out * $5 = 0.1 + 0.05
    expect(estimateCost('claude-haiku-4-5-20251001', usage({ inputTokens: 100_000, outputTokens: 10_000 }))).toBeCloseTo(0.15, 10)
    // opus 4.1: 100k in * $15 + 10k out * $75 = 1.5 + 0.75
    expect(estimateCost('claude-opus-4-1@20250805', usage({ inputTokens: 100_000, outputTokens: 10_000 }))).toBeCloseTo(2.25, 10)
  })

  it('is 0 for no usage and null for an unknown model', () => {
    expect(estimateCost('claude-sonnet-4-6', emptyUsage())).toBe(0)
    expect(estimateCost('gpt-4o', usage({ inputTokens: 1000 }))).toBeNull()
    expect(estimateCost('my-local-model', emptyUsage())).toBeNull()
  })
})

describe('formatUsd', () => {
  it('prints 4 decimals, no sign, no currency', () => {
    expect(formatUsd(0)).toBe('0.0000')
    expect(formatUsd(0.0421)).toBe('0.0421')
    expect(formatUsd(0.04214999)).toBe('0.0421')
    expect(formatUsd(0.00005)).toBe('0.0001')
    expect(formatUsd(0.00001)).toBe('0.0000')
    expect(formatUsd(1.5)).toBe('1.5000')
    expect(formatUsd(123.456789)).toBe('123.4568')
    expect(formatUsd(-0)).toBe('0.0000')
    expect(formatUsd(-0.00001)).toBe('0.0000')
    expect(formatUsd(Number.NaN)).toBe('0.0000')
  })
})

describe('addUsage', () => {
  it('sums API usage into the total, counting null and missing fields as 0', () => {
    const total = emptyUsage()
    addUsage(total, { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 5, cache_creation_input_tokens: 7 })
    addUsage(total, { input_tokens: 10, output_tokens: 2, cache_read_input_tokens: null, cache_creation_input_tokens: null })
    addUsage(total, {})
    addUsage(total, { input_tokens: null, output_tokens: null, cache_read_input_tokens: 1000 })
    expect(total).toEqual({ inputTokens: 110, outputTokens: 22, cacheReadTokens: 1005, cacheCreationTokens: 7 })
  })
})

describe('billedInputTokens', () => {
  it('weights cache writes 1.25x and cache reads 0.1x', () => {
    expect(billedInputTokens(emptyUsage())).toBe(0)
    expect(billedInputTokens(usage({ inputTokens: 1000 }))).toBe(1000)
    expect(
      billedInputTokens(usage({ inputTokens: 1000, cacheCreationTokens: 2000, cacheReadTokens: 10_000, outputTokens: 999 }))
    ).toBeCloseTo(1000 + 2500 + 1000, 10)
  })
})

describe('contextWindowOf', () => {
  it('gives the table value, or 200000 when unknown', () => {
    expect(contextWindowOf('claude-sonnet-4-6')).toBe(1_000_000)
    expect(contextWindowOf('claude-sonnet-4-5-20250929')).toBe(200_000)
    expect(contextWindowOf('claude-haiku-4-5')).toBe(200_000)
    expect(contextWindowOf('gpt-4o')).toBe(200_000)
  })
})
