// The code that runs as root is one folder an auditor reads in one sitting (issue 37): src/trusted/,
// built into one bundle (dist/trusted/index.js: serve, recover), importing only `node:` built-ins
// and files of that folder, at most MAX_LINES lines in all (wc -l src/trusted/*.ts). The run's proxy is a
// bundle of its own (dist/proxy/) that never runs as root (__tests__/proxy-process.test.ts).
import { describe, expect, it } from '@jest/globals'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { REPO_ROOT } from './helpers/run-action'
import { proxyArgv } from '../src/network/launch'

const TRUSTED = join(REPO_ROOT, 'src', 'trusted')
const ENTRY = join(TRUSTED, 'index.ts')
/** The bound (37), reached with the new root (view.ts), the run's uid and the proxy out of root. */
const MAX_LINES = 1300

/** Every module specifier a TypeScript file imports or re-exports (static, dynamic, require). */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const out: string[] = []
  for (const m of text.matchAll(/(?:^|\s)(?:import|export)\s[^'"`;]*?from\s+['"]([^'"]+)['"]/gm)) out.push(m[1])
  for (const m of text.matchAll(/(?:^|\s)import\s+['"]([^'"]+)['"]/gm)) out.push(m[1])
  for (const m of text.matchAll(/\b(?:import|require)\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g)) out.push(m[1])
  return out
}

/** The entry's transitive imports: files reached, and every specifier that is neither `node:` nor a file of the folder. */
function closure(): { files: string[]; outside: string[] } {
  const seen = new Set<string>()
  const outside: string[] = []
  const stack = [ENTRY]
  while (stack.length) {
    const file = stack.pop() as string
    if (seen.has(file)) continue
    seen.add(file)
    for (const s of specifiers(file)) {
      if (s.startsWith('node:')) continue
      const target = s.startsWith('.') ? resolve(dirname(file), `${s.replace(/\.js$/, '')}.ts`) : undefined
      if (!target || dirname(target) !== TRUSTED || !existsSync(target)) {
        outside.push(`${relative(REPO_ROOT, file)} imports ${s}`)
        continue
      }
      stack.push(target)
    }
  }
  return { files: [...seen].map(f => relative(REPO_ROOT, f)), outside }
}

const lines = (file: string) => (readFileSync(file, 'utf8').match(/\n/g) ?? []).length

describe('src/trusted: all that runs as root, one folder, one bundle', () => {
  it('the root bundle imports (transitively) only node: built-ins and files of src/trusted/', () => {
    const { files, outside } = closure()
    expect(outside).toEqual([])
    expect(files.length).toBeGreaterThan(3)
  })

  it('the build makes the one root bundle from src/trusted/index.ts, and no other bundle runs as root', () => {
    const build = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { build: string } }).scripts.build
    expect(build).toContain('ncc build src/trusted/index.ts -o dist/trusted')
    expect(build).not.toMatch(/dist\/server\b/)
    // the proxy's bundle is started through setpriv as the run's uid (proxyArgv), never by root itself
    expect(build).toContain('ncc build src/network/proxy-main.ts -o dist/proxy')
    const argv = proxyArgv({ priv: { kind: 'root' }, setpriv: '/usr/bin/setpriv', node: 'node', source: 'p', uid: 7, gid: 8, config: '' })
    expect(argv.slice(0, 3)).toEqual(['/usr/bin/setpriv', '--reuid=7', '--regid=8'])
  })

  it(`the folder is at most ${MAX_LINES} lines (wc -l src/trusted/*.ts)`, () => {
    const files = readdirSync(TRUSTED).filter(n => n.endsWith('.ts'))
    const total = files.reduce((n, f) => n + lines(join(TRUSTED, f)), 0)
    expect({ total, within: total <= MAX_LINES }).toEqual({ total, within: true })
  })
})
