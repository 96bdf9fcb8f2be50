// Structured output through the built action (SPEC "Structured output"): the schema on every
// request as output_config.format, the answer checked after redaction and set as the output
// structured-output, the one correction turn, invalid-output, an endpoint without structured
// outputs, the 256 KiB bound, a limit, bad schemas at start, and a dispatched run's summary.
import { afterAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bash, json, startFakeAnthropic, text, type RecordedRequest } from './helpers/fake-anthropic'
import { startFakeGitHub } from './helpers/fake-github'
import { cleanupRuns, DEFAULT_JOB_TOKEN, REPO_ROOT, runAction } from './helpers/run-action'
import { workflowDispatchEvent } from './helpers/events'
import { agent, errors, KEY, warnings } from './helpers/agent-run'

afterAll(() => cleanupRuns())

const SCHEMA = {
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: ['bug', 'feature', 'question'] },
    summary: { type: 'string' }
  },
  required: ['verdict', 'summary'],
  additionalProperties: false
}
const schemaInput = JSON.stringify(SCHEMA, null, 2)

/** The text of the last user message of a request (the task, a correction, or tool results). */
function lastUserText(req: RecordedRequest): string {
  const last = req.body.messages.at(-1)
  return typeof last.content === 'string' ? last.content : last.content.map((b: { text?: string }) => b.text ?? '').join('\n')
}

describe('structured output through the built action', () => {
  it('every request carries the schema as output_config.format (beside effort); a valid answer becomes structured-output', async () => {
    const answer = { verdict: 'bug', summary: 'The parser drops the last line.' }
    const r = await agent([bash('echo looking'), json(answer)], { inputs: { 'output-schema': schemaInput, effort: 'high' } })
    expect(r.run.code).toBe(0)
    expect(r.run.outputs['exit-reason']).toBe('end_turn')
    expect(r.anthropic.requests).toHaveLength(2)
    for (const req of r.anthropic.requests) {
      expect(req.status).toBe(200)
      expect(req.body.output_config).toEqual({ effort: 'high', format: { type: 'json_schema', schema: SCHEMA } })
      expect(req.body.tools.map((t: { name: string }) => t.name)).toEqual(['bash'])
    }
    expect(r.run.outputs['structured-output']).toBe(JSON.stringify(answer))
    expect(JSON.parse(r.run.outputs['structured-output'])).toEqual(answer)
    // the report: the JSON in a collapsed block, once
    const body = r.comment.body
    expect(body).toMatch(/<details><summary>Structured output \(\d+ bytes, valid against output-schema/)
    expect(body).toContain(r.run.outputs['structured-output'])
    expect(body.split('The parser drops the last line.')).toHaveLength(2)
  })

  it('a value outside an enum gets one correction turn whose text names it and the allowed values; the corrected answer is set', async () => {
    const r = await agent(
      [json({ verdict: 'enhancement', summary: 'Add a flag.' }), json({ verdict: 'feature', summary: 'Add a flag.' })],
      {
        inputs: { 'output-schema': schemaInput, 'max-turns': '2' }
      }
    )
    expect(r.run.code).toBe(0)
    expect(r.run.outputs['exit-reason']).toBe('end_turn')
    expect(r.anthropic.requests).toHaveLength(2)
    const correction = lastUserText(r.anthropic.requests[1])
    expect(correction).toContain('/verdict')
    expect(correction).toContain('"enhancement"')
    expect(correction).toContain('"bug", "feature", "question"')
    expect(r.anthropic.requests[1].body.output_config.format.schema).toEqual(SCHEMA)
    expect(r.run.outputs['structured-output']).toBe('{"verdict":"feature","summary":"Add a flag."}')
    expect(r.run.outputs.turns).toBe('2')
  })

  it('still invalid after the correction: invalid-output, the step fails, structured-output is empty, the report shows the errors', async () => {
    const r = await agent([json({ verdict: 'maybe', summary: 'x' }), json({ verdict: 'perhaps' })], {
      inputs: { 'output-schema': schemaInput }
    })
    expect(r.run.code).not.toBe(0)
    expect(r.run.outputs['exit-reason']).toBe('invalid-output')
    expect(r.run.outputs['structured-output']).toBe('')
    expect(r.anthropic.requests).toHaveLength(2)
    expect(errors(r.run).join('\n')).toMatch(/did not match output-schema/)
    const body = r.comment.body
    expect(body).toContain('did not match output-schema')
    expect(body).toContain('must have the property "summary"')
    expect(body).toContain('"perhaps"')
    expect(r.run.summary).toContain('must have the property "summary"')
  })

  it('a secret in the answer is redacted first: the redacted JSON is checked and set (JSON escapes do not hide it)', async () => {
    // the job token as is, and the API key written with a JSON escape (it only shows once parsed)
    const escapedKey = `\\u0073${KEY.slice(1)}`
    const answer = `{"verdict":"question","summary":"token ${DEFAULT_JOB_TOKEN} and key ${escapedKey}"}`
    const r = await agent([text(answer)], { inputs: { 'output-schema': schemaInput } })
    expect(r.run.code).toBe(0)
    expect(r.run.outputs['exit-reason']).toBe('end_turn')
    const out = r.run.outputs['structured-output']
    // (the key's first letters, the first written as an escape, may stay: the rest is redacted)
    expect(JSON.parse(out)).toEqual({ verdict: 'question', summary: expect.stringMatching(/^token \*\*\* and key [a-z]{0,2}\*\*\*$/) })
    // (the log's ::add-mask:: lines hand the secrets to the runner, which masks them)
    const log = r.run.stdout
      .split('\n')
      .filter(l => !l.startsWith('::add-mask::'))
      .join('\n')
    for (const where of [out, r.comment.body, r.run.summary, log, JSON.stringify(r.run.outputs)]) {
      expect(where).not.toContain(DEFAULT_JOB_TOKEN)
      expect(where).not.toContain(KEY)
    }
  })

  it('an endpoint that refuses output_config.format is asked again without it, once; the log says so; the check and the correction still hold', async () => {
    const r = await agent([text('The verdict: a bug.'), json({ verdict: 'bug', summary: 'Off by one.' })], {
      inputs: { 'output-schema': schemaInput },
      anthropic: { refuseFormat: true }
    })
    expect(r.run.code).toBe(0)
    expect(r.run.outputs['exit-reason']).toBe('end_turn')
    const [refused, ...asked] = r.anthropic.requests
    expect(refused.status).toBe(400)
    expect(refused.body.output_config.format).toEqual({ type: 'json_schema', schema: SCHEMA })
    expect(asked).toHaveLength(2)
    for (const req of asked) {
      expect(req.status).toBe(200)
      expect(req.body.output_config?.format).toBeUndefined()
      // the model still learns the schema, from the system prompt
      const system = typeof req.body.system === 'string' ? req.body.system : req.body.system.map((b: { text: string }) => b.text).join('')
      expect(system).toContain('"enum":["bug","feature","question"]')
    }
    expect(lastUserText(asked[1])).toMatch(/not JSON/)
    expect(warnings(r.run).join('\n')).toMatch(/Structured outputs are not supported by this model endpoint/)
    expect(r.run.outputs['structured-output']).toBe('{"verdict":"bug","summary":"Off by one."}')
    expect(r.comment.body).toContain('does not support structured outputs')
  })

  it('an answer over 256 KiB is invalid, never cut: the correction says so, then invalid-output with empty output', async () => {
    const big = json({ verdict: 'bug', summary: 'x'.repeat(300_000) })
    const r = await agent([big, big], { inputs: { 'output-schema': schemaInput }, timeoutMs: 90_000 })
    expect(r.run.outputs['exit-reason']).toBe('invalid-output')
    expect(r.run.code).not.toBe(0)
    expect(r.run.outputs['structured-output']).toBe('')
    expect(lastUserText(r.anthropic.requests[1])).toMatch(/300\d{3} bytes, more than the 262144 bytes \(256 KiB\)/)
  })

  it('a run ended by max-turns has no structured output, and the report says why', async () => {
    const r = await agent([bash('echo one'), bash('echo two')], { inputs: { 'output-schema': schemaInput, 'max-turns': '2' } })
    expect(r.run.code).toBe(0)
    expect(r.run.outputs['exit-reason']).toBe('max_turns')
    expect(r.run.outputs['structured-output']).toBe('')
    expect(r.comment.body).toMatch(/Structured output:\*\* none, `structured-output` is empty: the run stopped at the turn limit/)
  })

  it('with no turn left for a correction, an invalid answer ends the run as invalid-output', async () => {
    const r = await agent([json({ verdict: 'nope', summary: 'x' })], { inputs: { 'output-schema': schemaInput, 'max-turns': '1' } })
    expect(r.run.outputs['exit-reason']).toBe('invalid-output')
    expect(r.anthropic.requests).toHaveLength(1)
    expect(r.run.outputs['structured-output']).toBe('')
  })
})

describe('a bad output-schema fails at start, in one line naming the input, with no model request', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['not JSON', 'type: object', /output-schema must be a JSON Schema written as JSON/],
    ['not an object schema', '{"type": "array", "items": {"type": "string"}}', /output-schema must be an object schema/],
    ['a JSON array', '[{"type": "object"}]', /output-schema must be an object schema/],
    [
      'over 64 KiB',
      JSON.stringify({ type: 'object', description: 'd'.repeat(70_000) }),
      /output-schema must be at most 64 KiB \(65536 bytes\), got 700\d\d bytes/
    ],
    [
      'an invalid JSON Schema',
      '{"type": "object", "properties": {"a": {"type": "strin"}}}',
      /output-schema .*not a valid JSON Schema.*\/properties\/a\/type/
    ],
    [
      'an unknown keyword (a typo)',
      '{"type": "object", "requried": ["a"]}',
      /output-schema .*not a valid JSON Schema.*unknown keyword: "requried"/
    ],
    [
      'an unknown $schema',
      '{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}',
      /output-schema .*draft 2020-12.*draft-07/
    ]
  ]
  for (const [what, schema, message] of cases) {
    it(what, async () => {
      const anthropic = await startFakeAnthropic([text('never')])
      const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
      try {
        const run = await runAction({
          eventName: 'workflow_dispatch',
          payload: workflowDispatchEvent({ inputs: { task: 'triage' } }),
          inputs: { 'anthropic-api-key': KEY, sandbox: 'none', task: 'triage', 'output-schema': schema },
          env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_API_URL: gh.url }
        })
        expect(run.code).not.toBe(0)
        expect(run.outputs['exit-reason']).toBe('error')
        const lines = errors(run)
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatch(/^Input output-schema /)
        expect(lines[0]).toMatch(message)
        expect(lines[0]).not.toContain('\n')
        expect(anthropic.requests).toHaveLength(0)
      } finally {
        await anthropic.close()
        await gh.close()
      }
    })
  }

  it('a draft-07 schema is read as draft-07', async () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok']
    }
    const r = await agent([json({ ok: true })], { inputs: { 'output-schema': JSON.stringify(schema) } })
    expect(r.run.outputs['exit-reason']).toBe('end_turn')
    expect(r.run.outputs['structured-output']).toBe('{"ok":true}')
  })
})

describe('a dispatched run', () => {
  it('sets structured-output and shows the JSON in the job summary', async () => {
    const anthropic = await startFakeAnthropic([bash('ls'), json({ verdict: 'question', summary: 'Ask @octocat <b>now</b>' })])
    const gh = await startFakeGitHub({ permissions: { octocat: 'admin' } })
    try {
      const run = await runAction({
        eventName: 'workflow_dispatch',
        payload: workflowDispatchEvent({ inputs: { task: 'triage' } }),
        inputs: { 'anthropic-api-key': KEY, sandbox: 'none', task: 'triage', 'output-schema': schemaInput },
        env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_API_URL: gh.url }
      })
      expect(run.code).toBe(0)
      expect(run.outputs['exit-reason']).toBe('end_turn')
      expect(JSON.parse(run.outputs['structured-output'])).toEqual({ verdict: 'question', summary: 'Ask @octocat <b>now</b>' })
      expect(run.summary).toMatch(/<details><summary>Structured output/)
      expect(run.summary).toContain('{"verdict":"question","summary":"Ask @\u200boctocat <b>now</b>"}')
      // agent text in the summary is inert: no ping
      expect(run.summary).not.toContain('@octocat')
      expect(gh.comments.size).toBe(0)
    } finally {
      await anthropic.close()
      await gh.close()
    }
  })
})

describe('the local CLI', () => {
  const cli = join(REPO_ROOT, 'dist', 'cli', 'index.js')
  function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const dir = mkdtempSync(join(tmpdir(), 'structured-cli-'))
    writeFileSync(join(dir, 'schema.json'), schemaInput)
    return new Promise((done, fail) => {
      const child = spawn(process.execPath, [cli, ...args], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, ...env }
      })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', d => (stdout += d))
      child.stderr.on('data', d => (stderr += d))
      child.on('error', fail)
      child.on('close', code => {
        rmSync(dir, { recursive: true, force: true })
        done({ code, stdout, stderr })
      })
    })
  }

  it('--output-schema @file: stdout holds only the structured output, for a pipeline', async () => {
    const ai = await startFakeAnthropic([bash('echo checking'), json({ verdict: 'bug', summary: 'found it' })])
    try {
      const r = await runCli(['--output-schema', '@schema.json', 'triage', 'this'], { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: ai.url })
      expect(r.code).toBe(0)
      expect(r.stdout).toBe('{"verdict":"bug","summary":"found it"}\n')
      expect(r.stderr).toContain('$ echo checking')
      expect(ai.requests[0].body.output_config).toEqual({ format: { type: 'json_schema', schema: SCHEMA } })
      expect(ai.requests[0].body.messages[0].content[0].text).toBe('triage this')
    } finally {
      await ai.close()
    }
  })

  it('OUTPUT_SCHEMA in the environment; an answer still invalid after the correction: nothing on stdout, exit 1', async () => {
    const ai = await startFakeAnthropic([json({ verdict: 'nah', summary: '' }), json({ verdict: 'nope', summary: '' })])
    try {
      const r = await runCli(['triage'], { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: ai.url, OUTPUT_SCHEMA: schemaInput })
      expect(r.code).toBe(1)
      expect(r.stdout).toBe('')
      expect(r.stderr).toContain('/verdict: must be one of the allowed values "bug", "feature", "question", got "nope"')
    } finally {
      await ai.close()
    }
  })

  it('a bad schema stops before any model request', async () => {
    const ai = await startFakeAnthropic([text('never')])
    try {
      const r = await runCli(['--output-schema', '{"type":"object","properties":{"a":{"type":"strin"}}}', 'x'], {
        ANTHROPIC_API_KEY: KEY,
        ANTHROPIC_BASE_URL: ai.url
      })
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(/output schema .*not a valid JSON Schema/)
      expect(ai.requests).toHaveLength(0)
    } finally {
      await ai.close()
    }
  })
})
