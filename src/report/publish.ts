// The end of a run: outputs, job summary and the final comment, each written
// even when another fails, all redacted.
import * as core from '../actions-core'
import type { Outcome, ReportMeta } from './render'
import { renderFinal, renderSummary } from './render'
import { formatUsd } from '../agent/cost'
import type { ReportComment } from '../github/comment'
import { messageOf, statusOf, within } from '../util'

export interface Published {
  commentUrl?: string
  /** why the comment could not be written, when it could not */
  commentError?: string
  /** the job summary was written */
  summary: boolean
}

/** GitHub refuses a step summary over 1 MiB (bytes, not characters); this leaves room. */
export const SUMMARY_MAX_BYTES = 1024 * 1024 - 8 * 1024

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
  // compact JSON, already redacted (src/structured/answer.ts); empty without a valid answer
  core.setOutput('structured-output', o.structured?.json ?? '')
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8')

/**
 * The summary markdown within SUMMARY_MAX_BYTES. renderSummary keeps within a
 * character limit; output in a multi-byte script can still pass the byte
 * limit, so command outputs are then cut shorter until it fits.
 */
export function summaryText(o: Outcome, meta: ReportMeta, redact: (s: string) => string, maxBytes = SUMMARY_MAX_BYTES): string {
  let text = redact(renderSummary(o, meta))
  for (const cap of [20_000, 5_000, 2_000, 500, 100]) {
    if (bytes(text) <= maxBytes) return text
    const commands = o.commands.map(c =>
      c.output.length > cap
        ? {
            ...c,
            output: `${c.output.slice(0, cap / 2)}\n[... ${c.output.length - cap} characters left out to keep the job summary under 1 MiB ...]\n${c.output.slice(-cap / 2)}`
          }
        : c
    )
    text = redact(renderSummary({ ...o, commands }, meta))
  }
  if (bytes(text) <= maxBytes) return text
  // Last resort: the start of it, cut on a character boundary.
  const note = '\n\n*[… the job summary was cut here to stay under 1 MiB]*\n'
  const buf = Buffer.from(text, 'utf8').subarray(0, maxBytes - bytes(note))
  return buf.toString('utf8').replace(/\uFFFD+$/, '') + note
}

export async function writeSummary(
  o: Outcome,
  meta: ReportMeta,
  redact: (s: string) => string,
  log: (m: string) => void
): Promise<boolean> {
  if (!process.env.GITHUB_STEP_SUMMARY) return false
  try {
    // overwrite: a summary written earlier in this step is replaced, never doubled
    await core.overwriteSummary(summaryText(o, meta, redact))
    return true
  } catch (error) {
    log(`Could not write the job summary: ${redact(messageOf(error))}`)
    return false
  }
}

export async function publish(
  o: Outcome,
  meta: ReportMeta,
  comment: ReportComment | undefined,
  redact: (s: string) => string,
  log: (m: string) => void,
  /** give up on the comment after this long (it may still land later) */
  timeoutMs = 120_000
): Promise<Published> {
  // No progress update may start once the run is over.
  comment?.stop()
  const summary = await writeSummary(o, meta, redact, log)
  if (!comment) return { summary }
  try {
    const ref = await within(comment.finish(renderFinal(o, meta)), timeoutMs, 'late' as const)
    if (ref === 'late') return { commentError: `GitHub did not take it within ${Math.round(timeoutMs / 1000)} s`, summary }
    return { commentUrl: ref.url, summary }
  } catch (error) {
    const status = statusOf(error)
    const why = `${status !== undefined ? `HTTP ${status}: ` : ''}${messageOf(error)}`
    return { commentError: redact(why), summary }
  }
}
