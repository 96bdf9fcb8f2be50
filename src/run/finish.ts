// The end of a run as the user sees it: the report (comment, summary,
// outputs), and the step's own verdict.
import * as core from '../actions-core'
import { headline, renderFinal, type ReportMeta } from '../report/render'
import { publish, setOutputs } from '../report/publish'
import { setChangesOutputs } from '../changes'
import type { Log } from '../report/log'
import type { Thread } from '../trigger'
import type { RunResult } from '../types'
import type { GitHubSide } from '../github/side'
import type { RunControl } from './control'
import * as state from './state'

export function describeThread(thread: Thread | undefined): string {
  if (!thread) return 'the issue'
  return thread.kind === 'issue' ? `#${thread.number}` : `the review thread on #${thread.pullNumber}`
}

/** Publishes the report, sets the outputs, and fails the step where the run failed or the report could not be written. */
export async function finish(
  r: RunResult,
  meta: ReportMeta,
  ctx: { out: Log; github: GitHubSide; control: RunControl; thread: Thread | undefined; transcript: string }
): Promise<void> {
  const { out, github, control } = ctx
  const comment = github.comment
  const published = await publish(r, meta, comment, out.redact, out.warn, control.publishBudgetMs())
  await github.settleReaction(control.signalAt !== undefined ? 500 : 3000)
  setOutputs(r, out.redact, { transcript: ctx.transcript, commentUrl: published.commentUrl })
  setChangesOutputs(meta.changes, out.redact)
  // Without this the post step finishes the report (it tries the comment again).
  if (!comment || published.commentUrl) state.setDone()
  if (published.commentUrl) out.log(`Report: ${published.commentUrl}`)
  const line = headline(r, meta)?.replace(/\*\*/g, '')
  if (r.exitReason === 'error' || r.exitReason === 'cancelled' || r.exitReason === 'invalid-output') {
    core.setFailed(out.redact(line ?? r.exitReason))
  } else if (line) {
    out.warn(line)
  }
  if (published.commentError) {
    const where = comment?.comment ? `the comment ${comment.comment.url}` : `a comment on ${describeThread(ctx.thread)}`
    const holders = published.summary ? 'the job summary and the step outputs hold' : 'the step outputs and the log below hold'
    core.setFailed(out.redact(`The report could not be written to ${where} (${published.commentError}); ${holders} the report.`))
    if (!published.summary) {
      core.startGroup('Report')
      out.logAgent(renderFinal(r, meta))
      core.endGroup()
    }
  }
}

/** A run that does not start: said in the log, and the step succeeds. */
export function skip(out: Log, reason: string): void {
  out.log(`Skipped: ${reason}`)
  core.setOutput('exit-reason', 'skipped')
  core.setOutput('turns', '0')
  core.setOutput('commands', '0')
}
