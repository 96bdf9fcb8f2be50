// Today's models end to end: the built bundle run as the runner runs it, the real SDK
// streaming from the fake Messages API (thinking and redacted_thinking blocks with
// signatures, display modes, the 400s of Sonnet 5.5), the fake GitHub API, real bash.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import Anthropic from '@anthropic-ai/sdk'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  bashBlock,
  cutBash,
  errorBody,
  note,
  reasoning,
  redacted,
  startFakeAnthropic,
  text,
  type FakeAnthropic,
  type RecordedRequest,
  type Reply
} from './helpers/fake-anthropic'
import { startFakeGitHub, type FakeComment, type FakeGitHub } from './helpers/fake-github'
import { cleanupRuns, runAction, type ActionRun } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { forbiddenSettings } from '../src/agent/request'

const API_KEY = 'sk-ant-api03-modelsTestKey000000000000000000000'
const REASONING = 'Secret chain of thought that must never be shown.'

afterAll(() => {
  cleanupRuns()
})

interface Result {
  run: ActionRun
  fake: FakeAnthropic
  gh: FakeGitHub
  comment?: FakeComment
  errors: string[]
}

/** Every request any scenario made, to check none carried a refused setting. */
const allRequests: RecordedRequest[] = []

async function scenario(script: (gh: FakeGitHub) => Reply[], inputs: Record<string, string> = {}): Promise<Result> {
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  const fake = await startFakeAnthropic(script(gh), { apiKey: API_KEY })
  try {
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent look at the files', issueNumber: 1, commentId: 4242 }),
      inputs: { 'anthropic-api-key': API_KEY, 'anthropic-base-url': fake.url, sandbox: 'none', ...inputs },
      env: { GITHUB_API_URL: gh.url },
      timeoutMs: 60_000
    })
    allRequests.push(...fake.requests)
    return {
      run,
      fake,
      gh,
      comment: [...gh.comments.values()][0],
      errors: run.commands.filter(c => c.command === 'error').map(c => c.message)
    }
  } finally {
    await Promise.all([fake.close(), gh.close()])
  }
}

/** A reply that waits until the progress comment shows `wanted` (the throttled update always comes), then gives `then`. */
const afterProgressShows =
  (gh: FakeGitHub, wanted: string, then: Reply): Reply =>
  async () => {
    for (let i = 0; i < 600; i++) {
      if ([...gh.comments.values()].some(c => c.updates.some(u => u.includes(wanted) && u.includes('Working on it')))) return then
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    return then // the assertion on the progress comment then fails and says so
  }

describe('a three-turn run on the default model whose replies carry thinking and redacted_thinking blocks', () => {
  let r: Result
  beforeAll(async () => {
    r = await scenario(
      gh => [
        { content: [reasoning(REASONING), note('I will list the files first.'), bashBlock('ls -1')], stop_reason: 'tool_use' },
        afterProgressShows(gh, 'I will list the files first.', {
          content: [redacted(), note('Now I count the lines of the README.'), bashBlock('wc -l < README.md')],
          stop_reason: 'tool_use'
        }),
        { content: [reasoning(REASONING), redacted(), { type: 'text', text: 'README.md has a few lines.' }], stop_reason: 'end_turn' }
      ],
      { effort: 'medium' }
    )
  })

  it('sends claude-sonnet-5-5, max_tokens 32000, over a stream, asking for the notes only (display "updates" with its beta), with effort medium', () => {
    expect(r.run.code).toBe(0)
    expect(r.errors).toEqual([])
    expect(r.fake.requests).toHaveLength(3)
    for (const req of r.fake.requests) {
      expect({ status: req.status, error: req.error }).toEqual({ status: 200, error: undefined })
      expect(req.body).toMatchObject({
        model: 'claude-sonnet-5-5',
        max_tokens: 32000,
        stream: true,
        thinking: { type: 'adaptive', display: 'updates' },
        output_config: { effort: 'medium' }
      })
      expect(String(req.headers['anthropic-beta'])).toContain('thinking-display-updates-2026-08-18')
    }
  })

  it('sends every thinking and redacted_thinking block back byte for byte, in place', () => {
    const sent = r.fake.sent()
    expect(sent).toHaveLength(3)
    const [, second, third] = r.fake.requests
    // request 2 holds reply 1 as the assistant turn; request 3 holds replies 1 and 2
    expect(second.body.messages[1]).toEqual({ role: 'assistant', content: sent[0].content })
    expect(third.body.messages[1]).toEqual({ role: 'assistant', content: sent[0].content })
    expect(third.body.messages[3]).toEqual({ role: 'assistant', content: sent[1].content })
    const blocks = (content: unknown[]) => content.filter(b => /thinking/.test((b as { type: string }).type)).map(b => JSON.stringify(b))
    expect(blocks(third.body.messages[1].content)).toEqual(blocks(sent[0].content))
    expect(blocks(third.body.messages[3].content)).toEqual(blocks(sent[1].content))
    expect(blocks(sent[0].content)).toHaveLength(2)
    expect(blocks(sent[1].content)).toHaveLength(2)
    expect((sent[1].content[0] as { type: string; data: string }).type).toBe('redacted_thinking')
  })

  it('shows the notes between tool calls in the progress comment, the final report, the summary and the log; never the reasoning', () => {
    const comment = r.comment!
    expect(comment.updates.some(u => /Working on it/.test(u) && u.includes('I will list the files first.'))).toBe(true)
    const report = comment.body
    expect(report).toContain('README.md has a few lines.')
    // each note above its command, inside the command's fence
    expect(report).toContain('# I will list the files first.\n$ ls -1')
    expect(report).toContain('# Now I count the lines of the README.\n$ wc -l < README.md')
    expect(r.run.summary).toContain('# Now I count the lines of the README.\n$ wc -l < README.md')
    expect(r.run.stdout).toContain('I will list the files first.')
    expect(r.run.stdout).toContain('Now I count the lines of the README.')
    for (const where of [report, r.run.summary, r.run.stdout, ...comment.updates]) expect(where).not.toContain(REASONING)
  })
})

describe('a reply cut at max_tokens in the middle of a tool call', () => {
  let r: Result
  beforeAll(async () => {
    r = await scenario(() => [
      cutBash('echo ran >> marker.txt', note('Writing the marker.')),
      { content: [note('Writing the marker.'), bashBlock('echo ran >> marker.txt')], stop_reason: 'tool_use' },
      text('Done.')
    ])
  })

  it('is asked again with a larger max_tokens; the cut call is never run and not sent back', () => {
    expect(r.run.code).toBe(0)
    expect(r.fake.requests.map(q => q.status)).toEqual([200, 200, 200])
    expect(r.fake.requests.map(q => q.body.max_tokens)).toEqual([32000, 64000, 64000])
    // the second request is the first again: the cut turn is not in it
    expect(r.fake.requests[1].body.messages).toEqual(r.fake.requests[0].body.messages)
    expect(r.run.outputs.commands).toBe('1')
    expect(r.run.outputs['exit-reason']).toBe('end_turn')
  })

  it('runs the command once, whole', () => {
    const marker = join(r.run.workspace, 'marker.txt')
    expect(existsSync(marker)).toBe(true)
    expect(readFileSync(marker, 'utf8')).toBe('ran\n')
    expect(r.comment!.body).toContain('$ echo ran >> marker.txt')
  })
})

describe('effort and model errors', () => {
  it('effort: extreme fails the step with one line naming the input, before any request', async () => {
    const r = await scenario(() => [text('never')], { effort: 'extreme' })
    expect(r.run.code).not.toBe(0)
    expect(r.fake.requests).toHaveLength(0)
    expect(r.errors).toHaveLength(1)
    expect(r.errors[0]).toMatch(/^Input effort must be one of low, medium, high, xhigh, max .*"extreme"/)
    expect(r.errors[0]).not.toMatch(/\n/)
  })

  it('a 404 not_found_error for the model gives a one-line report naming it', async () => {
    const r = await scenario(() => [{ status: 404, body: errorBody(404, 'model: claude-sonnet-9-9') }], { model: 'claude-sonnet-9-9' })
    expect(r.run.outputs['exit-reason']).toBe('error')
    expect(r.fake.requests).toHaveLength(1) // 404 is not retried
    const line = r.comment!.body.split('\n').find(l => l.includes('claude-sonnet-9-9') && /does not know the model/.test(l))
    expect(line).toMatch(/The model API does not know the model "claude-sonnet-9-9"/)
  })

  it('an overloaded error inside the stream is retried like an HTTP one, and the run goes on', async () => {
    const r = await scenario(() => [{ streamError: { type: 'overloaded_error' }, partial: [note('Starting.')] }, text('Done.')])
    expect(r.run.code).toBe(0)
    expect(r.fake.requests).toHaveLength(2)
    expect(r.run.outputs.result).toBe('Done.')
  })
})

describe('a note is agent text: redacted and inert everywhere', () => {
  const token = `ghp_${'N0teT0ken'.repeat(4)}`
  let r: Result
  beforeAll(async () => {
    const evil = `Fixing it.\n::error::forged-by-note\n##[warning]forged-by-note\n@octocat look ${token}`
    r = await scenario(() => [{ content: [note(evil), bashBlock('true')], stop_reason: 'tool_use' }, text('Done.')])
  })

  it('no workflow command, no secret, nobody pinged', () => {
    expect(r.run.code).toBe(0)
    expect(r.run.stdout).toContain('Fixing it.')
    expect(r.run.commands.filter(c => JSON.stringify(c).includes('forged-by-note'))).toEqual([])
    for (const where of [r.comment!.body, r.run.summary, r.run.stdout, ...r.comment!.updates]) expect(where).not.toContain(token)
    for (const where of [r.comment!.body, r.run.summary, ...r.comment!.updates]) expect(where).not.toMatch(/(^|[^\w`])@octocat\b/)
    expect(r.comment!.body).toContain('# Fixing it.')
  })
})

describe("no request carries a setting today's models refuse", () => {
  it('none of temperature, top_p, top_k, a forced tool_choice, a thinking budget, thinking disabled, or a prefilled assistant turn', () => {
    expect(allRequests.length).toBeGreaterThan(5)
    for (const req of allRequests) {
      expect(forbiddenSettings(req.body)).toEqual([])
      expect(req.body.messages.at(-1).role).toBe('user')
    }
  })
})

describe('the fake speaks like the API (so the tests above mean something)', () => {
  let fake: FakeAnthropic
  const client = () => new Anthropic({ apiKey: 'k', baseURL: fake.url, maxRetries: 0 })
  beforeAll(async () => {
    fake = await startFakeAnthropic(() => ({ content: [reasoning('r'), note('n'), bashBlock('ls')], stop_reason: 'tool_use' }))
  })
  afterAll(() => fake.close())
  const ask = (body: object) =>
    client()
      .messages.create(body as never)
      .then(
        () => 200,
        (e: { status?: number }) => e.status
      )

  it('refuses the five settings and a prefill with 400', async () => {
    const base = { model: 'claude-sonnet-5-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }
    expect(await ask(base)).toBe(200)
    expect(await ask({ ...base, temperature: 0.5 })).toBe(400)
    expect(await ask({ ...base, top_k: 3 })).toBe(400)
    expect(await ask({ ...base, tool_choice: { type: 'any' }, tools: [{ name: 'bash', input_schema: { type: 'object' } }] })).toBe(400)
    expect(await ask({ ...base, thinking: { type: 'enabled', budget_tokens: 2000 } })).toBe(400)
    expect(await ask({ ...base, thinking: { type: 'disabled' } })).toBe(400)
    expect(await ask({ ...base, messages: [...base.messages, { role: 'assistant', content: 'Sure:' }] })).toBe(400)
    expect(await ask({ ...base, thinking: { type: 'adaptive', display: 'updates' } })).toBe(400) // without the beta
  })

  it('refuses thinking blocks changed, left out, or sent to another model', async () => {
    const first = await client().messages.create({
      model: 'claude-sonnet-5-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }]
    })
    const [think, , use] = first.content as Array<{ type: string; id?: string; signature?: string }>
    const next = (content: unknown[], model = 'claude-sonnet-5-5') => ({
      model,
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'ok' }] }
      ]
    })
    expect(await ask(next(first.content))).toBe(200)
    expect(await ask(next(first.content, 'claude-opus-5-5'))).toBe(400)
    expect(await ask(next([{ ...think, signature: `${think.signature}x` }, ...first.content.slice(1)]))).toBe(400)
    expect(await ask(next(first.content.slice(1)))).toBe(400)
    expect(await ask(next([first.content[1], first.content[0], first.content[2]]))).toBe(400)
    // another model gets the turn without them: accepted
    expect(await ask(next([use], 'claude-opus-5-5'))).toBe(200)
  })
})
