import { describe, expect, test, afterEach } from '@jest/globals'
import { readSettings, DEFAULT_BLOCKED, DEFAULT_MODEL } from '../src/settings'

// readSettings reads INPUT_* from process.env through @actions/core, as on the runner.
const saved = { ...process.env }
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
  Object.assign(process.env, saved)
})
function withInputs(inputs: Record<string, string>, env: Record<string, string> = {}) {
  for (const k of Object.keys(process.env)) {
    if (k.startsWith('INPUT_') || k.startsWith('ANTHROPIC_') || k === 'MODEL_ID') delete process.env[k]
  }
  for (const [k, v] of Object.entries(inputs)) process.env[`INPUT_${k.toUpperCase()}`] = v
  Object.assign(process.env, env)
  return readSettings(process.env)
}

describe('settings', () => {
  test('defaults', () => {
    const s = withInputs({ 'anthropic-api-key': 'sk-ant-test-key-123456' })
    expect(s).toMatchObject({
      triggerPhrase: '/agent',
      model: DEFAULT_MODEL,
      maxTurns: 50,
      maxTokens: 32000,
      commandTimeoutMs: 120000,
      maxOutputChars: 50000,
      sandbox: 'user',
      timeoutMinutes: 30,
      maxCostUsd: undefined,
      blocked: DEFAULT_BLOCKED
    })
  })

  test('environment fallbacks: key, base URL, model; a base URL drops ANTHROPIC_AUTH_TOKEN', () => {
    const s = withInputs(
      {},
      {
        ANTHROPIC_API_KEY: 'sk-ant-env',
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
        MODEL_ID: 'glm-4.6',
        ANTHROPIC_AUTH_TOKEN: 'tok-123456789'
      }
    )
    expect(s.apiKey).toBe('sk-ant-env')
    expect(s.baseUrl).toBe('http://127.0.0.1:9')
    expect(s.model).toBe('glm-4.6')
    expect(s.authToken).toBeUndefined()
  })

  test('inputs win over the environment', () => {
    const s = withInputs({ 'anthropic-api-key': 'sk-input', model: 'claude-haiku-4-5' }, { ANTHROPIC_API_KEY: 'sk-env', MODEL_ID: 'x' })
    expect(s.apiKey).toBe('sk-input')
    expect(s.model).toBe('claude-haiku-4-5')
  })

  test('blocked-commands: one a line; explicitly empty allows all', () => {
    expect(withInputs({ 'anthropic-api-key': 'k', 'blocked-commands': 'curl\n  wget  \n\n' }).blocked).toEqual(['curl', 'wget'])
    expect(withInputs({ 'anthropic-api-key': 'k', 'blocked-commands': '' }).blocked).toEqual([])
  })

  test('changes: apply by default; apply, branch, pull-request, none; anything else fails naming the input', () => {
    expect(withInputs({ 'anthropic-api-key': 'k' }).changes).toBe('apply')
    for (const m of ['apply', 'branch', 'pull-request', 'none'])
      expect(withInputs({ 'anthropic-api-key': 'k', changes: m }).changes).toBe(m)
    expect(() => withInputs({ 'anthropic-api-key': 'k', changes: 'push' })).toThrow(
      /^Input changes must be one of "apply", "branch", "pull-request", "none", got "push"\.$/
    )
  })

  test("timeout-minutes takes decimals, as a workflow's does", () => {
    expect(withInputs({ 'anthropic-api-key': 'k', 'timeout-minutes': '0.5' }).timeoutMinutes).toBe(0.5)
    expect(withInputs({ 'anthropic-api-key': 'k' }).timeoutMinutes).toBe(30)
  })

  test('max-cost-usd takes decimals', () => {
    expect(withInputs({ 'anthropic-api-key': 'k', 'max-cost-usd': '2.50' }).maxCostUsd).toBe(2.5)
    expect(withInputs({ 'anthropic-api-key': 'k', 'max-cost-usd': '.5' }).maxCostUsd).toBe(0.5)
  })

  test.each([
    ['max-turns', '0'],
    ['max-turns', '-1'],
    ['max-turns', '2.5'],
    ['max-turns', 'ten'],
    ['max-tokens', '-5'],
    ['max-tokens', 'lots'],
    ['command-timeout', '0'],
    ['command-timeout', '1.5'],
    ['max-output-chars', '-100'],
    ['max-output-chars', 'lots'],
    ['timeout-minutes', '0'],
    ['timeout-minutes', '-1'],
    ['timeout-minutes', 'soon'],
    ['issue-number', 'abc'],
    ['max-cost-usd', '0'],
    ['max-cost-usd', '-1'],
    ['max-cost-usd', '-2'],
    ['max-cost-usd', 'abc'],
    ['max-cost-usd', 'free'],
    ['sandbox', 'docker']
  ])('%s=%s fails with one line naming the input', (name, value) => {
    expect(() => withInputs({ 'anthropic-api-key': 'k', [name]: value })).toThrow(new RegExp(`^Input ${name} `))
    try {
      withInputs({ 'anthropic-api-key': 'k', [name]: value })
    } catch (e) {
      expect((e as Error).message).not.toContain('\n')
    }
  })

  test('a missing key names the input', () => {
    expect(() => withInputs({})).toThrow(/^Input anthropic-api-key is required/)
  })

  test('effort: empty is the model default; a level is kept; anything else fails naming the input', () => {
    expect(withInputs({ 'anthropic-api-key': 'sk-ant-test-key-123456' }).effort).toBeUndefined()
    expect(withInputs({ 'anthropic-api-key': 'sk-ant-test-key-123456', effort: 'medium' }).effort).toBe('medium')
    expect(() => withInputs({ 'anthropic-api-key': 'sk-ant-test-key-123456', effort: 'extreme' })).toThrow(/^Input effort must be one of/)
  })

  test('defaults to the current Sonnet and 32000 max tokens', () => {
    expect(DEFAULT_MODEL).toBe('claude-sonnet-5-5')
    expect(withInputs({ 'anthropic-api-key': 'sk-ant-test-key-123456' }).maxTokens).toBe(32000)
  })
})
