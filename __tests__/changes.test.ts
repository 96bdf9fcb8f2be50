// src/changes below the action: the patch of a working copy that is not the
// workspace (as with `sandbox: user`), applied to the workspace by our own
// writer; nested repositories; limits; and the rendering of agent-controlled
// names and diffs. Real git, real files.
import { afterAll, describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { computePatch, type FileChange, type Patch } from '../src/changes/patch'
import { applyPatch, safeRelative } from '../src/changes/apply'
import { checkLimits, checkShapes, MAX_CHANGED_FILES, MAX_FILE_BYTES } from '../src/changes/checks'
import { execScratch, handBack, readBase, localExec, type ChangesReport } from '../src/changes'
import { renderChanges } from '../src/changes/render'
import { COMMENT_LIMIT, openFence, renderFinal, renderSummary, type ReportMeta } from '../src/report/render'
import { Redactor } from '../src/report/redact'
import { gitEnv } from './helpers/git'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const tmp = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `changes-${name}-`))
  dirs.push(d)
  return d
}
const ENV = gitEnv()
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: ENV }).toString().trim()

function workspace(): { ws: string; base: string } {
  const ws = tmp('ws')
  mkdirSync(join(ws, 'src'))
  writeFileSync(join(ws, 'src/a.txt'), 'one\ntwo\n')
  writeFileSync(join(ws, 'gone.txt'), 'bye\n')
  writeFileSync(join(ws, 'tool.sh'), '#!/bin/sh\n')
  git(ws, 'init', '-q', '-b', 'main')
  git(ws, 'add', '-A')
  git(ws, 'commit', '-q', '-m', 'base')
  return { ws, base: git(ws, 'rev-parse', 'HEAD') }
}

/** Hash of every file under .git (names, bytes, modes): the workspace's repository as it stands. */
function gitDirState(ws: string): string {
  const h = createHash('sha256')
  const walk = (d: string) => {
    for (const e of readdirSync(d).sort()) {
      const p = join(d, e)
      const st = lstatSync(p)
      h.update(`${p}\0${st.mode}\0`)
      if (st.isDirectory()) walk(p)
      else if (st.isSymbolicLink()) h.update(readlinkSync(p))
      else h.update(readFileSync(p))
    }
  }
  walk(join(ws, '.git'))
  return h.digest('hex')
}

const redactor = new Redactor(['sk-ant-api03-changesTestKey0000000000000000'])
const contains = (t: string) => redactor.contains(t)

describe('a working copy that is not the workspace (sandbox: user)', () => {
  it('the patch is computed against the workspace objects and written to the workspace byte for byte; .git untouched', async () => {
    const { ws, base } = workspace()
    const copy = tmp('copy')
    execFileSync('cp', ['-a', `${ws}/.`, copy])
    // the agent's work in its copy, with a commit and its own hostile git config
    writeFileSync(join(copy, 'src/a.txt'), 'one\nTWO\n')
    git(copy, 'commit', '-qam', 'agent commit')
    rmSync(join(copy, 'gone.txt'))
    execFileSync('chmod', ['+x', join(copy, 'tool.sh')])
    symlinkSync('src/a.txt', join(copy, 'link'))
    writeFileSync(join(copy, 'new.bin'), Buffer.from([0, 255, 1, 254, 0x80]))
    git(copy, 'config', 'core.fsmonitor', `touch ${copy}/../fsmonitor-ran`)
    const before = gitDirState(ws)

    const baseInfo = await readBase(ws, localExec)
    expect(baseInfo?.sha).toBe(base)
    const { patch, blobs } = await computePatch({
      workdir: copy,
      baseSha: base,
      baseObjects: baseInfo!.objects,
      exec: localExec,
      containsSecret: contains
    })
    expect(patch.files.map(f => [f.status, f.path]).sort()).toEqual([
      ['added', 'link'],
      ['added', 'new.bin'],
      ['deleted', 'gone.txt'],
      ['modified', 'src/a.txt'],
      ['modified', 'tool.sh']
    ])
    const applied = applyPatch(patch, blobs, ws)
    expect(applied).toEqual({ kind: 'applied', files: 5, failed: [] })
    expect(readFileSync(join(ws, 'src/a.txt'), 'utf8')).toBe('one\nTWO\n')
    expect(existsSync(join(ws, 'gone.txt'))).toBe(false)
    expect(lstatSync(join(ws, 'tool.sh')).mode & 0o111).toBe(0o111)
    expect(readlinkSync(join(ws, 'link'))).toBe('src/a.txt')
    expect(readFileSync(join(ws, 'new.bin')).equals(Buffer.from([0, 255, 1, 254, 0x80]))).toBe(true)
    expect(gitDirState(ws)).toBe(before)
    expect(existsSync(join(copy, '..', 'fsmonitor-ran'))).toBe(false)
  })

  it('changes: none leaves the workspace alone; a file with a secret is held back and the patch file never holds it', async () => {
    const { ws } = workspace()
    const copy = tmp('copy-none')
    execFileSync('cp', ['-a', `${ws}/.`, copy])
    writeFileSync(join(copy, 'src/a.txt'), 'changed\n')
    writeFileSync(join(copy, 'secret.txt'), `token: ${Buffer.from('sk-ant-api03-changesTestKey0000000000000000').toString('base64')}\n`)
    const before = gitDirState(ws)
    const logs: string[] = []
    const out = tmp('out')
    for (const mode of ['none', 'apply'] as const) {
      const r = await handBack({
        mode,
        base: await readBase(ws, localExec),
        workspace: ws,
        source: { workdir: copy, exec: localExec, inPlace: false },
        containsSecret: contains,
        patchDir: out,
        patchName: `${mode}.patch`,
        log: m => logs.push(m)
      })
      expect(r.kind).toBe('computed')
      if (r.kind !== 'computed') return
      expect(r.patch.files.map(f => f.path)).toEqual(['src/a.txt'])
      expect(r.patch.heldBack).toEqual([
        { path: 'secret.txt', why: 'it holds a secret (a known secret value, or a string shaped like a token)' }
      ])
      expect(readFileSync(r.patchFile as string, 'utf8')).not.toContain('secret.txt')
      expect(renderChanges(r, 16_000)).toContain(
        mode === 'none' ? 'Not applied to the workspace (`changes: none`).' : 'Applied to the workspace for later steps.'
      )
      expect(readFileSync(join(ws, 'src/a.txt'), 'utf8')).toBe(mode === 'none' ? 'one\ntwo\n' : 'changed\n')
      expect(existsSync(join(ws, 'secret.txt'))).toBe(false)
      expect(existsSync(join(copy, 'secret.txt'))).toBe(true) // the copy is the agent's; only what leaves it is checked
    }
    expect(gitDirState(ws)).toBe(before)
    expect(logs).toContain('Changes: 1 file changed, 1 held back.')
  })

  it('never writes through a symlink in the workspace, nor outside it, nor under .git', () => {
    const ws = tmp('ws2')
    const outside = tmp('outside')
    symlinkSync(outside, join(ws, 'link'))
    const file = (path: string): FileChange => ({
      path,
      status: 'added',
      newMode: '100644',
      newSha: 'a'.repeat(40),
      binary: false,
      additions: 1,
      deletions: 0,
      workflow: false
    })
    const patch: Patch = {
      baseSha: 'b'.repeat(40),
      files: [file('link/x.txt'), file('../escape.txt'), file('.git/hooks/pre-commit'), file('sub/.GIT/config')],
      heldBack: [],
      diff: '',
      diffBytes: Buffer.alloc(0)
    }
    const applied = applyPatch(patch, new Map([['a'.repeat(40), Buffer.from('x\n')]]), ws)
    expect(applied.kind === 'applied' && applied.failed.map(f => f.path)).toEqual([
      'link/x.txt',
      '../escape.txt',
      '.git/hooks/pre-commit',
      'sub/.GIT/config'
    ])
    expect(readdirSync(outside)).toEqual([])
    expect(existsSync(join(ws, '.git'))).toBe(false)
    expect(safeRelative('a/b.txt')).toBe(true)
  })

  it('a nested repository is held back and named, its files never in the patch', async () => {
    const { ws, base } = workspace()
    mkdirSync(join(ws, 'vendor'))
    writeFileSync(join(ws, 'vendor/lib.txt'), 'x\n')
    git(join(ws, 'vendor'), 'init', '-q')
    writeFileSync(join(ws, 'kept.txt'), 'kept\n')
    const b = await readBase(ws, localExec)
    const { patch } = await computePatch({ workdir: ws, baseSha: base, baseObjects: b!.objects, exec: localExec, containsSecret: contains })
    expect(patch.files.map(f => f.path)).toEqual(['kept.txt'])
    expect(patch.heldBack).toEqual([{ path: 'vendor', why: 'a nested git repository (its files are not handed back)' }])
    expect(patch.diff).not.toContain('vendor')
  })

  it('nested repositories named with a newline, a space or a glob are held back by name, and exclude nothing else', async () => {
    const { ws, base } = workspace()
    for (const name of ['a\nb', 'c d*', '#x']) {
      mkdirSync(join(ws, name))
      writeFileSync(join(ws, name, 'lib.txt'), 'x\n')
      git(join(ws, name), 'init', '-q')
    }
    // what a broken exclude line would also leave out: other folders named like the name's parts
    for (const d of ['b', 'c', 'x']) {
      mkdirSync(join(ws, d))
      writeFileSync(join(ws, d, 'kept.txt'), 'kept\n')
    }
    const b = await readBase(ws, localExec)
    const { patch } = await computePatch({ workdir: ws, baseSha: base, baseObjects: b!.objects, exec: localExec, containsSecret: contains })
    expect(patch.files.map(f => f.path).sort()).toEqual(['b/kept.txt', 'c/kept.txt', 'x/kept.txt'])
    expect(patch.heldBack.map(h => h.path).sort()).toEqual(['#x', 'a\nb', 'c d*'])
  })

  it('a workspace that is no git checkout has no base', async () => {
    expect(await readBase(tmp('plain'), localExec)).toBeUndefined()
  })
})

describe("a copy that started from the thread's branch (the carried patch applied after its start)", () => {
  it("the run's patch holds its own changes only; the workspace receives the carried patch and them", async () => {
    const { ws } = workspace()
    const copy = tmp('copy-carried')
    execFileSync('cp', ['-a', `${ws}/.`, copy])
    const carried = [
      'diff --git a/src/a.txt b/src/a.txt',
      '--- a/src/a.txt',
      '+++ b/src/a.txt',
      '@@ -1,2 +1,2 @@',
      ' one',
      '-two',
      '+two, from the branch',
      ''
    ].join('\n')
    execFileSync('git', ['apply', '-'], { cwd: copy, env: ENV, input: carried })
    writeFileSync(join(copy, 'own.txt'), "the run's own\n")
    const r = await handBack({
      mode: 'apply',
      base: await readBase(ws, localExec),
      workspace: ws,
      source: {
        workdir: copy,
        exec: localExec,
        inPlace: false,
        start: { tree: git(ws, 'rev-parse', 'HEAD^{tree}'), objects: join(ws, '.git', 'objects') },
        carried: Buffer.from(carried)
      },
      containsSecret: contains,
      patchDir: tmp('out-carried'),
      patchName: 'p.patch',
      log: () => undefined
    })
    expect(r.kind === 'computed' && r.patch.files.map(f => f.path)).toEqual(['own.txt'])
    expect(r.kind === 'computed' && r.applied).toEqual({ kind: 'applied', files: 2, failed: [] })
    expect(readFileSync(join(ws, 'src/a.txt'), 'utf8')).toBe('one\ntwo, from the branch\n')
    expect(readFileSync(join(ws, 'own.txt'), 'utf8')).toBe("the run's own\n")
  })
})

describe('the scratch folder made through exec (sandbox: user), in one shell', () => {
  const fs = execScratch(localExec, { PATH: process.env.PATH ?? '/usr/bin:/bin' })
  const odd = ['-n', '%s%d%%', 'back\\slash \\c tab\t cr\r é', '\n\n', '', 'trailing\n\n']

  it('holds the folders and the files byte for byte, in a private folder', async () => {
    const parent = tmp('scratch')
    const files = odd.map((content, i): [string, string] => [`d/f${i}`, content])
    const root = await fs.mkdtemp(join(parent, 'x-'), ['d', 'e/f'], files)
    expect(root.startsWith(join(parent, 'x-'))).toBe(true)
    expect(lstatSync(root).mode & 0o777).toBe(0o700)
    expect(lstatSync(join(root, 'e/f')).isDirectory()).toBe(true)
    for (const [name, content] of files) expect(readFileSync(join(root, name), 'utf8')).toBe(content)
  })

  it('a failure leaves no folder behind and says so', async () => {
    const parent = tmp('scratch-fail')
    // a file where a folder must go: the write fails half-way
    await expect(
      fs.mkdtemp(
        join(parent, 'x-'),
        ['d'],
        [
          ['d/a', 'one'],
          ['d', 'not a file'],
          ['d/b', 'two']
        ]
      )
    ).rejects.toThrow(/sh failed/)
    expect(readdirSync(parent)).toEqual([])
  })

  it('refuses paths that are not plain names of its own (options, globs, spaces, .., absolute)', async () => {
    const parent = tmp('scratch-refused')
    for (const bad of ['-rf', 'a b', 'a/*', '../up', 'a/../../up', '/etc/x'])
      await expect(fs.mkdtemp(join(parent, 'x-'), [bad], [])).rejects.toThrow(/not a scratch path/)
    await expect(fs.mkdtemp(join(parent, 'x-'), [], [['../x', 'y']])).rejects.toThrow(/not a scratch path/)
    expect(readdirSync(parent)).toEqual([])
  })
})

describe('limits', () => {
  const f = (i: number): FileChange => ({
    path: `f${i}`,
    status: 'added',
    newMode: '100644',
    newSha: i.toString(16).padStart(40, '0'),
    binary: false,
    additions: 1,
    deletions: 0,
    workflow: false
  })
  it(`holds back files over ${MAX_FILE_BYTES} bytes and those past ${MAX_CHANGED_FILES} files, with a clear reason`, () => {
    const files = Array.from({ length: MAX_CHANGED_FILES + 2 }, (_, i) => f(i))
    const sizes = new Map(files.map((x, i) => [x.newSha as string, i === 0 ? MAX_FILE_BYTES + 1 : 10]))
    const held = checkLimits(files, sizes)
    expect(held.map(h => [h.file.path, h.why])).toEqual([
      ['f0', 'larger than 20 MiB (the limit for one file)'],
      [`f${MAX_CHANGED_FILES + 1}`, `over the limit of ${MAX_CHANGED_FILES} changed files`]
    ])
  })

  it('a .gitmodules added or changed (in any case) is held back with its reason; its removal and one in a subfolder are not', () => {
    const files: FileChange[] = [
      { ...f(1), path: '.gitmodules' },
      { ...f(2), path: '.GitModules', status: 'modified', oldMode: '100644', oldSha: f(9).newSha },
      { ...f(3), path: '.gitmodules', oldPath: 'm.txt', status: 'renamed' },
      { ...f(4), path: '.gitmodules', status: 'deleted', newMode: undefined, newSha: undefined, oldMode: '100644', oldSha: f(8).newSha },
      { ...f(5), path: 'docs/.gitmodules' }
    ]
    const held = checkShapes(files, new Map())
    expect(held.map(h => h.file)).toEqual(files.slice(0, 3))
    for (const h of held) expect(h.why).toBe('it configures submodules (where they are fetched from), which the agent may not change')
  })
})

describe('the Changes section', () => {
  const hostile = 'a\n```\n</details>\n@octocat `x`.txt'
  const diff = [
    'diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1,3 @@\n+````\n+</details>\n+@octocat please look\n',
    'diff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-old\n+new\n'
  ].join('')
  const report = (over: Partial<Patch> = {}): ChangesReport => ({
    kind: 'computed',
    mode: 'apply',
    patch: {
      baseSha: 'c'.repeat(40),
      files: [
        {
          path: hostile,
          status: 'added',
          newMode: '100644',
          newSha: 'd'.repeat(40),
          binary: false,
          additions: 3,
          deletions: 0,
          workflow: false
        },
        { path: 'y', status: 'modified', oldMode: '100644', newMode: '100644', binary: false, additions: 1, deletions: 1, workflow: false }
      ],
      heldBack: [{ path: '@team/`evil`\n</details>', why: 'it holds a secret (a known secret value, or a string shaped like a token)' }],
      diff,
      diffBytes: Buffer.from(diff),
      ...over
    },
    applied: { kind: 'in-place' }
  })

  it('agent-controlled names and diff lines cannot break the markup or ping anyone', () => {
    const md = renderChanges(report(), 16_384)
    expect(openFence(md)).toBeUndefined()
    // every agent line sits inside a fence: outside the fences only our own text remains
    const outside = md.replace(/^(`{3,})[a-z]*\n[\s\S]*?\n\1$/gm, '')
    expect(outside).not.toContain('</details>\n@')
    expect(outside).not.toMatch(/@octocat|@team/)
    expect(outside.match(/<details>/g)?.length).toBe(outside.match(/<\/details>/g)?.length)
    expect(md).toContain(JSON.stringify(hostile)) // a name with a line break is shown C-quoted on one line
    expect(md).not.toMatch(/(?<![A-Za-z0-9])@octocat/)
  })

  it('keeps within its share, cutting the diff with a line that says where the rest is', () => {
    const big = Array.from(
      { length: 3000 },
      (_, i) => `diff --git a/f${i} b/f${i}\n--- a/f${i}\n+++ b/f${i}\n@@ -1 +1 @@\n-x\n+y${'z'.repeat(50)}\n`
    ).join('')
    const files = Array.from({ length: 3000 }, (_, i): FileChange => ({
      path: `f${i}`,
      status: 'modified',
      oldMode: '100644',
      newMode: '100644',
      binary: false,
      additions: 1,
      deletions: 1,
      workflow: false
    }))
    const md = renderChanges(report({ files, diff: big, heldBack: [] }), 16_384)
    expect(md.length).toBeLessThanOrEqual(16_384)
    expect(md).toContain('3,000 files changed')
    expect(md).toMatch(/more \(the job summary and the patch file have them all\)/)
    expect(md).toMatch(/of the diff left out here; the job summary and the patch file have it whole/)
    expect(openFence(md)).toBeUndefined()
  })
})

describe('the Changes section in the whole report', () => {
  const files = Array.from({ length: 2000 }, (_, i): FileChange => ({
    path: `many/f${i}.txt`,
    status: 'added',
    newMode: '100644',
    newSha: 'e'.repeat(40),
    binary: false,
    additions: 1,
    deletions: 0,
    workflow: false
  }))
  const diff = files
    .map(
      f => `diff --git a/${f.path} b/${f.path}\nnew file mode 100644\n--- /dev/null\n+++ b/${f.path}\n@@ -0,0 +1 @@\n+${'x'.repeat(2000)}\n`
    )
    .join('')
  const changes: ChangesReport = {
    kind: 'computed',
    mode: 'apply',
    patch: { baseSha: 'c'.repeat(40), files, heldBack: [], diff, diffBytes: Buffer.from(diff) },
    applied: { kind: 'in-place' }
  }
  const meta: ReportMeta = {
    model: 'm',
    sandbox: 'none',
    limits: { maxTurns: 50, timeoutMinutes: 30, maxTokens: 8000 },
    elapsedMs: 1,
    changes
  }
  const commands = Array.from({ length: 300 }, (_, i) => ({
    command: `echo ${i}`,
    exitCode: 0,
    durationMs: 1,
    output: 'y'.repeat(3000),
    truncated: false,
    timedOut: false,
    blocked: false
  }))
  const o = {
    finalText: 'F'.repeat(70_000),
    exitReason: 'end_turn' as const,
    turns: 3,
    commands,
    usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheCreationTokens: 0 },
    costUsd: null
  }

  it('a huge diff, log and final text together stay within 65,536 characters; order: final text, Changes, Commands', () => {
    const md = renderFinal(o, meta)
    expect([...md].length).toBeLessThanOrEqual(COMMENT_LIMIT)
    const at = (s: string) => md.indexOf(s)
    expect(at('FFFF')).toBeGreaterThan(0)
    expect(at('### Changes')).toBeGreaterThan(at('FFFF'))
    expect(at('<summary>Commands (300)</summary>')).toBeGreaterThan(at('### Changes'))
    expect(md).toContain('2,000 files changed')
    expect(md.length - md.replace(/### Changes[\s\S]*?(?=\n\n<details><summary>Commands)/, '').length).toBeLessThanOrEqual(
      COMMENT_LIMIT / 4
    )
  })

  it('the summary lists every file', () => {
    const md = renderSummary({ ...o, finalText: 'done', commands: [] }, meta)
    for (const i of [0, 1000, 1999]) expect(md).toContain(`A many/f${i}.txt  +1 −0`)
  })
})
