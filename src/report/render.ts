// RunResult -> markdown for the comment (65,536 characters at most) and the
// job summary (1 MiB at most). Every piece of agent-controlled text goes
// through `inert` (one function per kind of place); the harness's own parts
// (headline, log, changes, footer) are written around it, each starting at
// column 0 after a blank line, so the agent's text has closed every block it
// opened before they begin.
import { MARKER } from '../trigger'
import { inert } from './inert'
import type { CommandRecord, ExitReason, MessageParam, RunResult, Usage } from '../types'
import { formatUsd } from '../agent/cost'
import { renderChanges, CHANGES_COMMENT_SHARE, CHANGES_SUMMARY_SHARE } from '../changes/render'
import type { ChangesReport } from '../changes'
import type { NetworkReport } from '../network/launch'
import { renderStructured } from './structured'

export const COMMENT_LIMIT = 65536
export const SUMMARY_LIMIT = 1024 * 1024 - 16 * 1024
/** output shown per command in the comment; the summary shows it all */
const COMMENT_OUTPUT_CHARS = 2000

/** The link to this workflow run, from the runner's environment. */
export function runUrlOf(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!env.GITHUB_RUN_ID || !env.GITHUB_REPOSITORY) return undefined
  return `${env.GITHUB_SERVER_URL ?? 'https://github.com'}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`
}

export interface ReportMeta {
  model: string
  runUrl?: string
  sandbox: string
  limits: { maxTurns: number; timeoutMinutes: number; maxCostUsd?: number; maxTokens: number }
  elapsedMs: number
  /** the agent's changes (src/changes), shown after the final text */
  changes?: ChangesReport
  /** hidden marker of the thread session (run id, state, history artifact), after MARKER */
  marker?: string
  /** one line about the thread's conversation (continued, or why it started afresh) */
  note?: string
  /** the commands' network: hosts reached and refused, or that it was not contained */
  network?: NetworkReport
  /** where the model ran, when not the Claude API with a key; `otherPrices`: its cost is an estimate at Anthropic's list prices */
  provider?: { label: string; otherPrices: boolean }
}

export type Outcome = Pick<RunResult, 'finalText' | 'turns' | 'commands' | 'usage' | 'costUsd' | 'error' | 'structured'> & {
  /** how the run ended, or `running` while it goes on */
  exitReason: ExitReason | 'running'
  /** the conversation, when known: tool calls that were no command (unknown tool, no command) are shown from it */
  messages?: MessageParam[]
  /**
   * Harness sections shown after the final text and before the log (the
   * Changes section), already rendered: agent text in them went through
   * `inert.inline` / `inert.code`.
   */
  sections?: string[]
  /** login of who stopped the run with `/agent stop` (shown without pinging) */
  stoppedBy?: string
}

/** One line saying how the run ended, when it did not simply finish. */
export function headline(o: Outcome, meta: ReportMeta): string | undefined {
  const done = `${o.commands.length} command${o.commands.length === 1 ? '' : 's'} ran in ${o.turns} turn${o.turns === 1 ? '' : 's'}; the log below shows what was done.`
  const reasons: Partial<Record<ExitReason, string>> = {
    max_turns: `⚠️ **Stopped at the turn limit** (max-turns: ${meta.limits.maxTurns}) before the agent finished. ${done}`,
    timeout: `⚠️ **Stopped at the time limit** (timeout-minutes: ${meta.limits.timeoutMinutes}) before the agent finished. ${done}`,
    budget: `⚠️ **Stopped at the cost limit**: the estimated cost $${formatUsd(o.costUsd ?? 0)} passed max-cost-usd (${meta.limits.maxCostUsd}). ${done}`,
    max_tokens: `⚠️ **The model's reply was cut short** at max-tokens (${meta.limits.maxTokens}); a command it was writing was not run. ${done}`,
    refusal: `⚠️ **The model declined to continue** (stop reason: refusal). ${done}`,
    model_context_window_exceeded: `⚠️ **The conversation outgrew the model's context window**, so the run ended. ${done}`,
    cancelled: o.stoppedBy
      ? `🛑 **Stopped by ${inert.text(`@${o.stoppedBy}`)}** while the agent was working. ${done}`
      : `🛑 **Cancelled**: the job was cancelled while the agent was working. ${done}`,
    error: `❌ **The run failed**: ${inert.text(o.error ?? 'unknown error')} ${done}`,
    'invalid-output': `❌ **The final answer did not match output-schema**, so structured-output is empty; what was wrong is shown below. ${done}`
  }
  return o.exitReason === 'running' ? undefined : reasons[o.exitReason]
}

export function footer(o: Outcome, meta: ReportMeta): string {
  const parts = [
    `model ${meta.model}${meta.provider ? ` on ${meta.provider.label}` : ''}`,
    `${o.turns} turn${o.turns === 1 ? '' : 's'}`,
    `${o.commands.length} command${o.commands.length === 1 ? '' : 's'}`,
    tokens(o.usage),
    o.costUsd === null
      ? undefined
      : `~$${formatUsd(o.costUsd)}${meta.provider?.otherPrices ? " (estimate at Anthropic's list prices)" : ''}`,
    `${(meta.elapsedMs / 1000).toFixed(0)} s`,
    `sandbox: ${inert.text(meta.sandbox)}`, // harness text, but what could not be put back names files the agent chose
    meta.runUrl ? `[run log](${meta.runUrl})` : undefined
  ].filter(Boolean)
  return `<sub>${parts.join(' · ')}</sub>`
}

function tokens(u: Usage): string {
  // 12,345 without Intl: toLocaleString loads ICU data (~10 ms and ~5 MB the first time).
  const n = (x: number) => String(Math.round(x)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  const cache =
    u.cacheReadTokens || u.cacheCreationTokens ? ` (cache: ${n(u.cacheReadTokens)} read, ${n(u.cacheCreationTokens)} written)` : ''
  return `${n(u.inputTokens)} in / ${n(u.outputTokens)} out tokens${cache}`
}

/** One command as markdown: a header line and a fenced block with the command and its output. */
export function renderCommand(rec: CommandRecord, index: number, maxOutput: number): string {
  const status = rec.blocked
    ? 'refused (blocked)'
    : rec.timedOut
      ? 'timed out'
      : rec.aborted
        ? 'stopped'
        : rec.exitCode === null
          ? rec.error !== undefined
            ? 'could not run'
            : 'no exit code'
          : `exit ${rec.exitCode}${rec.outOfMemory ? ` · ${rec.outOfMemory}` : ''}`
  const icon = rec.exitCode === 0 && !rec.timedOut && !rec.blocked ? '✅' : '⚠️'
  const output = trimMiddle(rec.output, maxOutput, 'trimmed here; the job summary has the whole output')
  // A command can be long too (a heredoc writing a file): the comment shows its head and tail.
  const command = trimMiddle(rec.command, maxOutput, 'of the command trimmed here; the job summary has all of it')
  // The model's note before the command (agent text) goes in the same fence, as comment lines above it.
  const note = rec.note ? trimMiddle(rec.note, maxOutput, 'of the note trimmed here').replace(/^/gm, '# ') + '\n' : ''
  return `${icon} **${index + 1}** · ${status} · ${(rec.durationMs / 1000).toFixed(1)} s${rec.truncated ? ' · output cut' : ''}\n\n${inert.code(`${note}$ ${command}\n${output}`, 'console')}\n`
}

/**
 * The log of commands within `budget` characters: all of them when they fit,
 * else the first and the last ones with a line saying how many were left out.
 */
export function renderLog(commands: CommandRecord[], budget: number, maxOutput: number, whereAll: string): string {
  const blocks = commands.map((c, i) => renderCommand(c, i, maxOutput))
  const total = (bs: string[]) => bs.reduce((n, b) => n + b.length + 1, 0)
  if (total(blocks) <= budget) return blocks.join('\n')
  let head = 0
  let tail = 0
  let used = 200 // room for the omission line
  // Take from both ends alternately so the start and the end both show.
  for (let turn = 0; head + tail < blocks.length; turn++) {
    const takeHead = turn % 2 === 0
    const b = takeHead ? blocks[head] : blocks[blocks.length - 1 - tail]
    if (used + b.length + 1 > budget) break
    used += b.length + 1
    if (takeHead) head++
    else tail++
  }
  const left = blocks.length - head - tail
  const gap = `*… ${left} command${left === 1 ? '' : 's'} left out here to fit; ${whereAll} has them all.*\n`
  return [...blocks.slice(0, head), gap, ...blocks.slice(blocks.length - tail)].join('\n')
}

/** The first `n` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair. */
function headOf(text: string, n: number): string {
  if (n <= 0) return ''
  if (n >= text.length) return text
  const last = text.charCodeAt(n - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? n - 1 : n)
}

/** The last `n` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair. */
function tailOf(text: string, n: number): string {
  if (n <= 0) return ''
  if (n >= text.length) return text
  const first = text.charCodeAt(text.length - n)
  return text.slice(first >= 0xdc00 && first <= 0xdfff ? text.length - n + 1 : text.length - n)
}

/** `text` with its middle replaced by a line saying how much was cut, when it is longer than `max`. */
function trimMiddle(text: string, max: number, what: string): string {
  if (text.length <= max) return text
  const half = Math.floor(max / 2)
  const head = headOf(text, half)
  const tail = tailOf(text, half)
  return `${head}\n[... ${text.length - head.length - tail.length} characters ${what} ...]\n${tail}`
}

/** The fence of a fenced code block still open at the end of `markdown` (CommonMark rules), if any. */
export function openFence(markdown: string): string | undefined {
  let open: string | undefined
  for (const raw of markdown.split('\n')) {
    const line = raw.replace(/\r$/, '')
    if (open === undefined) {
      const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line)
      if (m && !(m[1][0] === '`' && m[2].includes('`'))) open = m[1]
    } else {
      const m = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line)
      if (m && m[1][0] === open[0] && m[1].length >= open.length) open = undefined
    }
  }
  return open
}

/** The final text made inert, within `max` characters: whole when it fits, else its head and a line saying how much was cut. */
function fitText(text: string, max: number): string {
  const whole = inert.markdown(text)
  if (whole.length <= max) return whole
  let keep = Math.min(text.length, max)
  for (let i = 0; i < 12 && keep > 0; i++) {
    const head = headOf(text, keep)
    const cut = `${inert.markdown(head)}\n\n*[… ${text.length - head.length} characters of the final text cut to fit]*`
    if (cut.length <= max) return cut
    keep = Math.min(keep - 1, keep - (cut.length - max))
  }
  return `*[… ${text.length} characters of the final text cut to fit]*`.slice(0, Math.max(0, max))
}

/** A tool call the loop answered with an error without running a command (unknown tool, no command). */
export interface ToolProblem {
  name: string
  input: string
  result: string
}

/**
 * The tool calls in `messages` that were no bash command (another tool name, or
 * no non-empty `command` string), each with the text it was answered with.
 * These never become command records, so the log would not show them.
 */
export function toolProblems(messages: MessageParam[] | undefined): ToolProblem[] {
  const problems: ToolProblem[] = []
  if (!Array.isArray(messages)) return problems
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue
    const next = messages[i + 1]
    const results = next && Array.isArray(next.content) ? next.content : []
    for (const block of m.content) {
      if (block.type !== 'tool_use') continue
      const command = (block.input as { command?: unknown } | null)?.command
      if (block.name === 'bash' && typeof command === 'string' && command.trim() !== '') continue
      const answer = results.find(r => r.type === 'tool_result' && r.tool_use_id === block.id)
      let result = ''
      if (answer && answer.type === 'tool_result') {
        result =
          typeof answer.content === 'string'
            ? answer.content
            : (answer.content ?? []).map(c => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n')
      }
      let input: string
      try {
        input = JSON.stringify(block.input) ?? 'undefined'
      } catch {
        input = String(block.input)
      }
      problems.push({ name: block.name, input, result: result || '(no answer was sent)' })
    }
  }
  return problems
}

/** The tool calls that ran no command, within `budget` characters. */
function renderToolProblems(problems: ToolProblem[], budget: number, maxChars: number): string {
  if (problems.length === 0) return ''
  const title = `⚠️ **${problems.length} tool call${problems.length === 1 ? '' : 's'} ran no command** (answered with an error):`
  const blocks = problems.map(p =>
    inert.code(
      `${trimMiddle(`${p.name} ${p.input}`, maxChars, 'of the tool call trimmed here')}\n${trimMiddle(p.result, maxChars, 'trimmed here')}`,
      'text'
    )
  )
  const shown: string[] = []
  let used = title.length + 200
  for (const b of blocks) {
    if (used + b.length + 2 > budget) break
    used += b.length + 2
    shown.push(b)
  }
  const left = blocks.length - shown.length
  if (left > 0) shown.push(`*… ${left} more left out here to fit.*`)
  return [title, ...shown].join('\n\n')
}

/** At most this many hosts of each kind are named; the rest are counted. */
const NETWORK_HOSTS_SHOWN = 20

/** The Network part: hosts reached and refused with counts (host names are agent text: code spans), and the lines that would allow the refused ones. */
export function renderNetwork(n: NetworkReport | undefined): string {
  if (!n) return ''
  if (!n.contained) return `**Network:** not contained (${n.why}): the commands had the runner's network, unfiltered.`
  const times = (c: number) => `${c} time${c === 1 ? '' : 's'}`
  const list = (items: Array<{ host: string; count: number; preset?: string }>, other: number) => {
    const shown = items
      .slice(0, NETWORK_HOSTS_SHOWN)
      .map(i => `${inert.inline(i.host)} (${times(i.count)}${i.preset ? `, a host of the preset ${inert.inline(i.preset)}` : ''})`)
    const more = items.length - shown.length + (other ? 1 : 0)
    return `${shown.join(', ')}${more > 0 ? `, and ${more} more${other ? ` (${times(other)} beyond the hosts counted)` : ''}` : ''}`
  }
  const parts = [
    n.problem
      ? `**Network:** closed: ${inert.text(n.problem)}.`
      : `**Network:** through the run's proxy, to the hosts in \`allowed-domains\` only.`
  ]
  if (n.reached.length || n.otherReached) parts.push(`Reached: ${list(n.reached, n.otherReached)}.`)
  if (n.refused.length || n.otherRefused) {
    parts.push(`Refused: ${list(n.refused, n.otherRefused)}.`)
    const lines = [...new Set(n.refused.slice(0, NETWORK_HOSTS_SHOWN).flatMap(r => (r.line ? [r.line] : [])))]
    if (lines.length)
      parts.push(
        `To allow them, add these lines to the input \`allowed-domains\` (only if the host should get what the commands send):\n\n${inert.code(lines.join('\n'), 'text')}`
      )
  }
  if (!n.problem && parts.length === 1) parts.push('No host was reached or refused.')
  return parts.join('\n\n')
}

function details(summary: string, inner: string): string {
  return `<details><summary>${summary}</summary>\n\n${inner}\n</details>`
}

/** The final comment: headline, the model's final text, the command log, the footer. */
export function renderFinal(o: Outcome, meta: ReportMeta, limit = COMMENT_LIMIT): string {
  return renderReport(o, meta, limit, COMMENT_OUTPUT_CHARS, 'the job summary', CHANGES_COMMENT_SHARE)
}

/** The job summary: the same report with every command's whole output. */
export function renderSummary(o: Outcome, meta: ReportMeta): string {
  return renderReport(o, meta, SUMMARY_LIMIT, Number.MAX_SAFE_INTEGER, 'the transcript artifact', CHANGES_SUMMARY_SHARE)
}

function renderReport(o: Outcome, meta: ReportMeta, limit: number, maxOutput: number, whereAll: string, changesShare: number): string {
  const head = headline(o, meta)
  // a valid structured answer is shown once, as JSON (renderStructured)
  const raw = o.structured?.json !== undefined ? '' : o.finalText.trim()
  const foot = footer(o, meta)
  const logTitle = `Commands (${o.commands.length})`
  const problems = renderToolProblems(toolProblems(o.messages), Math.min(4000, Math.floor(limit / 16)), 500)
  const changes = renderChanges(meta.changes, Math.floor(limit * changesShare))
  const sections = [
    renderStructured(o.structured, o.exitReason, Math.floor(limit * 0.3)),
    ...(o.sections ?? []),
    renderNetwork(meta.network)
  ].filter(s => s !== '')
  const fixed =
    [MARKER, meta.marker ?? '', head ?? '', meta.note ?? '', '', changes, ...sections, '', details(logTitle, ''), problems, foot].join(
      '\n\n'
    ).length + 64
  // The log is trimmed first; the final text only when it alone does not fit.
  const text = raw
    ? fitText(raw, Math.max(0, limit - fixed - 2000))
    : head || o.structured
      ? ''
      : '_The agent finished without a final message._'
  const logBudget = limit - fixed - text.length
  const log = o.commands.length ? details(logTitle, renderLog(o.commands, logBudget, maxOutput, whereAll)) : '_No commands were run._'
  // The agent's text comes after the headline and before everything else the harness writes.
  return [withMarker(meta), head, meta.note, text, changes, ...sections, log, problems, foot]
    .filter(s => s !== undefined && s !== '')
    .join('\n\n')
}

const withMarker = (meta: ReportMeta): string => (meta.marker ? `${MARKER}\n${meta.marker}` : MARKER)

/** The progress comment while the agent works. */
/** The model's note (agent text) above its command: one line, inert like the command. */
function noteLine(text: string | undefined): string {
  const flat = text?.replace(/\s+/g, ' ').trim()
  return flat ? `💬 ${inert.inline(flat.length > 200 ? `${headOf(flat, 200)}…` : flat)}\n` : ''
}

export function renderProgress(o: Outcome, meta: ReportMeta, current?: string, currentNote?: string): string {
  const lines = o.commands.map(c => {
    const mark = c.exitCode === 0 && !c.timedOut && !c.blocked ? '✅' : '⚠️'
    const first = c.command.split('\n')[0]
    const cmd = first.length > 120 ? `${headOf(first, 120)}…` : first
    const note = noteLine(c.note)
    return `${note}${mark} ${inert.inline(cmd)} · ${c.blocked ? 'refused' : c.timedOut ? 'timed out' : `exit ${c.exitCode ?? '-'}`} · ${(c.durationMs / 1000).toFixed(1)} s`
  })
  if (current !== undefined) {
    const first = current.split('\n')[0]
    lines.push(`${noteLine(currentNote)}⏳ ${inert.inline(first.length > 120 ? `${headOf(first, 120)}…` : first)}`)
  }
  const status = `⏳ **Working on it** (turn ${o.turns}, ${(meta.elapsedMs / 1000).toFixed(0)} s)${meta.runUrl ? ` · [follow the run](${meta.runUrl})` : ''}`
  let shown = lines
  if (lines.join('\n').length > 50000) {
    const keep = lines.slice(-200)
    shown = [`*… ${lines.length - keep.length} earlier commands*`, ...keep]
  }
  const body = [
    withMarker(meta),
    ...(meta.note ? [meta.note] : []),
    status,
    shown.length ? shown.join('\n') : '_Starting…_',
    footer(o, meta)
  ].join('\n\n')
  return body.length <= COMMENT_LIMIT ? body : body.slice(0, COMMENT_LIMIT)
}
