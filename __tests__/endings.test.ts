// Every way a run can end, end to end: the built action runs as the runner
// runs it, against the fake Anthropic API and the fake GitHub API, and each
// test asserts the comment's final text and the step's result (exit code and
// the exit-reason output). Issue 4: never silent.
import { afterAll, describe, expect, it } from '@jest/globals'
import { spawnSync } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bash, startFakeAnthropic, text, type Reply } from './helpers/fake-anthropic'
import { startFakeGitHub } from './helpers/fake-github'
import { cleanupRuns, runAction } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { agent, errors, gone, ISSUE, KEY, sleepers, unique, warnings } from './helpers/agent-run'

/** root or passwordless sudo on Linux: the user sandbox can run */
const contained = process.platform === 'linux' && (process.getuid?.() === 0 || spawnSync('sudo', ['-n', 'true']).status === 0)
const tempDirs: string[] = []
afterAll(() => {
  cleanupRuns()
  killStray()
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const [S1, S2, S3, S4] = [1, 2, 3, 4].map(unique)
const STRAY = [S1, S2, S3, S4]
function killStray(): void {
  for (const s of STRAY)
    for (const pid of sleepers(s)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone
      }
    }
}

describe('live progress', () => {
  it('updates the comment as commands run, throttled, and ends with the final report', async () => {
    const steps = 30
    const script: Reply[] = []
    for (let i = 1; i <= steps; i++) script.push(bash(`sleep 0.2; echo step-${i}`))
    script.push(text(`All ${steps} steps done.`))
    const { run, comment, patches, gh } = await agent(script)

    expect(run.code).toBe(0)
    expect(run.outputs['exit-reason']).toBe('end_turn')
    expect(run.outputs.commands).toBe(String(steps))

    // far fewer PATCHes than commands, at least one progress view before the end
    expect(patches.length).toBeGreaterThanOrEqual(2)
    expect(patches.length).toBeLessThanOrEqual(steps / 3)
    const progress = patches.slice(0, -1)
    expect(progress[0].body.body).toMatch(/Working on it\*\* \(turn \d+, \d+ s\)/)
    expect(progress[0].body.body).toMatch(/✅ `sleep 0\.2; echo step-1` · exit 0 · \d+\.\d s/)
    // throttled: progress updates (and the creation before them) at least PROGRESS_INTERVAL_MS (3 s) apart
    const create = gh.requests.find(r => r.route === 'createComment')!
    const times = [create.at, ...progress.map(p => p.at)]
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(2900)

    // the last PATCH is the final report: the final text replaces the progress view, the log stays
    const last = patches.at(-1)!.body.body as string
    expect(comment.body).toBe(last)
    expect(last).toContain(`All ${steps} steps done.`)
    expect(last).not.toContain('Working on it')
    expect(last).toContain(`Commands (${steps})`)
    expect(last).toContain('echo step-1\nstep-1')
    expect(last).toContain(`echo step-${steps}\nstep-${steps}`)
    expect(comment.updates).toHaveLength(patches.length + 1)
  })
})

describe('endings', () => {
  it('the model ends its turn: success with its final text', async () => {
    const { run, comment } = await agent([bash('echo hello'), text('Said hello.')])
    expect(run.code).toBe(0)
    expect(run.outputs).toMatchObject({ 'exit-reason': 'end_turn', result: 'Said hello.', turns: '2', commands: '1' })
    expect(run.outputs['comment-url']).toBe(`https://github.com/Codertocat/Hello-World/issues/${ISSUE}#issuecomment-${comment.id}`)
    expect(comment.body).toContain('Said hello.')
    expect(comment.body).toContain('$ echo hello\nhello')
    expect(comment.body).toMatch(/model claude-sonnet-5-5 · 2 turns · 1 command/)
    expect(run.summary).toContain('Said hello.')
    expect(errors(run)).toEqual([])
  })

  it('max-turns: stops before the last response’s commands, says so, succeeds', async () => {
    const { run, comment, anthropic } = await agent([bash('echo first'), bash('touch not-run'), text('never')], {
      inputs: { 'max-turns': '2' }
    })
    expect(run.code).toBe(0)
    expect(run.outputs).toMatchObject({ 'exit-reason': 'max_turns', turns: '2', commands: '1' })
    expect(anthropic.requests).toHaveLength(2)
    expect(existsSync(join(run.workspace, 'not-run'))).toBe(false)
    expect(comment.body).toContain('**Stopped at the turn limit** (max-turns: 2) before the agent finished. 1 command ran in 2 turns')
    expect(comment.body).toContain('$ echo first\nfirst')
    expect(comment.body).not.toContain('touch not-run')
    expect(warnings(run).join('\n')).toContain('Stopped at the turn limit')
    expect(errors(run)).toEqual([])
  })

  it.each([
    [
      'max_tokens',
      {
        content: [
          { type: 'text', text: 'Writing the file now.' },
          { type: 'tool_use', name: 'bash', input: { command: 'touch cut-off' } }
        ],
        stop_reason: 'max_tokens'
      },
      // at the model's output limit (128000 for the default model): nothing larger to ask for
      "**The model's reply was cut short** at max-tokens (128000); a command it was writing was not run."
    ],
    [
      'refusal',
      { content: [{ type: 'text', text: 'I will not do that.' }], stop_reason: 'refusal' },
      '**The model declined to continue** (stop reason: refusal).'
    ],
    [
      'model_context_window_exceeded',
      { content: [{ type: 'text', text: 'So much context.' }], stop_reason: 'model_context_window_exceeded' },
      "**The conversation outgrew the model's context window**, so the run ended."
    ]
  ] as Array<[string, Reply, string]>)('stop_reason %s: reported plainly, nothing cut off is run', async (reason, reply, line) => {
    const { run, comment, anthropic } = await agent(
      [bash('echo before'), reply, text('never')],
      reason === 'max_tokens' ? { inputs: { 'max-tokens': '128000' } } : {}
    )
    expect(run.code).toBe(0)
    expect(run.outputs).toMatchObject({ 'exit-reason': reason, turns: '2', commands: '1' })
    expect(anthropic.requests).toHaveLength(2)
    expect(existsSync(join(run.workspace, 'cut-off'))).toBe(false)
    expect(comment.body).toContain(line)
    expect(comment.body).toContain('$ echo before')
    expect(comment.body).not.toContain('touch cut-off')
    expect(warnings(run).join('\n')).toContain(line.replace(/\*\*/g, ''))
  })

  it('pause_turn: the paused turn is sent back and the run goes on', async () => {
    const { run, comment, anthropic } = await agent([
      { content: [{ type: 'text', text: 'Still thinking…' }], stop_reason: 'pause_turn' },
      bash('echo resumed'),
      text('Finished after a pause.')
    ])
    expect(run.code).toBe(0)
    expect(run.outputs).toMatchObject({ 'exit-reason': 'end_turn', turns: '3', commands: '1' })
    const second = anthropic.requests[1].body.messages
    expect(second.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Still thinking…' }] })
    expect(comment.body).toContain('Finished after a pause.')
  })

  it.each([
    [401, 'The model API rejected the API key (401'],
    [403, 'The model API refused this key access (403'],
    [404, 'The model API does not know the model "claude-sonnet-5-5" or the endpoint (404'],
    [400, 'The model API rejected the request as invalid (400']
  ])('the API answers %i: one clear sentence, no retry, the step fails', async (status, sentence) => {
    const { run, comment, anthropic } = await agent([
      // the message echoes the key, as some gateways do: it must come out redacted
      { status, body: { type: 'error', error: { type: 'x', message: `no good: ${KEY}` } } }
    ])
    expect(anthropic.requests).toHaveLength(1)
    expect(run.code).toBe(1)
    expect(run.outputs).toMatchObject({ 'exit-reason': 'error', turns: '0', commands: '0' })
    expect(comment.body).toContain(`❌ **The run failed**: ${sentence}`)
    expect(comment.body).toContain('no good: ***')
    expect(errors(run).join('\n')).toContain(sentence)
  })

  it('overloaded, then fine: retried with backoff honouring retry-after, and the run succeeds', async () => {
    const { run, comment, anthropic } = await agent([
      { status: 529, headers: { 'retry-after': '1' } },
      { status: 529 },
      bash('echo made it'),
      text('Done despite the overload.')
    ])
    expect(run.code).toBe(0)
    expect(run.outputs['exit-reason']).toBe('end_turn')
    expect(anthropic.requests).toHaveLength(4)
    // retry-after: 1 was honoured (the SDK's own first backoff is at most 0.5 s)
    expect(anthropic.requests[1].at - anthropic.requests[0].at).toBeGreaterThanOrEqual(950)
    expect(comment.body).toContain('Done despite the overload.')
  })

  it('failing for good (500): after the retries, a clear sentence and the step fails', async () => {
    // retry-after-ms 1: the SDK retries at once (the backoff itself is the test above)
    const { run, comment, anthropic } = await agent([bash('echo one')], {
      anthropic: { afterScript: { status: 500, headers: { 'retry-after-ms': '1' } } }
    })
    expect(run.code).toBe(1)
    expect(run.outputs).toMatchObject({ 'exit-reason': 'error', turns: '1', commands: '1' })
    expect(anthropic.requests).toHaveLength(1 + 1 + 4)
    expect(run.durationMs).toBeLessThan(30_000)
    expect(comment.body).toContain(
      '❌ **The run failed**: The model API was failing (500 Internal server error) after 4 retries with backoff.'
    )
    expect(comment.body).toContain('$ echo one\none')
  })

  it('the endpoint cannot be reached: a clear sentence and the step fails', async () => {
    const closed = http.createServer()
    await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', () => resolve()))
    const { port } = closed.address() as AddressInfo
    await new Promise<void>(resolve => closed.close(() => resolve()))
    const { run, comment } = await agent([], { env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` } })
    expect(run.code).toBe(1)
    expect(run.outputs['exit-reason']).toBe('error')
    expect(comment.body).toContain('❌ **The run failed**: The model API could not be reached (ECONNREFUSED) after 4 retries with backoff')
    expect(errors(run).join('\n')).toContain('could not be reached')
  })

  it('an unexpected exception: the comment shows the error, the step fails', async () => {
    // a 200 that is not a message
    const { run, comment } = await agent([bash('echo one'), { status: 200, body: { nonsense: true } }])
    expect(run.code).toBe(1)
    expect(run.outputs['exit-reason']).toBe('error')
    // streamed: a 200 that is no event stream fails the model request
    expect(comment.body).toMatch(/❌ \*\*The run failed\*\*: (Unexpected error|The model request failed): \S/)
    expect(comment.body).toContain('$ echo one')
  })

  it('a crash before the comment exists (unreadable event): the step fails saying so', async () => {
    const { run } = await agent([text('never')], {
      noComment: true,
      // the event file is not JSON
      env: { GITHUB_EVENT_PATH: writeBadEvent() }
    })
    expect(run.code).toBe(1)
    expect(run.outputs['exit-reason']).toBe('error')
    expect(errors(run).join('\n')).toMatch(/^The action crashed: .*JSON/m)
    // the key shows only where it is registered as a mask
    expect(
      run.stdout
        .split('\n')
        .filter(l => !l.startsWith('::add-mask::'))
        .join('\n')
    ).not.toContain(KEY)
  })

  it('cancelled by SIGINT while `sleep` runs: within 10 s the comment says cancelled and lists the commands', async () => {
    const { run, comment, afterSignalMs } = await agent([bash('echo before'), bash(`sleep ${S1}`), text('never')], {
      onStdout: (chunk, child, signal) => {
        if (chunk.includes(`$ sleep ${S1}`)) {
          setTimeout(() => signal('SIGINT'), 300)
          // like the runner: SIGTERM 7.5 s after SIGINT if the step is still there
          setTimeout(() => child.exitCode === null && child.kill('SIGTERM'), 7800).unref()
        }
      }
    })
    expect(afterSignalMs).toBeLessThan(10_000)
    expect(run.code).toBe(1)
    expect(run.outputs).toMatchObject({ 'exit-reason': 'cancelled', turns: '2', commands: '2' })
    expect(comment.body).toContain('🛑 **Cancelled**: the job was cancelled while the agent was working. 2 commands ran in 2 turns')
    expect(comment.body).toContain('$ echo before\nbefore')
    expect(comment.body).toMatch(new RegExp(`⚠️ \\*\\*2\\*\\* · stopped · [\\d.]+ s\n\n\`\`\`console\n\\$ sleep ${S1}\n\\(no output\\)\n`))
    expect(errors(run).join('\n')).toContain('Cancelled')
    expect(run.stdout).toContain('Received SIGINT: stopping the agent and writing the report.')
    expect(await gone(S1)).toEqual([])
  })

  it('cancelled while the model request hangs: the request is dropped and the comment says cancelled', async () => {
    const { run, comment, afterSignalMs, anthropic } = await agent([bash('echo before'), { hang: true }], {
      onStdout: (chunk, _child, signal) => {
        if (chunk.includes('-> exit 0')) setTimeout(() => signal('SIGINT'), 500)
      }
    })
    expect(afterSignalMs).toBeLessThan(10_000)
    expect(anthropic.requests).toHaveLength(2)
    expect(run.code).toBe(1)
    expect(run.outputs).toMatchObject({ 'exit-reason': 'cancelled', turns: '1', commands: '1' })
    expect(comment.body).toContain('🛑 **Cancelled**: the job was cancelled while the agent was working. 1 command ran in 1 turn')
    expect(comment.body).toContain('$ echo before\nbefore')
  })

  it('SIGTERM arriving while the final report is written changes nothing', async () => {
    let faulted = false
    const { run, comment, gh } = await agent([bash('echo before'), bash(`sleep ${S2}`), text('never')], {
      onStdout: (chunk, child, signal, fakeGitHub) => {
        if (chunk.includes(`$ sleep ${S2}`)) setTimeout(() => signal('SIGINT'), 300)
        if (chunk.includes('Received SIGINT') && !faulted) {
          faulted = true
          // the final PATCH fails three times (retried 0.1, 0.4 and 0.9 s later: the least waits); SIGTERM lands meanwhile
          fakeGitHub.fail('PATCH', /\/issues\/comments\/\d+$/, 502, 3)
          setTimeout(() => child.kill('SIGTERM'), 400)
        }
      }
    })
    expect(run.code).toBe(1)
    expect(run.outputs['exit-reason']).toBe('cancelled')
    expect(run.stdout).toContain('Received SIGTERM: still writing the report.')
    expect(comment.body).toContain('🛑 **Cancelled**')
    expect(comment.body).toContain('$ echo before')
    expect(gh.requests.some(r => r.faulted)).toBe(true)
  })

  it("the runner's log pipe closes mid-run (the step's stdout broken): the run goes on and ends as it would, no crash", async () => {
    let seen = ''
    const { run, comment } = await agent([bash('echo one'), bash('echo two'), text('Both done.')], {
      onStdout: (chunk, child) => {
        // once the first command is logged: a write to the closed pipe fails with EPIPE, which was a crash,
        // and then every warning of it failed again, in a loop spinning a core until the job's end
        seen += chunk
        if (seen.includes('$ echo one')) child.stdout?.destroy()
      },
      timeoutMs: 20_000
    })
    expect(run.code).toBe(0)
    expect(run.outputs).toMatchObject({ 'exit-reason': 'end_turn', commands: '2' })
    expect(comment.body).toContain('Both done.')
    expect(comment.body).toContain('$ echo two\ntwo')
    expect(comment.body).not.toMatch(/EPIPE|Unexpected error|crashed/)
  })

  it('SIGKILL mid-run (no cancel): the post step finishes the comment with the commands so far, and says killed, not cancelled', async () => {
    const anthropic = await startFakeAnthropic([bash('echo before'), bash(`sleep ${S3}`), text('never')])
    const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
    try {
      const common = {
        eventName: 'issue_comment',
        payload: issueCommentEvent({ body: '/agent do the thing', issueNumber: ISSUE }),
        // the post step stops what a killed step left through the user sandbox's recovery; sandbox: none is plain
        // local execution, with nothing saved to find a command by (its processes die with the runner's job)
        inputs: { 'anthropic-api-key': KEY, sandbox: contained ? 'user' : 'none' },
        env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_API_URL: gh.url }
      }
      const main = await runAction({
        ...common,
        onStdout: (chunk, child) => {
          // after the comment exists and the transcript caught up with the running command
          if (chunk.includes(`$ sleep ${S3}`)) setTimeout(() => child.kill('SIGKILL'), 1500)
        }
      })
      expect(main.signal).toBe('SIGKILL')
      expect(main.state.comment).toBeDefined()
      expect(main.state.done).toBeUndefined()
      const [progress] = gh.comments.values()
      expect(progress.body).toContain('Working on it')

      const post = await runAction({ ...common, post: true, state: main.state })
      expect(post.code).toBe(0)
      const comments = [...gh.comments.values()]
      expect(comments).toHaveLength(1)
      const body = comments[0].body
      expect(body).not.toContain('Cancelled')
      expect(body).toContain('The main step was killed without a cancel')
      expect(body).toContain('$ echo before\nbefore')
      expect(body).toContain(`stopped · `)
      expect(body).toContain(`\`\`\`console\n$ sleep ${S3}\n(stopped: the step ended while this command ran)`)
      expect(body).not.toContain('Working on it')
      expect(body).not.toContain(KEY)
      // the post step stopped the command the killed step left running (user sandbox)
      if (contained) expect(await gone(S3)).toEqual([])
      else for (const p of await gone(S3)) process.kill(p, 'SIGKILL')
      expect(post.summary).toContain(`$ sleep ${S3}`)
    } finally {
      await anthropic.close()
      await gh.close()
    }
  })
})

describe('size', () => {
  it('150 commands of 5 KB: the comment stays under 65,536 characters, the summary has them all', async () => {
    const script: Reply[] = []
    for (let r = 0; r < 15; r++) {
      const cmds: string[] = []
      for (let c = 1; c <= 10; c++) {
        const n = String(r * 10 + c).padStart(3, '0')
        // shell builtins only: 4,990 characters without two more processes per command
        cmds.push(`echo cmd-${n}; s='output of a command '; for i in 1 2 3 4 5 6 7 8; do s=$s$s; done; printf '%.4990s' "$s"`)
      }
      script.push(bash(...cmds))
    }
    const finalText = `FINAL-START ${'the whole final text stays. '.repeat(100)}FINAL-END`
    script.push(text(finalText))
    const { run, comment, patches } = await agent(script)
    expect(run.code).toBe(0)
    expect(run.outputs).toMatchObject({ 'exit-reason': 'end_turn', commands: '150' })
    for (const p of patches) expect([...(p.body.body as string)].length).toBeLessThanOrEqual(65536)
    expect(comment.body.length).toBeLessThanOrEqual(65536)
    expect(comment.body).toContain(finalText)
    const left = /\*… (\d+) commands left out here to fit; the job summary has them all\.\*/.exec(comment.body)
    expect(left).not.toBeNull()
    const shown = (comment.body.match(/\necho cmd-\d{3}|\$ echo cmd-\d{3}/g) ?? []).length
    expect(shown + Number(left![1])).toBe(150)
    expect(comment.body).toContain('$ echo cmd-001')
    expect(comment.body).toContain('$ echo cmd-150')
    expect(Buffer.byteLength(run.summary)).toBeLessThan(1024 * 1024)
    for (let i = 1; i <= 150; i++) expect(run.summary).toContain(`$ echo cmd-${String(i).padStart(3, '0')}`)
    expect(run.summary).toContain(finalText)
  })
})

function writeBadEvent(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bad-event-'))
  tempDirs.push(dir)
  const path = join(dir, 'event.json')
  writeFileSync(path, '{ "action": "created", not json')
  return path
}
