// The agent's work handed back, end to end through dist/: the patch in the
// report, the workspace, the patch file and the outputs, and the commit made by
// the action through the Git database of the fake GitHub (a real bare
// repository standing for the repository on GitHub). Every committed tree is
// checked entry by entry against the agent's copy (with `sandbox: none` the
// workspace is the copy). What the agent's work becomes runs in both sandbox
// modes; where GitHub takes the commit runs once.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bash, startFakeAnthropic, text, type Reply } from './helpers/fake-anthropic'
import { startFakeGitHub, type FakeComment, type FakeGitHub } from './helpers/fake-github'
import { createFakeGitDb, type FakeGitDb, type FakePull } from './helpers/fake-git-db'
import { cleanupRuns, runAction, type ActionRun } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { openFence } from '../src/report/render'
import { commitAll, copyTree, gitEnv } from './helpers/git'

const API_KEY = 'sk-ant-api03-handbackTestKey000000000000000000'
const REPO = 'Codertocat/Hello-World'
const ISSUE = 7
const dirs: string[] = []

afterAll(() => {
  cleanupRuns()
})

const GIT_ENV = gitEnv('Octo Cat', 'octocat@example.com')
const git = (cwd: string, args: string[], input?: Buffer): Buffer =>
  execFileSync('git', args, { cwd, env: GIT_ENV, input, maxBuffer: 1 << 30 })
const gitText = (cwd: string, args: string[]) => git(cwd, args).toString('utf8').trim()

/** Bytes that are not UTF-8, with NULs and every byte value. */
const BINARY = Buffer.from(Array.from({ length: 600 }, (_, i) => (i * 37 + 11) % 256))
const NEW_BINARY = Buffer.from(Array.from({ length: 900 }, (_, i) => (i * 91 + 200) % 256))

/** A checkout like actions/checkout leaves: branch main (and feature), one commit with a few kinds of files. */
function makeWorkspace(): { dir: string; base: string } {
  const dir = mkdtempSync(join(tmpdir(), 'handback-ws-'))
  dirs.push(dir)
  template ??= makeTemplate()
  copyTree(template.dir, dir)
  return { dir, base: template.base }
}

/** Made once, copied for each case (see copyTree). */
let template: { dir: string; base: string } | undefined

function makeTemplate(): { dir: string; base: string } {
  const dir = mkdtempSync(join(tmpdir(), 'handback-template-'))
  dirs.push(dir)
  mkdirSync(join(dir, 'src'))
  writeFileSync(join(dir, 'README.md'), '# Hello-World\n')
  writeFileSync(join(dir, 'src', 'add.js'), 'export function add(a, b) {\n  return a - b\n}\n')
  writeFileSync(join(dir, 'old-name.txt'), 'a file that will be renamed\nwith a few lines\nof text\n')
  writeFileSync(join(dir, 'remove-me.txt'), 'going away\n')
  writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\necho hi\n')
  writeFileSync(join(dir, 'logo.bin'), BINARY)
  return { dir, base: commitAll(dir, GIT_ENV, 'git branch feature && ') }
}

interface Handback {
  run: ActionRun
  gh: FakeGitHub
  db: FakeGitDb
  base: string
  ws: string
  comment: string
}

async function handback(s: {
  script: Reply[]
  changes?: string
  onPullRequest?: boolean
  pulls?: (base: string) => FakePull[]
  setup?: (db: FakeGitDb, gh: FakeGitHub, base: string) => Promise<void> | void
  env?: Record<string, string>
  inputs?: Record<string, string>
}): Promise<Handback> {
  const { dir: ws, base } = makeWorkspace()
  const db = await createFakeGitDb(ws, { repo: REPO, pulls: s.pulls?.(base) })
  dirs.push(db.dir) // the checks read it after the run; removed with the workspaces
  const fake = await startFakeAnthropic([...s.script, text('Done: the work is in the working copy.')], { apiKey: API_KEY })
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' }, routes: db.routes })
  try {
    await s.setup?.(db, gh, base)
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent fix the add function', issueNumber: ISSUE, onPullRequest: s.onPullRequest }),
      inputs: {
        'anthropic-api-key': API_KEY,
        'anthropic-base-url': fake.url,
        sandbox: mode,
        changes: s.changes ?? 'apply',
        ...s.inputs
      },
      env: { GITHUB_API_URL: gh.url, ...s.env },
      workspace: ws,
      timeoutMs: 90_000
    })
    const comments = [...gh.comments.values()] as FakeComment[]
    if (process.env.SHOW_COMMENT) console.log(comments[0]?.body)
    expect(comments).toHaveLength(1)
    return { run, gh, db, base, ws, comment: comments[0].body }
  } finally {
    await Promise.all([fake.close(), gh.close()])
  }
}

/** The mode and bytes of a path in the workspace as git would record them; undefined when it is gone. */
function onDisk(ws: string, path: string): { mode: string; bytes: Buffer } | undefined {
  const full = join(ws, path)
  let st
  try {
    st = lstatSync(full)
  } catch {
    return undefined
  }
  if (st.isSymbolicLink()) return { mode: '120000', bytes: Buffer.from(readlinkSync(full)) }
  return { mode: st.mode & 0o100 ? '100755' : '100644', bytes: readFileSync(full) }
}

/**
 * The commit's tree differs from the base by exactly `expected` (path -> status
 * letter), and every entry that differs matches the copy: same mode, same bytes;
 * a deleted path is gone from it.
 */
function expectTreeMatchesCopy(db: FakeGitDb, base: string, commit: string, ws: string, expected: Record<string, string>): void {
  const env = { ...GIT_ENV, GIT_DIR: db.dir }
  const raw = execFileSync('git', ['diff', '--raw', '-z', '--no-abbrev', '--no-renames', base, commit], { env })
    .toString('utf8')
    .split('\0')
  const entries: Array<{ path: string; mode: string; sha: string; status: string }> = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const [, mode, , sha, status] = raw[i].slice(1).split(' ')
    entries.push({ path: raw[i + 1], mode, sha, status })
  }
  // the committed bytes of every entry in one `cat-file --batch` (each git run forks the jest worker)
  const kept = entries.filter(e => e.status !== 'D')
  const out = execFileSync('git', ['cat-file', '--batch'], { env, input: kept.map(e => `${e.sha}\n`).join(''), maxBuffer: 1 << 30 })
  const blobs = new Map<string, Buffer>()
  for (let at = 0; at < out.length;) {
    const nl = out.indexOf(0x0a, at)
    const [sha, , size] = out.subarray(at, nl).toString('utf8').split(' ')
    blobs.set(sha, out.subarray(nl + 1, nl + 1 + Number(size)))
    at = nl + 1 + Number(size) + 1
  }
  const seen: Record<string, string> = {}
  for (const { path, mode, sha, status } of entries) {
    seen[path] = status
    const disk = onDisk(ws, path)
    if (status === 'D') {
      expect({ path, disk }).toEqual({ path, disk: undefined })
      continue
    }
    expect({ path, mode }).toEqual({ path, mode: disk?.mode })
    expect({ path, equal: blobs.get(sha)?.equals(disk?.bytes ?? Buffer.alloc(0)) }).toEqual({ path, equal: true })
  }
  expect(seen).toEqual(expected)
}

/** The patch output applies with `git apply` to a fresh checkout of the base and gives the copy's files. */
function expectPatchApplies(patchFile: string, base: string, ws: string, paths: string[]): void {
  const fresh = mkdtempSync(join(tmpdir(), 'handback-apply-'))
  dirs.push(fresh)
  // one shell: each git run forks the jest worker
  execFileSync(
    'sh',
    ['-c', 'git init -q && git fetch -q "$1" "$2" && git checkout -q "$2" && git apply --binary "$3"', 'sh', ws, base, patchFile],
    {
      cwd: fresh,
      env: GIT_ENV
    }
  )
  for (const p of paths) expect({ p, file: fingerprint(onDisk(fresh, p)) }).toEqual({ p, file: fingerprint(onDisk(ws, p)) })
}

/** Mode, size and SHA-256 of a file: jest compares a megabyte Buffer byte by byte, taking a minute for big.txt. */
function fingerprint(file: { mode: string; bytes: Buffer } | undefined): { mode: string; size: number; sha256: string } | undefined {
  return file && { mode: file.mode, size: file.bytes.length, sha256: createHash('sha256').update(file.bytes).digest('hex') }
}

const FIX = "sed -i 's/return a - b/return a + b/' src/add.js"

/** Half of a 25 MiB change: one file, under the 20 MiB limit for one file. */
const HALF_25_MIB = 12.5 * 1024 * 1024
/** Text the agent generates with `yes '<n> LINE' | head -c <size>`, compared by hash. */
const LINE = 'a line of a large generated file, 0123456789\n'
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')
const linesSha = (n: string, size: number) => sha256(Buffer.from(`${n} ${LINE}`.repeat(Math.ceil(size / LINE.length))).subarray(0, size))

/** Both ways the agent works: in its copy (user) and in the workspace itself (none). */
let mode = 'user'

describe.each(['user', 'none'])("hand-back (sandbox: %s): the agent's changes come back as a checked patch", m => {
  beforeAll(() => {
    mode = m
  })

  it('changes: none leaves the workspace exactly as it was', async () => {
    const r = await handback({ script: [bash(FIX, 'echo new > added.txt')], changes: 'none' })
    expect(r.run.code).toBe(0)
    expect(r.comment).toContain('src/add.js')
    if (mode === 'user') {
      expect(readFileSync(join(r.ws, 'src/add.js'), 'utf8')).toContain('return a - b')
      expect(gitText(r.ws, ['status', '--porcelain'])).toBe('')
    }
    expect(r.db.created.commits).toEqual([])
  }, 120_000)

  it('symlinks leaving the repository, case collisions, .gitmodules (held back); bidi and control characters, names and contents that would break the comment (inert); .gitattributes encoding (bytes kept); .github/actions (committed, flagged)', async () => {
    const r = await handback({
      changes: 'pull-request',
      script: [
        bash(
          FIX,
          'ln -s /etc/shadow abs-link && ln -s ../../outside esc-link && ln -s src/add.js ok-link',
          'echo one > Docs.txt && echo two > docs.txt',
          "printf 'x\\n' > \"$(printf 'report\\u202efdp.exe')\"",
          "printf 'a\\033[31mred\\bX\\fY\\aZ \\u2066hidden\\u2069\\n' > ctl.txt",
          "printf 'enc.txt working-tree-encoding=UTF-16LE text\\n' > .gitattributes && printf 'h\\000i\\000\\n\\000' > enc.txt",
          'mkdir -p .github/actions/x && echo "runs: {using: composite, steps: []}" > .github/actions/x/action.yml',
          'printf \'[submodule "x"]\\n\\tpath = x\\n\\turl = https://example.invalid/x\\n\' > .gitmodules',
          "touch $'x\\n```\\n<details><summary>\\n### Changes\\n@octocat.txt'",
          `printf '\`\`\`\`\`\`\\n</details>\\n@octocat see ![x](https://evil.example/p.png)\\n' > notes.md`
        )
      ]
    })
    expect(r.run.code).toBe(0)
    for (const held of ['abs-link', 'esc-link', 'Docs.txt', 'docs.txt', '.gitmodules']) {
      expect(r.comment).toContain(held)
      expect(existsSync(join(r.ws, held)) && mode === 'user').toBe(false)
    }
    expect(r.comment).toMatch(/abs-link[^\n]*absolute path/)
    expect(r.comment).toMatch(/esc-link[^\n]*leaves the repository/)
    expect(r.comment).toMatch(/differs only in case/)
    expect(r.comment).toMatch(/\.gitmodules[^\n]*configures submodules/)
    // eslint-disable-next-line no-control-regex -- the characters that must not come through
    expect(r.comment).not.toMatch(/[\u202e\u2066\u2069\u001b\u0008\u000c\u0007]/)
    expect(r.comment).toContain('changes CI or review configuration')
    // names and contents the agent chose cannot break the comment, fake its sections or ping anyone
    expect(openFence(r.comment)).toBeUndefined()
    expect(r.comment.match(/^### Changes$/gm)).toHaveLength(1)
    expect(r.comment).toContain('<summary>Commands (10)</summary>')
    expect(r.comment).not.toMatch(/(?<![A-Za-z0-9])@octocat/)
    expect(r.comment).toContain('A "x\\n```\\n<details><summary>\\n### Changes\\n@octocat.txt"  +0 −0') // one quoted line, inside the fence
    const sha = r.run.outputs['commit-sha']
    const tree = execFileSync('git', ['ls-tree', '-r', '--name-only', sha], { env: { ...GIT_ENV, GIT_DIR: r.db.dir } }).toString()
    expect(tree).toContain('.github/actions/x/action.yml')
    expect(tree).toContain('ok-link')
    expect(tree).not.toMatch(/abs-link|esc-link|Docs\.txt|docs\.txt|\.gitmodules/)
    const enc = execFileSync('git', ['cat-file', 'blob', `${sha}:enc.txt`], { env: { ...GIT_ENV, GIT_DIR: r.db.dir } })
    expect(enc.equals(Buffer.from('h\0i\0\n\0', 'latin1'))).toBe(true)
    expect(r.db.created.pulls[0]?.body ?? '').toContain('Changes CI or review configuration')
  }, 120_000)

  it('a 21 MiB file and a nested repository beside a one-line fix: only the fix comes back, both others named as held back', async () => {
    const r = await handback({
      script: [bash(FIX, 'head -c 22020096 /dev/zero | tr "\\0" a > big.bin', 'mkdir nested && git -C nested init -q && echo x > nested/f')]
    })
    expect(r.run.code).toBe(0)
    expect(readFileSync(join(r.ws, 'src/add.js'), 'utf8')).toContain('return a + b')
    expect(existsSync(join(r.ws, 'big.bin'))).toBe(false)
    if (mode === 'user') expect(existsSync(join(r.ws, 'nested'))).toBe(false)
    const patch = readFileSync(r.run.outputs.patch, 'utf8')
    expect(patch).toContain('src/add.js')
    expect(patch).not.toMatch(/big\.bin|nested/)
    expect(r.comment).toMatch(/big\.bin[^\n]*larger than 20 MiB/)
    expect(r.comment).toMatch(/nested[^\n]*nested git repository/)
    expect(r.run.outputs['changed-files']).toBe('1')
  }, 120_000)

  it('a fix to one file: diff in the comment, file changed in the workspace, a branch whose tree differs by that file, a draft PR closing the issue', async () => {
    const r = await handback({ script: [bash(FIX)], changes: 'pull-request' })
    expect(r.run.code).toBe(0)
    expect(readFileSync(join(r.ws, 'src/add.js'), 'utf8')).toContain('return a + b')
    // the report
    expect(r.comment).toContain('### Changes')
    expect(r.comment).toContain('1 file changed, +1 −1.')
    expect(r.comment).toContain('-  return a - b')
    expect(r.comment).toContain('+  return a + b')
    expect(r.comment).toContain('<details><summary>Diff</summary>')
    // the commit, made by the action on the base
    const branch = `agent/issue-${ISSUE}-1234`
    expect(r.run.outputs.branch).toBe(branch)
    const sha = r.run.outputs['commit-sha']
    expect(await r.db.branch(branch)).toBe(sha)
    expect(r.db.created.commits).toHaveLength(1)
    expect(r.db.created.commits[0].parents).toEqual([r.base])
    expectTreeMatchesCopy(r.db, r.base, sha, r.ws, { 'src/add.js': 'M' })
    expect(r.comment).toContain(`[\`${branch}\`](https://github.com/${REPO}/tree/agent/issue-${ISSUE}-1234)`)
    expect(r.comment).toContain(`(https://github.com/${REPO}/compare/${r.base}...agent/issue-${ISSUE}-1234)`)
    // the draft pull request
    expect(r.db.created.pulls).toEqual([
      expect.objectContaining({ head: branch, base: 'main', draft: true, title: 'fix the add function' })
    ])
    expect(r.db.created.pulls[0].body).toContain(`Closes #${ISSUE}`)
    expect(r.db.created.pulls[0].body).toContain(`https://github.com/${REPO}/actions/runs/1234`)
    expect(r.run.outputs['pull-request-url']).toBe(`https://github.com/${REPO}/pull/101`)
    expect(r.comment).toContain(`Draft pull request: [#101](https://github.com/${REPO}/pull/101)`)
    // the outputs and the patch file
    expect(r.run.outputs['changed-files']).toBe('1')
    expect(r.run.outputs.patch.startsWith(r.run.runnerTemp)).toBe(true)
    expectPatchApplies(r.run.outputs.patch, r.base, r.ws, ['src/add.js'])
    // the summary holds it too
    expect(r.run.summary).toContain('+  return a + b')
  }, 120_000)

  it('adds, deletes, a rename, chmod +x, a symlink, a binary file, an agent commit plus uncommitted edits: all folded into one commit that matches the copy', async () => {
    const newBinary = NEW_BINARY.toString('base64')
    const r = await handback({
      changes: 'branch',
      script: [
        bash(
          // an agent commit...
          `${FIX} && git -c user.name=agent -c user.email=agent@example.com -c commit.gpgsign=false commit -qam 'fix add'`,
          // ...and edits after it
          'mkdir -p docs && printf "new doc\\n" > docs/new.md',
          'git rm -q remove-me.txt || rm remove-me.txt',
          'mv old-name.txt new-name.txt',
          'chmod +x run.sh',
          'ln -s src/add.js link-to-add',
          `echo ${newBinary} | base64 -d > logo.bin`,
          `echo ${newBinary} | base64 -d > added.bin`,
          // a text file in Latin-1 (no NUL: git diffs it as text, its bytes as they are)
          "printf 'caf\\351 cr\\350me\\n' > latin1.txt"
        )
      ]
    })
    expect(r.run.code).toBe(0)
    const sha = r.run.outputs['commit-sha']
    expect(sha).toMatch(/^[0-9a-f]{40}$/)
    expectTreeMatchesCopy(r.db, r.base, sha, r.ws, {
      'src/add.js': 'M',
      'docs/new.md': 'A',
      'remove-me.txt': 'D',
      'old-name.txt': 'D',
      'new-name.txt': 'A',
      'run.sh': 'M',
      'link-to-add': 'A',
      'logo.bin': 'M',
      'added.bin': 'A',
      'latin1.txt': 'A'
    })
    // binary bytes equal after the round trip through base64 blobs
    const added = execFileSync('git', ['cat-file', 'blob', `${sha}:added.bin`], { env: { ...GIT_ENV, GIT_DIR: r.db.dir } })
    expect(added.equals(NEW_BINARY)).toBe(true)
    expect(r.db.created.blobs.length).toBeGreaterThanOrEqual(1)
    // the report: stat lines for each kind
    expect(r.comment).toContain('R old-name.txt → new-name.txt')
    expect(r.comment).toContain('mode 100644 → 100755')
    expect(r.comment).toContain('A link-to-add')
    expect(r.comment).toContain('mode 120000')
    expect(r.comment).toContain('M logo.bin  binary')
    expect(r.run.outputs['changed-files']).toBe('9')
    expect(r.run.outputs['pull-request-url']).toBe('')
    expect(r.db.created.pulls).toEqual([])
    expectPatchApplies(r.run.outputs.patch, r.base, r.ws, [
      'src/add.js',
      'docs/new.md',
      'remove-me.txt',
      'old-name.txt',
      'new-name.txt',
      'run.sh',
      'link-to-add',
      'logo.bin',
      'added.bin',
      'latin1.txt'
    ])
    // the patch output holds the agent's bytes, not a re-encoding of them
    expect(readFileSync(r.run.outputs.patch).includes(Buffer.from('+caf\xe9 cr\xe8me\n', 'latin1'))).toBe(true)
  }, 120_000)

  it('no change at all: no branch, no commit, "No changes" in the report, changed-files 0', async () => {
    const r = await handback({ script: [bash('cat README.md')], changes: 'pull-request' })
    expect(r.run.code).toBe(0)
    expect(r.comment).toContain('No changes: the agent left the files as they were.')
    expect(r.db.created.commits).toEqual([])
    expect(r.gh.requests.filter(q => q.method !== 'GET' && /\/git\/|\/pulls$/.test(q.path))).toEqual([])
    expect(r.run.outputs).toMatchObject({ 'changed-files': '0', patch: '', branch: '', 'commit-sha': '', 'pull-request-url': '' })
  }, 120_000)

  // One run, three scenarios (the suite is slow: each run costs seconds): stopped at a limit, a workflow file, a secret.
  it('a run stopped at a limit still hands its work back; a workflow file is shown and applied, never committed; a file holding the API key (as is, or base64) is held back everywhere', async () => {
    const b64 = Buffer.from(`key=${API_KEY}\n`).toString('base64')
    const r = await handback({
      changes: 'branch',
      inputs: { 'max-turns': '2' },
      script: [
        bash(
          FIX,
          'mkdir -p .github/workflows && printf "on: push\\njobs: {}\\n" > .github/workflows/evil.yml',
          `echo ${b64} | base64 -d > leak.txt`,
          `echo ${b64} > leak64.txt`
        ),
        bash('echo never run')
      ]
    })
    expect(r.run.code).toBe(0)
    // stopped at the turn limit, its work handed back all the same
    expect(r.run.outputs['exit-reason']).toBe('max_turns')
    expect(r.comment).toContain('Stopped at the turn limit')
    expect(r.comment).toContain('+  return a + b')
    // the workflow file: applied and shown, never committed
    expect(existsSync(join(r.ws, '.github/workflows/evil.yml'))).toBe(true)
    expect(r.comment).toContain('A .github/workflows/evil.yml  +2 −0, workflow: not committed')
    expect(r.comment).toContain('1 change under .github/workflows/ was applied but not committed')
    const patch = readFileSync(r.run.outputs.patch, 'utf8')
    expect(patch).toContain('.github/workflows/evil.yml')
    // the secret: held back from the report, the patch, the workspace and the commit
    expect(r.comment).toContain('Held back')
    expect(r.comment).toMatch(/leak\.txt: it holds a secret/)
    expect(r.comment).toMatch(/leak64\.txt: it holds a secret/)
    expect(patch).not.toContain('leak')
    expect(patch).not.toContain(API_KEY)
    expect(patch).not.toContain(b64.slice(4, 30))
    expect(existsSync(join(r.ws, 'leak.txt'))).toBe(false)
    expect(existsSync(join(r.ws, 'leak64.txt'))).toBe(false)
    expectTreeMatchesCopy(r.db, r.base, r.run.outputs['commit-sha'], r.ws, { 'src/add.js': 'M' })
    const log = r.run.stdout.replace(/^::add-mask::.*$/gm, '') // the mask itself is how the runner learns the secret
    for (const body of [r.comment, r.run.summary, log, JSON.stringify(r.run.outputs)]) expect(body).not.toContain(API_KEY)
    expect(r.run.outputs['changed-files']).toBe('2')
  }, 120_000)

  it('5,100 new files and a 25 MiB change: the 5,001st file onwards held back, named and absent; the rest and the 25 MiB whole; the comment within 65,536 characters', async () => {
    const r = await handback({
      script: [
        bash(
          `mkdir -p big many && ${['a', 'b'].map(n => `yes '${n} ${LINE.trim()}' | head -c ${HALF_25_MIB} > big/${n}.txt`).join(' && ')}`,
          // with the two big files, 5,100 new files; in path order big/ comes first, so many/f4999.txt is the 5,001st
          'for i in $(seq -w 1 5098); do echo "file $i" > many/f$i.txt; done'
        )
      ]
    })
    expect(r.run.code).toBe(0)
    expect([...r.comment].length).toBeLessThanOrEqual(65536)
    expect(r.comment).toContain('5,000 files changed')
    expect(r.run.outputs['changed-files']).toBe('5000')
    expect(r.comment).toContain('many/f4999.txt: over the limit of 5000 changed files')
    for (const i of ['4999', '5050', '5098']) {
      expect(r.run.summary).toContain(`many/f${i}.txt: over the limit of 5000 changed files`)
      expect(existsSync(join(r.ws, `many/f${i}.txt`))).toBe(false)
    }
    for (const i of ['0001', '4998']) {
      expect(readFileSync(join(r.ws, `many/f${i}.txt`), 'utf8')).toBe(`file ${i}\n`)
      expect(r.run.summary).toContain(`A many/f${i}.txt`)
    }
    for (const n of ['a', 'b'])
      expect({ n, sha: sha256(readFileSync(join(r.ws, `big/${n}.txt`))) }).toEqual({ n, sha: linesSha(n, HALF_25_MIB) })
    const patch = readFileSync(r.run.outputs.patch, 'utf8')
    expect(patch.length).toBeGreaterThan(2 * HALF_25_MIB)
    expect(patch.match(/^diff --git /gm)).toHaveLength(5000)
    expect(patch).not.toContain('many/f4999.txt')
    // the patch is made by the same code from the copy or the workspace: applied once, the costly check
    if (mode === 'user')
      expectPatchApplies(r.run.outputs.patch, r.base, r.ws, ['big/a.txt', 'big/b.txt', 'many/f0001.txt', 'many/f4998.txt'])
    expect(Buffer.byteLength(r.run.summary)).toBeLessThanOrEqual(1024 * 1024)
  }, 240_000)

  it('an agent-planted .gitattributes filter, textconv, fsmonitor and hooks run nothing, and the files keep their bytes', async () => {
    const mark = join(mkdtempSync(join(tmpdir(), 'handback-mark-')), 'pwned')
    const planted = [
      `printf '* filter=evil diff=evil ident text eol=crlf\\n' > .gitattributes`,
      `git config filter.evil.clean 'touch ${mark}.clean; cat' && git config filter.evil.smudge 'touch ${mark}.smudge; cat' && git config filter.evil.required true`,
      `git config diff.evil.textconv 'touch ${mark}.textconv; cat' && git config diff.external 'touch ${mark}.external'`,
      `git config core.fsmonitor 'touch ${mark}.fsmonitor'`,
      `for h in pre-commit post-checkout post-index-change reference-transaction; do printf '#!/bin/sh\\ntouch ${mark}.hook\\n' > .git/hooks/$h; chmod +x .git/hooks/$h; done`,
      `printf 'line one\\n$Id$\\n' > kept.txt`
    ]
    const r = await handback({ changes: 'branch', script: [bash(FIX, ...planted)] })
    expect(r.run.code).toBe(0)
    for (const suffix of ['clean', 'smudge', 'textconv', 'external', 'fsmonitor', 'hook'])
      expect(existsSync(`${mark}.${suffix}`)).toBe(false)
    expectTreeMatchesCopy(r.db, r.base, r.run.outputs['commit-sha'], r.ws, { 'src/add.js': 'M', '.gitattributes': 'A', 'kept.txt': 'A' })
    // nothing under .git/ ever leaves
    expect(readFileSync(r.run.outputs.patch, 'utf8')).not.toMatch(/\.git\/(hooks|config)/)
  }, 120_000)
})

// Where the commit goes and what the report says of it depend on GitHub's answers, not on where the
// agent worked: the commit is made from the same checked patch in both modes, so these run once,
// in the mode that costs least.
describe('hand-back to GitHub (sandbox: none): where the commit goes, and when it cannot be made', () => {
  beforeAll(() => {
    mode = 'none'
  })

  it('a pull request from a fork: no commit, the report says why and holds the diff', async () => {
    const r = await handback({
      changes: 'branch',
      onPullRequest: true,
      pulls: base => [{ number: ISSUE, head: { ref: 'patch-1', sha: base, repo: 'someone/Hello-World' }, base: { ref: 'main' } }],
      script: [bash(FIX)]
    })
    expect(r.run.code).toBe(0)
    expect(r.db.created.commits).toEqual([])
    expect(r.comment).toContain("**Not committed**: the pull request's branch lives in the fork someone/Hello-World")
    expect(r.comment).toContain('+  return a + b')
    expect(r.run.outputs.branch).toBe('')
  }, 120_000)

  it('a pull request whose head is in this repository: the commit goes onto its head branch, without force', async () => {
    const r = await handback({
      changes: 'pull-request',
      onPullRequest: true,
      pulls: base => [{ number: ISSUE, head: { ref: 'feature', sha: base, repo: REPO }, base: { ref: 'main' } }],
      script: [bash(FIX)]
    })
    expect(r.run.code).toBe(0)
    const sha = r.run.outputs['commit-sha']
    expect(await r.db.branch('feature')).toBe(sha)
    expect(r.run.outputs.branch).toBe('feature')
    expectTreeMatchesCopy(r.db, r.base, sha, r.ws, { 'src/add.js': 'M' })
    const update = r.gh.requests.find(q => q.method === 'PATCH' && /git\/refs/.test(q.path))
    expect(update?.body.force).toBe(false)
    expect(r.db.created.pulls).toEqual([]) // the pull request exists already
    expect(r.run.outputs['pull-request-url']).toBe(`https://github.com/${REPO}/pull/${ISSUE}`)
  }, 120_000)

  it('a pull request head that moved on meanwhile: a new branch, and the report says so', async () => {
    const r = await handback({
      changes: 'pull-request',
      onPullRequest: true,
      pulls: base => [{ number: ISSUE, head: { ref: 'feature', sha: base, repo: REPO }, base: { ref: 'main' } }],
      // someone pushed to feature after the run started
      setup: async (db, _gh, base) => {
        const tree = (await db.git(['rev-parse', `${base}^{tree}`])).toString().trim()
        const moved = (await db.git(['commit-tree', tree, '-p', base, '-m', 'pushed meanwhile'])).toString().trim()
        await db.git(['update-ref', 'refs/heads/feature', moved])
      },
      script: [bash(FIX)]
    })
    expect(r.run.code).toBe(0)
    const branch = `agent/issue-${ISSUE}-1234`
    expect(r.run.outputs.branch).toBe(branch)
    expect(await r.db.branch('feature')).not.toBe(r.run.outputs['commit-sha'])
    expectTreeMatchesCopy(r.db, r.base, r.run.outputs['commit-sha'], r.ws, { 'src/add.js': 'M' })
    expect(r.comment).toContain(
      "The pull request's branch `feature` moved on while the changes were committed, so they went to a new branch"
    )
    // the draft pull request goes into the pull request's branch and shows just the agent's change
    expect(r.db.created.pulls).toEqual([expect.objectContaining({ head: branch, base: 'feature', draft: true })])
    expect(r.db.created.pulls[0].body).toContain(`For #${ISSUE}`)
  }, 120_000)

  it('a pull request head already ahead of the starting commit: compared, a new branch, and the report says so', async () => {
    const r = await handback({
      changes: 'branch',
      onPullRequest: true,
      pulls: base => [{ number: ISSUE, head: { ref: 'feature', sha: base, repo: REPO }, base: { ref: 'main' } }],
      setup: async (db, _gh, base) => {
        const tree = (await db.git(['rev-parse', `${base}^{tree}`])).toString().trim()
        const moved = (await db.git(['commit-tree', tree, '-p', base, '-m', 'pushed before the run looked'])).toString().trim()
        await db.git(['update-ref', 'refs/heads/feature', moved])
        const pull = db.pulls.get(ISSUE) as FakePull
        pull.head.sha = moved
      },
      script: [bash(FIX)]
    })
    expect(r.run.code).toBe(0)
    expect(r.run.outputs.branch).toBe(`agent/issue-${ISSUE}-1234`)
    expect(r.gh.requests.some(q => q.route === 'compareCommits' && q.status === 200)).toBe(true)
    expect(r.gh.requests.some(q => q.method === 'PATCH' && /git\/refs/.test(q.path))).toBe(false)
    expect(r.comment).toContain("The pull request's branch `feature` moved on since the run started, so the changes went to a new branch")
  }, 120_000)

  it('403 on ref creation: the report names the missing permission, the diff is still there, the step succeeds', async () => {
    const r = await handback({
      changes: 'pull-request',
      script: [bash(FIX)],
      setup: (_db, gh) =>
        gh.fail('POST', /\/git\/refs$/, 403, 1, { body: { message: 'Resource not accessible by integration', status: '403' } })
    })
    expect(r.run.code).toBe(0)
    expect(r.comment).toContain(
      '**Not committed**: the github-token may not write to the repository (HTTP 403): give the job `permissions: contents: write`'
    )
    expect(r.comment).toContain('+  return a + b')
    expect(r.run.outputs).toMatchObject({ branch: '', 'commit-sha': '', 'pull-request-url': '', 'changed-files': '1' })
    expect(r.db.created.pulls).toEqual([])
  }, 120_000)

  it('pull requests not allowed for Actions: the branch is made, the report says which setting is missing', async () => {
    const r = await handback({
      changes: 'pull-request',
      script: [bash(FIX)],
      setup: (_db, gh) =>
        gh.fail('POST', /\/pulls$/, 403, 1, {
          body: { message: 'GitHub Actions is not permitted to create or approve pull requests.', status: '403' }
        })
    })
    expect(r.run.code).toBe(0)
    expect(r.run.outputs.branch).toBe(`agent/issue-${ISSUE}-1234`)
    expect(r.comment).toContain('**No pull request**: the repository does not allow GitHub Actions to create pull requests')
  }, 120_000)
})

afterAll(() => {
  for (const d of dirs) execFileSync('rm', ['-rf', d])
})
