// The post step: a safety net that finishes the report when the main step
// could not (killed after a cancel, crashed, or GitHub refused the final
// comment). It works from what the main step saved: the comment, the thread,
// the transcript it kept writing as it went, and the marker of its commands.
import * as core from '@actions/core'
import { readSettings } from './settings'
import { Redactor, secretsFromEnv } from './report/redact'
import { createOctokit, ReportComment, type CommentRef } from './report/github'
import { readTranscript } from './transcript'
import { runUrlOf, type Outcome, type ReportMeta } from './report/render'
import { publish } from './report/publish'
import { killLeftovers } from './tools/bash'
import { recoverSandbox } from './tools/sandbox'
import { credentialsPending, restoreFromState } from './sandbox/credentials'
import type { Thread } from './trigger'
import { emptyUsage, stoppedRecord, type CommandRecord } from './types'

function parse<T>(text: string): T | undefined {
  try {
    return text ? (JSON.parse(text) as T) : undefined
  } catch {
    return undefined
  }
}

export async function post(): Promise<void> {
  // [issue 8] git credentials the main step took out and did not put back (killed at any moment, or it failed):
  // the saved state alone says what, whatever else the main step finished
  const credentials = core.getState('credentials')
  if (credentials && credentialsPending(credentials)) {
    // nothing the run left running may see them come back
    if (core.getState('marker')) await killLeftovers(core.getState('marker'), { kind: 'self' })
    for (const p of await restoreFromState(credentials, m => core.info(m))) core.warning(p)
  }
  if (core.getState('done') === 'true') return
  const saved = parse<CommentRef>(core.getState('comment'))
  const thread = parse<Thread>(core.getState('thread'))
  const transcriptPath = core.getState('transcript')
  const marker = core.getState('marker')
  const crashed = core.getState('error')
  if (!saved && !transcriptPath) return

  const redactor = new Redactor(secretsFromEnv(process.env))
  const redact = (s: string) => redactor.redact(s)
  const warn = (m: string) => core.warning(redact(m))
  let token = ''
  let model = ''
  let limits: ReportMeta['limits'] = { maxTurns: 0, timeoutMinutes: 0, maxTokens: 0 }
  try {
    const s = readSettings(process.env)
    token = s.githubToken
    model = s.model
    limits = { maxTurns: s.maxTurns, timeoutMinutes: s.timeoutMinutes, maxCostUsd: s.maxCostUsd, maxTokens: s.maxTokens }
    for (const secret of [s.apiKey, s.authToken, s.githubToken]) if (secret) redactor.add(secret)
  } catch {
    token = core.getInput('github-token') || process.env.GITHUB_TOKEN || ''
    if (token) redactor.add(token)
  }

  // A command the killed step left running must not go on changing the workspace.
  if (marker) {
    const killed = await killLeftovers(marker, { kind: 'self' })
    if (killed) core.info(`Stopped ${killed} process${killed === 1 ? '' : 'es'} the agent left running.`)
    // The sandbox user's processes, the git credentials, the workspace's owner: what release() did not get to.
    if (await recoverSandbox(marker, m => core.info(redact(m)))) core.info('Put back what the sandbox had changed.')
  }

  const t = transcriptPath ? readTranscript(transcriptPath) : undefined
  let outcome: Outcome
  if (t?.finished) {
    // The main step finished the run but could not write the comment: try again.
    core.info('The main step could not write its report comment; the post step tries again.')
    outcome = t
  } else {
    const commands: CommandRecord[] = [...(t?.commands ?? [])]
    if (t?.running) {
      const since = Date.parse(t.running.startedAt)
      commands.push(stoppedRecord(t.running.command, Number.isFinite(since) ? Date.now() - since : 0, 'stopped: the step ended while this command ran'))
    }
    const note = crashed
      ? '_The main step crashed before it could finish this report; the post step wrote it from the saved transcript._'
      : '_The main step was stopped before it could finish this report; the post step wrote it from the saved transcript._'
    outcome = {
      finalText: [note, t?.finalText ?? ''].filter(Boolean).join('\n\n'),
      exitReason: crashed ? 'error' : 'cancelled',
      turns: t?.turns ?? 0,
      commands,
      usage: t?.usage ?? emptyUsage(),
      costUsd: t?.costUsd ?? null,
      error: crashed || undefined,
      messages: t?.messages
    }
    warn(`The main step ended before finishing its report (${outcome.exitReason}); the post step finishes it.`)
  }

  const repoName = process.env.GITHUB_REPOSITORY ?? ''
  const meta: ReportMeta = {
    model: t?.model || model,
    sandbox: t?.sandbox ?? 'unknown',
    limits,
    elapsedMs: t ? Date.now() - Date.parse(t.startedAt) : 0,
    runUrl: runUrlOf()
  }

  let comment: ReportComment | undefined
  if (token && repoName.includes('/') && (saved || thread)) {
    const [owner, repo] = repoName.split('/')
    comment = new ReportComment(createOctokit(token, warn), { owner, repo }, thread, redact, warn, { existing: saved })
  }
  const out = await publish(outcome, meta, comment, redact, warn)
  if (out.commentUrl) core.info(`Report finished: ${out.commentUrl}`)
  if (out.commentError) {
    core.setFailed(redact(`Could not finish the report comment (${out.commentError}); the job summary holds the report.`))
  }
}
