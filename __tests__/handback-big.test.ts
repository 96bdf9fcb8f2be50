// The hand-back at its limits: a budget that runs out says how far it got
// (never "No changes"; nothing unchecked lands), and 100 MiB of changes come
// back whole, at the level below the action (the sandbox's patch stream, the
// checks and the apply, with real processes; a whole action run adds only the
// report to it, and the 25 MiB and 5,100-file cases in handback.test.ts are
// whole action runs).
import { afterAll, describe, expect, it } from '@jest/globals'
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { handBack, localExec, readBase, type ChangesReport } from '../src/changes'
import { renderChanges } from '../src/changes/render'
import { stoppedReport } from '../src/run/handback'
import { Redactor } from '../src/report/redact'
import { gitEnv } from './helpers/git'
import { handBackBelow } from './helpers/handback-below'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const ENV = gitEnv()
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: ENV }).toString().trim()
const redactor = new Redactor([])
const STOPPED = 'the hand-back ran out of its 120 s'

/** A checkout and a copy of it with one file changed (the agent's work in a user sandbox). */
function workspaceAndCopy(): { ws: string; copy: string } {
  const ws = mkdtempSync(join(tmpdir(), 'handback-big-ws-'))
  const copy = mkdtempSync(join(tmpdir(), 'handback-big-copy-'))
  dirs.push(ws, copy)
  writeFileSync(join(ws, 'a.txt'), 'one\n')
  git(ws, 'init', '-q', '-b', 'main')
  git(ws, 'add', '-A')
  git(ws, 'commit', '-q', '-m', 'base')
  execFileSync('cp', ['-a', `${ws}/.`, copy])
  writeFileSync(join(copy, 'a.txt'), 'two\n')
  writeFileSync(join(copy, 'new.txt'), 'new\n')
  return { ws, copy }
}

describe('a hand-back that runs out of its budget says so truthfully', () => {
  it('stopped once the patch is checked: the report shows the checked patch, says it was not applied nor committed; the workspace is untouched', async () => {
    const { ws, copy } = workspaceAndCopy()
    const progress = { stopped: STOPPED }
    const r = await handBack({
      mode: 'branch',
      base: await readBase(ws, localExec),
      workspace: ws,
      source: { workdir: copy, exec: localExec, inPlace: false },
      containsSecret: t => redactor.contains(t),
      patchDir: ws,
      patchName: 'p.patch',
      commit: async () => {
        throw new Error('no commit may be tried once the budget is spent')
      },
      log: () => undefined,
      progress
    })
    expect(r.kind === 'computed' && { applied: r.applied, notApplied: r.notApplied, notCommitted: r.notCommitted }).toEqual({
      applied: undefined,
      notApplied: STOPPED,
      notCommitted: STOPPED
    })
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('one\n')
    expect(existsSync(join(ws, 'new.txt'))).toBe(false)
    const shown = renderChanges(r, 16_000)
    expect(shown).toContain('2 files changed')
    expect(shown).toContain(`**Not applied to the workspace**: ${STOPPED}.`)
    expect(shown).toContain(`**Not committed**: ${STOPPED}.`)
    expect(shown).not.toContain('No changes')
  })

  it('stopped before the checks ended: nothing was handed back, and the report says what became of the changes', () => {
    const copy = stoppedReport({}, STOPPED, false)
    expect(copy).toEqual({ kind: 'failed', why: `${STOPPED} before the changes were checked`, inPlace: false })
    expect(renderChanges(copy, 16_000)).toBe(
      `### Changes\n\n⚠️ **The agent's changes were not handed back**: ${STOPPED} before the changes were checked. Nothing of them was applied to the workspace or committed.`
    )
    // with sandbox: none the agent worked in the workspace: its changes are there, and the report does not hide it
    expect(renderChanges(stoppedReport({}, STOPPED, true), 16_000)).toContain(
      'The agent worked in the workspace itself: its changes are there, unchecked.'
    )
  })

  it('stopped after the apply, before the commit was confirmed: applied is said, the commit is not claimed', () => {
    const computed: ChangesReport = {
      kind: 'computed',
      mode: 'pull-request',
      patch: { baseSha: 'b'.repeat(40), files: [], heldBack: [], diff: '', diffBytes: Buffer.alloc(0) },
      applied: { kind: 'applied', files: 3, failed: [] }
    }
    const r = stoppedReport({ report: computed }, STOPPED, false)
    expect(r.kind === 'computed' && [r.applied, r.notApplied, r.notCommitted]).toEqual([
      { kind: 'applied', files: 3, failed: [] },
      undefined,
      `${STOPPED} before a commit was confirmed`
    ])
  })
})

const privileged = process.platform === 'linux' && (process.getuid?.() === 0 || spawnSync('sudo', ['-n', 'true']).status === 0)
const MIB = 1024 * 1024
/** The bytes `yes <line> | head -c <n>` writes: text in lines, as a generated file would be. */
const LINE = 'the agent wrote this line of a large generated file, 0123456789\n'
const sha256Of = (n: number, salt: string) => {
  const line = `${salt} ${LINE}`
  return createHash('sha256')
    .update(Buffer.from(line.repeat(Math.ceil(n / line.length))).subarray(0, n))
    .digest('hex')
}
const fileSha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

describe('100 MiB of changes', () => {
  it(`below the action (sandbox ${privileged ? 'user' : 'none'}: patch streamed from the sandbox, checked, applied): handed back whole`, async () => {
    const files = 10
    const size = 10 * MIB // ten files of 10 MiB: under the 20 MiB for one file, exactly the 100 MiB of all
    const command = Array.from({ length: files }, (_, i) => `yes 'f${i} ${LINE.trim()}' | head -c ${size} > big${i}.txt`).join(' && ')
    const r = await handBackBelow({ sandbox: privileged ? 'user' : 'none', command })
    dirs.push(join(r.workspace, '..'))
    expect(r.report.kind).toBe('computed')
    if (r.report.kind !== 'computed') return
    expect(r.report.patch.heldBack).toEqual([])
    expect(r.report.patch.files.map(f => f.path).sort()).toEqual(Array.from({ length: files }, (_, i) => `big${i}.txt`).sort())
    expect(r.report.applied).toEqual(r.mode === 'user' ? { kind: 'applied', files, failed: [] } : { kind: 'in-place' })
    for (let i = 0; i < files; i++)
      expect({ i, sha: fileSha(join(r.workspace, `big${i}.txt`)) }).toEqual({ i, sha: sha256Of(size, `f${i}`) })
    expect(existsSync(r.report.patchFile ?? '')).toBe(true)
  }, 600_000)
})
