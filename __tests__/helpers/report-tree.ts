// What a reader of a report sees, as a tree: the report's markdown parsed by
// a maintained CommonMark + GFM parser (mdast-util-from-markdown with
// micromark's GFM extension), and the checks the issue "What we write is
// what happened" asks for, made on that tree rather than on strings. Also a
// parser of log lines that mirrors the Actions runner's.
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'

export interface Node {
  type: string
  value?: string
  url?: string
  alt?: string | null
  lang?: string | null
  depth?: number
  children?: Node[]
}

export function parse(markdown: string): Node {
  return fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }) as unknown as Node
}

export function walk(node: Node, visit: (n: Node, ancestors: Node[]) => void, ancestors: Node[] = []): void {
  visit(node, ancestors)
  for (const c of node.children ?? []) walk(c, visit, [...ancestors, node])
}

/** The text a reader sees in a node (text, inline code, code, html values), concatenated. */
export function textOf(node: Node): string {
  if (node.value !== undefined) return node.value
  return (node.children ?? []).map(textOf).join('')
}

/** `@name` or `@org/team` as GitHub reads a mention: after no letter or digit. */
export const MENTION = /(?<![A-Za-z0-9])@[A-Za-z0-9]/

/**
 * Every way the tree breaks the rules for agent text:
 * - an `html` node that is not one the harness writes (`allowedHtml`),
 * - a mention in any text (also a paragraph's text joined across markup),
 *   inside links and image alts included,
 * - an image at all, a link or a definition to a host other than github.com,
 * - a footnote definition (GitHub shows it after everything, the footer too).
 */
export function violations(tree: Node, allowedHtml: (value: string) => boolean): string[] {
  const out: string[] = []
  walk(tree, n => {
    if (n.type === 'html' && !allowedHtml(n.value ?? '')) out.push(`agent html: ${JSON.stringify(n.value)}`)
    if ((n.type === 'text' || n.type === 'inlineCode' || n.type === 'code') && MENTION.test(n.value ?? '')) {
      out.push(`mention in ${n.type}: ${JSON.stringify(n.value)}`)
    }
    if (n.type === 'paragraph' || n.type === 'heading' || n.type === 'tableCell') {
      const joined = (n.children ?? [])
        .filter(c => c.type !== 'inlineCode')
        .map(textOf)
        .join('')
      if (MENTION.test(joined)) out.push(`mention across markup: ${JSON.stringify(joined)}`)
    }
    if (n.type === 'image' || n.type === 'imageReference') out.push(`image: ${n.url ?? ''}`)
    if (n.type === 'image' && MENTION.test(n.alt ?? '')) out.push(`mention in alt: ${n.alt}`)
    if (n.type === 'definition') out.push(`definition: ${n.url ?? ''}`)
    // GitHub shows footnotes below the whole comment, after the footer
    if (n.type === 'footnoteDefinition') out.push('footnote definition')
    if (n.type === 'link' && !isGitHubUrl(n.url ?? '')) out.push(`outside link: ${n.url}`)
  })
  return out
}

export function isGitHubUrl(url: string): boolean {
  if (url.startsWith('mailto:')) return true
  try {
    const u = new URL(url, 'https://github.com/o/r/issues/1')
    return (u.protocol === 'https:' || u.protocol === 'http:') && (u.hostname === 'github.com' || u.hostname.endsWith('.github.com'))
  } catch {
    return false
  }
}

/** char.IsWhiteSpace of .NET, which the runner's TrimStart uses. */
const NET_SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*/

export interface LogCommand {
  command: string
  line: string
}

/**
 * Workflow commands in `stdout` as the runner finds them, without honouring
 * stop-commands (so everything that could ever act shows): lines split at
 * `\r\n`, `\r`, `\n`; a line that starts with `::` after .NET whitespace, and
 * any line with `##[` followed later by `]` (the legacy parser's IndexOf).
 */
export function runnerCommands(stdout: string): LogCommand[] {
  const out: LogCommand[] = []
  for (const line of stdout.split(/\r\n|\r|\n/)) {
    const trimmed = line.replace(NET_SPACE, '')
    if (trimmed.startsWith('::')) {
      const end = trimmed.indexOf('::', 2)
      if (end > 2) out.push({ command: trimmed.slice(2, end).split(' ')[0], line })
    }
    const legacy = line.indexOf('##[')
    if (legacy >= 0 && line.indexOf(']', legacy) > legacy) {
      out.push({ command: line.slice(legacy + 3, line.indexOf(']', legacy)).split(' ')[0], line })
    }
  }
  return out
}
