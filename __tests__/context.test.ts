import { afterAll, describe, expect, it } from '@jest/globals'
import { elideOldToolResults, estimateTokens } from '../src/agent/context'
import type { MessageParam } from '../src/types'
import { bash, startFakeAnthropic, text } from './helpers/fake-anthropic'
import { startFakeGitHub } from './helpers/fake-github'
import { cleanupRuns, runAction } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'

afterAll(() => cleanupRuns())

interface ToolResult {
  type: 'tool_result'
  tool_use_id: string
  content: string
  is_error?: boolean
}

const STUB = /^\[output elided to save context: (\d+) characters; the command is in the transcript\]$/

/** A run of `turns` assistant tool calls, each answered by a user tool_result of `outputChars` characters. */
function conversation(turns: number, outputChars: number): MessageParam[] {
  const messages: MessageParam[] = [{ role: 'user', content: 'Find out why the build fails and fix it.' }]
  for (let i = 0; i < turns; i++) {
    const id = `toolu_${String(i).padStart(3, '0')}`
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Step ${i}: running a command.` },
        { type: 'tool_use', id, name: 'bash', input: { command: `make step-${i}` } }
      ]
    })
    const result: ToolResult = {
      type: 'tool_result',
      tool_use_id: id,
      content: `output of step ${i}\n` + String.fromCharCode(97 + (i % 26)).repeat(outputChars)
    }
    if (i % 3 === 0) result.is_error = true
    messages.push({ role: 'user', content: [result] })
  }
  messages.push({ role: 'assistant', content: [{ type: 'text', text: 'Done.' }] })
  return messages
}

const resultsOf = (m: MessageParam): ToolResult[] =>
  Array.isArray(m.content) ? (m.content as unknown as ToolResult[]).filter(b => b.type === 'tool_result') : []

const allResults = (messages: MessageParam[]): ToolResult[] => messages.flatMap(resultsOf)

/** Every tool_use has exactly one tool_result with its id, in the very next message, which is a user message. */
function expectValidPairs(messages: MessageParam[]): void {
  messages.forEach((m, i) => {
    if (m.role !== 'assistant' || !Array.isArray(m.content)) return
    for (const block of m.content as unknown as Array<{ type: string; id?: string }>) {
      if (block.type !== 'tool_use') continue
      const next = messages[i + 1]
      expect(next?.role).toBe('user')
      expect(resultsOf(next).filter(r => r.tool_use_id === block.id)).toHaveLength(1)
      expect(allResults(messages).filter(r => r.tool_use_id === block.id)).toHaveLength(1)
    }
  })
}

describe('estimateTokens', () => {
  it('counts characters of text and JSON, divided by 4', () => {
    expect(estimateTokens([])).toBe(0)
    expect(estimateTokens([{ role: 'user', content: 'a'.repeat(400) }])).toBe(100)
    const withTool: MessageParam[] = [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x'.repeat(4000) }] }
    ]
    const tokens = estimateTokens(withTool)
    expect(tokens).toBeGreaterThanOrEqual(1000)
    expect(tokens).toBeLessThan(1020)
  })

  it('grows with the outputs', () => {
    expect(estimateTokens(conversation(40, 8000))).toBeGreaterThan(estimateTokens(conversation(40, 100)) + 40 * 1900)
  })
})

describe('elideOldToolResults', () => {
  it('stubs the oldest results, keeps the recent ones whole, and keeps the conversation valid', () => {
    const messages = conversation(40, 8000)
    const original = structuredClone(messages)
    const before = estimateTokens(messages)
    expect(before).toBeGreaterThan(80_000)

    const budget = 40_000
    const keepRecent = 5
    const n = elideOldToolResults(messages, { budgetTokens: budget, keepRecent })

    expect(n).toBeGreaterThan(0)
    expect(estimateTokens(messages)).toBeLessThan(budget * 0.6)

    const results = allResults(messages)
    const originalResults = allResults(original)
    expect(results).toHaveLength(40)
    // The oldest n are stubs, the rest untouched: elision goes oldest first and stops once under target.
    results.forEach((r, i) => {
      if (i < n) {
        const m = STUB.exec(r.content)
        expect(m).not.toBeNull()
        expect(Number(m?.[1])).toBe(originalResults[i].content.length)
      } else {
        expect(r.content).toBe(originalResults[i].content)
      }
    })
    // It stopped as soon as it could: one fewer stub would still be over the target.
    expect(n).toBeLessThan(40 - keepRecent)
    // The last keepRecent results are whole.
    for (const r of results.slice(-keepRecent)) expect(r.content).not.toMatch(STUB)

    // Same order, same ids, same is_error, nothing else changed.
    expect(messages).toHaveLength(original.length)
    messages.forEach((m, i) => {
      expect(m.role).toBe(original[i].role)
      if (m.role === 'assistant' || typeof m.content === 'string') {
        expect(m).toEqual(original[i])
        return
      }
      const now = resultsOf(m)
      const was = resultsOf(original[i])
      expect(now.map(r => r.tool_use_id)).toEqual(was.map(r => r.tool_use_id))
      expect(now.map(r => r.is_error)).toEqual(was.map(r => r.is_error))
      now.forEach((r, j) => expect({ ...r, content: was[j].content }).toEqual(was[j]))
    })
    expect(results.filter(r => r.is_error === true)).toHaveLength(14)
    expectValidPairs(messages)
  })

  it('elides nothing new when run again right away', () => {
    const messages = conversation(40, 8000)
    const first = elideOldToolResults(messages, { budgetTokens: 40_000, keepRecent: 5 })
    expect(first).toBeGreaterThan(0)
    const after = structuredClone(messages)
    expect(elideOldToolResults(messages, { budgetTokens: 40_000, keepRecent: 5 })).toBe(0)
    expect(messages).toEqual(after)
  })

  it('never touches the last keepRecent results, even when the budget cannot be met', () => {
    const messages = conversation(40, 8000)
    const original = structuredClone(messages)
    const n = elideOldToolResults(messages, { budgetTokens: 1_000, keepRecent: 3 })
    expect(n).toBe(37)
    const results = allResults(messages)
    const originalResults = allResults(original)
    results.slice(0, 37).forEach(r => expect(r.content).toMatch(STUB))
    results.slice(37).forEach((r, i) => expect(r.content).toBe(originalResults[37 + i].content))
    expectValidPairs(messages)
    // Over budget still, but everything that may be elided already is: a second run changes nothing.
    const after = structuredClone(messages)
    expect(elideOldToolResults(messages, { budgetTokens: 1_000, keepRecent: 3 })).toBe(0)
    expect(messages).toEqual(after)
  })

  it('leaves an under-budget conversation untouched', () => {
    const messages = conversation(40, 8000)
    const original = structuredClone(messages)
    expect(elideOldToolResults(messages, { budgetTokens: estimateTokens(messages), keepRecent: 5 })).toBe(0)
    expect(elideOldToolResults(messages, { budgetTokens: 10_000_000, keepRecent: 5 })).toBe(0)
    expect(messages).toEqual(original)
  })

  it('skips results already shorter than the stub', () => {
    const messages = conversation(40, 8000)
    const short = resultsOf(messages[2])[0]
    short.content = 'ok'
    const n = elideOldToolResults(messages, { budgetTokens: 40_000, keepRecent: 5 })
    expect(n).toBeGreaterThan(0)
    expect(short.content).toBe('ok')
    expect(resultsOf(messages[4])[0].content).toMatch(STUB)
  })

  it('with keepRecent 0 may elide every result', () => {
    const messages = conversation(10, 8000)
    expect(elideOldToolResults(messages, { budgetTokens: 100, keepRecent: 0 })).toBe(10)
    expect(allResults(messages).every(r => STUB.test(r.content))).toBe(true)
    expectValidPairs(messages)
  })

  it('handles several results in one user message and array content', () => {
    const big = 'z'.repeat(10_000)
    const messages: MessageParam[] = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'a', name: 'bash', input: { command: 'one' } },
          { type: 'tool_use', id: 'b', name: 'bash', input: { command: 'two' } }
        ]
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: big, is_error: true },
          { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: big }] }
        ]
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c', name: 'bash', input: { command: 'three' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c', content: big }] }
    ]
    expect(elideOldToolResults(messages, { budgetTokens: 5_000, keepRecent: 1 })).toBe(2)
    const [a, b] = resultsOf(messages[2])
    expect(a).toEqual({ type: 'tool_result', tool_use_id: 'a', content: expect.stringMatching(STUB), is_error: true })
    expect(b.tool_use_id).toBe('b')
    expect(b.content).toMatch(/: 10000 characters;/)
    expect(resultsOf(messages[4])[0].content).toBe(big)
    expectValidPairs(messages)
  })
})

describe('eliding through the built action', () => {
  // A model id the price table does not know gets a 200,000-token window; the
  // action elides past 0.6 of it (120,000 estimated tokens, ~480,000 characters).
  // Six outputs of 190,000 characters each (max-output-chars raised so none is
  // cut) pass that from the fifth request on.
  const CHARS = 190_000
  const command = (i: number) => `head -c ${CHARS} /dev/zero | tr '\\0' '${'abcdef'[i]}'${i === 1 ? '; exit 3' : ''}`

  it('shortens the oldest results on the requests the API gets, and keeps every tool_use paired with its result', async () => {
    const script = [...[0, 1, 2, 3, 4, 5].map(i => bash(command(i))), text('Looked at all of it.')]
    const anthropic = await startFakeAnthropic(script)
    const github = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
    let run: Awaited<ReturnType<typeof runAction>>
    try {
      run = await runAction({
        eventName: 'issue_comment',
        payload: issueCommentEvent({ body: '/agent read the big files', issueNumber: 4 }),
        inputs: {
          'anthropic-api-key': 'sk-ant-context-test-0000000',
          sandbox: 'none',
          model: 'acme-long-context-model',
          'max-output-chars': '200000'
        },
        env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_API_URL: github.url }
      })
    } finally {
      await anthropic.close()
      await github.close()
    }
    expect(run.code).toBe(0)
    expect(run.outputs['exit-reason']).toBe('end_turn')
    expect(run.outputs.commands).toBe('6')
    const requests = anthropic.requests
    expect(requests).toHaveLength(7)

    const stubsPerRequest: number[] = []
    for (const r of requests) {
      // the fake answers 400 to a tool_use without its tool_result (and the reverse)
      expect(r.error).toBeUndefined()
      expect(r.status).toBe(200)
      const messages = r.body.messages as MessageParam[]
      expectValidPairs(messages)
      const results = allResults(messages)
      // results in the order of the commands, none lost
      expect(results.map(x => x.tool_use_id)).toEqual(
        messages.flatMap(m =>
          m.role === 'assistant' && Array.isArray(m.content)
            ? (m.content as Array<{ type: string; id?: string }>).filter(b => b.type === 'tool_use').map(b => b.id)
            : []
        )
      )
      const stubs = results.filter(x => STUB.test(x.content))
      stubsPerRequest.push(stubs.length)
      // a stub keeps is_error and says how long the output was; the rest is whole
      results.forEach((x, i) => {
        const m = STUB.exec(x.content)
        if (m) {
          expect(Number(m[1])).toBeGreaterThanOrEqual(CHARS)
        } else {
          expect(x.content.startsWith('abcdef'[i].repeat(CHARS))).toBe(true)
        }
        expect(x.is_error === true).toBe(i === 1)
      })
      // the newest three results are never shortened
      results.slice(-3).forEach(x => expect(x.content).not.toMatch(STUB))
      // a shortened result stays shortened (the same prefix every turn, for the prompt cache)
      stubs.forEach((_, i) => expect(results[i].content).toMatch(STUB))
    }
    // nothing elided while the conversation fits; then the oldest first, one more each turn
    expect(stubsPerRequest).toEqual([0, 0, 0, 0, 1, 2, 3])
    // the last request is the smaller for it (its three newest results alone are over the budget, and stay whole)
    expect(estimateTokens(requests[6].body.messages)).toBeLessThan((6 * CHARS) / 4 - (2 * CHARS) / 4)
    expect(run.outputs['cost-usd']).toBe('')
  })
})
