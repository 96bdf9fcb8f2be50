// docs/security.md's list of the code an auditor must read (what runs as root, or as the runner user while the
// agent's processes exist) names every such file with its line count: the list cannot go stale.
import { describe, expect, it } from '@jest/globals'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from './helpers/run-action'

/** The rows of the table under `## What to audit` in docs/security.md: file -> line count. */
function listed(): Map<string, number> {
  const text = readFileSync(join(REPO_ROOT, 'docs', 'security.md'), 'utf8')
  const start = text.indexOf('## What to audit')
  expect(start).toBeGreaterThan(0)
  const section = text.slice(start, text.indexOf('\n#', start + 5))
  const rows = new Map<string, number>()
  for (const m of section.matchAll(/^\|\s*`(src\/[^`]+)`\s*\|\s*(\d+)\s*\|/gm)) rows.set(m[1], Number(m[2]))
  return rows
}

const lines = (file: string) => (readFileSync(join(REPO_ROOT, file), 'utf8').match(/\n/g) ?? []).length

describe('docs/security.md: what to audit', () => {
  it('each listed file exists with the line count given (wc -l)', () => {
    const rows = listed()
    expect(rows.size).toBeGreaterThan(5)
    for (const [file, count] of rows) expect({ file, lines: lines(file) }).toEqual({ file, lines: count })
    // and the total the text gives
    const text = readFileSync(join(REPO_ROOT, 'docs', 'security.md'), 'utf8')
    const total = [...rows.values()].reduce((a, b) => a + b, 0)
    expect(text).toContain(`${rows.size} files, ${total} lines`)
  })

  it('every file of the root folder (src/trusted/: the command server, recovery, the proxy) is listed', () => {
    const rows = listed()
    const root = readdirSync(join(REPO_ROOT, 'src', 'trusted'))
      .filter(n => n.endsWith('.ts'))
      .map(n => `src/trusted/${n}`)
    expect(root.length).toBeGreaterThan(3)
    for (const f of root) expect({ f, listed: rows.has(f) }).toEqual({ f, listed: true })
  })
})
