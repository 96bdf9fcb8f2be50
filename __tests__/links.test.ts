// The docs a newcomer reads hold together: every relative link and anchor in README.md,
// SECURITY.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md resolves (a file or folder of the
// repository; an anchor one of the target page's headings, slugged as GitHub does), every page of
// docs/ is reachable from the README, and the pages stay short enough to read: the README at most
// 300 lines and 30 KB, SECURITY.md at most 100 lines, each page of docs/ at most 500 lines.
import { describe, expect, it } from '@jest/globals'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'
import { REPO_ROOT } from './helpers/run-action'

interface MdNode {
  type: string
  url?: string
  value?: string
  depth?: number
  children?: MdNode[]
  position?: { start: { line: number } }
}

const DOCS = readdirSync(join(REPO_ROOT, 'docs'))
  .filter(n => n.endsWith('.md'))
  .map(n => `docs/${n}`)
const PAGES = ['README.md', 'SECURITY.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...DOCS].filter(p => existsSync(join(REPO_ROOT, p)))

const tree = (file: string): MdNode =>
  fromMarkdown(readFileSync(join(REPO_ROOT, file), 'utf8'), { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }) as MdNode

function walk(node: MdNode, visit: (n: MdNode) => void): void {
  visit(node)
  for (const c of node.children ?? []) walk(c, visit)
}

const textOf = (node: MdNode): string => (node.value ?? '') + (node.children ?? []).map(textOf).join('')

/** GitHub's heading anchor (github-slugger): lower case, only letters, marks, digits, `_`, `-` and spaces kept, spaces to `-`. */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-')
}

/** The anchors of a page: one per heading, a repeated slug numbered `-1`, `-2`... as GitHub does. */
export function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  walk(tree(file), n => {
    if (n.type !== 'heading') return
    const base = slug(textOf(n))
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    out.add(count === 0 ? base : `${base}-${count}`)
  })
  return out
}

interface Link {
  from: string
  line: number
  url: string
}

function linksOf(file: string): Link[] {
  const out: Link[] = []
  walk(tree(file), n => {
    if ((n.type === 'link' || n.type === 'definition' || n.type === 'image') && n.url !== undefined)
      out.push({ from: file, line: n.position?.start.line ?? 0, url: n.url })
  })
  return out
}

const isExternal = (url: string) => /^[a-z][a-z0-9+.-]*:/i.test(url)

/** What is wrong with a relative link ('' when it resolves). */
function broken(link: Link): string {
  const [path, anchor] = link.url.split('#', 2) as [string, string | undefined]
  const target = path === '' ? link.from : relative(REPO_ROOT, resolve(REPO_ROOT, dirname(link.from), decodeURIComponent(path)))
  if (target.startsWith('..') || !existsSync(join(REPO_ROOT, target))) return `${target} does not exist`
  if (anchor === undefined || anchor === '') return ''
  if (!target.endsWith('.md')) return ''
  return anchorsOf(target).has(decodeURIComponent(anchor)) ? '' : `${target} has no heading #${anchor}`
}

const lineCount = (file: string) => (readFileSync(join(REPO_ROOT, file), 'utf8').match(/\n/g) ?? []).length

describe('the docs hold together', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug("The agent's changes")).toBe('the-agents-changes')
    expect(slug('`/agent stop`')).toBe('agent-stop')
    expect(slug('`sandbox: none`')).toBe('sandbox-none')
    expect(slug('Running the action locally with `@github/local-action`')).toBe('running-the-action-locally-with-githublocal-action')
    expect(slug('Caching, context and cost')).toBe('caching-context-and-cost')
    expect(slug('What you see 👀')).toBe('what-you-see-')
    expect(slug('snake_case and CamelCase')).toBe('snake_case-and-camelcase')
  })

  it.each(PAGES)('every relative link and anchor of %s resolves', file => {
    const wrong = linksOf(file)
      .filter(l => !isExternal(l.url))
      .map(l => ({ link: `${l.from}:${l.line} ${l.url}`, why: broken(l) }))
      .filter(x => x.why !== '')
    expect(wrong).toEqual([])
  })

  it('docs/ has at least four pages, each reachable from the README by links', () => {
    expect(DOCS.length).toBeGreaterThanOrEqual(4)
    const reached = new Set<string>(['README.md'])
    const queue = ['README.md']
    while (queue.length > 0) {
      const file = queue.shift()!
      for (const l of linksOf(file)) {
        if (isExternal(l.url)) continue
        const path = l.url.split('#')[0]
        if (!path.endsWith('.md')) continue
        const target = relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), decodeURIComponent(path)))
        if (!reached.has(target) && existsSync(join(REPO_ROOT, target))) {
          reached.add(target)
          queue.push(target)
        }
      }
    }
    expect(DOCS.filter(d => !reached.has(d))).toEqual([])
  })

  it('the README is at most 300 lines and 30 KB', () => {
    expect(lineCount('README.md')).toBeLessThanOrEqual(300)
    expect(readFileSync(join(REPO_ROOT, 'README.md')).length).toBeLessThanOrEqual(30 * 1024)
  })

  it('SECURITY.md is at most 100 lines and links the security page of docs/', () => {
    expect(lineCount('SECURITY.md')).toBeLessThanOrEqual(100)
    expect(linksOf('SECURITY.md').map(l => l.url)).toContain('docs/security.md')
  })

  it.each(DOCS)('%s is at most 500 lines', file => {
    expect(lineCount(file)).toBeLessThanOrEqual(500)
  })
})
