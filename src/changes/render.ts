// The "Changes" section of the report. File names and diff contents are
// agent-controlled: names are C-quoted when they hold control characters and
// sit, like the diff, in fenced blocks no text can close; mentions are
// neutralised. Text written by the action (counts, links, reasons) is outside.
import { neutraliseMentions } from '../untrusted'
import { inert } from '../report/inert'
import type { ChangesReport } from './index'
import type { FileChange } from './patch'
import { changesCiConfig, splitDiff } from './patch'
import { ciConfigNote, inlineCode } from './markdown'

export { ciConfigNote, inlineCode } from './markdown'

/** Share of the comment (65,536 characters) the Changes section may take; the log is trimmed before it, the final text after it. */
export const CHANGES_COMMENT_SHARE = 0.25
/** Share of the job summary it may take: the summary holds the whole diff unless it passes this. */
export const CHANGES_SUMMARY_SHARE = 0.6

/** A path as one safe line: C-quoted (JSON) when it holds control characters, quotes or backslashes. */
export function showPath(path: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this looks for
  const quoted = /[\u0000-\u001f\u007f-\u009f"\\\u2028\u2029]/.test(path) ? JSON.stringify(path) : path
  // bidi controls (a name that reads `reportexe.pdf`) shown as their escapes
  return quoted.replace(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** Agent text in a block: the one inert rendering (no bidi override, ESC, BS, FF or BEL reaches the report raw). */
function fenced(body: string, lang: string): string {
  return inert.code(body.replace(/\n$/, ''), lang)
}

const plural = (n: number, one: string, many = `${one}s`) => `${String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} ${n === 1 ? one : many}`

function statLine(f: FileChange): string {
  const letter = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' }[f.status]
  const name = f.oldPath !== undefined ? `${showPath(f.oldPath)} → ${showPath(f.path)}` : showPath(f.path)
  const parts = [f.binary ? 'binary' : `+${f.additions} −${f.deletions}`]
  if (f.oldMode && f.newMode && f.oldMode !== f.newMode) parts.push(`mode ${f.oldMode} → ${f.newMode}`)
  else if (f.status === 'added' && f.newMode !== '100644') parts.push(`mode ${f.newMode}`)
  if (f.workflow) parts.push('workflow: not committed')
  else if (changesCiConfig(f)) parts.push('changes CI or review configuration')
  return `${letter} ${name}  ${parts.join(', ')}`
}

/** Lines in order until `budget` characters; a last line says how many more the summary has. */
function takeLines(lines: string[], budget: number, what: string): string[] {
  const out: string[] = []
  let used = 0
  for (const l of lines) {
    if (used + l.length + 1 > budget - 120) {
      out.push(`… ${plural(lines.length - out.length, what)} more (the job summary and the patch file have them all)`)
      return out
    }
    out.push(l)
    used += l.length + 1
  }
  return out
}

/** The diff for reading: binary patches (base85 noise) shown as one line, then cut to `budget` at a line end. */
function readableDiff(diff: string, budget: number): { text: string; cut: number } {
  const sections = splitDiff(diff).map(s => {
    const at = s.indexOf('\nGIT binary patch\n')
    return at < 0 ? s : `${s.slice(0, at)}\n(binary content: see the patch file)\n`
  })
  const whole = sections.join('')
  if (whole.length <= budget) return { text: whole, cut: 0 }
  let text = whole.slice(0, Math.max(0, budget))
  const nl = text.lastIndexOf('\n')
  text = nl > 0 ? text.slice(0, nl + 1) : ''
  return { text, cut: whole.length - text.length }
}

function outcomeLines(r: Extract<ChangesReport, { kind: 'computed' }>): string[] {
  const lines: string[] = []
  const a = r.applied
  if (r.mode === 'none' && a?.kind !== 'in-place') lines.push('Not applied to the workspace (`changes: none`).')
  else if (r.notApplied) lines.push(`⚠️ **Not applied to the workspace**: ${neutraliseMentions(r.notApplied)}.`)
  else if (a?.kind === 'applied' && a.failed.length) {
    lines.push(
      `⚠️ ${plural(a.failed.length, 'file')} could not be applied to the workspace:`,
      fenced(a.failed.map(f => `${showPath(f.path)}: ${f.why}`).join('\n'), 'text')
    )
  } else if (a)
    lines.push(
      a.kind === 'in-place'
        ? 'The agent worked in the workspace: the changes are there for later steps.'
        : 'Applied to the workspace for later steps.'
    )
  const ci = ciConfigNote(r.patch.files)
  if (ci) lines.push(ci)
  const h = r.handback
  if (r.notCommitted) lines.push(`⚠️ **Not committed**: ${neutraliseMentions(r.notCommitted)}.`)
  if (h?.kind === 'not-committed') lines.push(`⚠️ **Not committed**: ${neutraliseMentions(h.why)}.`)
  if (h?.kind === 'committed') {
    const where = h.onHead
      ? `the pull request's branch [${inlineCode(h.branch)}](${h.branchUrl})`
      : `the branch [${inlineCode(h.branch)}](${h.branchUrl})`
    lines.push(`✅ Committed ${inlineCode(h.sha.slice(0, 12))} to ${where} ([compare](${h.compareUrl})).`)
    if (h.pullRequest)
      lines.push(`${h.pullRequest.created ? 'Draft pull request' : 'Pull request'}: [#${h.pullRequest.number}](${h.pullRequest.url}).`)
    if (h.pullRequestError)
      lines.push(`⚠️ **No pull request**: ${neutraliseMentions(h.pullRequestError)}; the [compare](${h.compareUrl}) page can open one.`)
  }
  for (const n of h?.notes ?? []) lines.push(`ℹ️ ${neutraliseMentions(n[0].toUpperCase() + n.slice(1))}.`)
  return lines
}

/**
 * The Changes section within `maxChars`: a line with the counts, what became
 * of the changes, what was held back, a diff stat and the diff in a collapsed
 * block (its head when it does not fit). Empty when there is nothing to say.
 */
export function renderChanges(r: ChangesReport | undefined, maxChars: number): string {
  const text = render(r, maxChars, true)
  // Fences and neutralised mentions can add a little: without the diff it surely fits.
  return text.length <= maxChars ? text : render(r, maxChars, false).slice(0, Math.max(0, maxChars))
}

/** The workspace files left out of the agent's copy (SPEC "Not given"): named, never shown. */
function notGiven(r: ChangesReport, maxChars: number): string {
  if (!r.withheld?.length) return ''
  const names = takeLines(
    r.withheld.map(f => showPath(f.path)),
    Math.max(400, Math.floor(maxChars / 4)),
    'file'
  )
  return `🔒 **Not given to the agent** (each holds a secret value the action knows; left out of its copy, never handed back or committed):\n\n${fenced(names.join('\n'), 'text')}`
}

function render(r: ChangesReport | undefined, maxChars: number, withDiff: boolean): string {
  if (!r) return ''
  const withheld = notGiven(r, maxChars)
  if (r.kind === 'no-repository') return withheld ? `### Changes\n\n${withheld}` : ''
  if (r.kind === 'failed') {
    const where = r.inPlace
      ? 'The agent worked in the workspace itself: its changes are there, unchecked.'
      : 'Nothing of them was applied to the workspace or committed.'
    return `### Changes\n\n⚠️ **The agent's changes were not handed back**: ${neutraliseMentions(r.why)}. ${where}${withheld ? `\n\n${withheld}` : ''}`
  }
  const { patch } = r
  const files = patch.files
  const adds = files.reduce((n, f) => n + f.additions, 0)
  const dels = files.reduce((n, f) => n + f.deletions, 0)
  const parts = ['### Changes', '']
  parts.push(
    files.length
      ? `${plural(files.length, 'file')} changed, +${adds} −${dels}.`
      : patch.heldBack.length
        ? 'No changes to hand back.'
        : 'No changes: the agent left the files as they were.'
  )
  if (files.length) parts.push('', ...outcomeLines(r).flatMap(l => [l, '']))
  if (withheld) parts.push(files.length ? withheld : `\n${withheld}`, '')
  let used = parts.join('\n').length
  if (patch.heldBack.length) {
    const held = takeLines(
      patch.heldBack.map(h => `${showPath(h.path)}: ${h.why}`),
      Math.max(400, Math.floor((maxChars - used) / 4)),
      'file'
    )
    const block = `⚠️ **Held back** (left out of the patch, the workspace and any commit):\n\n${fenced(held.join('\n'), 'text')}\n`
    parts.push(block)
    used += block.length
  }
  if (files.length === 0) return parts.join('\n').trim()
  const stat = fenced(takeLines(files.map(statLine), Math.max(400, Math.floor((maxChars - used) / 3)), 'file').join('\n'), 'text')
  parts.push(stat, '')
  used += stat.length + 1
  const room = maxChars - used - 200
  const { text, cut } = readableDiff(patch.diff, Math.max(0, room - 40))
  if (text && withDiff) {
    const note = cut
      ? `\n\n*… ${plural(cut, 'character')} of the diff left out here; the job summary and the patch file have it whole.*`
      : ''
    parts.push(`<details><summary>Diff</summary>\n\n${fenced(text, 'diff')}${note}\n</details>`)
  } else {
    parts.push('*The diff is too long to show here; the job summary and the patch file have it.*')
  }
  return parts.join('\n').trim()
}
