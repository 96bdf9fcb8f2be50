// Wires one run: settings -> task -> gate -> loop -> report. Owns the
// top-level try/finally, the deadline and the signals, so every ending is
// reported.
import * as core from '@actions/core'
import * as github from '@actions/github'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { readSettings, SettingsError, type Settings } from './settings'
import { decide, type Task } from './trigger'
import { mayStart } from './gate'
import { Redactor, secretsFromEnv } from './report/redact'
import { stripHidden } from './untrusted'
import { systemPrompt } from './agent/prompt'
import { createModelCall } from './agent/model'
import { runLoop, type AgentEvent } from './agent/loop'
import { contextWindowOf } from './agent/cost'
import { runBash, toolResult } from './tools/bash'
import { prepareSandbox, type Sandbox } from './tools/sandbox'
import { addEyes, createOctokit, permissionOf, ReportComment, type Octokit } from './report/github'
import { renderProgress, headline, type Outcome, type ReportMeta } from './report/render'
import { publish, setOutputs } from './report/publish'
import { writeTranscript, type Transcript } from './transcript'
import { emptyUsage, type RunResult } from './types'

/** The agent stops this long before timeout-minutes to leave time for the report. */
export function reportReserveMs(timeoutMs: number): number {
  return Math.min(15_000, Math.floor(timeoutMs / 10))
}

/** Share of the model's context window after which old tool results are elided. */
const CONTEXT_SHARE = 0.6

export async function main(): Promise<void> {
  const startedAt = Date.now()
  core.saveState('isPost', 'true')
  const redactor = new Redactor(secretsFromEnv(process.env))
  const redact = (s: string) => redactor.redact(s)
  const log = (m: string) => core.info(redact(m))
  const warn = (m: string) => core.warning(redact(m))

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

  const { eventName, payload } = github.context
  const decision = decide(eventName, payload, settings)
  if (!decision.run) return skip(decision.reason)
  const task = decision.task

  const repoName = process.env.GITHUB_REPOSITORY
  const repo = repoName?.includes('/') ? { owner: repoName.split('/')[0], repo: repoName.split('/')[1] } : undefined
  const octokit: Octokit | undefined = settings.githubToken && repo ? createOctokit(settings.githubToken, warn) : undefined

  if (task.people.length) {
    const gate = await mayStart(task.people, settings, login => {
      if (!octokit || !repo) return Promise.reject(new Error('no github-token to ask GitHub with'))
      return permissionOf(octokit, repo, login)
    })
    if (!gate.allowed) return skip(gate.reason)
    log(`Trigger from ${task.source}; ${gate.reason}.`)
  }

  // From here on every ending is reported.
  const runUrl = process.env.GITHUB_RUN_ID
    ? `${process.env.GITHUB_SERVER_URL ?? 'https://github.com'}/${repoName}/actions/runs/${process.env.GITHUB_RUN_ID}`
    : undefined
  const workspace = process.env.GITHUB_WORKSPACE || process.cwd()
  const timeoutMs = settings.timeoutMinutes * 60_000
  const deadline = startedAt + timeoutMs - reportReserveMs(timeoutMs)
  const controller = new AbortController()
  const deadlineTimer = setTimeout(() => controller.abort('timeout'), deadline - Date.now())
  deadlineTimer.unref()
  const onSignal = (signal: string) => () => {
    if (!controller.signal.aborted) {
      log(`Received ${signal}: stopping the agent and writing the report.`)
      controller.abort('cancelled')
    }
  }
  process.on('SIGINT', onSignal('SIGINT'))
  process.on('SIGTERM', onSignal('SIGTERM'))

  const transcriptPath = join(process.env.RUNNER_TEMP || process.cwd(), `bash-agent-${process.env.GITHUB_RUN_ID ?? 'local'}-${startedAt}.json`)
  core.saveState('transcript', transcriptPath)

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
  const stamp = () => ({ ...meta, elapsedMs: Date.now() - startedAt })

  // The reaction and the progress comment go out beside the first model
  // request, never before it.
  if (octokit && repo && task.reactTo) {
    addEyes(octokit, repo, task.reactTo).catch(e => warn(`Could not add the eyes reaction: ${(e as Error).message}`))
  }
  let comment: ReportComment | undefined
  if (octokit && repo && task.thread) {
    comment = new ReportComment(octokit, repo, task.thread, redact, warn)
    comment.start(renderProgress(live, stamp())).then(ref => {
      if (ref) {
        core.saveState('comment', JSON.stringify(ref))
        log(`Progress comment: ${ref.url}`)
      }
    })
  } else {
    log(task.thread ? 'No github-token: the report goes to the job summary only.' : 'No issue to answer in: the report goes to the job summary only.')
  }

  const marker = randomUUID()
  const sandboxReady: Promise<Sandbox> = prepareSandbox({
    mode: settings.sandbox,
    workspace,
    env: process.env,
    redactor,
    marker,
    log
  })
  sandboxReady.catch(() => {}) // awaited below; avoid an unhandled rejection before then

  const messages: Transcript['messages'] = [{ role: 'user', content: stripHidden(task.prompt) }]
  const system = systemPrompt(
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
  let lastSave = 0
  const save = (o: Outcome, finished: boolean) => {
    if (!finished && Date.now() - lastSave < 1000) return
    lastSave = Date.now()
    try {
      writeTranscript(
        transcriptPath,
        { version: 1, model: settings.model, system, startedAt: new Date(startedAt).toISOString(), sandbox: meta.sandbox, finished, messages, ...o },
        v => redactor.redactDeep(v)
      )
    } catch (e) {
      warn(`Could not write the transcript: ${(e as Error).message}`)
    }
  }

  const onEvent = (e: AgentEvent) => {
    if (e.type === 'response') {
      live.turns = e.turn
      live.usage = e.usage
      live.costUsd = e.costUsd
      core.info(redact(`Turn ${e.turn}: ${e.stopReason}${e.text ? ` — ${e.text.slice(0, 200)}` : ''}`))
    } else if (e.type === 'command-start') {
      core.info(redact(`$ ${e.command}`))
    } else if (e.type === 'command-end') {
      live.commands.push(e.record)
      core.info(redact(`  -> ${e.record.blocked ? 'refused' : e.record.timedOut ? 'timed out' : `exit ${e.record.exitCode}`} in ${e.record.durationMs} ms`))
    } else {
      warn(e.message)
    }
    comment?.progress(renderProgress(live, stamp(), e.type === 'command-start' ? e.command : undefined))
    save(live, false)
  }

  let sandbox: Sandbox | undefined
  let result: RunResult
  try {
    result = await runLoop(
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
        callModel: createModelCall({ apiKey: settings.apiKey, authToken: settings.authToken, baseUrl: settings.baseUrl }),
        runCommand: async (command, signal) => {
          sandbox ??= await sandboxReady
          meta.sandbox = sandbox.note
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
  } catch (error) {
    result = {
      ...live,
      finalText: '',
      exitReason: 'error',
      error: `Unexpected error: ${(error as Error).message}`,
      messages
    }
  } finally {
    clearTimeout(deadlineTimer)
    try {
      sandbox ??= await sandboxReady
      meta.sandbox = sandbox.note
      await sandbox.release()
    } catch (error) {
      warn(`Sandbox: ${(error as Error).message}`)
    }
  }

  await finish(result, task)

  async function finish(r: RunResult, t: Task): Promise<void> {
    const final = stamp()
    save(r, true)
    const out = await publish(r, final, comment, redact, warn)
    setOutputs(r, redact, { transcript: transcriptPath, commentUrl: out.commentUrl })
    core.saveState('done', 'true')
    if (out.commentUrl) log(`Report: ${out.commentUrl}`)
    const line = headline(r, final)?.replace(/\*\*/g, '')
    if (r.exitReason === 'error' || r.exitReason === 'cancelled') {
      core.setFailed(redact(line ?? r.exitReason))
    } else if (line) {
      warn(line)
    }
    if (out.commentError) {
      core.setFailed(
        `The report comment on ${t.thread?.kind === 'review' ? 'the review thread' : `#${t.thread && 'number' in t.thread ? t.thread.number : '?'}`} could not be written (${out.commentError}); the job summary and the step outputs hold the report.`
      )
    }
  }

  function skip(reason: string): void {
    log(`Skipped: ${reason}`)
    core.setOutput('exit-reason', 'skipped')
    core.setOutput('turns', '0')
    core.setOutput('commands', '0')
  }
}
