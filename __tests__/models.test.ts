// Today's models, unit level: the one request builder (what is never sent), thinking blocks
// bound to their model (forModel), the notes between tool calls, the per-model output limit,
// effort validation, and the loop's handling of a reply cut inside a tool call.
import { describe, expect, test } from '@jest/globals'
import Anthropic from '@anthropic-ai/sdk'
import { runLoop, type AgentEvent, type CommandOutcome, type LoopConfig } from '../src/agent/loop'
import { buildRequest, forbiddenSettings, headersFor, ForbiddenRequestError, DISPLAY_UPDATES_BETA } from '../src/agent/request'
import { forModel, notesOf } from '../src/agent/thinking'
import { maxOutputOf, DEFAULT_MAX_OUTPUT_TOKENS, returnsProgressUpdates } from '../src/agent/limits'
import { createModelCall, describeModelError } from '../src/agent/model'
import { startFakeAnthropic, text } from './helpers/fake-anthropic'
import { effortOf, DEFAULT_MODEL, DEFAULT_MAX_TOKENS, SettingsError } from '../src/settings'
import type { Message, MessageParam } from '../src/types'
import { scriptedModel } from './helpers/scripted-model'

const thinkingBlock = { type: 'thinking' as const, thinking: '', signature: 'EqQBCkYIBRgCKkD+sig/1==' }
const redactedBlock = { type: 'redacted_thinking' as const, data: 'EmwKAhgBEgy3va3pzix/redacted==' }

describe('buildRequest: the one place a request body is made', () => {
  const base = { system: 'sys', messages: [{ role: 'user' as const, content: 'task' }], tools: [], maxTokens: 32000 }

  test('the default model asks for adaptive thinking with display "updates" under its beta, and nothing refused', () => {
    const body = buildRequest({ ...base, model: DEFAULT_MODEL })
    expect(DEFAULT_MODEL).toBe('claude-sonnet-5-5')
    expect(DEFAULT_MAX_TOKENS).toBe(32000)
    expect(body).toEqual({
      model: 'claude-sonnet-5-5',
      system: 'sys',
      messages: base.messages,
      tools: [],
      max_tokens: 32000,
      thinking: { type: 'adaptive', display: 'updates' }
    })
    expect(headersFor(body)).toEqual({ 'anthropic-beta': DISPLAY_UPDATES_BETA })
    expect(forbiddenSettings(body)).toEqual([])
  })

  test('models that cannot return the notes get no thinking field (their default; never disabled, never a budget) and no beta', () => {
    for (const model of ['claude-sonnet-4-6', 'claude-haiku-4-5', 'glm-5', 'deepseek-v4-pro']) {
      const body = buildRequest({ ...base, model })
      expect(body.thinking).toBeUndefined()
      expect(headersFor(body)).toEqual({})
    }
    expect(returnsProgressUpdates('claude-opus-5-5-20261101')).toBe(true)
    expect(returnsProgressUpdates('us.anthropic.claude-sonnet-5-5-v1:0')).toBe(true)
    expect(returnsProgressUpdates('claude-sonnet-5')).toBe(false)
  })

  test('effort goes to output_config.effort, and only when set', () => {
    expect(buildRequest({ ...base, model: DEFAULT_MODEL, effort: 'medium' }).output_config).toEqual({ effort: 'medium' })
    expect('output_config' in buildRequest({ ...base, model: DEFAULT_MODEL })).toBe(false)
  })

  test('a prefilled assistant turn is refused; the turn a pause_turn returned may be sent back', () => {
    const messages: MessageParam[] = [...base.messages, { role: 'assistant', content: [{ type: 'text', text: 'Sure, here' }] }]
    expect(() => buildRequest({ ...base, model: DEFAULT_MODEL, messages })).toThrow(ForbiddenRequestError)
    expect(buildRequest({ ...base, model: DEFAULT_MODEL, messages, continuing: true }).messages).toBe(messages)
  })

  test("forbiddenSettings names each of the settings today's models refuse", () => {
    const bad = {
      temperature: 0.2,
      top_p: 0.9,
      top_k: 5,
      tool_choice: { type: 'tool', name: 'bash' },
      thinking: { type: 'enabled', budget_tokens: 2048 }
    }
    expect(forbiddenSettings(bad)).toEqual(['temperature', 'top_p', 'top_k', 'tool_choice of type tool', 'a thinking budget'])
    expect(forbiddenSettings({ thinking: { type: 'disabled' }, tool_choice: { type: 'any' } })).toEqual([
      'tool_choice of type any',
      'thinking disabled'
    ])
    expect(forbiddenSettings({ tool_choice: { type: 'auto' }, thinking: { type: 'adaptive', display: 'updates' } })).toEqual([])
  })
})

describe('the model call at the edge', () => {
  test('refuses a body carrying a refused setting before anything is sent', async () => {
    const fake = await startFakeAnthropic([text('never')])
    try {
      const call = createModelCall({ apiKey: 'k', baseUrl: fake.url, maxRetries: 0 })
      const body = { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user' as const, content: 'hi' }] }
      for (const bad of [
        { temperature: 0 },
        { top_p: 0.5 },
        { top_k: 1 },
        { tool_choice: { type: 'any' as const } },
        { thinking: { type: 'enabled' as const, budget_tokens: 1024 } },
        { thinking: { type: 'disabled' as const } }
      ]) {
        await expect(call({ ...body, ...bad }, new AbortController().signal)).rejects.toThrow(ForbiddenRequestError)
      }
      expect(fake.requests).toHaveLength(0)
      // a clean body streams through
      const m = await call(body, new AbortController().signal)
      expect(m.content).toEqual([{ type: 'text', text: 'never' }])
      expect(fake.requests[0].body.stream).toBe(true)
    } finally {
      await fake.close()
    }
  })
})

describe('forModel: thinking blocks are bound to the model that wrote them', () => {
  const history: MessageParam[] = [
    { role: 'user', content: 'task' },
    {
      role: 'assistant',
      content: [
        thinkingBlock,
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }
      ]
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a' }] },
    { role: 'assistant', content: [redactedBlock] },
    { role: 'assistant', content: [redactedBlock, { type: 'text', text: 'Done.' }] },
    { role: 'user', content: 'next' }
  ]
  const frozen = JSON.stringify(history)

  test('the same model gets the history as it is, every block byte for byte', () => {
    const out = forModel(history, 'claude-sonnet-5-5', 'claude-sonnet-5-5')
    expect(JSON.stringify(out)).toBe(frozen)
  })

  test('another model (or an unknown author) gets it without thinking and redacted_thinking blocks; the input is untouched', () => {
    for (const writtenBy of ['claude-opus-5-5', undefined]) {
      const out = forModel(history, 'claude-sonnet-5-5', writtenBy)
      expect(JSON.stringify(out)).not.toMatch(/thinking/)
      expect(out.map(m => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
      expect(out[1].content).toEqual([
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }
      ])
      expect(out[3].content).toEqual([{ type: 'text', text: 'Done.' }])
      // messages without thinking blocks are the same objects
      expect(out[0]).toBe(history[0])
      expect(out[2]).toBe(history[2])
    }
    expect(JSON.stringify(history)).toBe(frozen)
  })
})

describe('notes between tool calls', () => {
  test('each tool call gets the thinking and text written just before it', () => {
    const content = [
      { type: 'thinking', thinking: '', signature: 's1' },
      { type: 'thinking', thinking: 'Checking the tests first.', signature: 's2' },
      { type: 'tool_use', id: 't1', name: 'bash', input: { command: 'npm test' } },
      { type: 'text', text: 'Now the linter.' },
      { type: 'tool_use', id: 't2', name: 'bash', input: { command: 'npx eslint .' } },
      { type: 'tool_use', id: 't3', name: 'bash', input: { command: 'true' } },
      { type: 'text', text: 'All done.' }
    ] as Anthropic.ContentBlock[]
    expect(notesOf(content)).toEqual([
      { note: 'Checking the tests first.', before: 2 },
      { note: 'Now the linter.', before: 4 },
      { note: 'All done.', before: -1 }
    ])
  })
})

describe('limits and effort', () => {
  test('max output per model, matched like prices; a sane fallback', () => {
    expect(maxOutputOf('claude-sonnet-5-5')).toBe(128_000)
    expect(maxOutputOf('claude-sonnet-4-5-20250929')).toBe(64_000)
    expect(maxOutputOf('claude-3-haiku-20240307')).toBe(4_096)
    expect(maxOutputOf('some-gateway-model')).toBe(DEFAULT_MAX_OUTPUT_TOKENS)
  })

  test('effort: the five levels, empty for the default, anything else one line naming the input', () => {
    for (const e of ['low', 'medium', 'high', 'xhigh', 'max']) expect(effortOf('effort', e)).toBe(e)
    expect(effortOf('effort', '')).toBeUndefined()
    expect(effortOf('effort', ' MEDIUM ')).toBe('medium')
    expect(() => effortOf('effort', 'extreme')).toThrow(SettingsError)
    expect(() => effortOf('effort', 'extreme')).toThrow(/^Input effort must be one of low, medium, high, xhigh, max .*got "extreme"\.$/)
  })
})

describe('model errors in one line', () => {
  const headers = new Headers()
  test('a 404 for the model names it', () => {
    const e = Anthropic.APIError.generate(
      404,
      { type: 'error', error: { type: 'not_found_error', message: 'model: claude-sonnet-9' } },
      undefined,
      headers
    )
    const line = describeModelError(e, 'claude-sonnet-9')
    expect(line).toMatch(/"claude-sonnet-9"/)
    expect(line).not.toMatch(/\n/)
  })
  test('a 400 saying the model was retired names it and says so', () => {
    const e = Anthropic.APIError.generate(
      400,
      {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'The model claude-3-opus-20240229 has been retired. Please use a newer model.' }
      },
      undefined,
      headers
    )
    expect(describeModelError(e, 'claude-3-opus-20240229')).toMatch(
      /^The model "claude-3-opus-20240229" is retired or deprecated \(400 .*\): set the model input/
    )
  })
  test('an overloaded error inside a stream reads as overloaded', () => {
    const e = new Anthropic.APIError(
      undefined,
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      undefined,
      headers
    )
    expect(describeModelError(e, 'claude-sonnet-5-5')).toMatch(
      /^The model API was overloaded \(overloaded_error in the stream: Overloaded\) after 4 retries/
    )
  })
})

// ---------------------------------------------------------------------------
// The loop with a scripted model: a reply cut inside a tool call, notes on records.

let n = 0
const reply = (content: unknown[], stop_reason: string): Message =>
  ({
    id: `msg_${++n}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-5-5',
    content,
    stop_reason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 }
  }) as unknown as Message
const tool = (command: string) => ({ type: 'tool_use', id: `toolu_${++n}`, name: 'bash', input: { command } })

const ran: string[] = []
const runCommand = async (command: string): Promise<CommandOutcome> => {
  ran.push(command)
  const record = { command, exitCode: 0, durationMs: 1, output: 'ok', truncated: false, timedOut: false, blocked: false }
  return { record, content: 'ok', isError: false }
}
const config = (over: Partial<LoopConfig> = {}): LoopConfig => ({
  model: 'claude-sonnet-5-5',
  system: 'sys',
  maxTokens: 32000,
  maxTurns: 50,
  signal: new AbortController().signal,
  ...over
})

describe("the loop on today's models", () => {
  test('a reply cut at max_tokens inside a tool call is asked again with more room; the cut call never runs nor stays in history', async () => {
    ran.length = 0
    const cut = reply(
      [
        { type: 'thinking', thinking: '', signature: 'sigA' },
        { type: 'text', text: 'Writing it' },
        { type: 'tool_use', id: 'toolu_cut', name: 'bash', input: { command: 'echo hal' } }
      ],
      'max_tokens'
    )
    const s = scriptedModel([cut, reply([tool('echo whole')], 'tool_use'), reply([{ type: 'text', text: 'done' }], 'end_turn')])
    const events: AgentEvent[] = []
    const r = await runLoop([{ role: 'user', content: 't' }], config(), {
      callModel: s.callModel,
      runCommand,
      onEvent: e => events.push(e)
    })
    expect(r.exitReason).toBe('end_turn')
    expect(ran).toEqual(['echo whole'])
    expect(s.requests.map(q => q.max_tokens)).toEqual([32000, 64000, 64000])
    // the second request is the first again (no cut turn in it)
    expect(s.requests[1].messages).toEqual(s.requests[0].messages)
    expect(JSON.stringify(r.messages)).not.toMatch(/toolu_cut/)
    expect(events.filter(e => e.type === 'retry-longer')).toEqual([{ type: 'retry-longer', turn: 1, maxTokens: 64000 }])
    expect(r.turns).toBe(3)
  })

  test("at the model's output limit the cut reply is the end (max_tokens), still never run", async () => {
    ran.length = 0
    const s = scriptedModel([reply([tool('rm -rf x')], 'max_tokens'), reply([tool('rm -rf x')], 'max_tokens')])
    const r = await runLoop([{ role: 'user', content: 't' }], config({ maxTokens: 100_000 }), { callModel: s.callModel, runCommand })
    expect(s.requests.map(q => q.max_tokens)).toEqual([100_000, 128_000])
    expect(r.exitReason).toBe('max_tokens')
    expect(ran).toEqual([])
  })

  test('each command record carries the note written before it; the response event carries the notes', async () => {
    ran.length = 0
    const s = scriptedModel([
      reply(
        [
          { type: 'thinking', thinking: 'First I list the files.', signature: 's1' },
          tool('ls'),
          { type: 'thinking', thinking: 'Then count them.', signature: 's2' },
          tool('ls | wc -l')
        ],
        'tool_use'
      ),
      reply([{ type: 'text', text: 'Two files.' }], 'end_turn')
    ])
    const events: AgentEvent[] = []
    const r = await runLoop([{ role: 'user', content: 't' }], config(), {
      callModel: s.callModel,
      runCommand,
      onEvent: e => events.push(e)
    })
    expect(r.commands.map(c => [c.note, c.command])).toEqual([
      ['First I list the files.', 'ls'],
      ['Then count them.', 'ls | wc -l']
    ])
    const first = events.find(e => e.type === 'response')
    expect(first).toMatchObject({ notes: ['First I list the files.', 'Then count them.'] })
    expect(events.filter(e => e.type === 'command-start').map(e => (e as { note?: string }).note)).toEqual([
      'First I list the files.',
      'Then count them.'
    ])
  })

  test('thinking blocks go back in place, the same objects; a history from another model goes without them', async () => {
    const turn = reply([thinkingBlock, redactedBlock, tool('true')], 'tool_use')
    const s = scriptedModel([turn, reply([{ type: 'text', text: 'ok' }], 'end_turn')])
    await runLoop([{ role: 'user', content: 't' }], config({ effort: 'medium' }), { callModel: s.callModel, runCommand })
    expect(s.requests[1].messages[1]).toEqual({ role: 'assistant', content: turn.content })
    expect(s.requests.every(q => q.output_config?.effort === 'medium')).toBe(true)

    const old: MessageParam[] = [
      { role: 'user', content: 'before' },
      { role: 'assistant', content: [thinkingBlock, { type: 'text', text: 'answer' }] },
      { role: 'user', content: 'again' }
    ]
    const s2 = scriptedModel([reply([{ type: 'text', text: 'ok' }], 'end_turn')])
    await runLoop(structuredClone(old), config({ historyModel: 'claude-opus-5-5' }), { callModel: s2.callModel, runCommand })
    expect(JSON.stringify(s2.requests[0].messages)).not.toMatch(/thinking/)
    const s3 = scriptedModel([reply([{ type: 'text', text: 'ok' }], 'end_turn')])
    const same: MessageParam[] = structuredClone(old)
    const r3 = await runLoop(same, config({ historyModel: 'claude-sonnet-5-5' }), { callModel: s3.callModel, runCommand })
    expect(r3.error).toBeUndefined()
    expect(s3.requests[0].messages[1]).toEqual(old[1])
  })
})
