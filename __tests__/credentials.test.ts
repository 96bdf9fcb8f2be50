// Git credentials at any depth (issue 8, points 4 and 6), on real git
// repositories and real files: found in nested checkouts, submodules and
// checkout v6's credential files, and taught to the redactor, changing nothing.
// (sandbox: none no longer hides them: a command could get around it.)
import { afterAll, describe, expect, test } from '@jest/globals'
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { collectCredentials, findGitConfigs } from '../src/sandbox/credentials'
import { parseConfig } from '../src/sandbox/gitconfig'
import { Redactor } from '../src/report/redact'

const hasGit = spawnSync('git', ['--version']).status === 0
const withGit = hasGit ? test : test.skip

const tmp = mkdtempSync(path.join(os.tmpdir(), 'credentials-test-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const alnum = (n: number) => Array.from(randomBytes(n), b => ALNUM[b % ALNUM.length]).join('')
const b64 = (s: string) => Buffer.from(s).toString('base64')

const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' }
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV }).toString()
}

interface Repo {
  dir: string
  config: string
}

/** Several git commands (each `-C dir …`) in one shell: a git run forks the whole jest worker. */
function gitBatch(commands: string[][]): void {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`
  execFileSync('sh', ['-c', commands.map(c => `git ${c.map(quote).join(' ')}`).join(' && ')], { env: GIT_ENV })
}

/** The commands that make a repository at `dir` (the folder is made here). */
function repoCommands(dir: string): string[][] {
  mkdirSync(dir, { recursive: true })
  return [
    ['-C', dir, 'init', '-q', '-b', 'main'],
    ['-C', dir, 'config', 'user.name', 'someone'],
    ['-C', dir, 'config', 'remote.origin.url', 'https://github.com/octo-org/octo-repo']
  ]
}

const repoAt = (dir: string): Repo => ({ dir, config: path.join(dir, '.git', 'config') })

function newRepo(dir: string): Repo {
  gitBatch(repoCommands(dir))
  return repoAt(dir)
}

/** A workspace with checkouts at the top, two and three folders deep, a submodule, checkout v6's include and other credential kinds. */
function workspaceWithCheckouts() {
  const root = mkdtempSync(path.join(tmp, 'w-'))
  const workspace = path.join(root, 'workspace')
  const runnerTemp = path.join(root, '_temp')
  mkdirSync(runnerTemp)
  const jobToken = `ghs_${alnum(36)}`
  const pat = `github_pat_${alnum(22)}_${alnum(59)}`
  const opaque = `Op4q-${alnum(10)}/x+y=z.${alnum(6)}` // no token shape: only what we learn from the file can redact it
  const urlPassword = `pw${alnum(20)}`
  const helperToken = alnum(40)
  const top = repoAt(workspace)
  const deps = repoAt(path.join(workspace, 'deps', 'lib'))
  const deep = repoAt(path.join(workspace, 'a', 'b', 'c'))
  const credentials = path.join(runnerTemp, `git-credentials-${randomUUID()}.config`)
  writeFileSync(credentials, `[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${b64(`x-access-token:${jobToken}`)}\n`)
  gitBatch([
    ...repoCommands(workspace),
    ['-C', workspace, 'config', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${b64(`x-access-token:${jobToken}`)}`],
    ['-C', workspace, 'config', `includeIf.gitdir:${workspace}/.git.path`, credentials],
    ['-C', workspace, 'config', 'includeIf.gitdir:/github/workspace/.git.path', `/github/runner_temp/${path.basename(credentials)}`],
    ...repoCommands(deps.dir),
    ['-C', deps.dir, 'config', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${b64(`x-access-token:${pat}`)}`],
    ...repoCommands(deep.dir),
    ['-C', deep.dir, 'config', 'http.https://git.example.com/.extraheader', `AUTHORIZATION: bearer ${opaque}`],
    ['-C', deep.dir, 'config', 'remote.mirror.url', `https://deploy:${urlPassword}@git.example.com/o/r.git`],
    ['-C', deep.dir, 'config', `url.https://${helperToken}@github.com/.insteadOf`, 'https://github.com/'],
    ['-C', deep.dir, 'config', 'credential.helper', `!f() { echo username=x; echo password=${helperToken}; }; f`]
  ])
  // a submodule: a gitfile pointing into the parent's .git/modules
  const modDir = path.join(workspace, '.git', 'modules', 'vendor', 'tool')
  mkdirSync(modDir, { recursive: true })
  writeFileSync(
    path.join(modDir, 'config'),
    `[core]\n\tbare = false\n\tworktree = ../../../../vendor/tool\n[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${b64(`x-access-token:${pat}`)}\n`
  )
  mkdirSync(path.join(workspace, 'vendor', 'tool'), { recursive: true })
  writeFileSync(path.join(workspace, 'vendor', 'tool', '.git'), 'gitdir: ../../.git/modules/vendor/tool\n')
  const files = [top.config, credentials, deps.config, deep.config, path.join(modDir, 'config')]
  const bytes = new Map(files.map(f => [f, readFileSync(f)]))
  const stats = new Map(files.map(f => [f, lstatSync(f)]))
  return {
    root,
    workspace,
    runnerTemp,
    top,
    deps,
    deep,
    credentials,
    files,
    bytes,
    stats,
    secrets: { jobToken, pat, opaque, urlPassword, helperToken }
  }
}

function expectUnchanged(w: ReturnType<typeof workspaceWithCheckouts>): void {
  for (const f of w.files) {
    expect({ f, same: readFileSync(f).equals(w.bytes.get(f) as Buffer) }).toEqual({ f, same: true })
    const before = w.stats.get(f) as import('node:fs').Stats
    const after = lstatSync(f)
    expect({ f, uid: after.uid, gid: after.gid, mode: after.mode }).toEqual({ f, uid: before.uid, gid: before.gid, mode: before.mode })
  }
}

describe('finding repositories', () => {
  test('at any depth, gitfiles, submodules and bare repositories included; symlinks are not followed', async () => {
    const w = workspaceWithCheckouts()
    const outside = newRepo(path.join(w.root, 'outside'))
    symlinkSync(outside.dir, path.join(w.workspace, 'link-to-outside'))
    const bare = path.join(w.workspace, 'mirrors', 'lib.git')
    mkdirSync(bare, { recursive: true })
    if (hasGit) git(bare, 'init', '-q', '--bare')
    else
      for (const [n, c] of [
        ['HEAD', 'ref: refs/heads/main\n'],
        ['config', '[core]\n\tbare = true\n']
      ])
        writeFileSync(path.join(bare, n), c)
    mkdirSync(path.join(bare, 'objects'), { recursive: true })
    const found = (await findGitConfigs(w.workspace)).files
    expect(found).toContain(path.join(bare, 'config'))
    for (const f of [w.top.config, w.deps.config, w.deep.config, path.join(w.workspace, '.git', 'modules', 'vendor', 'tool', 'config')])
      expect(found).toContain(f)
    expect(found).not.toContain(outside.config)
  })

  test('the walk is bounded and says so', async () => {
    const w = workspaceWithCheckouts()
    const r = await findGitConfigs(w.workspace, { entries: 3, depth: 64 })
    expect(r.truncated).toBe(true)
    expect((await findGitConfigs(w.workspace, { entries: 100000, depth: 1 })).truncated).toBe(true)
  })
})

describe('collected for redaction (sandbox: user, whose copy holds none)', () => {
  withGit('collectCredentials teaches the redactor and changes nothing', async () => {
    const w = workspaceWithCheckouts()
    const redactor = new Redactor()
    expect(await collectCredentials(w.workspace, redactor)).toHaveLength(5)
    expectUnchanged(w)
    for (const s of Object.values(w.secrets)) expect(redactor.redact(s)).toBe('***')
  })

  withGit("the runner user's global config and credential store are taught too, and left as they are", async () => {
    const w = workspaceWithCheckouts()
    const home = path.join(w.root, 'home')
    mkdirSync(home)
    const token = `ghp_${alnum(36)}`
    const storePassword = `St0re${alnum(20)}`
    const gitconfig = path.join(home, '.gitconfig')
    writeFileSync(
      gitconfig,
      `[user]\n\tname = runner\n[url "https://x-access-token:${token}@github.com/"]\n\tinsteadOf = https://github.com/\n[credential]\n\thelper = store\n`
    )
    const store = path.join(home, '.git-credentials')
    writeFileSync(store, `https://octocat:${storePassword}@github.com\n`, { mode: 0o600 })
    const before = [readFileSync(gitconfig), readFileSync(store)]
    const redactor = new Redactor()
    await collectCredentials(w.workspace, redactor, undefined, { home })
    for (const secret of [token, storePassword]) expect(redactor.redact(`(${secret})`)).toBe('(***)')
    expect(readFileSync(gitconfig).equals(before[0])).toBe(true)
    expect(readFileSync(store).equals(before[1])).toBe(true)
  })
})

describe('the config reader agrees with git', () => {
  const configs: Record<string, string> = {
    'key on the header line': '[core] bare = false\n[http "https://x/"] extraheader = AUTHORIZATION: basic abc\n',
    'quotes, comments and escapes': '[a]\n\tk = "x # not a comment" ; a comment\n\tq = "tab\\there" \\"quoted\\"\n\tb\n\tc =\n',
    'continued lines': '[a]\n\tlong = first \\\n second \\\n\tthird\n\tafter = 1\n',
    'old-style and escaped subsections':
      '[Foo.Bar]\n\tBaz = 1\n[x "A\\"b\\\\c"]\n\ty = 2\n[url "https://tok@github.com/"]\n\tinsteadOf = https://github.com/\n',
    'CRLF and a byte order mark': '\ufeff[core]\r\n\tbare = false\r\n[user]\r\n\tname = "a b"\r\n',
    'spaces everywhere': '  [section   "sub sec"]  \n   key   =   value with   spaces   \n\t\tKeY-2=v2\n',
    'include sections': '[include]\n\tpath = /x/y.config\n[includeIf "gitdir:/w/.git"]\n\tpath = ../z.config\n'
  }
  for (const [name, text] of Object.entries(configs)) {
    withGit(name, () => {
      const file = path.join(tmp, `cfg-${randomUUID()}`)
      writeFileSync(file, text)
      const fromGit = git(tmp, 'config', '--file', file, '-z', '--list')
        .split('\0')
        .filter(Boolean)
        .map(rec => {
          const nl = rec.indexOf('\n')
          return nl < 0 ? [rec, null] : [rec.slice(0, nl), rec.slice(nl + 1)]
        })
      const ours = parseConfig(readFileSync(file)).entries.map(e => [e.key, e.value === undefined ? null : e.value])
      expect(ours).toEqual(fromGit)
    })
  }
})
