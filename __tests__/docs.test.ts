// The docs say what action.yml declares: docs/configuration.md has every input
// with its default and every output (its tables are generated from action.yml by
// .ci/generate-docs.mjs, and the committed page must be what the script makes of
// today's action.yml), and docs/development.md has a Layout row for every part
// of src/. Users read the docs, the runner reads action.yml; the two must never
// drift apart.
import { describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from './helpers/run-action'

const page = (name: string) => readFileSync(join(REPO_ROOT, 'docs', name), 'utf8')
const actionYml = readFileSync(join(REPO_ROOT, 'action.yml'), 'utf8')

/** `inputs:` or `outputs:` of action.yml: name -> default ('' when none), read the way the file is written (two-space keys). */
function declared(section: 'inputs' | 'outputs'): Map<string, string> {
  const out = new Map<string, string>()
  const lines = actionYml.split('\n')
  let inSection = false
  let current: string | undefined
  for (const line of lines) {
    if (/^\S/.test(line)) inSection = line.startsWith(`${section}:`)
    if (!inSection) continue
    const name = /^ {2}([a-z][a-z0-9-]*):\s*$/.exec(line)
    if (name) {
      current = name[1]
      out.set(current, '')
      continue
    }
    const def = /^ {4}default:\s*(.*)$/.exec(line)
    if (def && current) {
      const v = def[1].trim()
      out.set(current, v === '|' || v === '>' ? multiline(lines, lines.indexOf(line)) : v.replace(/^'(.*)'$/, '$1'))
    }
  }
  return out
}

function multiline(lines: string[], at: number): string {
  const body: string[] = []
  for (const l of lines.slice(at + 1)) {
    if (!/^ {6}/.test(l)) break
    body.push(l.trim())
  }
  return body.filter(Boolean).join('\n')
}

/** The rows of the table that follows `heading` in `text`: first cell -> second cell. */
function table(text: string, heading: string): Map<string, string> {
  const readme = text
  const start = readme.indexOf(`\n${heading}\n`)
  expect(start).toBeGreaterThan(-1)
  const rows = new Map<string, string>()
  let seen = false
  for (const line of readme.slice(start + heading.length + 2).split('\n')) {
    if (!line.startsWith('|')) {
      if (seen) break
      continue
    }
    seen = true
    const cells = line
      .split('|')
      .slice(1, -1)
      .map(c => c.trim())
    if (/^-+$/.test(cells[0]) || cells[0] === 'Input' || cells[0] === 'Output' || cells[0] === 'Module') continue
    for (const name of cells[0].match(/`[^`]+`/g) ?? []) rows.set(name.slice(1, -1), cells[1] ?? '')
  }
  return rows
}

/** A default cell as action.yml would write it: `empty` is '', each `x` one line. */
function readmeDefault(cell: string): string {
  if (cell === 'empty') return ''
  return (cell.match(/`[^`]*`/g) ?? []).map(c => c.slice(1, -1)).join('\n')
}

describe('the docs tell what action.yml declares', () => {
  it('the Inputs table: the same inputs, each with its default', () => {
    const yml = declared('inputs')
    const doc = table(page('configuration.md'), '## Inputs')
    expect([...doc.keys()].sort()).toEqual([...yml.keys()].sort())
    for (const [name, def] of yml) expect({ name, default: readmeDefault(doc.get(name) ?? '') }).toEqual({ name, default: def })
  })

  it('the Outputs table: the same outputs', () => {
    expect([...table(page('configuration.md'), '## Outputs').keys()].sort()).toEqual([...declared('outputs').keys()].sort())
  })

  it('the Layout table names every folder and top-level file of src/', () => {
    const layout = [...table(page('development.md'), '## Layout').keys()].join('\n')
    const parts = readdirSync(join(REPO_ROOT, 'src'), { withFileTypes: true })
      .filter(e => e.isDirectory() || e.name.endsWith('.ts'))
      .filter(e => e.name !== 'typings')
      .map(e => (e.isDirectory() ? `src/${e.name}/` : `src/${e.name}`))
    const missing = parts.filter(p => !layout.split('\n').some(row => row === p || row.startsWith(p)))
    expect(missing).toEqual([])
  })

  it('the committed tables are what `npm run docs` makes of action.yml (node .ci/generate-docs.mjs --check)', () => {
    expect(() => execFileSync(process.execPath, [join(REPO_ROOT, '.ci', 'generate-docs.mjs'), '--check'], { stdio: 'pipe' })).not.toThrow()
  })
})
