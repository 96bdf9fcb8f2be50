// What main.ts calls for "the thread is the session": load the last
// conversation before the loop, mark the progress comment as running, save the
// conversation and say who stopped the run at the end, and answer `/agent stop`.
// Every step fails soft: a thread that cannot be read means a fresh start,
// said in one line of the report.
import type { Octokit } from '../github/octokit'
import type { Repo } from '../util'
import type { Task } from '../trigger'
import type { MessageParam, RunResult } from '../types'
import { appendTask } from '../agent/history'
import { identityOf, readThreadComments, type Identity, type ThreadComment } from '../github/thread'
import type { LoadedHistory } from './history'
import { runMarker } from './marker'
import { loadThreadHistory, saveThreadHistory } from './session'
import { requestStop, whoStopped } from './stop'
import { within } from '../util'
import { ThreadBranch, type BranchWork } from './resume'

export type { LoadedHistory } from './history'

/** The most the thread's conversation may hold up the first model request. */
const LOAD_BUDGET_MS = 20_000

export interface SessionOptions {
  task: Task
  repo?: Repo
  /** github-token; empty: no thread session */
  token: string
  /** key material for sealing the history: the model API key */
  secret: string
  getOctokit: () => Promise<Octokit>
  warn: (message: string) => void
  env?: NodeJS.ProcessEnv
  /** the thread's comments, when their read was started already (beside the permission read) */
  comments?: Promise<ThreadComment[]>
}

/** A thread, a token and a workflow run: without all three there is no session to keep. */
export function hasSession(task: Task, repo: Repo | undefined, token: string, env: NodeJS.ProcessEnv): boolean {
  const runId = Number(env.GITHUB_RUN_ID ?? '')
  return Boolean(task.thread && repo && token && Number.isSafeInteger(runId) && runId > 0)
}

export class ThreadSession {
  readonly runId: number
  readonly attempt: number
  private identity: Promise<Identity> | undefined
  /** the history this run started from, when it continued one */
  loaded: LoadedHistory | undefined
  /** how many of the run's messages came from the history (the task's message is the run's own) */
  private inherited = 0
  /** where the working copy starts and the commit goes when the last run committed to a branch */
  readonly branch = new ThreadBranch(() => this.loaded)

  constructor(private readonly o: SessionOptions) {
    const env = o.env ?? process.env
    this.runId = Number(env.GITHUB_RUN_ID ?? '')
    this.attempt = Number(env.GITHUB_RUN_ATTEMPT || '1') || 1
  }

  get options(): SessionOptions {
    return this.o
  }

  get enabled(): boolean {
    return hasSession(this.o.task, this.o.repo, this.o.token, this.o.env ?? process.env)
  }

  private me(octokit: Octokit): Promise<Identity> {
    return (this.identity ??= identityOf(octokit))
  }

  /** The hidden marker of the progress comment: says this run is going on (what `/agent stop` looks for). */
  runningMarker(): string | undefined {
    return this.enabled ? runMarker({ runId: this.runId, attempt: this.attempt, state: 'running' }) : undefined
  }

  private runUrl(runId: number): string {
    const env = this.o.env ?? process.env
    const repo = this.o.repo as Repo
    return `${env.GITHUB_SERVER_URL ?? 'https://github.com'}/${repo.owner}/${repo.repo}/actions/runs/${runId}`
  }

  /**
   * The first messages of the run: the thread's last conversation (mode
   * continue), closed and fitted into budgetTokens, then the task; and the line
   * the report shows about it, if any.
   */
  async start(prompt: string, budgetTokens: number): Promise<{ messages: MessageParam[]; note?: string }> {
    const fresh = (note?: string) => ({ messages: appendTask([], prompt), ...(note ? { note } : {}) })
    if (this.o.task.mode !== 'continue' || !this.enabled) return fresh()
    const repo = this.o.repo as Repo
    const thread = this.o.task.thread!
    const env = this.o.env ?? process.env
    const load = await within(
      loadThreadHistory({
        repo,
        thread,
        comments: () => this.o.comments ?? readThreadComments({ token: this.o.token, getOctokit: this.o.getOctokit, env }, repo, thread),
        octokit: this.o.getOctokit,
        identity: octokit => this.me(octokit),
        secret: this.o.secret,
        budgetTokens
      }),
      LOAD_BUDGET_MS,
      { kind: 'unavailable' as const, why: `GitHub did not give it within ${LOAD_BUDGET_MS / 1000} s` }
    )
    if (load.kind === 'none') return fresh()
    if (load.kind === 'unavailable') return fresh(`ℹ️ Started afresh: ${load.why}.`)
    this.loaded = load.history
    this.inherited = load.history.messages.length
    return {
      messages: appendTask(load.history.messages, prompt),
      note: `↩️ Continues the conversation of [run ${load.history.runId}](${this.runUrl(load.history.runId)}) in this thread (\`/agent new …\` starts afresh).`
    }
  }

  /** The run's own messages (from its task on): what its report shows tool calls from; earlier runs reported theirs. */
  ownMessages(messages: MessageParam[]): MessageParam[] {
    return messages.slice(Math.min(this.inherited, Math.max(0, messages.length - 1)))
  }

  /**
   * At the end: saves the conversation (already redacted) for the next comment
   * in the thread and, when the run was cancelled, finds who stopped it; within
   * budgetMs. Returns the final marker of the report and the stopper.
   */
  async end(
    r: RunResult,
    redactedMessages: MessageParam[],
    opts: { budgetMs: number; dir: string; model: string } & BranchWork
  ): Promise<{ marker?: string; stoppedBy?: string }> {
    if (!this.enabled) return {}
    const repo = this.o.repo as Repo
    const thread = this.o.task.thread!
    const saving = saveThreadHistory({
      repo,
      thread,
      secret: this.o.secret,
      runId: this.runId,
      attempt: this.attempt,
      model: opts.model,
      messages: redactedMessages,
      branch: opts.branch,
      commitSha: opts.commitSha,
      pullNumber: opts.pullNumber,
      patch: opts.patch,
      dir: opts.dir,
      env: this.o.env
    })
    const stopper =
      r.exitReason === 'cancelled'
        ? this.o.getOctokit().then(async octokit => whoStopped({ octokit, repo, thread, identity: await this.me(octokit) }, this.runId))
        : Promise.resolve(undefined)
    const [saved, stoppedBy] = await Promise.all([
      within(saving, opts.budgetMs, { ok: false as const, why: `the upload took longer than ${Math.round(opts.budgetMs / 1000)} s` }),
      within(
        stopper.catch(() => undefined),
        opts.budgetMs,
        undefined
      )
    ])
    if (!saved.ok) this.o.warn(`The conversation was not saved for the next /agent comment in this thread: ${saved.why}`)
    const marker = runMarker({
      runId: this.runId,
      attempt: this.attempt,
      state: 'done',
      ...(saved.ok ? { history: { artifact: saved.artifact, sha256: saved.sha256 } } : {})
    })
    return { marker, ...(stoppedBy ? { stoppedBy } : {}) }
  }
}

/** `/agent stop` (the gate has allowed the sender): cancels the thread's running run; the reply says what happened. */
export async function answerStop(o: SessionOptions, log: (m: string) => void): Promise<void> {
  const session = new ThreadSession(o)
  const by = o.task.people[0]?.login ?? ''
  if (!session.enabled) {
    log('Stop: there is no thread, github-token or workflow run to stop a run in.')
    return
  }
  const octokit = await o.getOctokit()
  const env = o.env ?? process.env
  const out = await requestStop({
    octokit,
    repo: o.repo as Repo,
    thread: o.task.thread!,
    by,
    ownRunId: session.runId,
    serverUrl: env.GITHUB_SERVER_URL
  })
  if (out.kind === 'stopping') log(`Stop: asked GitHub to cancel run ${out.runId}; ${out.replyUrl ?? ''}`)
  else if (out.kind === 'nothing-running') log(`Stop: nothing is running in this thread; ${out.replyUrl ?? ''}`)
  else o.warn(`Stop: run ${out.runId} could not be cancelled: ${out.why}`)
}
