// The hand-back costs what the change costs (issue 38): in a user sandbox the
// copy is an overlay, and only the paths the agent wrote (its upper layer) are
// compared; the untouched repository is never hashed again. Through dist/: a
// workspace of many tracked files, local edits and untracked files a step left,
// and a big ignored node_modules; the agent fixes one line. The patch is exactly
// that line, and the log's count of compared paths (a counter, not a timing)
// shows nothing else was read. With `sandbox: none` the same run hands back the
// same one file by the whole-tree path.
import { afterAll, describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bash, startFakeAnthropic, text } from './helpers/fake-anthropic'
import { startFakeGitHub } from './helpers/fake-github'
import { cleanupRuns, runAction } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { commitAll, gitEnv } from './helpers/git'
import { hasSudo, isRoot } from './helpers/kinds'

const API_KEY = 'sk-ant-api03-handbackUpperKey0000000000000000'
const dirs: string[] = []
afterAll(() => {
  cleanupRuns()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const TRACKED = 3000
const IGNORED = 2000

/** Many tracked files, a local edit and an untracked file, and an ignored node_modules tree. */
function bigWorkspace(edits: boolean): string {
  const ws = mkdtempSync(join(tmpdir(), 'handback-upper-'))
  dirs.push(ws)
  for (let d = 0; d < TRACKED / 100; d++) {
    mkdirSync(join(ws, 'lib', `m${d}`), { recursive: true })
    for (let f = 0; f < 100; f++) writeFileSync(join(ws, 'lib', `m${d}`, `f${f}.js`), `export const v${f} = ${d * 100 + f}\n`)
  }
  mkdirSync(join(ws, 'src'))
  writeFileSync(join(ws, 'src', 'add.js'), 'export function add(a, b) {\n  return a - b\n}\n')
  writeFileSync(join(ws, '.gitignore'), 'node_modules/\n')
  commitAll(ws, gitEnv())
  // what earlier steps left: a local edit, an untracked file (in place they count: none mode has no start of its own), dependencies
  if (edits) {
    writeFileSync(join(ws, 'lib', 'm0', 'f0.js'), 'export const v0 = "edited by a step"\n')
    writeFileSync(join(ws, 'notes.txt'), 'left by a step\n')
  }
  for (let d = 0; d < IGNORED / 100; d++) {
    mkdirSync(join(ws, 'node_modules', `p${d}`, 'lib'), { recursive: true })
    for (let f = 0; f < 100; f++) writeFileSync(join(ws, 'node_modules', `p${d}`, 'lib', `i${f}.js`), `module.exports = ${f}\n`)
  }
  return ws
}

const FIX = "sed -i 's/return a - b/return a + b/' src/add.js"

async function fixOneLine(sandbox: string) {
  const ws = bigWorkspace(sandbox === 'user')
  const fake = await startFakeAnthropic([bash(FIX), text('Fixed.')], { apiKey: API_KEY })
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  try {
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent fix add', issueNumber: 7 }),
      inputs: { 'anthropic-api-key': API_KEY, 'anthropic-base-url': fake.url, sandbox, changes: 'apply' },
      env: { GITHUB_API_URL: gh.url },
      workspace: ws,
      timeoutMs: 150_000
    })
    return { run, ws }
  } finally {
    await Promise.all([fake.close(), gh.close()])
  }
}

/** A small checkout with the kinds of things a change can be made of. */
function shapesWorkspace(): string {
  const ws = mkdtempSync(join(tmpdir(), 'handback-shapes-'))
  dirs.push(ws)
  for (const [p, c] of [
    ['gone/a.txt', 'a\n'],
    ['gone/b.txt', 'b\n'],
    ['dirfile/x.txt', 'x\n'],
    ['keep.txt', 'a file that will be renamed\nwith a few lines\nof text\n'],
    ['tool.sh', '#!/bin/sh\necho hi\n'],
    ['olddir/one.txt', 'one\n'],
    ['olddir/sub/two.txt', 'two\n'],
    ['.gitignore', 'node_modules/\n*.log\n']
  ]) {
    mkdirSync(join(ws, p, '..'), { recursive: true })
    writeFileSync(join(ws, p), c)
  }
  commitAll(ws, gitEnv())
  return ws
}

/** Every kind of change at once: an opaque folder, a folder become a file, renames, modes, links, bytes, ignored files. */
const SHAPES = [
  'rm -rf gone && mkdir gone && echo new > gone/c.txt',
  'rm -rf dirfile && echo now-a-file > dirfile',
  'mv keep.txt moved.txt',
  'chmod +x tool.sh',
  'ln -s moved.txt link',
  `printf 'caf\\351\\n' > "$(printf 'n\\351.txt')"`,
  'mv olddir newdir && echo three > newdir/sub/three.txt',
  'mkdir -p node_modules/x && echo ignored > node_modules/x/i.js && echo ignored > debug.log'
].join(' && ')

async function shapesRun(sandbox: string) {
  const ws = shapesWorkspace()
  const fake = await startFakeAnthropic([bash(SHAPES), text('Done.')], { apiKey: API_KEY })
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  try {
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent reshape', issueNumber: 7 }),
      inputs: { 'anthropic-api-key': API_KEY, 'anthropic-base-url': fake.url, sandbox, changes: 'none' },
      env: { GITHUB_API_URL: gh.url },
      workspace: ws,
      timeoutMs: 150_000
    })
    expect(run.code).toBe(0)
    return { run, patch: readFileSync(run.outputs.patch) }
  } finally {
    await Promise.all([fake.close(), gh.close()])
  }
}

const canSandbox = process.platform === 'linux' && (isRoot || hasSudo)

describe('a one-line fix in a big workspace', () => {
  ;(canSandbox ? it : it.skip)(
    'sandbox: user: exactly that line comes back, and only the path the agent wrote was compared',
    async () => {
      const { run, ws } = await fixOneLine('user')
      expect(run.code).toBe(0)
      expect(run.stdout).toContain('an overlay on the workspace')
      expect(run.outputs['changed-files']).toBe('1')
      const patch = readFileSync(run.outputs.patch, 'utf8')
      expect(patch.match(/^diff --git /gm)).toHaveLength(1)
      expect(patch).toContain('-  return a - b\n+  return a + b')
      expect(readFileSync(join(ws, 'src', 'add.js'), 'utf8')).toContain('return a + b')
      // the untouched files were never read at the end: one path compared (the counter the hand-back logs)
      expect(run.stdout).toContain('Changes: compared 1 path the agent wrote; the rest of the workspace was not read.')
      // what earlier steps left stays as it was, and is no change of the agent's
      expect(readFileSync(join(ws, 'lib', 'm0', 'f0.js'), 'utf8')).toContain('edited by a step')
      expect(execFileSync('git', ['status', '--porcelain'], { cwd: ws, env: gitEnv() }).toString()).toBe(
        ' M lib/m0/f0.js\n M src/add.js\n?? notes.txt\n'
      )
    },
    300_000
  )

  ;(canSandbox ? it : it.skip)(
    'every kind of change comes back from the upper layer byte for byte as the whole-tree diff has it (sandbox: none)',
    async () => {
      const user = await shapesRun('user')
      const none = await shapesRun('none')
      expect(user.run.stdout).toContain('Changes: compared')
      expect(user.patch.toString('latin1')).toBe(none.patch.toString('latin1'))
      const names = [...user.patch.toString('latin1').matchAll(/^diff --git "?a\/(.*?)"? "?b\//gm)].map(m => m[1])
      expect(names.sort()).toEqual(
        [
          'dirfile',
          'dirfile/x.txt',
          'gone/a.txt',
          'gone/b.txt',
          'gone/c.txt',
          'keep.txt',
          'link',
          'n\\351.txt',
          'newdir/sub/three.txt',
          'olddir/one.txt',
          'olddir/sub/two.txt',
          'tool.sh'
        ].sort()
      )
      expect(user.patch.toString('latin1')).toContain('rename to moved.txt')
      expect(user.run.outputs['changed-files']).toBe(none.run.outputs['changed-files'])
    },
    300_000
  )

  it('sandbox: none: the same one file comes back (the whole work tree compared)', async () => {
    const { run } = await fixOneLine('none')
    expect(run.code).toBe(0)
    expect(run.outputs['changed-files']).toBe('1')
    const patch = readFileSync(run.outputs.patch, 'utf8')
    expect(patch.match(/^diff --git /gm)).toHaveLength(1)
    expect(patch).toContain('+  return a + b')
    expect(run.stdout).not.toContain('Changes: compared')
  }, 300_000)
})
