// The cost estimate through the built action: the cost-usd output, the comment
// footer, a model the price table does not know, and the max-cost-usd limit.
// Every reply states its usage, so the expected dollars are worked out by hand.
import { afterAll, describe, expect, it } from '@jest/globals'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { bash, startFakeAnthropic, text, type Reply, type UsageJson } from './helpers/fake-anthropic'
import { startFakeGitHub } from './helpers/fake-github'
import { cleanupRuns, runAction } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { estimateCost, formatUsd } from '../src/agent/cost'

afterAll(() => cleanupRuns())

const KEY = 'sk-ant-cost-test-000000000000'

const usage = (u: Partial<UsageJson>): UsageJson => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  ...u
})
const withUsage = (reply: Reply, u: Partial<UsageJson>): Reply => ({ ...(reply as object), usage: usage(u) }) as Reply

async function runWith(script: Reply[], inputs: Record<string, string> = {}) {
  const anthropic = await startFakeAnthropic(script)
  const github = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  try {
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent do the thing', issueNumber: 21 }),
      // Sonnet 4.6 unless a test says otherwise: the figures below are its prices.
      inputs: { 'anthropic-api-key': KEY, sandbox: 'none', model: 'claude-sonnet-4-6', ...inputs },
      env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_API_URL: github.url }
    })
    const comments = [...github.comments.values()]
    expect(comments).toHaveLength(1)
    return { run, requests: anthropic.requests, comment: comments[0].body }
  } finally {
    await anthropic.close()
    await github.close()
  }
}

/** The footer line of a report (the last <sub> line). */
function footerOf(markdown: string): string {
  const lines = markdown.split('\n').filter(l => l.startsWith('<sub>'))
  expect(lines.length).toBeGreaterThan(0)
  return lines[lines.length - 1]
}

const errorsOf = (run: { commands: Array<{ command: string; message: string }> }) =>
  run.commands.filter(c => c.command === 'error').map(c => c.message)

describe('cost, through the built action', () => {
  it('estimates a known model: cost-usd output and the footer', async () => {
    const script = [
      withUsage(bash('echo hello'), { input_tokens: 1200, output_tokens: 300, cache_creation_input_tokens: 5000 }),
      withUsage(text('Said hello.'), {
        input_tokens: 800,
        output_tokens: 150,
        cache_creation_input_tokens: 700,
        cache_read_input_tokens: 5100
      })
    ]
    const { run, comment } = await runWith(script)
    expect(run.code).toBe(0)
    expect(run.outputs['exit-reason']).toBe('end_turn')
    expect(run.outputs['input-tokens']).toBe('2000')
    expect(run.outputs['output-tokens']).toBe('450')
    expect(run.outputs['cache-creation-tokens']).toBe('5700')
    expect(run.outputs['cache-read-tokens']).toBe('5100')
    // claude-sonnet-4-6 (runWith's model): $3 in, $15 out, $3.75 cache write, $0.30 cache read per million:
    // 2000*3 + 450*15 + 5700*3.75 + 5100*0.3 = 6000 + 6750 + 21375 + 1530 = 35655 micro-dollars
    expect(run.outputs['cost-usd']).toBe('0.0357')
    expect(
      estimateCost('claude-sonnet-4-6', { inputTokens: 2000, outputTokens: 450, cacheCreationTokens: 5700, cacheReadTokens: 5100 })
    ).toBeCloseTo(0.035655, 10)
    const foot = footerOf(comment)
    expect(foot).toContain('model claude-sonnet-4-6')
    expect(foot).toContain('~$0.0357')
    expect(foot).toMatch(/2,000 in \/ 450 out tokens/)
    expect(footerOf(run.summary)).toContain('~$0.0357')
  })

  it('shows tokens only for a model the price table does not know', async () => {
    const script = [
      withUsage(bash('echo hello'), { input_tokens: 1200, output_tokens: 300 }),
      withUsage(text('Said hello.'), { input_tokens: 800, output_tokens: 150 })
    ]
    const { run, comment, requests } = await runWith(script, { model: 'acme-local-llm-7b' })
    expect(run.code).toBe(0)
    expect(requests[0].body.model).toBe('acme-local-llm-7b')
    expect(run.outputs['cost-usd']).toBe('')
    expect(run.outputs['input-tokens']).toBe('2000')
    expect(run.outputs['output-tokens']).toBe('450')
    for (const foot of [footerOf(comment), footerOf(run.summary)]) {
      expect(foot).toContain('model acme-local-llm-7b')
      expect(foot).toMatch(/2,000 in \/ 450 out tokens/)
      expect(foot).not.toContain('$')
    }
  })

  it('max-cost-usd stops the run like the turn limit: the tools of that response are not run, the step succeeds', async () => {
    const script = [
      // $0.0045 so far: under the limit, the command runs
      withUsage(bash('touch first-ran'), { input_tokens: 1000, output_tokens: 100 }),
      // $0.0255 now: over $0.02, so this command must not run and no request follows
      withUsage(bash('touch second-ran'), { input_tokens: 2000, output_tokens: 1000 }),
      text('never asked for')
    ]
    const { run, comment, requests } = await runWith(script, { 'max-cost-usd': '0.02' })
    expect(run.code).toBe(0)
    expect(errorsOf(run)).toEqual([])
    expect(run.outputs['exit-reason']).toBe('budget')
    expect(run.outputs.turns).toBe('2')
    expect(run.outputs.commands).toBe('1')
    expect(run.outputs['cost-usd']).toBe('0.0255')
    expect(requests).toHaveLength(2)
    expect(existsSync(join(run.workspace, 'first-ran'))).toBe(true)
    expect(existsSync(join(run.workspace, 'second-ran'))).toBe(false)
    // the comment says the cost limit stopped it, and what had been done
    expect(comment).toMatch(/Stopped at the cost limit/)
    expect(comment).toContain('$0.0255')
    expect(comment).toContain('max-cost-usd (0.02)')
    expect(comment).toContain('touch first-ran')
    expect(comment).not.toContain('$ touch second-ran')
    expect(footerOf(comment)).toContain('~$0.0255')
  })

  it('max-cost-usd stops even before the first command', async () => {
    const script = [withUsage(bash('touch should-not-run'), { input_tokens: 1000, output_tokens: 1000 }), text('never asked for')]
    // $0.018 after the first response, over a $0.01 limit
    const { run, requests } = await runWith(script, { 'max-cost-usd': '$0.01' })
    expect(run.code).toBe(0)
    expect(run.outputs['exit-reason']).toBe('budget')
    expect(run.outputs.commands).toBe('0')
    expect(run.outputs['cost-usd']).toBe(formatUsd(0.018))
    expect(requests).toHaveLength(1)
    expect(existsSync(join(run.workspace, 'should-not-run'))).toBe(false)
  })
})
