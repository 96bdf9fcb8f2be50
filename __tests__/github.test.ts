// GitHub API faults and the report comment: the real Octokit (with its retry
// and throttling plugins) against the fake GitHub API, in-process for the
// comment's own logic and end to end (the built action) for the run.
import { afterAll, describe, expect, it } from '@jest/globals'
import http from 'node:http'
import net from 'node:net'
import type { Duplex } from 'node:stream'
import { bash, startFakeAnthropic, text, type Reply } from './helpers/fake-anthropic'
import { startFakeGitHub, type FakeGitHub } from './helpers/fake-github'
import { cleanupRuns, runAction, type ActionRun } from './helpers/run-action'
import { issueCommentEvent, reviewCommentEvent } from './helpers/events'
import { createOctokit } from '../src/github/octokit'
import {
  clampBody,
  FAST_PROGRESS_UPDATES,
  progressInterval,
  PROGRESS_INTERVAL_MS,
  ReportComment,
  SLOW_PROGRESS_INTERVAL_MS
} from '../src/github/comment'
import { summaryText, SUMMARY_MAX_BYTES } from '../src/report/publish'
import { COMMENT_LIMIT, renderFinal, type Outcome, type ReportMeta } from '../src/report/render'
import { emptyUsage, type CommandRecord } from '../src/types'

const KEY = 'sk-ant-api03-githubTestKey0123456789abcdef'
const REPO = { owner: 'Codertocat', repo: 'Hello-World' }
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms))

afterAll(() => cleanupRuns())

describe('ReportComment (in process, real Octokit)', () => {
  // the product's PROGRESS_INTERVAL_MS, shortened: these tests wait it out
  const INTERVAL_MS = 1000
  const setup = async () => {
    const gh = await startFakeGitHub()
    const logs: string[] = []
    const octokit = await createOctokit('ghs_unitTestToken000000000000000000000000', m => logs.push(m), {
      baseUrl: gh.url,
      writeSpacingMs: 0
    })
    const comment = new ReportComment(
      octokit,
      REPO,
      { kind: 'issue', number: 5 },
      s => s.replace(/secret-\w+/g, '***'),
      m => logs.push(m),
      { interval: () => INTERVAL_MS }
    )
    return { gh, logs, comment }
  }
  const patches = (gh: FakeGitHub) => gh.requests.filter(r => r.method === 'PATCH')

  it('writes to GitHub are spaced by the configured interval (github-write-interval-ms); comments three times as far', async () => {
    const gh = await startFakeGitHub()
    try {
      const octokit = await createOctokit('ghs_unitTestToken000000000000000000000000', () => {}, { baseUrl: gh.url, writeSpacingMs: 200 })
      // The throttle starts a write no sooner than the spacing after it started the one before, and it
      // cannot start one before it was asked: so each request is sent at least the spacing after the
      // previous one was asked for, however slow this busy process is (a bound, never a race; timers
      // may round by a millisecond). Without the spacing, a request follows the last within milliseconds.
      const asked: Record<string, number[]> = { POST: [], PATCH: [] }
      const sent: Record<string, number[]> = { POST: [], PATCH: [] }
      const request = {
        fetch: (url: string, init: RequestInit) => (sent[init.method ?? 'GET']?.push(Date.now()), fetch(url, init))
      }
      for (let i = 0; i < 3; i++) {
        asked.POST.push(Date.now())
        await octokit.rest.issues.createComment({ ...REPO, issue_number: 5, body: `c${i}`, request })
      }
      const [first] = gh.comments.keys()
      for (let i = 0; i < 3; i++) {
        asked.PATCH.push(Date.now())
        await octokit.rest.issues.updateComment({ ...REPO, comment_id: first, body: `u${i}`, request })
      }
      expect(gh.requests.filter(r => r.method === 'POST')).toHaveLength(3)
      expect(sent.POST).toHaveLength(3)
      expect(sent.PATCH).toHaveLength(3)
      const afterAsked = (m: string) => sent[m].slice(1).map((at, i) => at - asked[m][i])
      for (const gap of afterAsked('POST')) expect(gap).toBeGreaterThanOrEqual(600 - 2) // comments: three times the spacing
      for (const gap of afterAsked('PATCH')) expect(gap).toBeGreaterThanOrEqual(200 - 2)
    } finally {
      await gh.close()
    }
  })

  it('a failed request is retried after 1, 4 and 9 times the write interval; with none, still not three at once', async () => {
    for (const [writeSpacingMs, base] of [
      [200, 200],
      [0, 100]
    ]) {
      const gh = await startFakeGitHub()
      try {
        const octokit = await createOctokit('ghs_unitTestToken000000000000000000000000', () => {}, { baseUrl: gh.url, writeSpacingMs })
        gh.fail('GET', /\/issues\/5$/, 502, 3)
        await octokit.rest.issues.get({ ...REPO, issue_number: 5 }).catch(() => undefined)
        const at = gh.requests.filter(r => r.method === 'GET').map(r => r.at)
        expect(at).toHaveLength(4)
        // lower bounds only (a little room for when each request reaches the server)
        at.slice(1).forEach((x, i) => expect(x - at[i]).toBeGreaterThanOrEqual([1, 4, 9][i] * base - 20))
      } finally {
        await gh.close()
      }
    }
  })

  it('throttles progress to the newest body and writes the final body last', async () => {
    const { gh, comment } = await setup()
    try {
      await comment.start('starting')
      let rendered = 0
      for (let i = 1; i <= 20; i++) {
        comment.progress(() => (rendered++, `progress ${i} secret-abc`))
        await sleep(10)
      }
      // nothing before INTERVAL_MS has passed since the comment was created
      expect(patches(gh)).toHaveLength(0)
      await sleep(INTERVAL_MS + 700)
      expect(patches(gh).map(p => p.body.body)).toEqual(['progress 20 ***'])
      expect(rendered).toBe(1) // only the body that was sent was rendered
      comment.progress(() => 'progress 21')
      const ref = await comment.finish('final body')
      expect(ref.url).toMatch(/#issuecomment-\d+$/)
      // the queued progress update was dropped: the final body is the last write
      const [c] = gh.comments.values()
      expect(c.updates).toEqual(['starting', 'progress 20 ***', 'final body'])
      comment.progress(() => 'too late')
      await sleep(50)
      expect(c.body).toBe('final body')
    } finally {
      await gh.close()
    }
  })

  it('creates the comment later when creating it failed at start', async () => {
    const { gh, comment, logs } = await setup()
    try {
      gh.fail('POST', /\/issues\/5\/comments$/, 422, 1)
      expect(await comment.start('starting')).toBeUndefined()
      expect(logs.join('\n')).toContain('Could not create the progress comment')
      comment.progress(() => 'progress 1')
      await sleep(INTERVAL_MS + 700)
      expect([...gh.comments.values()].map(c => c.body)).toEqual(['progress 1'])
      await comment.finish('final')
      expect([...gh.comments.values()].map(c => c.updates)).toEqual([['progress 1', 'final']])
    } finally {
      await gh.close()
    }
  })

  it('finish() creates the comment when it never was', async () => {
    const { gh, comment } = await setup()
    try {
      gh.fail('POST', /\/issues\/5\/comments$/, 403, 1)
      await comment.start('starting')
      await comment.finish('final')
      expect([...gh.comments.values()].map(c => c.updates)).toEqual([['final']])
    } finally {
      await gh.close()
    }
  })

  it('posts the report anew when the progress comment was deleted', async () => {
    const { gh, comment, logs } = await setup()
    try {
      const first = await comment.start('starting')
      gh.comments.delete(first!.id)
      const ref = await comment.finish('final')
      expect(ref.id).not.toBe(first!.id)
      expect([...gh.comments.values()].map(c => c.body)).toEqual(['final'])
      expect(logs.join('\n')).toContain('The progress comment is gone')
    } finally {
      await gh.close()
    }
  })

  it('a progress update never waits out a rate limit; the final report does', async () => {
    const { gh, comment, logs } = await setup()
    try {
      await comment.start('starting')
      const limited = {
        body: { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' },
        headers: { 'retry-after': '1' }
      }
      gh.fail('PATCH', /\/issues\/comments\/\d+$/, 403, 1, limited)
      comment.progress(() => 'progress 1')
      await sleep(INTERVAL_MS + 700)
      expect(logs.join('\n')).toContain('skipping this progress update')
      gh.fail('PATCH', /\/issues\/comments\/\d+$/, 403, 1, limited)
      await comment.finish('final')
      const [c] = gh.comments.values()
      expect(c.body).toBe('final')
      expect(patches(gh).filter(p => p.faulted)).toHaveLength(2)
    } finally {
      await gh.close()
    }
  })

  it('the final report goes through 5xx with retries; gives up after them with the error', async () => {
    const { gh, comment } = await setup()
    try {
      await comment.start('starting')
      gh.fail('PATCH', /\/issues\/comments\/\d+$/, 502, 1)
      await comment.finish('final')
      expect([...gh.comments.values()][0].body).toBe('final')
    } finally {
      await gh.close()
    }
  })

  it('slows down after many updates and clamps bodies to the limit', () => {
    expect(progressInterval(0)).toBe(PROGRESS_INTERVAL_MS)
    expect(progressInterval(FAST_PROGRESS_UPDATES - 1)).toBe(PROGRESS_INTERVAL_MS)
    expect(progressInterval(FAST_PROGRESS_UPDATES)).toBe(SLOW_PROGRESS_INTERVAL_MS)
    // GitHub allows 500 content-creating requests an hour: an hour-long run stays under it
    const perHour = FAST_PROGRESS_UPDATES + (3_600_000 - FAST_PROGRESS_UPDATES * PROGRESS_INTERVAL_MS) / SLOW_PROGRESS_INTERVAL_MS
    expect(perHour).toBeLessThan(500)

    expect(clampBody('short')).toBe('short')
    const long = clampBody('😀'.repeat(40_000))
    expect(long.length).toBeLessThanOrEqual(COMMENT_LIMIT)
    expect(long).toMatch(/cut to fit GitHub’s comment limit\]\*$/)
    expect(long).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/) // no broken surrogate pair
  })
})

describe('the GitHub client and proxies', () => {
  it("with a proxy set, GitHub is reached through it (@actions/github's client honours it); without, directly", async () => {
    const gh = await startFakeGitHub()
    const target = new URL(gh.url)
    const tunnels: string[] = []
    // a forward proxy that tunnels every CONNECT to the fake GitHub, whatever host it names
    const proxy = http.createServer((_req, res) => res.writeHead(405).end())
    proxy.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      tunnels.push(String(req.url))
      const up = net.connect(Number(target.port), target.hostname, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n')
        up.write(head)
        up.pipe(socket).on('error', () => up.destroy())
        socket.pipe(up).on('error', () => socket.destroy())
      })
      up.on('error', () => socket.destroy())
      socket.on('error', () => up.destroy())
    })
    await new Promise<void>(r => proxy.listen(0, '127.0.0.1', () => r()))
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, HTTPS_PROXY: process.env.HTTPS_PROXY, NO_PROXY: process.env.NO_PROXY }
    const token = 'ghs_unitTestToken000000000000000000000000'
    try {
      // @actions/github picks its proxy for GITHUB_API_URL (https://api.github.com here): HTTPS_PROXY
      process.env.HTTPS_PROXY = process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`
      delete process.env.NO_PROXY
      // a name only the proxy can reach: a direct request could not resolve it
      const via = await createOctokit(token, () => {}, { baseUrl: `http://github.invalid:${target.port}`, writeSpacingMs: 0 })
      await via.rest.issues.createComment({ ...REPO, issue_number: 5, body: 'through the proxy' })
      expect(tunnels).toEqual([`github.invalid:${target.port}`])
      delete process.env.HTTP_PROXY
      delete process.env.HTTPS_PROXY
      const direct = await createOctokit(token, () => {}, { baseUrl: gh.url, writeSpacingMs: 0 })
      await direct.rest.issues.createComment({ ...REPO, issue_number: 5, body: 'direct' })
      expect(tunnels).toHaveLength(1)
      const bodies = gh.requests.filter(r => r.method === 'POST').map(r => (r.body as { body?: string }).body)
      expect(bodies).toEqual(['through the proxy', 'direct'])
      expect(gh.requests.every(r => r.headers.authorization === `token ${token}`)).toBe(true)
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      proxy.closeAllConnections()
      await new Promise(r => proxy.close(r))
      await gh.close()
    }
  })
})

describe('report size', () => {
  const meta: ReportMeta = {
    model: 'claude-sonnet-4-6',
    sandbox: 'none',
    limits: { maxTurns: 50, timeoutMinutes: 30, maxTokens: 8000 },
    elapsedMs: 1000
  }
  const record = (i: number, output: string): CommandRecord => ({
    command: `echo cmd-${i}`,
    exitCode: 0,
    durationMs: 5,
    output,
    truncated: false,
    timedOut: false,
    blocked: false
  })
  const outcome = (commands: CommandRecord[]): Outcome => ({
    finalText: 'The final text.',
    exitReason: 'end_turn',
    turns: 3,
    commands,
    usage: emptyUsage(),
    costUsd: null
  })

  it('keeps the job summary under 1 MiB in bytes, even for multi-byte output', () => {
    // 150 commands of 5,000 CJK characters: 750,000 characters but 2.25 MB of UTF-8
    const o = outcome(Array.from({ length: 150 }, (_, i) => record(i + 1, '漢'.repeat(5000))))
    const s = summaryText(o, meta, x => x)
    expect(Buffer.byteLength(s)).toBeLessThanOrEqual(SUMMARY_MAX_BYTES)
    expect(s).toContain('The final text.')
    // every command is still listed, with its output shortened
    for (let i = 1; i <= 150; i++) expect(s).toContain(`$ echo cmd-${i}\n`)
    expect(s).toContain('characters left out to keep the job summary under 1 MiB')
  })

  it('leaves a summary that fits untouched', () => {
    const o = outcome([record(1, 'small output')])
    expect(summaryText(o, meta, x => x)).toContain('small output')
    const comment = renderFinal(o, meta)
    expect(comment.length).toBeLessThanOrEqual(COMMENT_LIMIT)
  })
})

// ---------------------------------------------------------------------------
// End to end: the built action.

interface E2E {
  run: ActionRun
  gh: FakeGitHub
}

async function agent(
  script: Reply[],
  setup: (gh: FakeGitHub) => void,
  payload = issueCommentEvent({ body: '/agent go', issueNumber: 9 })
): Promise<E2E> {
  const anthropic = await startFakeAnthropic(script)
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  setup(gh)
  try {
    const run = await runAction({
      eventName: payload.comment?.pull_request_url ? 'pull_request_review_comment' : 'issue_comment',
      payload,
      inputs: { 'anthropic-api-key': KEY, sandbox: 'none' },
      env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_API_URL: gh.url }
    })
    for (const c of gh.comments.values()) for (const b of c.updates) expect(b).not.toContain(KEY)
    return { run, gh }
  } finally {
    await anthropic.close()
    await gh.close()
  }
}

const annotations = (run: ActionRun, kind: string) =>
  run.commands
    .filter(c => c.command === kind)
    .map(c => c.message)
    .join('\n')
const steps = (n: number, final: string): Reply[] => [
  ...Array.from({ length: n }, (_, i) => bash(`sleep 0.4; echo step-${i + 1}`)),
  text(final)
]

describe('GitHub faults, end to end', () => {
  it('PATCH failing every other time: the run still ends with the right final comment', async () => {
    const { run, gh } = await agent(steps(14, 'All steps done.'), g => g.failEveryOther('PATCH', /\/issues\/comments\/\d+$/, 502))
    expect(run.code).toBe(0)
    expect(run.outputs['exit-reason']).toBe('end_turn')
    const comments = [...gh.comments.values()]
    expect(comments).toHaveLength(1)
    expect(comments[0].body).toContain('All steps done.')
    expect(comments[0].body).toContain('Commands (14)')
    expect(comments[0].body).not.toContain('Working on it')
    expect(gh.requests.filter(r => r.method === 'PATCH' && r.faulted).length).toBeGreaterThanOrEqual(1)
    expect(run.outputs['comment-url']).toContain(`#issuecomment-${comments[0].id}`)
  })

  it('the reaction fails (500): logged, retried once, and the run goes on', async () => {
    const { run, gh } = await agent([bash('echo hi'), text('Fine without eyes.')], g => g.fail('POST', /\/reactions$/, 500, 100))
    expect(run.code).toBe(0)
    expect(run.outputs['exit-reason']).toBe('end_turn')
    expect(gh.requests.filter(r => r.path.endsWith('/reactions'))).toHaveLength(2)
    expect(annotations(run, 'warning')).toContain('Could not add the eyes reaction')
    expect([...gh.comments.values()][0].body).toContain('Fine without eyes.')
  })

  it('the comment cannot be created at start: it is created later, once', async () => {
    const { run, gh } = await agent(steps(2, 'Reported anyway.'), g => g.fail('POST', /\/issues\/9\/comments$/, 422, 1))
    expect(run.code).toBe(0)
    const comments = [...gh.comments.values()]
    expect(comments).toHaveLength(1)
    expect(comments[0].body).toContain('Reported anyway.')
    expect(annotations(run, 'warning')).toContain('Could not create the progress comment')
    expect(run.outputs['comment-url']).toContain(`#issuecomment-${comments[0].id}`)
  })

  it('the final comment fails for good: the step fails saying where the report is, the summary holds it, the post step tries again', async () => {
    const payload = issueCommentEvent({ body: '/agent go', issueNumber: 9 })
    const { run, gh } = await agent(
      [bash('echo hi'), text('The report text.')],
      g => g.fail('PATCH', /\/issues\/comments\/\d+$/, 500, 1000),
      payload
    )
    expect(run.code).toBe(1)
    expect(run.outputs).toMatchObject({ 'exit-reason': 'end_turn', result: 'The report text.', 'comment-url': '' })
    const [c] = gh.comments.values()
    expect(annotations(run, 'error')).toContain(
      `The report could not be written to the comment ${`https://github.com/Codertocat/Hello-World/issues/9#issuecomment-${c.id}`}`
    )
    expect(annotations(run, 'error')).toContain('the job summary and the step outputs hold the report.')
    expect(run.summary).toContain('The report text.')
    expect(run.summary).toContain('$ echo hi\nhi')
    expect(run.state.done).toBeUndefined()

    // The post step tries again from the saved transcript. (Against a GitHub
    // where that comment is gone: it posts the report as a new comment.)
    const gh2 = await startFakeGitHub()
    try {
      const post = await runAction({
        eventName: 'issue_comment',
        payload,
        inputs: { 'anthropic-api-key': KEY, sandbox: 'none' },
        env: { GITHUB_API_URL: gh2.url },
        post: true,
        state: run.state
      })
      expect(post.code).toBe(0)
      const [again] = gh2.comments.values()
      expect(again.issue_number).toBe(9)
      expect(again.body).toContain('The report text.')
      expect(again.body).not.toContain('Cancelled')
      expect(again.body).toContain('$ echo hi\nhi')
    } finally {
      await gh2.close()
    }
  })

  it('a review comment: the report is a reply in its thread, updated in place', async () => {
    const payload = reviewCommentEvent({ body: '/agent look here', commentId: 4242, pullNumber: 2 })
    const { run, gh } = await agent([bash('echo review'), text('Reviewed.')], () => {}, payload)
    expect(run.code).toBe(0)
    const [c] = gh.comments.values()
    expect(c).toMatchObject({ kind: 'review', pull_number: 2, in_reply_to_id: 4242 })
    expect(c.body).toContain('Reviewed.')
    expect(gh.reactions).toEqual([expect.objectContaining({ subject: 'review_comment', id: 4242, content: 'eyes' })])
  })
})
