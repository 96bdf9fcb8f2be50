// Prompt caching through the built action, against the fake Messages API (which
// models prompt caching in the usage it reports and answers 400 to more than
// four cache_control breakpoints, like the real API).
import { afterAll, describe, expect, it } from '@jest/globals'
import { existsSync } from 'node:fs'
import { bash, startFakeAnthropic, text, type RecordedRequest, type Reply, type FakeAnthropicOptions } from './helpers/fake-anthropic'
import { startFakeGitHub } from './helpers/fake-github'
import { cleanupRuns, runAction } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { withCacheBreakpoints } from '../src/agent/cache'
import type { MessageCreateParams } from '../src/types'

afterAll(() => cleanupRuns())

const KEY = 'sk-ant-caching-test-0000000000'

async function runWith(script: Reply[], inputs: Record<string, string> = {}, fakeOpts: FakeAnthropicOptions = {}) {
  const anthropic = await startFakeAnthropic(script, fakeOpts)
  const github = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  try {
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent count some numbers', issueNumber: 12 }),
      inputs: { 'anthropic-api-key': KEY, sandbox: 'none', ...inputs },
      env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_API_URL: github.url }
    })
    return { run, requests: anthropic.requests, github }
  } finally {
    await anthropic.close()
    await github.close()
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any
const hasCC = (b: Json): boolean => b !== null && typeof b === 'object' && b.cache_control != null

/** Where a request's cache_control breakpoints are. */
function breakpointsOf(body: Json) {
  const tools = (body.tools ?? []).filter(hasCC).length
  const system = Array.isArray(body.system) ? body.system.filter(hasCC).length : 0
  const perMessage = (body.messages ?? []).map((m: Json) => (Array.isArray(m.content) ? m.content.filter(hasCC).length : 0))
  const messages = perMessage.reduce((a: number, b: number) => a + b, 0)
  return { tools, system, messages, perMessage, total: tools + system + messages + (body.cache_control != null ? 1 : 0) }
}

const usageOf = (r: RecordedRequest) => {
  expect(r.usage).toBeDefined()
  return r.usage as NonNullable<RecordedRequest['usage']>
}

/** The action's four usage outputs equal the sums of what the fake reported for the requests it answered. */
function expectUsageOutputs(outputs: Record<string, string>, requests: RecordedRequest[]): void {
  const answered = requests.filter(r => r.status === 200)
  const sum = (k: 'input_tokens' | 'output_tokens' | 'cache_read_input_tokens' | 'cache_creation_input_tokens') =>
    answered.reduce((n, r) => n + usageOf(r)[k], 0)
  expect(outputs['input-tokens']).toBe(String(sum('input_tokens')))
  expect(outputs['output-tokens']).toBe(String(sum('output_tokens')))
  expect(outputs['cache-read-tokens']).toBe(String(sum('cache_read_input_tokens')))
  expect(outputs['cache-creation-tokens']).toBe(String(sum('cache_creation_input_tokens')))
}

describe('prompt caching, through the built action', () => {
  it('marks every request, and each turn reads all earlier turns from the cache', async () => {
    const script = [...[1, 2, 3, 4, 5].map(k => bash(`seq ${k * 1000} ${k * 1000 + 300}`)), text('Counted.')]
    const { run, requests } = await runWith(script)
    expect(run.code).toBe(0)
    expect(run.outputs['exit-reason']).toBe('end_turn')
    expect(run.outputs.turns).toBe('6')
    expect(requests).toHaveLength(6)

    for (const r of requests) {
      expect(r.error).toBeUndefined()
      expect(r.status).toBe(200)
      const bp = breakpointsOf(r.body)
      expect(bp.total).toBeGreaterThanOrEqual(2)
      expect(bp.total).toBeLessThanOrEqual(4)
      // the system prompt is a breakpoint (it caches the tool definitions before it too)
      expect(r.body.system.at(-1).cache_control).toEqual({ type: 'ephemeral' })
      // the newest message is one
      expect(r.body.messages.at(-1).content.at(-1).cache_control).toEqual({ type: 'ephemeral' })
    }

    const usage = requests.map(usageOf)
    expect(usage[0].cache_read_input_tokens).toBe(0)
    expect(usage[0].cache_creation_input_tokens).toBeGreaterThan(0)
    for (let i = 1; i < usage.length; i++) {
      // more is read every turn ...
      expect(usage[i].cache_read_input_tokens).toBeGreaterThan(usage[i - 1].cache_read_input_tokens)
      // ... namely everything the turn before had read or written: only the new turn is written
      expect(usage[i].cache_read_input_tokens).toBeGreaterThanOrEqual(
        usage[i - 1].cache_read_input_tokens + usage[i - 1].cache_creation_input_tokens
      )
      // what is written is no more than what this request added to the last one
      const total = (u: (typeof usage)[number]) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
      expect(usage[i].cache_creation_input_tokens).toBeLessThanOrEqual(
        total(usage[i]) - total(usage[i - 1]) + usage[i - 1].input_tokens + 1
      )
    }
    expectUsageOutputs(run.outputs, requests)
    // the report shows the cache figures
    expect(run.summary).toMatch(/cache: [\d,]+ read, [\d,]+ written/)
  })

  it('stays within four breakpoints with several tool calls a turn and a long run', async () => {
    const many = bash('echo one', 'echo two', 'echo three', 'echo four', 'echo five')
    const withText: Reply = {
      content: [
        { type: 'text', text: 'Looking around first.' },
        { type: 'tool_use', name: 'bash', input: { command: 'ls' } },
        { type: 'tool_use', name: 'bash', input: { command: 'pwd' } }
      ],
      stop_reason: 'tool_use'
    }
    const script = [many, withText, ...Array.from({ length: 10 }, (_, k) => bash(`echo turn ${k}`)), many, text('All done.')]
    const { run, requests } = await runWith(script, { 'max-turns': '20' })
    expect(run.code).toBe(0)
    expect(run.outputs['exit-reason']).toBe('end_turn')
    expect(requests).toHaveLength(script.length)
    for (const r of requests) {
      expect(r.status).toBe(200)
      const bp = breakpointsOf(r.body)
      expect(bp.total).toBeLessThanOrEqual(4)
      expect(bp.messages).toBeLessThanOrEqual(2)
      // breakpoints only on user messages (the newest two), never inside the history in between
      bp.perMessage.forEach((n: number, i: number) => {
        if (n > 0) expect(r.body.messages[i].role).toBe('user')
      })
    }
    const reads = requests.map(r => usageOf(r).cache_read_input_tokens)
    for (let i = 1; i < reads.length; i++) expect(reads[i]).toBeGreaterThan(reads[i - 1])
    expectUsageOutputs(run.outputs, requests)
  })

  it('below the minimum cacheable length nothing is cached, and caching starts once the prompt is long enough', async () => {
    // The real API caches no prefix shorter than 1024 tokens (Sonnet, Opus).
    const script = [...[1, 2, 3, 4, 5, 6].map(k => bash(`seq ${k * 1000} ${k * 1000 + 600}`)), text('Done.')]
    const { run, requests } = await runWith(script, {}, { minCacheableTokens: 1024 })
    expect(run.code).toBe(0)
    const usage = requests.map(usageOf)
    expect(usage[0].cache_read_input_tokens + usage[0].cache_creation_input_tokens).toBe(0)
    expect(usage.at(-1)?.cache_read_input_tokens).toBeGreaterThan(1024)
    const firstWrite = usage.findIndex(u => u.cache_creation_input_tokens > 0)
    expect(firstWrite).toBeGreaterThan(0)
    for (let i = firstWrite + 1; i < usage.length; i++) expect(usage[i].cache_read_input_tokens).toBeGreaterThan(0)
    expectUsageOutputs(run.outputs, requests)
    expect(existsSync(run.outputs.transcript)).toBe(true)
  })
})

describe('withCacheBreakpoints', () => {
  const base = (messages: MessageCreateParams['messages']): MessageCreateParams => ({
    model: 'claude-sonnet-4-6',
    max_tokens: 100,
    system: 'You are a test.',
    tools: [{ name: 'bash', description: 'Run a shell command.', input_schema: { type: 'object', properties: {} } }],
    messages
  })

  it('marks the system prompt and the last block of the two newest user messages, without touching the history', () => {
    const messages: MessageCreateParams['messages'] = [
      { role: 'user', content: 'task' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'bash', input: { command: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'x' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'b', name: 'bash', input: { command: 'pwd' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'b', content: 'y' }] }
    ]
    const before = structuredClone(messages)
    const out = withCacheBreakpoints(base(messages))
    expect(messages).toEqual(before)
    expect(breakpointsOf(out)).toMatchObject({ system: 1, messages: 2, tools: 0, total: 3 })
    expect(breakpointsOf(out).perMessage).toEqual([0, 0, 1, 0, 1])
    expect(out.system).toEqual([{ type: 'text', text: 'You are a test.', cache_control: { type: 'ephemeral' } }])
  })

  it('turns a string message into one text block to mark it, and leaves an empty one alone', () => {
    const out = withCacheBreakpoints(base([{ role: 'user', content: 'only the task' }]))
    expect(out.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'only the task', cache_control: { type: 'ephemeral' } }] }
    ])
    // unmarked string messages are sent as blocks too, so the task is the same bytes on every turn
    const later = withCacheBreakpoints(
      base([
        { role: 'user', content: 'only the task' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'a' }] },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'b' }] }
      ])
    )
    expect(later.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'only the task' }] })
    const empty = withCacheBreakpoints(base([{ role: 'user', content: '' }]))
    expect(empty.messages).toEqual([{ role: 'user', content: '' }])
  })
})
