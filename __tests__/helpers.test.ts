// The test doubles themselves, exercised with the real clients the action uses.
import { afterAll, describe, expect, it } from '@jest/globals'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import Anthropic from '@anthropic-ai/sdk'
import { getOctokit } from '@actions/github'
import { bash, startFakeAnthropic, text, toolUse, type RecordedRequest } from './helpers/fake-anthropic'
import { startFakeGitHub } from './helpers/fake-github'
import { cleanupRuns, parseFileCommands, readActionYml, REPO_ROOT, runAction } from './helpers/run-action'
import { examplePayload, issueCommentEvent, issuesEvent, repoOf, reviewCommentEvent, workflowDispatchEvent } from './helpers/events'

const client = (url: string): Anthropic => new Anthropic({ apiKey: 'sk-ant-test', baseURL: url, maxRetries: 0 })
const bashTool = {
  name: 'bash',
  description: 'run a command',
  input_schema: { type: 'object' as const, properties: { command: { type: 'string' } }, required: ['command'] }
}

const tempDirs: string[] = []
const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  tempDirs.push(dir)
  return dir
}

afterAll(() => {
  cleanupRuns()
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

describe('fake Anthropic', () => {
  it('answers scripted replies to the real SDK and records the requests', async () => {
    const fake = await startFakeAnthropic([bash('ls -la', 'pwd'), text('all done')])
    try {
      const anthropic = client(fake.url)
      const first = await anthropic.messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 100,
        tools: [bashTool],
        messages: [{ role: 'user', content: 'list files' }]
      })
      expect(first.stop_reason).toBe('tool_use')
      expect(first.model).toBe('claude-sonnet-4-6')
      expect(first.id).toMatch(/^msg_/)
      const uses = first.content.filter(b => b.type === 'tool_use')
      expect(uses.map(u => u.input)).toEqual([{ command: 'ls -la' }, { command: 'pwd' }])
      expect(uses[0].id).toMatch(/^toolu_/)
      expect(uses[0].id).not.toBe(uses[1].id)

      const second = await anthropic.messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 100,
        tools: [bashTool],
        messages: [
          { role: 'user', content: 'list files' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: uses.map(u => ({ type: 'tool_result' as const, tool_use_id: u.id, content: 'ok' })) }
        ]
      })
      expect(second.stop_reason).toBe('end_turn')
      expect(second.content).toEqual([{ type: 'text', text: 'all done' }])
      expect(second.usage.input_tokens).toBeGreaterThan(first.usage.input_tokens)

      expect(fake.requests).toHaveLength(2)
      expect(fake.requests[0].path).toBe('/v1/messages')
      expect(fake.requests[0].method).toBe('POST')
      // this SDK version sends the key as a bearer token; older ones used x-api-key
      expect(fake.requests[0].headers['x-api-key'] ?? fake.requests[0].headers.authorization).toMatch(/sk-ant-test$/)
      expect(fake.requests[0].headers['anthropic-version']).toBeDefined()
      expect(fake.requests[1].body.messages).toHaveLength(3)
      expect(fake.remaining()).toBe(0)

      // the script ran out: a loud 500
      await expect(anthropic.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toThrow(
        /script ran out/
      )
    } finally {
      await fake.close()
    }
  })

  it('turns error replies into the SDK typed errors, with retry-after honoured by the retrying client', async () => {
    const fake = await startFakeAnthropic([
      { status: 401 },
      { status: 529 },
      { status: 429, headers: { 'retry-after': '0' } },
      text('after retry')
    ])
    try {
      const anthropic = client(fake.url)
      const req = { model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user' as const, content: 'hi' }] }
      const e401 = await anthropic.messages.create(req).catch((e: unknown) => e)
      expect(e401).toBeInstanceOf(Anthropic.AuthenticationError)
      expect((e401 as InstanceType<typeof Anthropic.AuthenticationError>).status).toBe(401)
      expect(String((e401 as Error).message)).toMatch(/authentication_error/)
      const e529 = await anthropic.messages.create(req).catch((e: unknown) => e)
      expect(e529).toBeInstanceOf(Anthropic.InternalServerError)
      expect(String((e529 as Error).message)).toMatch(/overloaded_error/)

      const retrying = new Anthropic({ apiKey: 'sk-ant-test', baseURL: fake.url, maxRetries: 1 })
      const ok = await retrying.messages.create(req)
      expect(ok.content[0]).toMatchObject({ type: 'text', text: 'after retry' })
      expect(fake.requests).toHaveLength(4)
    } finally {
      await fake.close()
    }
  })

  it('checks the API key when asked to', async () => {
    const fake = await startFakeAnthropic([text('ok')], { apiKey: 'sk-ant-right' })
    try {
      const wrong = await client(fake.url)
        .messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e)
      expect(wrong).toBeInstanceOf(Anthropic.AuthenticationError)
      const right = new Anthropic({ apiKey: 'sk-ant-right', baseURL: fake.url, maxRetries: 0 })
      expect(
        (await right.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).content[0]
      ).toMatchObject({ text: 'ok' })
    } finally {
      await fake.close()
    }
  })

  it('rejects a conversation the real API would reject without consuming the script', async () => {
    const fake = await startFakeAnthropic([text('never')])
    try {
      const err = await client(fake.url)
        .messages.create({
          model: 'claude-sonnet-4-6',
          max_tokens: 10,
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }] },
            { role: 'user', content: 'forgot the tool_result' }
          ]
        })
        .catch((e: unknown) => e)
      expect(err).toBeInstanceOf(Anthropic.BadRequestError)
      expect(String((err as Error).message)).toMatch(/tool_use` ids were found without `tool_result`/)
      expect(fake.remaining()).toBe(1)
      expect(fake.requests[0].error).toMatch(/toolu_1/)
    } finally {
      await fake.close()
    }
  })

  it('models prompt caching from cache_control breakpoints', async () => {
    const fake = await startFakeAnthropic(() => text('ok'))
    try {
      const anthropic = client(fake.url)
      const system = [
        { type: 'text' as const, text: 'You are a careful agent. '.repeat(200), cache_control: { type: 'ephemeral' as const } }
      ]
      const turn1 = [
        {
          role: 'user' as const,
          content: [{ type: 'text' as const, text: 'task '.repeat(100), cache_control: { type: 'ephemeral' as const } }]
        }
      ]
      const r1 = await anthropic.messages.create({ model: 'm', max_tokens: 10, system, messages: turn1 })
      expect(r1.usage.cache_read_input_tokens).toBe(0)
      expect(r1.usage.cache_creation_input_tokens).toBeGreaterThan(1000)
      const turn2 = [
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'task '.repeat(100) }] },
        { role: 'assistant' as const, content: 'ok' },
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'more', cache_control: { type: 'ephemeral' as const } }] }
      ]
      const r2 = await anthropic.messages.create({ model: 'm', max_tokens: 10, system, messages: turn2 })
      expect(r2.usage.cache_read_input_tokens).toBe(r1.usage.cache_creation_input_tokens)
      expect(r2.usage.cache_creation_input_tokens).toBeGreaterThan(0)
      expect(r2.usage.cache_creation_input_tokens).toBeLessThan(50)
      // no breakpoints: everything is plain input
      const r3 = await anthropic.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] })
      expect(r3.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 })
      expect(r3.usage.input_tokens).toBeGreaterThan(0)
      // explicit usage wins
      await fake.close()
      const fake2 = await startFakeAnthropic([text('x', { input_tokens: 7, output_tokens: 3 })])
      const r4 = await client(fake2.url).messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hello' }] })
      expect(r4.usage).toMatchObject({ input_tokens: 7, output_tokens: 3 })
      await fake2.close()
    } finally {
      await fake.close()
    }
  })

  it('streams, accepts a path prefix, uses function scripts, hangs until closed', async () => {
    const seen: Array<[RecordedRequest, number]> = []
    const fake = await startFakeAnthropic((req, index) => {
      seen.push([req, index])
      return index === 0 ? toolUse('bash', { command: 'echo hi' }) : { hang: true }
    })
    const anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: `${fake.url}/proxy`, maxRetries: 0, timeout: 60000 })
    const msg = await anthropic.messages
      .stream({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage()
    expect(msg.content[0]).toMatchObject({ type: 'tool_use', name: 'bash', input: { command: 'echo hi' } })
    expect(msg.stop_reason).toBe('tool_use')
    expect(fake.requests[0].path).toBe('/proxy/v1/messages')
    const hanging = anthropic.messages
      .create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hang' }] })
      .catch((e: unknown) => e)
    while (fake.requests.length < 2) await new Promise(r => setTimeout(r, 10))
    await fake.close()
    expect(await hanging).toBeInstanceOf(Anthropic.APIConnectionError)
    expect(seen.map(([, i]) => i)).toEqual([0, 1])
  })
})

describe('fake GitHub', () => {
  it('serves comments, reactions and permissions to the real Octokit', async () => {
    const gh = await startFakeGitHub({ permissions: { alice: 'maintain', bob: 'triage', carol: 'admin' } })
    try {
      const octokit = getOctokit('ghs_x', { baseUrl: gh.url })
      const owner = 'Codertocat'
      const repo = 'Hello-World'
      const created = await octokit.rest.issues.createComment({ owner, repo, issue_number: 1, body: 'Working on it…' })
      expect(created.status).toBe(201)
      expect(created.data.user?.login).toBe('github-actions[bot]')
      expect(created.data.html_url).toBe(`https://github.com/${owner}/${repo}/issues/1#issuecomment-${created.data.id}`)
      const updated = await octokit.rest.issues.updateComment({ owner, repo, comment_id: created.data.id, body: 'Done.' })
      expect(updated.data.body).toBe('Done.')
      const fetched = await octokit.rest.issues.getComment({ owner, repo, comment_id: created.data.id })
      expect(fetched.data.body).toBe('Done.')
      expect(gh.comments.get(created.data.id)).toMatchObject({
        kind: 'issue',
        issue_number: 1,
        body: 'Done.',
        updates: ['Working on it…', 'Done.']
      })

      const reply = await octokit.rest.pulls.createReviewComment({
        owner,
        repo,
        pull_number: 2,
        in_reply_to: 284312630,
        commit_id: 'a'.repeat(40),
        path: 'README.md',
        body: 'On it'
      })
      expect(reply.status).toBe(201)
      expect(gh.comments.get(reply.data.id)).toMatchObject({ kind: 'review', pull_number: 2, in_reply_to_id: 284312630 })
      await octokit.rest.pulls.updateReviewComment({ owner, repo, comment_id: reply.data.id, body: 'Finished' })
      expect(gh.comments.get(reply.data.id)?.updates).toEqual(['On it', 'Finished'])

      const reaction = await octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: 492700400, content: 'eyes' })
      expect(reaction.status).toBe(201)
      await octokit.rest.reactions.createForPullRequestReviewComment({ owner, repo, comment_id: 284312630, content: 'rocket' })
      await octokit.rest.reactions.createForIssue({ owner, repo, issue_number: 1, content: '+1' })
      expect(gh.reactions.map(({ subject, id, content }) => ({ subject, id, content }))).toEqual([
        { subject: 'issue_comment', id: 492700400, content: 'eyes' },
        { subject: 'review_comment', id: 284312630, content: 'rocket' },
        { subject: 'issue', id: 1, content: '+1' }
      ])

      const alice = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: 'alice' })
      expect(alice.data).toMatchObject({ permission: 'write', role_name: 'maintain', user: { login: 'alice' } })
      const bob = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: 'Bob' })
      expect(bob.data).toMatchObject({ permission: 'read', role_name: 'triage' })
      const carol = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: 'carol' })
      expect(carol.data.permission).toBe('admin')
      await expect(octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: 'mallory' })).rejects.toMatchObject({
        status: 404
      })

      await expect(octokit.rest.issues.createComment({ owner, repo, issue_number: 1, body: 'x'.repeat(65537) })).rejects.toMatchObject({
        status: 422
      })
      await octokit.rest.issues.createComment({ owner, repo, issue_number: 1, body: 'x'.repeat(65536) })

      expect(gh.unexpected).toEqual([])
      await expect(octokit.rest.issues.get({ owner, repo, issue_number: 1 })).rejects.toMatchObject({ status: 404 })
      expect(gh.unexpected.map(r => `${r.method} ${r.path}`)).toEqual([`GET /repos/${owner}/${repo}/issues/1`])
      expect(gh.requests[0].headers.authorization).toBe('token ghs_x')
    } finally {
      await gh.close()
    }
  })

  it("answers what GitHub's REST description refuses as GitHub would, and then fails the test at close", async () => {
    const gh = await startFakeGitHub({ rest: 'answer' })
    const app = getOctokit('ghs_x', { baseUrl: gh.url })
    const args = { owner: 'o', repo: 'r', pull_number: 2, comment_id: 7, body: 'hi' }
    // not enabled for GitHub Apps: the job token gets 403, a personal token does not
    await expect(app.rest.pulls.createReplyForReviewComment(args)).rejects.toMatchObject({ status: 403 })
    expect((await getOctokit('ghp_x', { baseUrl: gh.url }).rest.pulls.createReplyForReviewComment(args)).status).toBe(201)
    // a body the operation does not accept, a route GitHub does not have, a query parameter it does not know
    await expect(app.request('POST /repos/o/r/issues/1/comments', { body: 42 })).rejects.toMatchObject({ status: 422 })
    await expect(app.request('POST /repos/o/r/issues/1/commentz', { body: 'x' })).rejects.toMatchObject({ status: 404 })
    await expect(app.request('GET /repos/o/r/issues/1/comments', { perpage: 5 })).rejects.toMatchObject({ status: 422 })
    expect(gh.nonconforming.map(r => r.status)).toEqual([403, 422, 404, 422])
    await gh.close()
    const strict = await startFakeGitHub()
    await getOctokit('ghs_x', { baseUrl: strict.url })
      .rest.pulls.createReplyForReviewComment(args)
      .catch(() => undefined)
    await expect(strict.close()).rejects.toThrow(/pulls\/create-reply-for-review-comment\) is not enabled for GitHub Apps/)
  })

  it('injects faults', async () => {
    const gh = await startFakeGitHub()
    try {
      const octokit = getOctokit('ghs_x', { baseUrl: gh.url })
      const args = { owner: 'o', repo: 'r', issue_number: 3, body: 'hi' }
      gh.fail('POST', /\/issues\/\d+\/comments$/, 502, 1, { body: { message: 'Server Error' } })
      await expect(octokit.rest.issues.createComment(args)).rejects.toMatchObject({ status: 502 })
      expect((await octokit.rest.issues.createComment(args)).status).toBe(201)
      gh.failEveryOther('*', /\/comments$/, 500)
      expect((await octokit.rest.issues.createComment(args)).status).toBe(201)
      await expect(octokit.rest.issues.createComment(args)).rejects.toMatchObject({ status: 500 })
      expect((await octokit.rest.issues.createComment(args)).status).toBe(201)
      expect(gh.requests.filter(r => r.faulted).map(r => r.status)).toEqual([502, 500])
      expect(gh.comments.size).toBe(3)

      const anonymous = await fetch(`${gh.url}/repos/o/r/issues/3/reactions`, { method: 'POST', body: JSON.stringify({ content: 'eyes' }) })
      expect(anonymous.status).toBe(401)
      expect(await anonymous.json()).toMatchObject({ message: 'Requires authentication' })
    } finally {
      await gh.close()
    }
  })
})

describe('runAction', () => {
  it('runs an entry like the runner: inputs, outputs, state, env', async () => {
    const dir = tempDir('entry-')
    const entry = join(dir, 'entry.mjs')
    writeFileSync(
      entry,
      `import fs from 'node:fs'
const d = 'ghadelimiter_0e9a7f52-1b3c-4d5e-8f90-a1b2c3d4e5f6'
fs.appendFileSync(process.env.GITHUB_OUTPUT, 'report<<' + d + '\\nline 1\\nline 2\\n' + d + '\\n')
fs.appendFileSync(process.env.GITHUB_OUTPUT, 'plain=a=b\\n')
fs.appendFileSync(process.env.GITHUB_STATE, 'pid<<' + d + '\\n' + process.pid + '\\n' + d + '\\n')
fs.appendFileSync(process.env.GITHUB_STEP_SUMMARY, '## Summary\\n')
console.log('input=' + process.env['INPUT_MAX-TURNS'])
console.log('spaced=' + process.env['INPUT_SOME_INPUT'])
console.log('state=' + process.env.STATE_pid)
console.log('key=' + (process.env.ANTHROPIC_API_KEY ?? 'unset') + ' token=' + (process.env.GITHUB_TOKEN ?? 'unset'))
console.log('cwd=' + process.cwd())
console.log('::add-mask::sk-ant-secret')
console.log('::error file=a.ts,line=3::bad%0Athing')
process.exitCode = 3
`
    )
    const payload = issueCommentEvent({ body: '/agent hi', login: 'alice' })
    const chunks: string[] = []
    const run = await runAction({
      eventName: 'issue_comment',
      payload,
      inputs: { 'max-turns': '3', 'some input': 'x' },
      entry,
      env: { EXTRA: '1', HOME: undefined },
      onStdout: c => chunks.push(c)
    })
    expect(run.code).toBe(3)
    expect(run.stdout).toContain('input=3\n')
    expect(run.stdout).toContain('spaced=x\n')
    expect(run.stdout).toContain('state=undefined\n')
    expect(run.stdout).toContain('key=unset token=unset\n')
    expect(run.stdout).toContain(`cwd=${run.workspace}\n`)
    expect(chunks.join('')).toBe(run.stdout)
    expect(run.outputs).toEqual({ report: 'line 1\nline 2', plain: 'a=b' })
    expect(run.state.pid).toMatch(/^\d+$/)
    expect(run.summary).toBe('## Summary\n')
    expect(run.masks).toEqual(['sk-ant-secret'])
    expect(run.commands).toContainEqual({ command: 'error', properties: { file: 'a.ts', line: '3' }, message: 'bad\nthing' })
    expect(run.env).toMatchObject({
      GITHUB_ACTIONS: 'true',
      GITHUB_EVENT_NAME: 'issue_comment',
      GITHUB_REPOSITORY: 'Codertocat/Hello-World',
      GITHUB_REPOSITORY_OWNER: 'Codertocat',
      GITHUB_ACTOR: 'alice',
      'INPUT_MAX-TURNS': '3',
      EXTRA: '1'
    })
    expect(run.env.HOME).toBeUndefined()
    expect(run.env.NODE_OPTIONS).toBeUndefined()
    expect(run.env.GITHUB_SHA).toMatch(/^[0-9a-f]{40}$/)

    const post = await runAction({ eventName: 'issue_comment', payload, inputs: {}, entry, post: true, state: run.state })
    expect(post.stdout).toContain(`state=${run.state.pid}\n`)
  })

  it('wires the real @actions/core, @actions/github and SDK in the child to the fakes', async () => {
    const anthropic = await startFakeAnthropic([text('hello from the model')], { apiKey: 'sk-ant-e2e' })
    const gh = await startFakeGitHub({ acceptTokens: ['ghs_e2e'] })
    try {
      const mod = (p: string): string => pathToFileURL(join(REPO_ROOT, 'node_modules', p)).href
      const dir = tempDir('entry-')
      const entry = join(dir, 'e2e.mjs')
      writeFileSync(
        entry,
        `import * as core from '${mod('@actions/core/lib/core.js')}'
import { getOctokit, context } from '${mod('@actions/github/lib/github.js')}'
import Anthropic from '${mod('@anthropic-ai/sdk/index.mjs')}'
const key = core.getInput('anthropic-api-key')
core.setSecret(key)
const m = await new Anthropic({ apiKey: key, maxRetries: 0 }).messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, messages: [{ role: 'user', content: context.payload.comment.body }] })
const c = await getOctokit(core.getInput('github-token')).rest.issues.createComment({ ...context.repo, issue_number: context.issue.number, body: m.content[0].text })
core.setOutput('comment-url', c.data.html_url)
core.setOutput('multi', 'a\\nb')
core.saveState('comment-id', String(c.data.id))
core.exportVariable('DONE', 'yes')
await core.summary.addRaw('done').write()
`
      )
      const run = await runAction({
        eventName: 'issue_comment',
        payload: issueCommentEvent({ body: '/agent say hi', issueNumber: 7 }),
        inputs: { 'anthropic-api-key': 'sk-ant-e2e', 'github-token': 'ghs_e2e' },
        entry,
        env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_API_URL: gh.url }
      })
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      const [comment] = gh.comments.values()
      expect(comment).toMatchObject({ issue_number: 7, body: 'hello from the model', repo: 'Codertocat/Hello-World' })
      expect(run.outputs).toEqual({
        'comment-url': `https://github.com/Codertocat/Hello-World/issues/7#issuecomment-${comment.id}`,
        multi: 'a\nb'
      })
      expect(run.state).toEqual({ 'comment-id': String(comment.id) })
      expect(run.exportedEnv).toEqual({ DONE: 'yes' })
      expect(run.summary).toBe('done')
      expect(run.masks).toEqual(['sk-ant-e2e'])
      expect(anthropic.requests[0].body.messages[0].content).toBe('/agent say hi')
      expect(gh.unexpected).toEqual([])
    } finally {
      await anthropic.close()
      await gh.close()
    }
  })

  it('completes inputs from action.yml like the runner and takes the entry from runs.main', async () => {
    const dir = tempDir('action-')
    writeFileSync(
      join(dir, 'action.yml'),
      `name: t
inputs:
  anthropic-api-key:
    required: true
  github-token:
    default: \${{ github.token }}
  trigger-phrase:
    default: '/agent'
  issue-number:
    default: \${{ github.event.issue.number || github.event.pull_request.number }}
runs:
  using: node20
  main: main.mjs
`
    )
    writeFileSync(
      join(dir, 'main.mjs'),
      `console.log(JSON.stringify(Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('INPUT_')))))\n`
    )
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent x', issueNumber: 12 }),
      inputs: { 'anthropic-api-key': 'sk-ant-k' },
      actionYml: join(dir, 'action.yml'),
      githubToken: 'ghs_job'
    })
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({
      'INPUT_ANTHROPIC-API-KEY': 'sk-ant-k',
      'INPUT_GITHUB-TOKEN': 'ghs_job',
      'INPUT_TRIGGER-PHRASE': '/agent',
      'INPUT_ISSUE-NUMBER': '12'
    })
    await expect(
      runAction({ eventName: 'issue_comment', payload: {}, inputs: { 'max-turn': '1' }, actionYml: join(dir, 'action.yml') })
    ).rejects.toThrow(/max-turn/)
  })

  it('lets a test signal the child from onStdout, and kills it on timeout', async () => {
    const dir = tempDir('entry-')
    const entry = join(dir, 'sig.mjs')
    writeFileSync(
      entry,
      `process.on('SIGINT', () => { console.log('got SIGINT'); process.exit(130) })\nconsole.log('ready')\nsetInterval(() => {}, 1000)\n`
    )
    const run = await runAction({
      eventName: 'workflow_dispatch',
      payload: workflowDispatchEvent(),
      inputs: {},
      entry,
      onStdout: (chunk, child) => {
        if (chunk.includes('ready')) child.kill('SIGINT')
      }
    })
    expect(run.code).toBe(130)
    expect(run.stdout).toContain('got SIGINT')
    expect(run.env.GITHUB_REPOSITORY).toBe('octo-org/octo-repo')

    const hang = join(dir, 'hang.mjs')
    writeFileSync(hang, `setInterval(() => {}, 1000)\n`)
    await expect(runAction({ eventName: 'workflow_dispatch', payload: {}, inputs: {}, entry: hang, timeoutMs: 500 })).rejects.toThrow(
      /did not finish within 500ms/
    )
  })

  it('parses the file-command and action.yml formats', () => {
    expect(parseFileCommands('a<<EOF\nx\n\nEOF\nb=c\n')).toEqual({ a: 'x\n', b: 'c' })
    const dir = tempDir('yml-')
    writeFileSync(
      join(dir, 'action.yml'),
      `name: 'x'
description: >
  folded
inputs:
  anthropic-api-key:
    description: 'key: here'
    required: false
  github-token:
    description: |
      multi
      line
    default: \${{ github.token }}
  trigger-phrase:
    default: "/agent" # comment
  blocked-commands:
    default: |
      sudo
      rm -rf /
runs:
  using: node20
  main: dist/index.js
  post: dist/index.js
`
    )
    const m = readActionYml(join(dir, 'action.yml'))
    expect(Object.fromEntries(m.inputs)).toEqual({
      'anthropic-api-key': '',
      'github-token': '${{ github.token }}',
      'trigger-phrase': '/agent',
      'blocked-commands': 'sudo\nrm -rf /\n'
    })
    expect(m.runs).toEqual({ using: 'node20', main: 'dist/index.js', post: 'dist/index.js' })
  })
})

describe('events', () => {
  it('returns real payloads', () => {
    expect(examplePayload('issue_comment', 'created')).toMatchObject({ action: 'created', comment: { body: expect.any(String) } })
    expect(examplePayload('issues', 'opened').issue.title).toEqual(expect.any(String))
    expect(examplePayload('issues', 'labeled').label.name).toBe('bug')
    expect(examplePayload('pull_request_review_comment', 'created').pull_request.number).toBe(2)
    expect(examplePayload('workflow_dispatch').workflow).toMatch(/\.yml$/)
    expect(() => examplePayload('issues', 'nope')).toThrow(/opened/)
    // deep copies
    examplePayload('issues', 'opened').issue.title = 'changed'
    expect(examplePayload('issues', 'opened').issue.title).not.toBe('changed')
  })

  it('builds events with overrides', () => {
    const c = issueCommentEvent({ body: '/agent fix it', login: 'alice', onPullRequest: true, issueNumber: 42, commentId: 99 })
    expect(c.comment).toMatchObject({ body: '/agent fix it', id: 99, user: { login: 'alice', type: 'User' }, author_association: 'NONE' })
    expect(c.sender.login).toBe('alice')
    expect(c.issue.number).toBe(42)
    expect(c.issue.pull_request.url).toMatch(/\/pulls\/42$/)
    expect(c.comment.html_url).toBe('https://github.com/Codertocat/Hello-World/pull/42#issuecomment-99')
    expect(repoOf(c)).toEqual({ owner: 'Codertocat', repo: 'Hello-World' })
    const plain = issueCommentEvent({ body: 'x', login: 'dependabot[bot]' })
    expect(plain.issue.pull_request).toBeUndefined()
    expect(plain.comment.user.type).toBe('Bot')
    expect(issueCommentEvent({ body: 'x' }).comment.author_association).toBe('OWNER')

    const opened = issuesEvent({ title: 'T', body: '/agent B', login: 'bob' })
    expect(opened).toMatchObject({
      action: 'opened',
      issue: { title: 'T', body: '/agent B', user: { login: 'bob' } },
      sender: { login: 'bob' }
    })
    const labeled = issuesEvent({ action: 'labeled', label: 'agent', sender: 'carol' })
    expect(labeled.label.name).toBe('agent')
    expect(labeled.sender.login).toBe('carol')

    const rc = reviewCommentEvent({ body: '/agent nit', login: 'dave', pullNumber: 5, commentId: 77 })
    expect(rc).toMatchObject({
      action: 'created',
      comment: { id: 77, body: '/agent nit', user: { login: 'dave' } },
      pull_request: { number: 5 }
    })

    const wd = workflowDispatchEvent({ inputs: { task: 'do it' } })
    expect(wd.inputs).toEqual({ task: 'do it' })
    expect(repoOf(wd)).toEqual({ owner: 'octo-org', repo: 'octo-repo' })
  })
})
