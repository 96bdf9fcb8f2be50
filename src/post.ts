// The post step: a safety net that finishes the report when the main step
// could not (killed after a cancel, or crashed before writing it).
import * as core from '@actions/core'
import { readSettings } from './settings'
import { Redactor, secretsFromEnv } from './report/redact'
import { createOctokit, ReportComment, type CommentRef } from './report/github'
import { readTranscript } from './transcript'
import { renderFinal, type Outcome, type ReportMeta } from './report/render'
import { emptyUsage } from './types'

export async function post(): Promise<void> {
  if (core.getState('done') === 'true') return
  const saved = core.getState('comment')
  const transcriptPath = core.getState('transcript')
  if (!saved && !transcriptPath) return
  const redactor = new Redactor(secretsFromEnv(process.env))
  const warn = (m: string) => core.warning(redactor.redact(m))
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
  const t = transcriptPath ? readTranscript(transcriptPath) : undefined
  const outcome: Outcome = {
    finalText: t?.finalText ?? '',
    exitReason: t?.finished ? t.exitReason : 'cancelled',
    turns: t?.turns ?? 0,
    commands: t?.commands ?? [],
    usage: t?.usage ?? emptyUsage(),
    costUsd: t?.costUsd ?? null,
    error: t?.error
  }
  const repoName = process.env.GITHUB_REPOSITORY ?? ''
  const meta: ReportMeta = {
    model: t?.model || model,
    sandbox: t?.sandbox ?? 'unknown',
    limits,
    elapsedMs: t ? Date.now() - Date.parse(t.startedAt) : 0,
    runUrl: process.env.GITHUB_RUN_ID
      ? `${process.env.GITHUB_SERVER_URL ?? 'https://github.com'}/${repoName}/actions/runs/${process.env.GITHUB_RUN_ID}`
      : undefined
  }
  core.warning(`The main step ended before finishing its report (${outcome.exitReason}); the post step finishes it.`)
  if (!saved || !token || !repoName.includes('/')) return
  const ref = JSON.parse(saved) as CommentRef
  const [owner, repo] = repoName.split('/')
  const octokit = createOctokit(token, warn)
  const thread = { kind: 'issue' as const, number: 0 } // unused: the comment exists, so it is only updated
  const comment = new ReportComment(octokit, { owner, repo }, thread, s => redactor.redact(s), warn, ref)
  try {
    await comment.finish(renderFinal(outcome, meta))
    core.info(`Report finished: ${ref.url}`)
  } catch (error) {
    core.setFailed(`Could not finish the report comment: ${redactor.redact((error as Error).message)}`)
  }
}
