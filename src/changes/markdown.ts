// Markdown written both into the report's Changes section and into the
// commit's notes and draft pull request (so the commit does not need the
// report's renderer).
import { neutraliseMentions } from '../untrusted'
import { inert } from '../report/inert'
import { changesCiConfig, type FileChange } from './patch'

/** Inline code that no backtick in `text` can close. */
export function inlineCode(text: string): string {
  let longest = 0
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length)
  const tick = '`'.repeat(longest + 1)
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : ''
  return `${tick}${pad}${neutraliseMentions(text.replace(/[\r\n]+/g, ' '))}${pad}${tick}`
}

/** The line that points a reviewer at changes to CI or review configuration first. */
export function ciConfigNote(files: FileChange[]): string {
  const ci = files.filter(changesCiConfig)
  if (!ci.length) return ''
  const names = ci.slice(0, 20).map(f => inert.inline(f.path))
  return `⚠️ **Changes CI or review configuration** (review these first): ${names.join(', ')}${ci.length > 20 ? `, and ${ci.length - 20} more` : ''}.`
}
