// The agent's part of a run: the sandbox its commands run in, and the loop,
// wired to the model API and to the run's record.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { runLoop } from '../agent/loop'
import { createModelCall } from '../agent/model'
import { systemPrompt } from '../agent/prompt'
import { contextWindowOf } from '../agent/cost'
import { runBash } from '../tools/bash'
import { commandRunner } from '../tools/runner'
import { prepareSandbox, type Sandbox } from '../tools/sandbox'
import type { Log } from '../report/log'
import type { Settings } from '../settings'
import type { Task } from '../trigger'
import { stripHidden } from '../untrusted'
import { inert } from '../report/inert'
import type { RunResult } from '../types'
import { messageOf, untilAborted, within } from '../util'
import type { RunControl } from './control'
import type { ThreadSession } from '../thread'
import { localExec, type Exec } from '../changes'
import type { Recorder } from './recorder'

/** Share of the model's context window after which old tool results are elided. */
const CONTEXT_SHARE = 0.6

export interface AgentRun {
  /** the loop's result, whatever ended it (never rejects) */
  result: Promise<RunResult>
  /** stops what the commands left, hands their work to `fn` (where it is and how to read it), then puts back what the sandbox changed; problems are logged */
  handBack<T>(fn: (where: { workdir: string; exec: Exec }) => Promise<T>): Promise<T>
}

export interface AgentContext {
  settings: Settings
  task: Task
  workspace: string
  repository: string | undefined
  marker: string
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
  const ready = prepareSandbox({ mode: settings.sandbox, workspace, env: process.env, redactor: out.redactor, marker: ctx.marker, log: out.log })
  ready.catch(() => {}) // awaited below; avoid an unhandled rejection before then
  let sandbox: Sandbox | undefined

  const result = (async (): Promise<RunResult> => {
    try {
      // The thread's last conversation, then the task (the sandbox gets ready meanwhile).
      const contextBudgetTokens = Math.floor(contextWindowOf(settings.model) * CONTEXT_SHARE)
      const started = await ctx.thread.start(inert.api(stripHidden(ctx.task.prompt)), contextBudgetTokens)
      rec.messages.push(...started.messages)
      rec.note = started.note
      rec.system = systemPrompt(
        {
          workspace,
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
            async (command, o) => {
              if (!sandbox) {
                try {
                  sandbox = await untilAborted(ready, o.signal ?? control.signal)
                } catch (error) {
                  if (o.signal?.aborted) throw error
                  throw new Error(`the sandbox for commands could not be set up: ${messageOf(error)}`)
                }
                rec.info.sandbox = sandbox.note
              }
              return runBash(command, { ...o, cwd: workspace, env: sandbox.env, identity: sandbox.identity })
            },
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

  async function release(): Promise<void> {
    const budget = control.cleanupBudgetMs()
    try {
      sandbox ??= await within(ready, budget, undefined)
      if (!sandbox) return
      rec.info.sandbox = sandbox.note
      const released = await within(
        sandbox.release().then(() => true),
        budget,
        false
      )
      if (!released) out.warn(`Sandbox: putting things back took longer than ${Math.round(budget / 1000)} s; going on with the report.`)
    } catch (error) {
      out.warn(`Sandbox: ${messageOf(error)}`)
    }
  }

  async function handBack<T>(fn: (where: { workdir: string; exec: Exec }) => Promise<T>): Promise<T> {
    await release()
    return fn({ workdir: workspace, exec: localExec })
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
