// The thread's branch as data (src/thread/carry.ts): where the next run's copy
// starts, the line the report shows, and the patch a committing run carries.
import { describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  carried,
  carriedBytes,
  committedDiff,
  MAX_CARRIED_PATCH_BYTES,
  planResume,
  resumeLine,
  type CarriedPatch
} from '../src/thread/carry'
import { computePatch } from '../src/changes/patch'
import { localExec } from '../src/changes'
import { git } from './helpers/git'

const B = 'b'.repeat(40)
const C = 'c'.repeat(40)
const OTHER = 'd'.repeat(40)
const PATCH = { base: B, diff: 'diff --git a/x b/x\n' }
const record = { branch: 'agent/issue-7-101', commitSha: C, patch: PATCH }

describe('planResume: where the copy starts', () => {
  it('nothing committed last time: as any run', () => {
    expect(planResume(undefined, B)).toEqual({ kind: 'none' })
    expect(planResume({ branch: 'x' }, B)).toEqual({ kind: 'none' })
    expect(planResume({ branch: 'x', commitSha: 'not a sha' }, B)).toEqual({ kind: 'none' })
  })

  it("the checkout is the commit the branch was made from: the carried patch, onto the branch's commit", () => {
    expect(planResume({ ...record, pullNumber: 101 }, B)).toEqual({
      kind: 'apply',
      onto: { branch: 'agent/issue-7-101', sha: C, pullNumber: 101 },
      patch: PATCH
    })
  })

  it("the checkout is the branch's commit: nothing to apply", () => {
    expect(planResume(record, C)).toEqual({ kind: 'at-branch', onto: { branch: 'agent/issue-7-101', sha: C } })
  })

  it('another checkout, no checkout, or no carried patch: from the checkout, with the reason', () => {
    const other = planResume(record, OTHER)
    expect(other).toEqual({ kind: 'from-checkout', branch: 'agent/issue-7-101', why: expect.stringContaining('ddddddd is not bbbbbbb') })
    expect(planResume(record, undefined)).toMatchObject({ kind: 'from-checkout', why: 'the workspace is not a git checkout' })
    expect(planResume({ ...record, patch: undefined }, B)).toMatchObject({ kind: 'from-checkout', why: expect.stringContaining('16 MiB') })
    // a malformed carried patch is not trusted
    expect(planResume({ ...record, patch: { base: 'HEAD', diff: 'x' } }, B)).toMatchObject({ kind: 'from-checkout' })
  })
})

describe('resumeLine: one line in the report', () => {
  it('says where the copy started', () => {
    expect(resumeLine({ kind: 'none' })).toBeUndefined()
    const apply = planResume(record, B)
    expect(resumeLine(apply)).toBe(
      '🌿 The working copy starts from branch `agent/issue-7-101` (commit ccccccc), where the last run committed; changes are committed onto it.'
    )
    expect(resumeLine(apply, { why: 'its changes no longer apply' })).toBe(
      'ℹ️ The working copy starts from the checked-out commit, not from branch `agent/issue-7-101` where the last run committed: its changes no longer apply.'
    )
    expect(resumeLine(planResume(record, OTHER))).toMatch(/^ℹ️ The working copy starts from the checked-out commit, not from branch/)
  })

  it('a branch name cannot mention anyone or break out of its code span', () => {
    const line = resumeLine(planResume({ ...record, branch: 'fix/@octocat`x`' }, B)) ?? ''
    expect(line).not.toMatch(/(^|[^`])@octocat/)
    expect(line).toContain('``')
  })
})

describe('carried: the patch travels only when it may', () => {
  it('within the size limit and holding no secret', () => {
    const bytes = (s: string) => Buffer.from(s)
    expect(carried(B, bytes('diff'), () => false)).toEqual({ base: B, diff: 'diff', encoding: 'latin1' })
    expect(carried(B, bytes(''), () => false)).toBeUndefined()
    expect(carried(B, bytes('x'.repeat(MAX_CARRIED_PATCH_BYTES + 1)), () => false)).toBeUndefined()
    expect(carried(B, bytes('diff with sk-secret'), t => t.includes('sk-secret'))).toBeUndefined()
  })

  it("keeps git's bytes through the history's JSON (a Latin-1 text file is not UTF-8); reads a secret in either encoding", () => {
    // Latin-1 bytes beside UTF-8 ones
    const diff = Buffer.concat([Buffer.from('+caf\xe9 cr\xe8me\n', 'latin1'), Buffer.from('+\u20ac in UTF-8\n', 'utf8')])
    const p = carried(B, diff, () => false)!
    const back: CarriedPatch = JSON.parse(JSON.stringify(p))
    expect(carriedBytes(back)).toEqual(diff)
    // a secret with a non-ASCII character, in UTF-8 or in Latin-1 bytes
    const secret = 'pässwörd-0123456789'
    for (const enc of ['utf8', 'latin1'] as const)
      expect(carried(B, Buffer.from(`+${secret}\n`, enc), t => t.includes(secret))).toBeUndefined()
    // a history written before: UTF-8 text, no encoding
    expect(carriedBytes({ base: B, diff: '+café\n' })).toEqual(Buffer.from('+café\n', 'utf8'))
  })

  it('a carried patch that says latin1 but holds characters above one byte, or another encoding, is not applied', () => {
    const plan = (patch: CarriedPatch) => planResume({ branch: 'b', commitSha: C, patch }, B).kind
    expect(plan({ base: B, diff: '+caf\xe9\n', encoding: 'latin1' })).toBe('apply')
    expect(plan({ base: B, diff: '+\u20ac\n', encoding: 'latin1' })).toBe('from-checkout')
    expect(plan({ base: B, diff: '+x\n', encoding: 'base64' as 'latin1' })).toBe('from-checkout')
  })
})

describe('committedDiff: what the commit held', () => {
  it('every section but the workflow files, lined up with the files even where one file has two sections', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'thread-carry-'))
    try {
      writeFileSync(join(dir, 'a.txt'), 'a\n')
      writeFileSync(join(dir, 'link'), 'a file that becomes a symlink\n')
      git(dir, ['init', '-q', '-b', 'main'])
      git(dir, ['add', '-A'])
      git(dir, ['-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'base'])
      const base = git(dir, ['rev-parse', 'HEAD'])
      writeFileSync(join(dir, 'a.txt'), 'a changed\n')
      unlinkSync(join(dir, 'link'))
      symlinkSync('a.txt', join(dir, 'link'))
      execFileSync('mkdir', ['-p', join(dir, '.github', 'workflows')])
      writeFileSync(join(dir, '.github', 'workflows', 'ci.yml'), 'on: push\n')
      writeFileSync(join(dir, 'z.txt'), 'z\n')
      const { patch } = await computePatch({
        workdir: dir,
        baseSha: base,
        baseObjects: join(dir, '.git', 'objects'),
        exec: localExec,
        containsSecret: () => false,
        tmpDir: tmpdir()
      })
      expect(patch.files.map(f => f.path)).toEqual(['.github/workflows/ci.yml', 'a.txt', 'link', 'z.txt'])
      const kept = committedDiff(patch).toString('utf8')
      expect(kept).not.toContain('ci.yml')
      for (const p of ['a/a.txt', 'a/link', 'b/z.txt']) expect(kept).toContain(p)
      expect(kept.match(/^diff --git /gm)).toHaveLength(4) // the symlink's two sections and two files
      // it applies to the base and gives the committed files
      git(dir, ['checkout', '-q', '-f', base])
      git(dir, ['clean', '-qfdx'])
      execFileSync('git', ['apply', '--binary', '-'], { cwd: dir, input: kept })
      expect(git(dir, ['status', '--porcelain'])).toBe('M a.txt\n T link\n?? z.txt') // (the first line's leading blank trimmed)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('sections that do not line up with the files: nothing rather than something wrong', () => {
    const files = [{ path: 'a', status: 'modified', binary: false, additions: 1, deletions: 0, workflow: false }] as const
    expect(committedDiff({ files: [...files], diffBytes: Buffer.from('diff --git a/a b/a\n@@\ndiff --git a/b b/b\n@@\n') })).toEqual(
      Buffer.alloc(0)
    )
  })
})
