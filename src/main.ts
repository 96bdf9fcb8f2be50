// Wires one run: settings -> task -> gate -> loop -> report. Owns the
// top-level error handling, the deadline and the signals, so every ending is
// reported: the model ending its turn, a limit, an API failure, a crash,
// cancellation. What this step cannot finish (it was killed), the post step
// finishes from the saved state (see post.ts).
import * as core from '@actions/core'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { readSettings, SettingsError, type Settings } from './settings'
import { decide, type Task, type Thread } from './trigger'
import { mayStart } from './gate'
import { Redactor, secretsFromEnv } from './report/redact'
import { defuseWorkflowCommands, stripHidden } from './untrusted'
import { systemPrompt } from './agent/prompt'
import { createModelCall } from './agent/model'
import { runLoop, type AgentEvent } from './agent/loop'
import { contextWindowOf, priceOf } from './agent/cost'
import { runBash, toolResult } from './tools/bash'
import { prepareSandbox, type Sandbox } from './tools/sandbox'
import { newCredentialState } from './sandbox/credentials'
import { tmpdir } from 'node:os'
// Octokit (and @actions/github, which parses the event file when it loads) is
// loaded lazily, off the way to the first model request and inside the
// error handling.
import type { Octokit, ReportComment } from './report/github'
import { renderFinal, renderProgress, headline, runUrlOf, type Outcome, type ReportMeta } from './report/render'
import { publish, setOutputs } from './report/publish'
import { writeTranscript, type Transcript } from './transcript'
import { permissionViaFetch, proxyConfigured } from './report/permission'
import { emptyUsage, stoppedRecord, type ExitReason, type MessageParam, type RunResult } from './types'

/** The agent stops this long before timeout-minutes to leave time for the report. */
export function reportReserveMs(timeoutMs: number): number {
  return Math.min(15_000, Math.floor(timeoutMs / 10))
}

/** Share of the model's context window after which old tool results are elided. */
const CONTEXT_SHARE = 0.6
/** The runner sends SIGINT, SIGTERM 7.5 s later and kills 2.5 s after that: the report must be out by then. */
const CANCEL_BUDGET_MS = 9000
/** After a stop (cancel, time limit, crash), how long the loop may take to wind down before the report goes out without it. */
const WIND_DOWN_MS = 4000
/** The transcript (what the post step finishes a report from) is written at most this often while the run goes on. */
const SAVE_INTERVAL_MS = 1000
/** setTimeout cannot wait longer than this. */
const MAX_DELAY_MS = 2 ** 31 - 1

type Phase = 'starting' | 'running' | 'finishing'

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** `p`, or `fallback` once `ms` have passed, whichever comes first. */
export function within<T, F>(p: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<F>(resolve => {
    timer = setTimeout(() => resolve(fallback), Math.max(0, Math.min(ms, MAX_DELAY_MS)))
  })
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

/** `p`, or a rejection as soon as `signal` aborts. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('the run was stopped'))
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('the run was stopped'))
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}


export function describeThread(thread: Thread | undefined): string {
  if (!thread) return 'the issue'
  return thread.kind === 'issue' ? `#${thread.number}` : `the review thread on #${thread.pullNumber}`
}

/** The event the runner saved, as @actions/github reads it; a broken event file is an error worth a clear line. */
export function readEvent(env: NodeJS.ProcessEnv = process.env): { eventName: string; payload: unknown } {
  const eventName = env.GITHUB_EVENT_NAME ?? ''
  const path = env.GITHUB_EVENT_PATH
  if (!path || !existsSync(path)) return { eventName, payload: {} }
  try {
    return { eventName, payload: JSON.parse(readFileSync(path, 'utf8')) as unknown }
  } catch (error) {
    throw new Error(`the event file ${path} could not be read: ${messageOf(error)}`)
  }
}

export async function main(): Promise<void> {
  const startedAt = Date.now()
  core.saveState('isPost', 'true')
  const redactor = new Redactor(secretsFromEnv(process.env))
  const redact = (s: string) => redactor.redact(s)
  // The log is a choke point too: agent-controlled text must not carry secrets or workflow commands.
  const log = (m: string) => core.info(defuseWorkflowCommands(redact(m)))
  const warn = (m: string) => core.warning(redact(m))

  // Signals and crashes are handled from the first moment. Before the run
  // starts there is nothing to report: the step just ends. While it runs, the
  // agent is stopped and the report written. While the report is written, a
  // second signal (the runner's SIGTERM) changes nothing.
  let phase: Phase = 'starting'
  const controller = new AbortController()
  let signalAt: number | undefined
  let crash: string | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    signalAt ??= Date.now()
    if (phase === 'starting') {
      log(`Received ${signal} before the agent started; nothing to report.`)
      core.setOutput('exit-reason', 'cancelled')
      core.setFailed('Cancelled before the agent started.')
      process.exit()
    }
    if (!controller.signal.aborted) {
      log(`Received ${signal}: stopping the agent and writing the report.`)
      controller.abort('cancelled')
    } else {
      log(`Received ${signal}: still writing the report.`)
    }
  }
  const onCrash = (error: unknown, origin: string) => {
    const message = `Unexpected error: ${messageOf(error)}`
    if (phase === 'starting') {
      core.setOutput('exit-reason', 'error')
      core.setFailed(redact(`The action crashed: ${messageOf(error)}`))
      process.exit()
    }
    if (phase === 'running' && origin === 'unhandledRejection') {
      // A promise nobody waited for failed: worth a warning, not the run.
      warn(message)
    } else if (phase === 'running') {
      crash ??= message
      warn(message)
      if (!controller.signal.aborted) controller.abort('crash')
    } else {
      warn(`${message} (while writing the report)`)
    }
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  process.on('uncaughtException', error => onCrash(error, 'uncaughtException'))
  process.on('unhandledRejection', reason => onCrash(reason, 'unhandledRejection'))

  let settings: Settings
  try {
    settings = readSettings(process.env)
  } catch (error) {
    core.setOutput('exit-reason', 'error')
    if (error instanceof SettingsError) return core.setFailed(redact(error.message))
    throw error
  }
  for (const secret of [settings.apiKey, settings.authToken, settings.githubToken]) {
    if (secret) {
      redactor.add(secret)
      core.setSecret(secret)
    }
  }

  if (settings.maxCostUsd !== undefined && !priceOf(settings.model)) {
    warn(`max-cost-usd cannot be enforced: the prices of model "${settings.model}" are not known, so the run has no cost estimate.`)
  }

  const { eventName, payload } = readEvent()
  const decision = decide(eventName, payload, settings)
  if (!decision.run) return skip(decision.reason)
  const task = decision.task

  const repoName = process.env.GITHUB_REPOSITORY
  const repo = repoName?.includes('/') ? { owner: repoName.split('/')[0], repo: repoName.split('/')[1] } : undefined
  const token = repo ? settings.githubToken : ''
  // Octokit (with the copy of undici @actions/github bundles) is loaded once the
  // first model request is on its way; the permission check before it uses Node's fetch.
  let ghModule: Promise<typeof import('./report/github')> | undefined
  const loadGitHub = () => (ghModule ??= import('./report/github'))
  let octokitReady: Promise<Octokit> | undefined
  const getOctokit = () => (octokitReady ??= loadGitHub().then(gh => gh.createOctokit(token, warn)))

  if (task.people.length) {
    const gate = await mayStart(task.people, settings, async login => {
      if (!token || !repo) throw new Error('no github-token to ask GitHub with')
      // only @actions/github's client honours HTTP(S)_PROXY
      if (proxyConfigured(process.env)) return (await loadGitHub()).permissionOf(await getOctokit(), repo, login)
      return permissionViaFetch(token, repo, login)
    })
    if (!gate.allowed) return skip(gate.reason)
    log(`Trigger from ${task.source}; ${gate.reason}.`)
  }

  // From here on every ending is reported.
  phase = 'running'
  const runUrl = runUrlOf()
  const workspace = process.env.GITHUB_WORKSPACE || process.cwd()
  const timeoutMs = settings.timeoutMinutes * 60_000
  const hardEnd = startedAt + timeoutMs
  const deadline = hardEnd - reportReserveMs(timeoutMs)
  const deadlineTimer = setTimeout(
    () => {
      if (controller.signal.aborted) return
      log(`The time limit (timeout-minutes: ${settings.timeoutMinutes}) is reached: stopping the agent and writing the report.`)
      controller.abort('timeout')
    },
    Math.min(MAX_DELAY_MS, Math.max(0, deadline - Date.now()))
  )
  deadlineTimer.unref()

  const marker = randomUUID()
  const transcriptPath = join(process.env.RUNNER_TEMP || process.cwd(), `bash-agent-${process.env.GITHUB_RUN_ID ?? 'local'}-${startedAt}.json`)
  // What the post step needs to finish the report if this step cannot.
  core.saveState('transcript', transcriptPath)
  core.saveState('marker', marker)
  // [issue 8] where the git configs' original bytes will be kept: known to the post step before anything changes
  const credentialState = newCredentialState(process.env.RUNNER_TEMP || tmpdir())
  redactor.add(credentialState.slice(0, credentialState.indexOf(':')))
  core.saveState('credentials', credentialState)
  if (task.thread) core.saveState('thread', JSON.stringify(task.thread))

  const meta: ReportMeta = {
    model: settings.model,
    runUrl,
    sandbox: settings.sandbox,
    limits: {
      maxTurns: settings.maxTurns,
      timeoutMinutes: settings.timeoutMinutes,
      maxCostUsd: settings.maxCostUsd,
      maxTokens: settings.maxTokens
    },
    elapsedMs: 0
  }
  const live: Outcome = { finalText: '', exitReason: 'running', turns: 0, commands: [], usage: emptyUsage(), costUsd: null }
  let running: { command: string; since: number } | undefined
  const stamp = () => ({ ...meta, elapsedMs: Date.now() - startedAt })
  const messages: MessageParam[] = []
  let system = ''

  let comment: ReportComment | undefined
  let reaction: Promise<void> = Promise.resolve()
  // The progress comment first (it is what users look for), the reaction beside
  // it. Both, and loading Octokit, wait until the first model request is sent.
  let githubSide: Promise<void> | undefined
  const startGitHub = (): Promise<void> =>
    (githubSide ??= (async () => {
      if (!token || !repo) return
      const [gh, octokit] = await Promise.all([loadGitHub(), getOctokit()])
      if (task.thread) {
        comment = new gh.ReportComment(octokit, repo, task.thread, redact, warn, {
          onCreate: ref => {
            core.saveState('comment', JSON.stringify(ref))
            log(`Progress comment: ${ref.url}`)
          }
        })
        void comment.start(renderProgress(live, stamp(), running?.command))
      }
      if (task.reactTo) {
        reaction = gh.addEyes(octokit, repo, task.reactTo).catch(e => warn(`Could not add the eyes reaction: ${messageOf(e)}`))
      }
    })().catch(e => warn(`Could not reach GitHub for the progress comment: ${messageOf(e)}`)))

  /** The run as it stands, with a command still running shown as stopped. */
  const snapshot = (why: string): Outcome => ({
    ...live,
    commands: running ? [...live.commands, stoppedRecord(running.command, Date.now() - running.since, why)] : [...live.commands]
  })

  let lastSave = 0
  let saveTimer: NodeJS.Timeout | undefined
  const save = (o: Outcome, finished: boolean) => {
    lastSave = Date.now()
    try {
      const t: Transcript = {
        version: 1,
        model: settings.model,
        system,
        startedAt: new Date(startedAt).toISOString(),
        sandbox: meta.sandbox,
        finished,
        messages,
        ...o,
        ...(!finished && running ? { running: { command: running.command, startedAt: new Date(running.since).toISOString() } } : {})
      }
      writeTranscript(transcriptPath, t, v => redactor.redactDeep(v))
    } catch (e) {
      warn(`Could not write the transcript: ${messageOf(e)}`)
    }
  }
  /** Saves the live run now, or soon (at most once a second, never missing the latest state). */
  const saveLive = () => {
    if (saveTimer) return
    const wait = lastSave + SAVE_INTERVAL_MS - Date.now()
    if (wait <= 0) return save(live, false)
    saveTimer = setTimeout(() => {
      saveTimer = undefined
      if (phase === 'running') save(live, false)
    }, wait)
    saveTimer.unref()
  }
  save(live, false)

  const onEvent = (e: AgentEvent) => {
    try {
      if (e.type === 'response') {
        live.turns = e.turn
        live.usage = e.usage
        live.costUsd = e.costUsd
        if (e.text) live.finalText = e.text
        log(`Turn ${e.turn}: ${e.stopReason}${e.text ? ` — ${e.text.slice(0, 200)}` : ''}`)
      } else if (e.type === 'command-start') {
        running = { command: e.command, since: Date.now() }
        log(`$ ${e.command}`)
      } else if (e.type === 'command-end') {
        running = undefined
        live.commands.push(e.record)
        const r = e.record
        log(`  -> ${r.blocked ? 'refused' : r.timedOut ? 'timed out' : r.aborted ? 'stopped' : `exit ${r.exitCode}`} in ${r.durationMs} ms`)
      } else {
        warn(e.message)
      }
      comment?.progress(renderProgress(live, stamp(), running?.command))
      saveLive()
    } catch (error) {
      // Showing progress must never stop the agent.
      warn(`Could not show progress: ${messageOf(error)}`)
    }
  }

  let sandboxReady: Promise<Sandbox> | undefined
  let sandbox: Sandbox | undefined
  let result: RunResult
  try {
    if (!(token && repo && task.thread)) {
      log(task.thread ? 'No github-token: the report goes to the job summary only.' : 'No issue to answer in: the report goes to the job summary only.')
    }
    messages.push({ role: 'user', content: stripHidden(task.prompt) })
    sandboxReady = prepareSandbox({ mode: settings.sandbox, workspace, env: process.env, redactor, marker, log, passEnv: settings.passEnv, credentialState })
    sandboxReady.catch(() => {}) // awaited below; avoid an unhandled rejection before then
    system = systemPrompt(
      {
        workspace,
        repository: repoName,
        commandTimeoutSec: settings.commandTimeoutMs / 1000,
        maxOutputChars: settings.maxOutputChars,
        blocked: settings.blocked,
        append: settings.appendSystemPrompt
      },
      task
    )
    const ready = sandboxReady
    const modelCall = createModelCall({ apiKey: settings.apiKey, authToken: settings.authToken, baseUrl: settings.baseUrl })
    let firstCall = true
    const loop = runLoop(
      messages,
      {
        model: settings.model,
        system,
        maxTokens: settings.maxTokens,
        maxTurns: settings.maxTurns,
        deadline,
        maxCostUsd: settings.maxCostUsd,
        contextBudgetTokens: Math.floor(contextWindowOf(settings.model) * CONTEXT_SHARE),
        signal: controller.signal
      },
      {
        callModel: (params, signal) => {
          if (firstCall) {
            firstCall = false
            void requestSent(500).then(startGitHub) // subscribes before the request starts
          }
          return modelCall(params, signal)
        },
        runCommand: async (command, signal) => {
          if (!sandbox) {
            try {
              sandbox = await untilAborted(ready, signal)
            } catch (error) {
              if (signal.aborted) throw error
              throw new Error(`the sandbox for commands could not be set up: ${messageOf(error)}`)
            }
            meta.sandbox = sandbox.note
          }
          const record = await runBash(command, {
            cwd: workspace,
            env: sandbox.env,
            timeoutMs: settings.commandTimeoutMs,
            maxOutputChars: settings.maxOutputChars,
            blocked: settings.blocked,
            redact,
            redactMargin: Math.max(512, redactor.maxFormLength),
            identity: sandbox.identity,
            signal
          })
          return { record, ...toolResult(record, settings.commandTimeoutMs) }
        },
        onEvent
      }
    )
    result = await windDown(loop)
  } catch (error) {
    result = { ...snapshot('the run failed while this command ran'), exitReason: 'error', error: `Unexpected error: ${messageOf(error)}`, messages }
  }
  if (crash) result = { ...result, exitReason: 'error', error: crash }
  clearTimeout(deadlineTimer)
  clearTimeout(saveTimer)
  phase = 'finishing'
  await startGitHub() // at once when the run ended before its first request was sent
  await releaseSandbox()
  await finish(result, task)

  /**
   * The loop's result. Once the run is stopped the loop normally ends at once
   * (the model request is aborted, the command's process group killed); if it
   * does not within WIND_DOWN_MS, the report goes out with what is known.
   */
  function windDown(loop: Promise<RunResult>): Promise<RunResult> {
    const signal = controller.signal
    return new Promise<RunResult>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined
      const onAbort = () => {
        timer = setTimeout(() => {
          const reason = signal.reason === 'timeout' ? 'timeout' : signal.reason === 'crash' ? 'error' : 'cancelled'
          warn(`The agent did not stop within ${WIND_DOWN_MS / 1000} s; reporting what is known.`)
          resolve({ ...snapshot('the run ended while this command ran'), exitReason: reason as ExitReason, messages })
        }, WIND_DOWN_MS)
      }
      if (signal.aborted) onAbort()
      else signal.addEventListener('abort', onAbort, { once: true })
      loop
        .then(resolve, reject)
        .finally(() => {
          clearTimeout(timer)
          signal.removeEventListener('abort', onAbort)
        })
    })
  }

  async function releaseSandbox(): Promise<void> {
    // leave the report at least half of what is left before the time limit
    const budget = signalAt !== undefined ? 3000 : Math.min(15_000, Math.max(2000, (hardEnd - Date.now() - 2000) / 2))
    try {
      sandbox ??= sandboxReady ? await within(sandboxReady, budget, undefined) : undefined
      if (!sandbox) return
      meta.sandbox = sandbox.note
      const released = await within(
        sandbox.release().then(() => true),
        budget,
        false
      )
      if (!released) warn(`Sandbox: putting things back took longer than ${Math.round(budget / 1000)} s; going on with the report.`)
    } catch (error) {
      warn(`Sandbox: ${messageOf(error)}`)
    }
  }

  /** Time the final comment may take: until the runner's kill after a cancel, else until the time limit. */
  function publishBudget(): number {
    const now = Date.now()
    if (signalAt !== undefined) return Math.max(2000, signalAt + CANCEL_BUDGET_MS - now)
    return Math.min(120_000, Math.max(10_000, hardEnd - now - 1000))
  }

  async function finish(r: RunResult, t: Task): Promise<void> {
    const final = stamp()
    save(r, true)
    const out = await publish(r, final, comment, redact, warn, publishBudget())
    // A reaction still going (it is retried once) gets a moment, so its failure shows in the log.
    await within(reaction, signalAt !== undefined ? 500 : 3000, undefined)
    setOutputs(r, redact, { transcript: transcriptPath, commentUrl: out.commentUrl })
    // Without this the post step finishes the report (it tries the comment again).
    if (!comment || out.commentUrl) core.saveState('done', 'true')
    if (out.commentUrl) log(`Report: ${out.commentUrl}`)
    const line = headline(r, final)?.replace(/\*\*/g, '')
    if (r.exitReason === 'error' || r.exitReason === 'cancelled') {
      core.setFailed(redact(line ?? r.exitReason))
    } else if (line) {
      warn(line)
    }
    if (out.commentError) {
      const where = comment?.comment ? `the comment ${comment.comment.url}` : `a comment on ${describeThread(t.thread)}`
      const holders = out.summary ? 'the job summary and the step outputs hold' : 'the step outputs and the log below hold'
      core.setFailed(redact(`The report could not be written to ${where} (${out.commentError}); ${holders} the report.`))
      if (!out.summary) {
        core.startGroup('Report')
        log(renderFinal(r, final))
        core.endGroup()
      }
    }
  }

  function skip(reason: string): void {
    log(`Skipped: ${reason}`)
    core.setOutput('exit-reason', 'skipped')
    core.setOutput('turns', '0')
    core.setOutput('commands', '0')
  }
}

/** For `npx @github/local-action run . src/main.ts .env`, which calls an exported run(). */
export const run = main

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
