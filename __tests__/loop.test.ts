import { describe, expect, test } from '@jest/globals'
import { runLoop, type CommandOutcome, type LoopConfig } from '../src/agent/loop'
import type { Message, MessageParam } from '../src/types'
import { scriptedModel } from './helpers/scripted-model'

// The loop takes its model call and command runner as parameters: these are
// scripted stand-ins, the real SDK and bash are covered end to end elsewhere.
type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown }
let ids = 0
const msg = (content: Block[], stop_reason?: string, usage = { input_tokens: 10, output_tokens: 5 }): Message =>
  ({
    id: `msg_${++ids}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-6',
    content,
    stop_reason: stop_reason ?? (content.some(b => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage
  }) as unknown as Message
const call = (command: string, id = `toolu_${++ids}`): Block => ({ type: 'tool_use', id, name: 'bash', input: { command } })

const ran: string[] = []
const runCommand = async (command: string): Promise<CommandOutcome> => {
  ran.push(command)
  const record = { command, exitCode: 0, durationMs: 1, output: `ran ${command}`, truncated: false, timedOut: false, blocked: false }
  return { record, content: record.output, isError: false }
}
const config = (over: Partial<LoopConfig> = {}): LoopConfig => ({
  model: 'claude-sonnet-4-6',
  system: 'sys',
  maxTokens: 8000,
  maxTurns: 50,
  signal: new AbortController().signal,
  ...over
})

describe('the loop', () => {
  test('first message is the task; request shape; ends when stop_reason is not tool_use', async () => {
    const s = scriptedModel([msg([call('ls')]), msg([{ type: 'text', text: 'done' }])])
    const messages: MessageParam[] = [{ role: 'user', content: 'list files' }]
    const r = await runLoop(messages, config(), { callModel: s.callModel, runCommand })
    expect(r.exitReason).toBe('end_turn')
    expect(r.finalText).toBe('done')
    expect(r.turns).toBe(2)
    expect(s.requests[0]).toMatchObject({ model: 'claude-sonnet-4-6', system: 'sys', max_tokens: 8000 })
    expect(s.requests[0].messages).toEqual([{ role: 'user', content: 'list files' }])
    expect(s.requests[0].tools).toEqual([
      {
        name: 'bash',
        description: 'Run a shell command.',
        input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] }
      }
    ])
  })

  test('two tool calls run in order and answer in one user message, ids copied, text kept in history', async () => {
    ran.length = 0
    const s = scriptedModel([
      msg([{ type: 'text', text: 'looking' }, call('echo one', 'toolu_a'), call('echo two', 'toolu_b')]),
      msg([{ type: 'text', text: 'ok' }])
    ])
    const r = await runLoop([{ role: 'user', content: 't' }], config(), { callModel: s.callModel, runCommand })
    expect(ran).toEqual(['echo one', 'echo two'])
    const second = s.requests[1].messages
    expect(second).toHaveLength(3)
    expect((second[1].content as Block[])[0]).toEqual({ type: 'text', text: 'looking' })
    expect(second[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_a', content: 'ran echo one' },
        { type: 'tool_result', tool_use_id: 'toolu_b', content: 'ran echo two' }
      ]
    })
    expect(r.commands.map(c => c.command)).toEqual(['echo one', 'echo two'])
  })

  test('unknown tool and missing command get is_error results and the loop goes on', async () => {
    const s = scriptedModel([
      msg([
        { type: 'tool_use', id: 'toolu_x', name: 'python', input: { code: '1' } },
        { type: 'tool_use', id: 'toolu_y', name: 'bash', input: {} }
      ]),
      msg([{ type: 'text', text: 'fine' }])
    ])
    const r = await runLoop([{ role: 'user', content: 't' }], config(), { callModel: s.callModel, runCommand })
    const results = s.requests[1].messages[2].content as Array<{ tool_use_id: string; is_error: boolean; content: string }>
    expect(results.map(x => [x.tool_use_id, x.is_error])).toEqual([
      ['toolu_x', true],
      ['toolu_y', true]
    ])
    expect(results[0].content).toMatch(/unknown tool/)
    expect(results[1].content).toMatch(/command/)
    expect(r.exitReason).toBe('end_turn')
    expect(r.commands).toHaveLength(0)
  })

  test('max-turns stops before running the last response tools', async () => {
    ran.length = 0
    const s = scriptedModel([msg([call('a')]), msg([call('b')])])
    const r = await runLoop([{ role: 'user', content: 't' }], config({ maxTurns: 2 }), { callModel: s.callModel, runCommand })
    expect(r.exitReason).toBe('max_turns')
    expect(r.turns).toBe(2)
    expect(ran).toEqual(['a'])
  })

  test('pause_turn is sent back so the model can go on', async () => {
    const s = scriptedModel([msg([{ type: 'text', text: 'thinking' }], 'pause_turn'), msg([{ type: 'text', text: 'done' }])])
    const r = await runLoop([{ role: 'user', content: 't' }], config(), { callModel: s.callModel, runCommand })
    expect(r.exitReason).toBe('end_turn')
    expect(s.requests[1].messages.at(-1)?.role).toBe('assistant')
  })

  test("max_tokens with a cut-off tool call does not run it (at the model's output limit it is the end)", async () => {
    ran.length = 0
    const s = scriptedModel([msg([call('rm important')], 'max_tokens')])
    // claude-sonnet-4-6 allows 64000 output tokens: nothing larger to ask for.
    const r = await runLoop([{ role: 'user', content: 't' }], config({ maxTokens: 64000 }), { callModel: s.callModel, runCommand })
    expect(r.exitReason).toBe('max_tokens')
    expect(ran).toEqual([])
    expect(s.requests).toHaveLength(1)
    // the cut call is not in the history (it would have no result)
    expect(r.messages.map(m => m.role)).toEqual(['user'])
  })

  test('deadline passed after a response: tools not run, timeout', async () => {
    ran.length = 0
    let t = 0
    const s = scriptedModel([msg([call('a')])])
    const r = await runLoop([{ role: 'user', content: 't' }], config({ deadline: 100 }), {
      callModel: async p => {
        t = 200
        return s.callModel(p)
      },
      runCommand,
      now: () => t
    })
    expect(r.exitReason).toBe('timeout')
    expect(ran).toEqual([])
  })

  test('max-cost-usd stops with budget', async () => {
    const big = { input_tokens: 1_000_000, output_tokens: 0 }
    const s = scriptedModel([msg([call('a')], undefined, big)])
    const r = await runLoop([{ role: 'user', content: 't' }], config({ maxCostUsd: 1 }), { callModel: s.callModel, runCommand })
    expect(r.exitReason).toBe('budget')
    expect(r.costUsd).toBeCloseTo(3)
  })

  test('a model error ends the run with error and keeps what was done', async () => {
    const s = scriptedModel([msg([call('a')])])
    const r = await runLoop([{ role: 'user', content: 't' }], config(), { callModel: s.callModel, runCommand })
    expect(r.exitReason).toBe('error')
    expect(r.error).toMatch(/script ran out/)
    expect(r.commands).toHaveLength(1)
  })

  test('abort while a command runs ends with cancelled', async () => {
    const controller = new AbortController()
    const s = scriptedModel([msg([call('a')])])
    const r = await runLoop([{ role: 'user', content: 't' }], config({ signal: controller.signal }), {
      callModel: s.callModel,
      runCommand: async c => {
        controller.abort('cancelled')
        return runCommand(c)
      }
    })
    expect(r.exitReason).toBe('cancelled')
  })
})
