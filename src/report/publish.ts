// The end of a run: outputs, job summary and the final comment, each written
// even when another fails, all redacted.
import * as core from '@actions/core'
import type { Outcome, ReportMeta } from './render'
import { renderFinal, renderSummary } from './render'
import { formatUsd } from '../agent/cost'
import type { ReportComment } from './github'

export interface Published {
  commentUrl?: string
  /** why the comment could not be written, when it could not */
  commentError?: string
}

export function setOutputs(o: Outcome, redact: (s: string) => string, extra: { transcript?: string; commentUrl?: string }): void {
  core.setOutput('result', redact(o.finalText))
  core.setOutput('exit-reason', o.exitReason)
  core.setOutput('turns', String(o.turns))
  core.setOutput('commands', String(o.commands.length))
  core.setOutput('comment-url', extra.commentUrl ?? '')
  core.setOutput('transcript', extra.transcript ?? '')
  core.setOutput('input-tokens', String(o.usage.inputTokens))
  core.setOutput('output-tokens', String(o.usage.outputTokens))
  core.setOutput('cache-read-tokens', String(o.usage.cacheReadTokens))
  core.setOutput('cache-creation-tokens', String(o.usage.cacheCreationTokens))
  core.setOutput('cost-usd', o.costUsd === null ? '' : formatUsd(o.costUsd))
}

export async function writeSummary(o: Outcome, meta: ReportMeta, redact: (s: string) => string, log: (m: string) => void): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return
  try {
    await core.summary.addRaw(redact(renderSummary(o, meta)), true).write()
  } catch (error) {
    log(`Could not write the job summary: ${(error as Error).message}`)
  }
}

export async function publish(
  o: Outcome,
  meta: ReportMeta,
  comment: ReportComment | undefined,
  redact: (s: string) => string,
  log: (m: string) => void
): Promise<Published> {
  await writeSummary(o, meta, redact, log)
  if (!comment) return {}
  try {
    const ref = await comment.finish(renderFinal(o, meta))
    return { commentUrl: ref.url }
  } catch (error) {
    return { commentError: redact((error as Error).message) }
  }
}
