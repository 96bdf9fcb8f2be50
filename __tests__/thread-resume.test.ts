// The thread's branch at the start of a run (src/thread/resume.ts), with real
// git on real files, the copy being the workspace (sandbox none): a carried
// patch is applied all or nothing, never outside the copy, and what a run
// leaves for the next one.
import { afterAll, describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ThreadBranch } from '../src/thread/resume'
import type { LoadedHistory } from '../src/thread/history'
import type { Sandbox } from '../src/sandbox'
import { localExec, type ChangesReport } from '../src/changes'
import { git } from './helpers/git'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(d)
  return d
}

function workspace(): { ws: string; head: string } {
  const ws = temp('thread-resume-ws-')
  writeFileSync(join(ws, 'a.txt'), 'one\n')
  git(ws, ['init', '-q', '-b', 'main'])
  git(ws, ['add', '-A'])
  git(ws, ['-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'base'])
  return { ws, head: git(ws, ['rev-parse', 'HEAD']) }
}

/** The none-mode sandbox: commands in the workspace (only what ThreadBranch uses). */
const noneSandbox = (ws: string) => ({ mode: 'none', workdir: ws, env: {} }) as unknown as Sandbox

async function start(ws: string, history: LoadedHistory): Promise<{ branch: ThreadBranch; notes: string[] }> {
  const branch = new ThreadBranch(() => history)
  const notes: string[] = []
  await branch.prepare(Promise.resolve(noneSandbox(ws)), {
    workspace: ws,
    tmpDir: temp('thread-resume-tmp-'),
    note: l => notes.push(l),
    exec: localExec
  })
  return { branch, notes }
}

const C = 'c'.repeat(40)
const history = (base: string, diff: string): LoadedHistory => ({
  messages: [],
  model: 'm',
  runId: 1,
  branch: 'agent/issue-1-1',
  commitSha: C,
  patch: { base, diff }
})

describe('a carried patch is applied to the copy', () => {
  it("applies, and the hand-back then diffs against the branch's tree and commits onto the branch", async () => {
    const { ws, head } = workspace()
    const diff = 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n'
    const { branch, notes } = await start(ws, history(head, diff))
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('two\n')
    expect(notes).toEqual([expect.stringContaining('The working copy starts from branch `agent/issue-1-1`')])
    const h = branch.forHandBack(Promise.resolve({ sha: head, objects: join(ws, '.git', 'objects') }))
    expect(h.onto).toEqual({ branch: 'agent/issue-1-1', sha: C })
    const base = await h.base
    expect(base?.sha).not.toBe(head)
    // S: the checkout plus the patch, readable through its store (which borrows the workspace's)
    const env = { ...process.env, GIT_DIR: join(base!.objects, '..'), GIT_OBJECT_DIRECTORY: base!.objects }
    expect(execFileSync('git', ['show', `${base!.sha}:a.txt`], { env }).toString()).toBe('two\n')
    expect(
      execFileSync('git', ['rev-parse', `${base!.sha}^`], { env })
        .toString()
        .trim()
    ).toBe(head)
  })

  it('a patch that reaches outside the copy (a path with .., through a symlink, into .git) is refused whole: the copy stays the checkout', async () => {
    const outside = temp('thread-resume-outside-')
    const escape = `thread-resume-pwned-${randomBytes(8).toString('hex')}` // a name beside the copy that nothing else uses
    for (const [name, diff] of [
      [
        'dotdot',
        `diff --git a/../${escape} b/../${escape}\nnew file mode 100644\n--- /dev/null\n+++ b/../${escape}\n@@ -0,0 +1 @@\n+pwned\n`
      ],
      ['symlink', `diff --git a/link/pwned b/link/pwned\nnew file mode 100644\n--- /dev/null\n+++ b/link/pwned\n@@ -0,0 +1 @@\n+pwned\n`],
      [
        'git',
        'diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+pwned\n'
      ]
    ] as const) {
      const { ws, head } = workspace()
      symlinkSync(outside, join(ws, 'link'))
      // a good hunk first: all or nothing
      const good = 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n'
      const { branch, notes } = await start(ws, history(head, good + diff))
      expect({ name, a: readFileSync(join(ws, 'a.txt'), 'utf8') }).toEqual({ name, a: 'one\n' })
      expect(existsSync(join(outside, 'pwned'))).toBe(false)
      expect(existsSync(join(ws, '..', escape))).toBe(false)
      expect(existsSync(join(ws, '.git', 'hooks', 'post-checkout'))).toBe(false)
      expect(notes).toEqual([
        expect.stringMatching(/^ℹ️ The working copy starts from the checked-out commit, not from branch .*no longer apply/)
      ])
      expect(branch.forHandBack(Promise.resolve(undefined)).onto).toBeUndefined()
    }
  })
})

describe('what a run leaves for the next one', () => {
  const computed = (handback?: unknown) =>
    ({
      kind: 'computed',
      mode: 'branch',
      patch: { baseSha: 'x', files: [], heldBack: [], diff: '', diffBytes: Buffer.alloc(0) },
      handback
    }) as ChangesReport

  it('nothing committed: the branch the last run left, patch and all', async () => {
    const last = history('b'.repeat(40), 'diff')
    const work = await new ThreadBranch(() => last).forHistory(computed(), Promise.resolve(undefined), () => false)
    expect(work).toEqual({ branch: last.branch, commitSha: C, patch: last.patch })
  })

  it('no branch before and none now: nothing', async () => {
    expect(await new ThreadBranch(() => undefined).forHistory({ kind: 'no-repository' }, Promise.resolve(undefined), () => false)).toEqual(
      {}
    )
  })
})
