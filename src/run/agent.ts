// The agent's part of a run: the sandbox its commands run in, and the loop,
// wired to the model API and to the run's record.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { runLoop } from '../agent/loop'
import { createModelCall } from '../agent/model'
import { systemPrompt } from '../agent/prompt'
import { contextWindowOf } from '../agent/cost'
import { commandRunner } from '../tools/runner'
import { afterSetUp } from '../environments/setup'
import { planWorkdir, prepareSandbox, type Sandbox } from '../sandbox'
import * as state from './state'
import { newCredentialState } from '../sandbox/credentials'
import { tmpdir } from 'node:os'
import { dirname } from 'node:path'
import type { Log } from '../report/log'
import type { Settings } from '../settings'
import type { Task } from '../trigger'
import { stripHidden } from '../untrusted'
import { inert } from '../report/inert'
import type { RunResult } from '../types'
import { messageOf, untilAborted, within } from '../util'
import type { RunControl } from './control'
import type { ThreadSession } from '../thread'
import { localExec, execScratch, type HandBackOptions } from '../changes'
import type { Recorder } from './recorder'

/** Share of the model's context window after which old tool results are elided. */
const CONTEXT_SHARE = 0.6

export interface AgentRun {
  /** the loop's result, whatever ended it (never rejects) */
  result: Promise<RunResult>
  /** stops what the commands left, hands their work to `fn` (where it is and how git reads it there), then puts back what the sandbox changed; problems are logged */
  handBack<T>(fn: (where: { source: HandBackOptions['source'] }) => Promise<T>): Promise<T>
}

export interface AgentContext {
  settings: Settings
  task: Task
  workspace: string
  repository: string | undefined
  control: RunControl
  rec: Recorder
  out: Log
  thread: ThreadSession
  /** called once the first model request has been sent */
  onFirstRequest: () => void
}

export function startAgent(ctx: AgentContext): AgentRun {
  const { settings, control, rec, out, workspace } = ctx
  // Set up beside the first model request; the first command waits for it.
  // The copy's path is known at once (the prompt names it); set-up goes on beside the first model request.
  const plan = planWorkdir(settings.sandbox, workspace)
  // none mode: where the git configs' original bytes are kept, known to the post step before anything changes
  const credentialState = newCredentialState(process.env.RUNNER_TEMP || tmpdir())
  out.redactor.add(credentialState.slice(0, credentialState.indexOf(':')))
  state.setCredentials(credentialState)
  const ready = prepareSandbox({
    mode: settings.sandbox,
    workspace,
    env: process.env,
    redactor: out.redactor,
    log: out.log,
    runDir: plan.runDir,
    saveState: state.setSandbox,
    passEnv: settings.passEnv,
    credentialState,
    network: { mode: settings.network, allowed: settings.allowedDomains }
  })
  ready.catch(() => {}) // awaited below; avoid an unhandled rejection before then
  let sandbox: Sandbox | undefined
  let prepared = ready // the sandbox once its copy starts where the thread's work is

  const result = (async (): Promise<RunResult> => {
    try {
      // The thread's last conversation, then the task (the sandbox gets ready meanwhile).
      const contextBudgetTokens = Math.floor(contextWindowOf(settings.model) * CONTEXT_SHARE)
      const started = await ctx.thread.start(inert.api(stripHidden(ctx.task.prompt)), contextBudgetTokens)
      rec.messages.push(...started.messages)
      rec.note = started.note
      // the copy starts from the branch the thread's last run committed to (src/thread/resume.ts)
      const note = (line: string) => (rec.note = [rec.note, line].filter(Boolean).join('\n\n'))
      prepared = ctx.thread.branch.prepare(ready, { workspace, tmpDir: process.env.RUNNER_TEMP || tmpdir(), note })
      prepared.catch(() => {}) // awaited by the first command and the release
      rec.system = systemPrompt(
        {
          workspace: plan.workdir,
          repository: ctx.repository,
          commandTimeoutSec: settings.commandTimeoutMs / 1000,
          maxOutputChars: settings.maxOutputChars,
          blocked: settings.blocked,
          append: settings.appendSystemPrompt
        },
        ctx.task
      )
      const modelCall = createModelCall({ apiKey: settings.apiKey, authToken: settings.authToken, baseUrl: settings.baseUrl })
      let firstCall = true
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
          historyModel: ctx.thread.loaded?.model ?? settings.model,
          contextBudgetTokens,
          signal: control.signal
        },
        {
          callModel: (params, signal) => {
            if (firstCall) {
              firstCall = false
              void requestSent(500).then(ctx.onFirstRequest) // subscribes before the request starts
            }
            return modelCall(params, signal)
          },
          runCommand: commandRunner(
            afterSetUp(prepared, {
              wait: (p, signal) => untilAborted(p, signal ?? control.signal),
              onReady: ready => {
                sandbox = ready
                rec.info.sandbox = ready.note
              }
            }),
            settings,
            { redact: out.redact, margin: Math.max(512, out.redactor.maxFormLength) }
          ),
          onEvent: rec.onEvent
        }
      )
      return await control.windDown(loop, () => rec.snapshot('the run ended while this command ran'))
    } catch (error) {
      return { ...rec.snapshot('the run failed while this command ran'), error: `Unexpected error: ${messageOf(error)}` }
    }
  })()

  /**
   * Every process of the run stopped (verified, or said), the agent's file
   * changes brought to the workspace as plain file changes (`.git` untouched),
   * then the copy removed and the rest put back; within the clean-up budget.
   */
  async function release(): Promise<void> {
    const budget = control.cleanupBudgetMs()
    try {
      sandbox ??= await within(prepared, budget, undefined)
      const sb = sandbox
      if (!sb) return
      rec.info.sandbox = sb.note
      const notBack: string[] = [] // what the user must know: said in the report, not only the log
      const done = await within(
        (async () => {
          const stop = await sb.stopAll()
          if (!stop.ok) notBack.push(stop.detail ?? "the run's processes could not be verified gone")
          notBack.push(...(await sb.release()))
          rec.info.network = sb.network()
          return true
        })(),
        budget,
        false
      )
      if (!done) notBack.push(`putting things back took longer than ${Math.round(budget / 1000)} s; the post step finishes it`)
      for (const p of notBack) out.warn(`Sandbox: ${p}`)
      if (notBack.length) rec.info.sandbox = `${sb.note}; WARNING: ${notBack.join('; ')}`
    } catch (error) {
      out.warn(`Sandbox: ${messageOf(error)}`)
      rec.info.sandbox = `${rec.info.sandbox}; WARNING: ${messageOf(error)}`
    }
  }

  // In a copy, the patch is computed inside the containment (its processes stopped, git as the sandbox user with a
  // git dir of its own) before the copy goes; nothing of it reaches the workspace but what the checks pass.
  async function handBack<T>(fn: (where: { source: HandBackOptions['source'] }) => Promise<T>): Promise<T> {
    const sb = (sandbox ??= await within(prepared, control.cleanupBudgetMs(), undefined).catch(() => undefined))
    if (sb?.mode !== 'user') {
      await release()
      return fn({ source: { workdir: workspace, exec: localExec, inPlace: true } })
    }
    try {
      const stop = await sb.stopAll()
      if (!stop.ok) out.warn(`Sandbox: ${stop.detail ?? "the run's processes could not be verified gone"}`)
      const env = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C', HOME: '/nonexistent' }
      return await fn({
        source: {
          workdir: sb.workdir,
          exec: sb.exec,
          inPlace: false,
          start: sb.startTree && sb.startObjects ? { tree: sb.startTree, objects: sb.startObjects } : undefined,
          scratch: execScratch(sb.exec, env),
          tmpDir: sb.env.TMPDIR ?? dirname(sb.workdir),
          path: env.PATH
        }
      })
    } finally {
      await release()
    }
  }

  return { result, handBack }
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
