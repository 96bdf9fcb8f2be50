// One run of the built action on an `/agent` issue comment, with the model's
// replies scripted, as the ending tests drive it; and the `sleep` processes a
// test can look for afterwards.
import { expect } from '@jest/globals'
import type { ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { startFakeAnthropic, type FakeAnthropic, type FakeAnthropicOptions, type Reply } from './fake-anthropic'
import { startFakeGitHub, type FakeComment, type FakeGitHub, type RecordedGitHubRequest } from './fake-github'
import { runAction, type ActionRun, type RunOptions } from './run-action'
import { issueCommentEvent } from './events'

export const KEY = 'sk-ant-api03-endingsTestKey0123456789abcdef'
export const ISSUE = 7

export interface Ran {
  run: ActionRun
  anthropic: FakeAnthropic
  gh: FakeGitHub
  /** the one comment the run wrote */
  comment: FakeComment
  patches: RecordedGitHubRequest[]
  /** ms from the first signal sent to the process's end, when one was sent */
  afterSignalMs?: number
}

export interface AgentOptions {
  inputs?: Record<string, string>
  env?: Record<string, string | undefined>
  anthropic?: FakeAnthropicOptions
  /** called on each stdout chunk with a `signal(name)` helper that records when the first one was sent */
  onStdout?: (chunk: string, child: ChildProcess, signal: (name: NodeJS.Signals) => void, gh: FakeGitHub) => void
  /** set up faults before the run */
  setup?: (gh: FakeGitHub) => void
  timeoutMs?: number
  /** expect no comment at all */
  noComment?: boolean
  extra?: Partial<RunOptions>
}

/** Runs the built action on an `/agent` issue comment with `script` as the model's replies. */
export async function agent(script: Reply[], opts: AgentOptions = {}): Promise<Ran> {
  const anthropic = await startFakeAnthropic(script, opts.anthropic)
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  opts.setup?.(gh)
  let signalledAt: number | undefined
  let exitedAt = 0
  try {
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent do the thing', issueNumber: ISSUE }),
      inputs: { 'anthropic-api-key': KEY, sandbox: 'none', ...opts.inputs },
      env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_API_URL: gh.url, ...opts.env },
      timeoutMs: opts.timeoutMs ?? 50_000,
      onStdout: (chunk, child) => {
        child.once('exit', () => (exitedAt = Date.now()))
        opts.onStdout?.(
          chunk,
          child,
          name => {
            signalledAt ??= Date.now()
            child.kill(name)
          },
          gh
        )
      },
      ...opts.extra
    })
    const comments = [...gh.comments.values()]
    if (opts.noComment) expect(comments).toHaveLength(0)
    else expect(comments).toHaveLength(1)
    // nothing the action wrote holds the key
    for (const c of comments) for (const body of c.updates) expect(body).not.toContain(KEY)
    expect(run.summary).not.toContain(KEY)
    expect(JSON.stringify(run.outputs)).not.toContain(KEY)
    expect(gh.requests.filter(r => r.status === 422)).toEqual([])
    return {
      run,
      anthropic,
      gh,
      comment: comments[0],
      patches: gh.requests.filter(r => r.method === 'PATCH' && !r.faulted),
      afterSignalMs: signalledAt === undefined ? undefined : (exitedAt || Date.now()) - signalledAt
    }
  } finally {
    await anthropic.close()
    await gh.close()
  }
}

export const errors = (run: ActionRun) => run.commands.filter(c => c.command === 'error').map(c => c.message)
export const warnings = (run: ActionRun) => run.commands.filter(c => c.command === 'warning').map(c => c.message)

/** Processes whose command line is exactly `sleep <seconds>` (unique durations per test). */
export function sleepers(seconds: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8') === `sleep\0${seconds}\0`) found.push(Number(name))
    } catch {
      // gone
    }
  }
  return found
}
/** The `sleep <seconds>` processes still there after giving a killed one up to 3 s to go. */
export async function gone(seconds: string): Promise<number[]> {
  for (let i = 0; i < 30 && sleepers(seconds).length > 0; i++) await new Promise(r => setTimeout(r, 100))
  return sleepers(seconds)
}
// Durations unique to this test process: others may run this same file at the same time.
export const unique = (n: number) => `9${n}.${process.pid}${Math.floor(Math.random() * 1000)}`

/** Every tool_result text the model received, in order (from the last request). */
export function toolResults(r: Ran): string[] {
  const last = r.anthropic.requests[r.anthropic.requests.length - 1]
  const out: string[] = []
  for (const m of last?.body?.messages ?? []) {
    if (!Array.isArray(m.content)) continue
    for (const b of m.content)
      if (b.type === 'tool_result')
        out.push(typeof b.content === 'string' ? b.content : b.content.map((c: { text?: string }) => c.text ?? '').join(''))
  }
  return out
}

/** Waits (polling, up to `boundMs`) until `ready()` holds or `done` settled; says which. */
export async function until(ready: () => boolean, done: Promise<unknown>, boundMs: number): Promise<boolean> {
  let settled = false
  void done.then(
    () => (settled = true),
    () => (settled = true)
  )
  for (const end = Date.now() + boundMs; Date.now() < end && !settled;) {
    if (ready()) return true
    await new Promise(r => setTimeout(r, 250))
  }
  return ready()
}
