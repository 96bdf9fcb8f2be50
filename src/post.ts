// The post step: a safety net that finishes the report when the main step
// could not (killed after a cancel, crashed, or GitHub refused the final
// comment). It works from what the main step saved: the comment, the thread,
// the transcript it kept writing as it went, and the sandbox's state (what
// must be undone: the run folder, the namespace), saved before each change.
import * as core from './actions-core'
import { readSettings, secretsOf } from './settings'
import { createLog, type Log } from './report/log'
import { ReportComment } from './github/comment'
import { createOctokit } from './github/octokit'
import { readTranscript, type Transcript } from './transcript'
import { runUrlOf, type Outcome, type ReportMeta } from './report/render'
import { publish } from './report/publish'
import { recoverSandbox } from './sandbox'
import { emptyUsage, stoppedRecord, type CommandRecord } from './types'
import { repoOf } from './util'
import * as state from './run/state'

/** What the post step needs of the settings; a bad setting (the main step said so) still leaves the token. */
function postSettings(out: Log): { token: string; model: string; writeSpacingMs?: number; limits: ReportMeta['limits'] } {
  try {
    const s = readSettings(process.env)
    for (const secret of secretsOf(s)) out.addSecret(secret)
    const limits = { maxTurns: s.maxTurns, timeoutMinutes: s.timeoutMinutes, maxCostUsd: s.maxCostUsd, maxTokens: s.maxTokens }
    return { token: s.githubToken, model: s.model, writeSpacingMs: s.githubWriteIntervalMs, limits }
  } catch {
    const token = core.getInput('github-token') || process.env.GITHUB_TOKEN || ''
    out.addSecret(token)
    return { token, model: '', limits: { maxTurns: 0, timeoutMinutes: 0, maxTokens: 0 } }
  }
}

/** What the sandbox left behind when the main step could not put it back (a run folder, a namespace). */
async function putBack(saved: string, out: Log): Promise<void> {
  if (saved && (await recoverSandbox(saved, out.log))) out.log('Put back what the sandbox had changed.')
}

/** The report of a run the main step did not finish, from what it saved. */
/**
 * How the main step ended, from what it saved: a crash it caught, a cancel it received, or neither (the
 * kernel or the runner killed it outright, e.g. out of memory): never called a cancel when it was not one.
 */
function unfinishedOutcome(t: Transcript | undefined, crashed: string, signalled: string): Outcome {
  const commands: CommandRecord[] = [...(t?.commands ?? [])]
  if (t?.running) {
    const since = Date.parse(t.running.startedAt)
    commands.push(
      stoppedRecord(t.running.command, Number.isFinite(since) ? Date.now() - since : 0, 'stopped: the step ended while this command ran')
    )
  }
  const killed = !crashed && !signalled
  const note = crashed
    ? '_The main step crashed before it could finish this report; the post step wrote it from the saved transcript._'
    : killed
      ? '_The main step was killed without a cancel (by the system, for example when the machine ran out of memory) before it could finish this report; the post step wrote it from the saved transcript._'
      : '_The main step was stopped before it could finish this report; the post step wrote it from the saved transcript._'
  return {
    finalText: [note, t?.finalText ?? ''].filter(Boolean).join('\n\n'),
    exitReason: crashed || killed ? 'error' : 'cancelled',
    turns: t?.turns ?? 0,
    commands,
    usage: t?.usage ?? emptyUsage(),
    costUsd: t?.costUsd ?? null,
    error: crashed || (killed ? 'the main step was killed (not cancelled): out of memory, or stopped by the system' : undefined),
    messages: t?.messages
  }
}

export async function post(): Promise<void> {
  const out = createLog()
  const settings = postSettings(out)
  // Recovery never depends on the main step having finished its own.
  await putBack(state.getSandbox(), out)
  if (state.isDone()) return
  const saved = state.getComment()
  const thread = state.getThread()
  const transcriptPath = state.getTranscriptPath()
  if (!saved && !transcriptPath) return

  const t = transcriptPath ? readTranscript(transcriptPath) : undefined
  let outcome: Outcome
  if (t?.finished) {
    // The main step finished the run but could not write the comment: try again.
    out.log('The main step could not write its report comment; the post step tries again.')
    outcome = t
  } else {
    outcome = unfinishedOutcome(t, state.getCrash(), state.getSignalled())
    out.warn(`The main step ended before finishing its report (${outcome.exitReason}); the post step finishes it.`)
  }
  const meta: ReportMeta = {
    model: t?.model || settings.model,
    sandbox: t?.sandbox ?? 'unknown',
    limits: settings.limits,
    elapsedMs: t ? Date.now() - Date.parse(t.startedAt) : 0,
    runUrl: runUrlOf()
  }
  const repo = repoOf(process.env.GITHUB_REPOSITORY)
  let comment: ReportComment | undefined
  if (settings.token && repo && (saved || thread)) {
    const octokit = await createOctokit(settings.token, out.warn, { writeSpacingMs: settings.writeSpacingMs })
    comment = new ReportComment(octokit, repo, thread, out.redact, out.warn, { existing: saved })
  }
  const published = await publish(outcome, meta, comment, out.redact, out.warn)
  if (published.commentUrl) out.log(`Report finished: ${published.commentUrl}`)
  if (published.commentError) {
    core.setFailed(out.redact(`Could not finish the report comment (${published.commentError}); the job summary holds the report.`))
  }
}
