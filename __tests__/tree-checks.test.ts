// The hand-back's checks against the tree the patch lands in (SPEC "Checked"),
// on real folders: symlink chains resolved as the kernel does, case collisions
// with unchanged files, PATH folders, files the agent never got.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FinalTree, jobPathDirs, treeChecks } from '../src/changes/tree-checks'
import type { FileChange } from '../src/changes/files'

let ws: string
const blobs = new Map<string, Buffer>()
let n = 0

function added(path: string, opts: { link?: string; mode?: string } = {}): FileChange {
  const sha = (++n).toString(16).padStart(40, '0')
  blobs.set(sha, Buffer.from(opts.link ?? `content ${path}\n`))
  return {
    path,
    status: 'added',
    newMode: opts.link !== undefined ? '120000' : (opts.mode ?? '100644'),
    newSha: sha,
    binary: false,
    additions: 1,
    deletions: 0,
    workflow: false
  }
}

const deleted = (path: string): FileChange => ({
  path,
  status: 'deleted',
  oldMode: '100644',
  oldSha: 'f'.repeat(40),
  binary: false,
  additions: 0,
  deletions: 1,
  workflow: false
})

beforeAll(() => {
  ws = mkdtempSync(join(tmpdir(), 'tree-checks-'))
  writeFileSync(join(ws, 'README.md'), '# hi\n')
  mkdirSync(join(ws, 'src'))
  writeFileSync(join(ws, 'src/a.js'), '1\n')
  mkdirSync(join(ws, '.venv/bin'), { recursive: true })
  symlinkSync('/usr/bin/python3', join(ws, '.venv/bin/python'))
  mkdirSync(join(ws, 'd'))
})

afterAll(() => rmSync(ws, { recursive: true, force: true }))

const check = (files: FileChange[], pathDirs: string[] = [], withheld?: Set<string>) =>
  treeChecks({ workspace: ws, pathDirs, withheld })(files, blobs).map(h => [h.file.path, h.why])

describe('symlinks, resolved over the final tree as the kernel does', () => {
  it('a chain of links each inside alone (`d/up -> ..`, then `link -> d/up/d/up/../../proc/self/environ`) is held back; `d/up` alone stays', () => {
    const held = check([added('d/up', { link: '..' }), added('link', { link: 'd/up/d/up/../../proc/self/environ' })])
    expect(held).toEqual([['link', expect.stringMatching(/symlink that resolves to outside the repository/)]])
  })

  it('a link through a workspace link that leaves (`.venv/bin/python -> /usr/bin/python3`) is held back; one inside passes', () => {
    expect(check([added('py', { link: '.venv/bin/python' })])).toEqual([['py', expect.stringMatching(/absolute path/)]])
    expect(check([added('ok', { link: 'src/a.js' }), added('up-ok', { link: 'd/../src' })])).toEqual([])
  })

  it('loops are held back; a missing folder counts as one a later step may make (no waiting escape)', () => {
    expect(check([added('l1', { link: 'l2' }), added('l2', { link: 'l1' })]).map(h => h[1])).toEqual([
      expect.stringMatching(/loop/),
      expect.stringMatching(/loop/)
    ])
    expect(check([added('x', { link: 'missing/../../etc' })])).toEqual([['x', expect.stringMatching(/outside/)]])
  })

  it('resolves as the kernel: `..` after following a link', () => {
    const tree = new FinalTree(ws, [added('d/up', { link: '..' })], blobs)
    expect(tree.resolve('', 'd/up/src')).toEqual({ inside: true, real: 'src' })
    expect(tree.resolve('', 'd/up/..')).toEqual({ inside: false, why: 'outside the repository' })
  })
})

describe('case collisions with any path of the tree', () => {
  it('a new readme.md beside the unchanged README.md is held back, and a new Src/x.js beside src/', () => {
    expect(check([added('readme.md'), added('Src/x.js'), added('src/b.js')])).toEqual([
      ['readme.md', expect.stringMatching(/differs only in case from "README.md"/)],
      ['Src/x.js', expect.stringMatching(/differs only in case from "src"/)]
    ])
  })

  it('README.md deleted and readme.md added (a rename by case) passes', () => {
    expect(check([deleted('README.md'), added('readme.md')])).toEqual([])
  })
})

describe("the job's PATH", () => {
  it('a file landing in a workspace folder on PATH is held back (also through a link to it, or made by the patch)', () => {
    const venv = join(ws, '.venv/bin')
    expect(check([added('.venv/bin/git', { mode: '100755' }), added('src/c.js')], [venv, '/usr/bin'])).toEqual([
      ['.venv/bin/git', expect.stringMatching(/lands in "\.venv\/bin", a workspace folder on the job's PATH/)]
    ])
    expect(check([added('tools', { link: '.venv/bin' }), added('tools2/git')], [venv, join(ws, 'tools2')]).map(h => h[0])).toEqual([
      'tools2/git'
    ])
    // a link that makes a PATH folder point elsewhere, and a file through it
    expect(check([added('bin', { link: 'src' })], [join(ws, 'bin')]).map(h => h[0])).toEqual(['bin'])
  })

  it("jobPathDirs: this process's PATH and the lines of the GITHUB_PATH file, relative ones from the workspace", () => {
    const file = join(ws, '..', `tree-checks-path-${process.pid}`)
    writeFileSync(file, `${ws}/.venv/bin\n\nnode_modules/.bin\n`)
    try {
      expect(jobPathDirs({ PATH: '/usr/bin:/bin', GITHUB_PATH: file }, ws)).toEqual([
        '/usr/bin',
        '/bin',
        `${ws}/.venv/bin`,
        `${ws}/node_modules/.bin`
      ])
      expect(readFileSync(file, 'utf8')).toContain('.venv') // read, never changed
    } finally {
      rmSync(file)
    }
  })

  it('a PATH folder named through a link to the workspace counts as inside', () => {
    const alias = join(tmpdir(), `tree-checks-alias-${process.pid}`)
    symlinkSync(realpathSync(ws), alias)
    try {
      expect(check([added('.venv/bin/git')], [join(alias, '.venv/bin')]).map(h => h[0])).toEqual(['.venv/bin/git'])
    } finally {
      rmSync(alias)
    }
  })
})

describe('files the agent never got', () => {
  it('whatever the agent wrote in place of a withheld file (or deleted it) is held back', () => {
    const held = check([added('gha-creds-1.json'), deleted('other-creds.json')], [], new Set(['gha-creds-1.json', 'other-creds.json']))
    expect(held.map(h => h[0])).toEqual(['gha-creds-1.json', 'other-creds.json'])
    expect(held[0][1]).toMatch(/not given to the agent/)
  })
})

describe("the workspace's own links, through the patch's", () => {
  it('a link already there that stays inside alone (`e -> d/x/../src`) but leaves through a new `d/x -> ..` holds that new link back', () => {
    const w = mkdtempSync(join(tmpdir(), 'tree-checks-own-'))
    try {
      mkdirSync(join(w, 'd'))
      mkdirSync(join(w, 'src'))
      symlinkSync('d/x/../src', join(w, 'e')) // dangling now: d/x is missing, lexically d/src
      const held = treeChecks({ workspace: w, pathDirs: [] })([added('d/x', { link: '..' })], blobs)
      expect(held.map(h => [h.file.path, h.why])).toEqual([
        ['d/x', expect.stringMatching(/the workspace's link "e" would resolve outside/)]
      ])
    } finally {
      rmSync(w, { recursive: true, force: true })
    }
  })
})
