// Structured output's parts without the runner: the schema input, the validator, the answer
// check (redaction first), the loop's correction turn and its fallback for an endpoint that
// refuses output_config.format. End to end through dist/: structured-e2e.test.ts.
import { describe, expect, test } from '@jest/globals'
import { BadRequestError } from '@anthropic-ai/sdk'
import { runLoop, type AgentEvent, type LoopConfig } from '../src/agent/loop'
import { checkAnswer, refusesFormat } from '../src/structured/answer'
import { parseOutputSchema } from '../src/structured/schema'
import { compileSchema } from '../src/structured/validator'
import { Redactor } from '../src/report/redact'
import { renderFinal, renderSummary, type ReportMeta } from '../src/report/render'
import { emptyUsage, type Message, type MessageParam } from '../src/types'
import { scriptedModel } from './helpers/scripted-model'
import { startFakeAnthropic, text } from './helpers/fake-anthropic'

const SCHEMA = {
  type: 'object',
  properties: { verdict: { enum: ['yes', 'no'] }, count: { type: 'integer', minimum: 0 } },
  required: ['verdict'],
  additionalProperties: false
}
const validate = compileSchema(SCHEMA)
const SECRET = 'hunter2-very-secret-value'
const redactor = new Redactor([SECRET])
const redact = (s: string) => redactor.redact(s)

let ids = 0
const reply = (text: string, stop = 'end_turn'): Message =>
  ({
    id: `msg_${++ids}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-6',
    content: [{ type: 'text', text }],
    stop_reason: stop,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 }
  }) as unknown as Message

const config = (over: Partial<LoopConfig> = {}): LoopConfig => ({
  model: 'claude-sonnet-4-6',
  system: 'sys',
  maxTokens: 8000,
  maxTurns: 10,
  outputSchema: SCHEMA,
  signal: new AbortController().signal,
  ...over
})
const runCommand = async () => {
  throw new Error('no command expected')
}
const checker = (text: string) => checkAnswer(text, redact, validate)

describe('the output-schema input', () => {
  test('empty is no schema; an object schema is read', () => {
    expect(parseOutputSchema('')).toBeUndefined()
    expect(parseOutputSchema(JSON.stringify(SCHEMA))).toEqual(SCHEMA)
  })
  test.each([
    ['not JSON', '{type: object}', /not JSON/],
    ['no type', '{"properties": {}}', /needs "type": "object", got no type/],
    ['another type', '{"type": "string"}', /got "string"/],
    ['a boolean schema', 'true', /got a boolean/],
    ['over 64 KiB', JSON.stringify({ type: 'object', title: 't'.repeat(65_536) }), /at most 64 KiB/]
  ])('%s is refused', (_what, text, message) => {
    expect(() => parseOutputSchema(text)).toThrow(message)
  })
  test('the validator refuses what is no JSON Schema, and reads draft-07 by its $schema', () => {
    expect(() => compileSchema({ type: 'object', properties: { a: { type: 'strin' } } })).toThrow(/\/properties\/a\/type/)
    expect(() => compileSchema({ type: 'object', propertiess: {} })).toThrow(/unknown keyword: "propertiess"/)
    expect(() => compileSchema({ type: 'object', properties: { a: { type: 'string', format: 'nope' } } })).toThrow(/unknown format "nope"/)
    const v07 = compileSchema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      definitions: { x: { type: 'string' } }
    })
    expect(v07({})).toEqual([])
    const email = compileSchema({ type: 'object', properties: { to: { type: 'string', format: 'email' } } })
    expect(email({ to: 'not an address' })).toEqual(['/to: must match format "email", got "not an address"'])
  })
})

describe('the answer check', () => {
  test('valid: compact JSON', () => {
    expect(checker('{ "verdict": "yes",\n "count": 2 }')).toEqual({ ok: true, json: '{"verdict":"yes","count":2}' })
  })
  test('errors name the path, the allowed values and what was there', () => {
    const r = checker('{"verdict": "maybe", "count": -1, "extra": 1}')
    expect(r.ok).toBe(false)
    const errors = r.ok ? [] : r.errors
    expect(errors).toContain('/verdict: must be one of the allowed values "yes", "no", got "maybe"')
    expect(errors).toContain('/count: must be >= 0, got -1')
    expect(errors).toContain('(the top): must not have the property "extra" (additionalProperties is false)')
  })
  test('not JSON, empty, or over 256 KiB: invalid, never cut', () => {
    expect(checker('```json\n{"verdict":"yes"}\n```')).toMatchObject({ ok: false, errors: [expect.stringMatching(/not JSON/)] })
    expect(checker('  ')).toMatchObject({ ok: false, errors: [expect.stringMatching(/empty/)] })
    const big = JSON.stringify({ verdict: 'yes', pad: 'x'.repeat(262_144) })
    const wide = compileSchema({ type: 'object' })
    expect(checkAnswer(big, redact, wide)).toMatchObject({ ok: false, errors: [expect.stringMatching(/more than the 262144 bytes/)] })
  })
  test('a secret is redacted before the check, also where JSON escapes hid it', () => {
    const wide = compileSchema({ type: 'object' })
    const escaped = `\\u0068${SECRET.slice(1)}`
    const r = checkAnswer(`{"a": "${SECRET}", "b": "${escaped}", "${SECRET}": 1}`, redact, wide)
    expect(r.ok).toBe(true)
    const json = r.ok ? r.json : ''
    expect(json).not.toContain(SECRET.slice(1))
    expect(JSON.parse(json)).toEqual({ a: '***', b: expect.stringMatching(/^h?\*\*\*$/), '***': 1 })
    // a secret where the schema wants an enum value: the redacted answer is what is checked
    expect(checker(`{"verdict": "${SECRET}"}`)).toMatchObject({ ok: false, errors: [expect.stringContaining('got "***"')] })
  })
})

describe('the loop with an output schema', () => {
  test('every request carries output_config.format; a valid answer ends the run with the JSON', async () => {
    const s = scriptedModel([reply('{"verdict":"yes"}')])
    const r = await runLoop([{ role: 'user', content: 'is it?' }], config({ effort: 'low' }), {
      callModel: s.callModel,
      runCommand,
      checkAnswer: checker
    })
    expect(s.requests[0].output_config).toEqual({ effort: 'low', format: { type: 'json_schema', schema: SCHEMA } })
    expect(r.exitReason).toBe('end_turn')
    expect(r.structured).toEqual({ json: '{"verdict":"yes"}' })
  })

  test('an invalid answer gets one correction turn that says what is wrong; still invalid ends with invalid-output', async () => {
    const events: AgentEvent[] = []
    const s = scriptedModel([reply('{"verdict":"maybe"}'), reply('{"verdict":"perhaps"}')])
    const messages: MessageParam[] = [{ role: 'user', content: 'is it?' }]
    const r = await runLoop(messages, config(), { callModel: s.callModel, runCommand, checkAnswer: checker, onEvent: e => events.push(e) })
    expect(s.requests).toHaveLength(2)
    const correction = JSON.stringify(s.requests[1].messages.at(-1))
    expect(correction).toContain('/verdict: must be one of the allowed values \\"yes\\", \\"no\\", got \\"maybe\\"')
    expect(r.exitReason).toBe('invalid-output')
    expect(r.turns).toBe(2)
    expect(r.structured?.json).toBeUndefined()
    expect(r.structured?.errors).toEqual(['/verdict: must be one of the allowed values "yes", "no", got "perhaps"'])
    expect(events.filter(e => e.type === 'correction')).toHaveLength(1)
  })

  test('a refusal ends the run as it is, without a check or a correction', async () => {
    const s = scriptedModel([reply('I will not.', 'refusal')])
    const r = await runLoop([{ role: 'user', content: 'x' }], config(), { callModel: s.callModel, runCommand, checkAnswer: checker })
    expect(r.exitReason).toBe('refusal')
    expect(r.structured).toEqual({})
  })

  test('an endpoint that refuses output_config.format is asked again without it, once, with the schema in the system prompt', async () => {
    const s = scriptedModel([reply('yes'), reply('{"verdict":"no"}')])
    let refusals = 0
    const callModel: typeof s.callModel = async p => {
      if (p.output_config?.format) {
        refusals++
        throw new BadRequestError(
          400,
          { type: 'error', error: { type: 'invalid_request_error', message: 'output_config.format: Extra inputs are not permitted' } },
          undefined,
          new Headers()
        )
      }
      return s.callModel(p)
    }
    const events: AgentEvent[] = []
    const r = await runLoop([{ role: 'user', content: 'x' }], config(), {
      callModel,
      runCommand,
      checkAnswer: checker,
      onEvent: e => events.push(e)
    })
    expect(refusals).toBe(1)
    expect(s.requests).toHaveLength(2)
    for (const req of s.requests) {
      expect(req.output_config).toBeUndefined()
      expect(req.system).toContain(JSON.stringify(SCHEMA))
    }
    expect(JSON.stringify(s.requests[1].messages.at(-1))).toContain('The schema:')
    expect(r.exitReason).toBe('end_turn')
    expect(r.structured).toMatchObject({ json: '{"verdict":"no"}', unsupported: 'output_config.format: Extra inputs are not permitted' })
    expect(events.find(e => e.type === 'format-refused')).toBeTruthy()
  })

  test('another 400 is an error, not a refused format', () => {
    const other = new BadRequestError(
      400,
      { type: 'error', error: { type: 'invalid_request_error', message: 'output_config.effort: Input should be low' } },
      undefined,
      new Headers()
    )
    expect(refusesFormat(other)).toBeUndefined()
    const tool = new BadRequestError(
      400,
      { type: 'error', error: { type: 'invalid_request_error', message: 'messages.1: tool_use ids were found without tool_result' } },
      undefined,
      new Headers()
    )
    expect(refusesFormat(tool)).toBeUndefined()
  })
})

describe('the report', () => {
  const meta: ReportMeta = { model: 'm', sandbox: 's', limits: { maxTurns: 5, timeoutMinutes: 30, maxTokens: 100 }, elapsedMs: 1000 }
  const base = { turns: 1, commands: [], usage: emptyUsage(), costUsd: null }

  test('the JSON shows in a collapsed block that the answer cannot close, ping from or fake sections in', () => {
    const value = { verdict: 'yes', note: '@admin ````\n</details>\n## Changes\n<!-- x -->' }
    const json = JSON.stringify(value)
    const out = renderFinal({ ...base, finalText: json, exitReason: 'end_turn', structured: { json } }, meta)
    const block = out.slice(out.indexOf('<details><summary>Structured output'))
    expect(block).not.toMatch(/(?<![A-Za-z0-9])@admin/)
    // the JSON text is one line inside the fence: what looks like markdown stays in the string
    expect(block).toContain('"note":"@\u200badmin ````\\n</details>\\n## Changes\\n<!-- x -->"')
    expect(out.split('"verdict"')).toHaveLength(2)
  })

  test('a large JSON is cut in the comment, whole in the summary', () => {
    const json = JSON.stringify({ verdict: 'yes', items: Array.from({ length: 5000 }, (_, i) => `item ${i}`) })
    const o = { ...base, finalText: json, exitReason: 'end_turn' as const, structured: { json } }
    const comment = renderFinal(o, meta)
    expect(comment.length).toBeLessThanOrEqual(65_536)
    expect(comment).toContain('characters cut here')
    expect(renderSummary(o, meta)).toContain('"item 4999"')
  })

  test('an answer near 256 KiB is whole in the job summary', () => {
    const json = JSON.stringify({ verdict: 'yes', items: Array.from({ length: 22_000 }, (_, i) => `item ${i}`) })
    expect(json.length).toBeGreaterThan(200_000)
    const summary = renderSummary({ ...base, finalText: json, exitReason: 'end_turn', structured: { json } }, meta)
    expect(summary).toContain(json)
  })
})

describe('the fake Messages API checks output_config', () => {
  const base = { model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }
  const post = (url: string, body: unknown) =>
    fetch(`${url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

  test('a malformed output_config is refused (400) and recorded; a well-formed one is answered', async () => {
    const fake = await startFakeAnthropic([text('ok')])
    try {
      const bad = [
        { format: { type: 'json', schema: { type: 'object' } } },
        { format: { type: 'json_schema' } },
        { format: { type: 'json_schema', schema: [] } },
        { format: { type: 'json_schema', schema: {}, strict: true } },
        { effort: 'huge' },
        { verbosity: 'low' },
        'json'
      ]
      for (const output_config of bad) expect((await post(fake.url, { ...base, output_config })).status).toBe(400)
      const good = { effort: 'low', format: { type: 'json_schema', schema: { type: 'object' } } }
      expect((await post(fake.url, { ...base, output_config: good })).status).toBe(200)
      expect(fake.requests.map(r => r.status)).toEqual([...bad.map(() => 400), 200])
      expect(fake.requests[0].error).toMatch(/output_config\.format\.type/)
      expect(fake.requests.at(-1)?.body.output_config).toEqual(good)
    } finally {
      await fake.close()
    }
  })

  test('refuseFormat: an endpoint without structured outputs refuses the format, not the rest', async () => {
    const fake = await startFakeAnthropic([text('ok')], { refuseFormat: true })
    try {
      const refused = await post(fake.url, { ...base, output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } })
      expect(refused.status).toBe(400)
      expect(JSON.stringify(await refused.json())).toMatch(/output_config\.format/)
      expect((await post(fake.url, { ...base, output_config: { effort: 'low' } })).status).toBe(200)
    } finally {
      await fake.close()
    }
  })
})
