// The agent's part of a run: the sandbox its commands run in, and the loop,
// wired to the model API and to the run's record.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { runLoop, type LoopDeps } from '../agent/loop'
import { createModelCall } from '../agent/model'
import { systemPrompt } from '../agent/prompt'
import { contextWindowOf } from '../agent/cost'
import { commandRunner } from '../tools/runner'
import { afterSetUp } from '../environments/setup'
import { planWorkdir, prepareSandbox, type Sandbox } from '../sandbox'
import * as state from './state'
import { tmpdir } from 'node:os'
import type { Log } from '../report/log'
import type { Settings } from '../settings'
import type { Task } from '../trigger'
import { stripHidden } from '../untrusted'
import { inert } from '../report/inert'
import type { RunResult } from '../types'
import { messageOf, untilAborted, within } from '../util'
import type { RunControl } from './control'
import type { ThreadSession } from '../thread'
import { localExec, type Base, type HandBackOptions } from '../changes'
import { withTrustedGit, type TrustedGit } from '../sandbox/trusted-git'
import { copySource, readStart } from './handback'
import type { Recorder } from './recorder'
import { loadValidator } from '../structured/load'
import { checkAnswer } from '../structured/answer'

/** Share of the model's context window after which old tool results are elided. */
const CONTEXT_SHARE = 0.6

export interface AgentRun {
  /** the loop's result, whatever ended it (never rejects) */
  result: Promise<RunResult>
  /** the starting commit, read when the set-up starts (before any command runs), else when asked */
  base: () => Promise<Base | undefined>
  /** stops what the commands left, hands their work to `fn` (where it is and how git reads it there), then puts back what the sandbox changed; problems are logged. `noWork` when no sandbox was set up (no command ran) */
  handBack<T>(fn: (where: { source: HandBackOptions['source'] }) => Promise<T>, noWork: T): Promise<T>
}

export interface AgentContext {
  settings: Settings
  task: Task
  workspace: string
  /** the runner's git, resolved before the agent starts (nothing the agent writes can stand in for it) */
  git: TrustedGit
  repository: string | undefined
  control: RunControl
  rec: Recorder
  out: Log
  thread: ThreadSession
  /** called once the first model request has been sent */
  onFirstRequest: () => void
}

export function startAgent(ctx: AgentContext): AgentRun {
  const agent = new Agent(ctx)
  return { result: agent.result, base: () => agent.base(), handBack: (fn, noWork) => agent.handBack(fn, noWork) }
}

/** The sandbox's set-up. */
function prepare(ctx: AgentContext, runDir: string | undefined): Promise<Sandbox> {
  const { settings, out } = ctx
  const ready = prepareSandbox({
    mode: settings.sandbox,
    workspace: ctx.workspace,
    env: process.env,
    redactor: out.redactor,
    log: out.log,
    runDir,
    saveState: state.setSandbox,
    passEnv: settings.passEnv,
    network: { mode: settings.network, allowed: settings.allowedDomains },
    memoryMiB: settings.memoryLimitMiB
  })
  ready.catch(() => {}) // awaited later; avoid an unhandled rejection before then
  return ready
}

/**
 * The run's sandbox and loop. The sandbox is set up whole before the first model request: a set-up
 * that fails ends the run with no request sent and no command run.
 */
class Agent {
  readonly result: Promise<RunResult>
  /** the copy's path is known at once (the prompt names it) */
  private readonly plan: ReturnType<typeof planWorkdir>
  private readonly ready: Promise<Sandbox>
  private readonly startSetup: () => void
  private setupStarted = false
  /** the sandbox once its copy starts where the thread's work is */
  private prepared: Promise<Sandbox>
  private sandbox: Sandbox | undefined
  private firstCall = true
  private startCommit: Promise<Base | undefined> | undefined

  constructor(private readonly ctx: AgentContext) {
    this.plan = planWorkdir(ctx.settings.sandbox, ctx.workspace)
    let start = () => {}
    // the starting commit first (the set-up may rewrite the workspace's git config), before the first command
    this.ready = this.prepared = new Promise<Sandbox>(
      resolve => (start = () => resolve(this.base().then(() => prepare(ctx, this.plan.runDir))))
    )
    this.ready.catch(() => {}) // awaited later
    this.startSetup = () => {
      if (!this.setupStarted) start()
      this.setupStarted = true
    }
    this.result = this.run().catch(error => ({
      ...ctx.rec.snapshot('the run failed while this command ran'),
      error: `Unexpected error: ${messageOf(error)}`
    }))
  }

  /** The starting commit: git's processes stay off the path to the first model request. */
  base(): Promise<Base | undefined> {
    return (this.startCommit ??= readStart(this.ctx.workspace, this.ctx.git))
  }

  private async run(): Promise<RunResult> {
    const { settings, control, rec } = this.ctx
    const contextBudgetTokens = Math.floor(contextWindowOf(settings.model) * CONTEXT_SHARE)
    // The set-up starts now (the gate has let the run through: no namespace is made for a refused
    // commenter), beside reading the thread's history and the first GitHub writes.
    this.startSetup()
    await this.startConversation(contextBudgetTokens)
    // The sandbox whole before the first model request: a set-up that fails stops the run here, before any
    // request or command (SPEC "Secrets", Sandbox: it fails closed).
    try {
      this.sandbox = await untilAborted(this.prepared, control.signal)
      rec.info.sandbox = this.sandbox.note
    } catch (error) {
      if (!control.signal.aborted) rec.info.sandbox = `${settings.sandbox}: not set up, the agent did not start`
      return { ...rec.snapshot('the sandbox was not set up'), error: messageOf(error) }
    }
    const { outputSchema } = settings
    // compiled at start (admit.ts): this is the same validator
    const validate = outputSchema ? await loadValidator(outputSchema) : undefined
    const loop = runLoop(
      rec.messages,
      {
        model: settings.model,
        system: rec.system,
        maxTokens: settings.maxTokens,
        effort: settings.effort,
        maxTurns: settings.maxTurns,
        deadline: control.deadline,
        maxCostUsd: settings.maxCostUsd,
        // thinking blocks another model wrote are dropped from the history
        historyModel: this.ctx.thread.loaded?.model ?? settings.model,
        contextBudgetTokens,
        outputSchema,
        signal: control.signal
      },
      {
        callModel: this.modelCall(),
        runCommand: this.commandRunner(),
        onEvent: rec.onEvent,
        // redacted first: the redacted JSON is what is checked and set
        checkAnswer: validate && (text => checkAnswer(text, this.ctx.out.redact, validate))
      }
    )
    return await control.windDown(loop, () => rec.snapshot('the run ended while this command ran'))
  }

  /** The thread's last conversation, then the task (the sandbox gets ready meanwhile), and the system prompt. */
  private async startConversation(contextBudgetTokens: number): Promise<void> {
    const { settings, rec, workspace, thread } = this.ctx
    const started = await thread.start(inert.api(stripHidden(this.ctx.task.prompt)), contextBudgetTokens)
    rec.messages.push(...started.messages)
    rec.note = started.note
    // the copy starts from the branch the thread's last run committed to (src/thread/resume.ts)
    const note = (line: string) => (rec.note = [rec.note, line].filter(Boolean).join('\n\n'))
    const exec = withTrustedGit(localExec, this.ctx.git)
    this.prepared = thread.branch.prepare(this.ready, { workspace, tmpDir: process.env.RUNNER_TEMP || tmpdir(), note, exec })
    this.prepared.catch(() => {}) // awaited by the first command and the release
    rec.system = systemPrompt(
      {
        workspace: this.plan.workdir,
        repository: this.ctx.repository,
        commandTimeoutSec: settings.commandTimeoutMs / 1000,
        maxOutputChars: settings.maxOutputChars,
        blocked: settings.blocked,
        append: settings.appendSystemPrompt,
        sandbox: settings.sandbox,
        network: { mode: settings.network, allowed: settings.allowedDomains },
        structured: settings.outputSchema !== undefined
      },
      this.ctx.task
    )
  }

  /** The model API, telling onFirstRequest once the first request is out. */
  private modelCall(): LoopDeps['callModel'] {
    const { settings } = this.ctx
    const modelCall = createModelCall({
      apiKey: settings.apiKey,
      authToken: settings.authToken,
      baseUrl: settings.baseUrl,
      provider: settings.provider,
      // a token a provider's client mints (Google, Entra, federation) is a secret like the key
      learn: secret => this.ctx.out.addSecret(secret)
    })
    return (params, signal) => {
      if (this.firstCall) {
        this.firstCall = false
        // subscribes before the request starts
        void requestSent(500).then(() => {
          this.startSetup()
          this.ctx.onFirstRequest()
        })
      }
      return modelCall(params, signal)
    }
  }

  private commandRunner(): LoopDeps['runCommand'] {
    const { settings, control, rec, out } = this.ctx
    return commandRunner(
      afterSetUp(this.prepared, {
        wait: (p, signal) => {
          this.startSetup()
          return untilAborted(p, signal ?? control.signal)
        },
        onReady: ready => {
          this.sandbox = ready
          rec.info.sandbox = ready.note
        }
      }),
      settings,
      { redact: out.redact, margin: Math.max(512, out.redactor.maxFormLength) }
    )
  }

  /**
   * Every process of the run stopped (verified, or said), the agent's file
   * changes brought to the workspace as plain file changes (`.git` untouched),
   * then the copy removed and the rest put back; within the clean-up budget.
   */
  private async release(): Promise<void> {
    const { control, rec, out } = this.ctx
    const budget = control.cleanupBudgetMs()
    if (!this.setupStarted) return // nothing was set up: no command ran
    try {
      // a set-up that failed has nothing to put back (it cleaned up after itself) and was reported as the run's error
      this.sandbox ??= await within(
        this.prepared.catch(() => undefined),
        budget,
        undefined
      )
      const sb = this.sandbox
      if (!sb) return
      rec.info.sandbox = sb.note
      const notBack: string[] = [] // what the user must know: said in the report, not only the log
      const putBack = async () => {
        const stop = await sb.stopAll()
        if (!stop.ok) notBack.push(stop.detail ?? "the run's processes could not be verified gone")
        notBack.push(...(await sb.release()))
        rec.info.network = sb.network()
        return true
      }
      if (!(await within(putBack(), budget, false)))
        notBack.push(`putting things back took longer than ${Math.round(budget / 1000)} s; the post step finishes it`)
      for (const p of notBack) out.warn(`Sandbox: ${p}`)
      if (notBack.length) rec.info.sandbox = `${sb.note}; WARNING: ${notBack.join('; ')}`
    } catch (error) {
      out.warn(`Sandbox: ${messageOf(error)}`)
      rec.info.sandbox = `${rec.info.sandbox}; WARNING: ${messageOf(error)}`
    }
  }

  // In a copy, the patch is computed inside the containment (its processes stopped, git as the sandbox user with a
  // git dir of its own) before the copy goes; nothing of it reaches the workspace but what the checks pass.
  async handBack<T>(fn: (where: { source: HandBackOptions['source'] }) => Promise<T>, noWork: T): Promise<T> {
    const sb = this.setupStarted
      ? (this.sandbox ??= await within(this.prepared, this.ctx.control.cleanupBudgetMs(), undefined).catch(() => undefined))
      : undefined
    if (!sb) {
      // no sandbox, no command: nothing of the agent's to hand back (the workspace's own changes are not its)
      await this.release()
      return noWork
    }
    if (sb.mode !== 'user') {
      await this.release()
      return fn({ source: { workdir: this.ctx.workspace, exec: withTrustedGit(localExec, this.ctx.git), inPlace: true } })
    }
    try {
      const stop = await sb.stopAll()
      if (!stop.ok) this.ctx.out.warn(`Sandbox: ${stop.detail ?? "the run's processes could not be verified gone"}`)
      return await fn({ source: copySource(sb, this.ctx.git) })
    } finally {
      await this.release()
    }
  }
}

/**
 * Resolves once a request made with fetch has been written out (undici's
 * `undici:request:bodySent`, published by Node's fetch, which the SDK uses), or
 * after `maxMs`. Call it before the request starts.
 */
function requestSent(maxMs: number): Promise<void> {
  return new Promise(resolve => {
    const done = () => {
      clearTimeout(timer)
      unsubscribe('undici:request:bodySent', done)
      resolve()
    }
    const timer = setTimeout(done, maxMs)
    subscribe('undici:request:bodySent', done)
  })
}
