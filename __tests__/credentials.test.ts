// Git credentials at any depth (issue 8, points 4 and 6), on real git
// repositories and real files: found in nested checkouts, submodules and
// checkout v6's credential files; taken out so no command (real git, cat,
// base64, a hex dump) can read them in any encoding; taught to the redactor;
// put back byte for byte, also from the saved state alone (the main step
// killed) and with no git on PATH (nothing but this process touches them).
import { afterAll, describe, expect, test } from '@jest/globals'
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  appendFileSync,
  renameSync
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {
  collectCredentials,
  credentialsPending,
  findGitConfigs,
  hideCredentials,
  newCredentialState,
  removeCredentials,
  restoreFromState
} from '../src/sandbox/credentials'
import { parseConfig } from '../src/sandbox/gitconfig'
import { Redactor } from '../src/report/redact'

const hasGit = spawnSync('git', ['--version']).status === 0
const withGit = hasGit ? test : test.skip

const tmp = mkdtempSync(path.join(os.tmpdir(), 'credentials-test-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const alnum = (n: number) => Array.from(randomBytes(n), b => ALNUM[b % ALNUM.length]).join('')
const b64 = (s: string) => Buffer.from(s).toString('base64')
const hex = (s: string) => Buffer.from(s).toString('hex')

const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' }
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV }).toString()
}

/** Every form of a secret a command could print it in (and the action must show nowhere). */
function formsOf(secret: string): string[] {
  const out = new Set([
    secret,
    b64(secret),
    b64(`x-access-token:${secret}`),
    hex(secret),
    Buffer.from(secret).toString('base64url'),
    encodeURIComponent(secret)
  ])
  const bytes = Buffer.from(secret)
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64')
    out.add(enc.slice(k > 0 ? 4 : 0, (k + bytes.length) % 3 !== 0 ? enc.length - 4 : enc.length))
  }
  return [...out].filter(f => f.length >= 8)
}

/** Every file under `dir` (no symlinks followed) whose bytes hold any form of any secret, also as hex of the bytes. */
function filesHolding(dir: string, secrets: string[]): string[] {
  const found: string[] = []
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile()) {
        const bytes = readFileSync(p)
        const text = bytes.toString('latin1')
        const asHex = bytes.toString('hex')
        for (const s of secrets) {
          for (const f of formsOf(s)) if (text.includes(f) || asHex.includes(hex(f))) found.push(`${p}: ${f.slice(0, 10)}…`)
        }
      }
    }
  }
  walk(dir)
  return found
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

const logsOf = () => {
  const logs: string[] = []
  return { logs, log: (m: string) => logs.push(m) }
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

describe('hide and put back (sandbox: none)', () => {
  withGit(
    "checkouts two and three folders deep, a submodule and checkout v6's file: nothing readable by a command, in any encoding",
    async () => {
      const w = workspaceWithCheckouts()
      const redactor = new Redactor()
      const ref = newCredentialState(w.runnerTemp)
      const { logs, log } = logsOf()
      const hidden = await hideCredentials(w.workspace, redactor, ref, log)
      const all = Object.values(w.secrets)

      // the files themselves (workspace and RUNNER_TEMP, where the encrypted state sits too), plain, base64 or hex
      expect(filesHolding(w.root, all)).toEqual([])
      // what real commands print
      for (const repo of [w.top, w.deps, w.deep]) {
        const shown = [
          git(repo.dir, 'config', '--list', '--show-origin', '--includes'),
          execFileSync('/bin/sh', ['-c', 'cat .git/config | base64; od -An -tx1 .git/config; git remote -v'], {
            cwd: repo.dir,
            env: GIT_ENV
          }).toString()
        ].join('\n')
        for (const s of all) for (const f of formsOf(s)) expect(shown).not.toContain(f)
        expect(shown).not.toMatch(/extraheader|authorization|git-credentials/i)
      }
      // the rest of each config is untouched, and a URL keeps working without its password
      expect(git(w.deep.dir, 'config', 'remote.mirror.url').trim()).toBe('https://git.example.com/o/r.git')
      expect(git(w.deps.dir, 'config', 'user.name').trim()).toBe('someone')
      // every secret value is known to the redactor, in every form it knows (hex is not one yet), the one without a token shape too
      for (const s of all) for (const f of formsOf(s).filter(f => f !== hex(s))) expect(redactor.redact(`<${f}>`)).not.toContain(f)
      expect(logs.join('\n')).toContain(`${w.deps.config}: http.https://github.com/.extraheader`)
      expect(credentialsPending(ref)).toBe(true)

      expect(await hidden.restore()).toEqual([])
      expectUnchanged(w)
      expect(credentialsPending(ref)).toBe(false)
      expect(await hidden.restore()).toEqual([])
    }
  )

  withGit('put back with no git and an empty PATH: only this process touches the files', async () => {
    const w = workspaceWithCheckouts()
    const ref = newCredentialState(w.runnerTemp)
    const hidden = await hideCredentials(w.workspace, new Redactor(), ref)
    const saved = process.env.PATH
    process.env.PATH = ''
    try {
      expect(await hidden.restore()).toEqual([])
    } finally {
      process.env.PATH = saved
    }
    expectUnchanged(w)
  })

  withGit('the main step killed after hiding: the post step puts everything back from the state alone, once', async () => {
    const w = workspaceWithCheckouts()
    const ref = newCredentialState(w.runnerTemp)
    await hideCredentials(w.workspace, new Redactor(), ref) // never restored: the process "died"
    // a post step with nothing but the reference
    const { logs, log } = logsOf()
    const redactor = new Redactor()
    const problems = await restoreFromState(ref, log, redactor)
    expect(problems).toEqual([])
    expectUnchanged(w)
    expect(redactor.redact(w.secrets.opaque)).toBe('***')
    expect(logs.join('\n')).toMatch(/Git credentials put back in /)
    expect(await restoreFromState(ref, log)).toEqual([])
    expectUnchanged(w)
  })

  withGit('a kill between saving the state and changing every file: the files not yet changed stay as they were', async () => {
    const w = workspaceWithCheckouts()
    const ref = newCredentialState(w.runnerTemp)
    await hideCredentials(w.workspace, new Redactor(), ref)
    // as if the kill came before two of the files were written
    for (const f of [w.deep.config, w.credentials]) writeFileSync(f, w.bytes.get(f) as Buffer)
    expect(await restoreFromState(ref)).toEqual([])
    expectUnchanged(w)
  })

  withGit("the agent's edits to a config that held credentials are discarded (core.fsmonitor planted) and the log says so", async () => {
    const w = workspaceWithCheckouts()
    const ref = newCredentialState(w.runnerTemp)
    const { logs, log } = logsOf()
    const hidden = await hideCredentials(w.workspace, new Redactor(), ref, log)
    git(w.deps.dir, 'config', 'core.fsmonitor', 'touch /tmp/pwned')
    appendFileSync(w.deep.config, '[core]\n\thooksPath = /tmp/hooks\n')
    expect(await hidden.restore()).toEqual([])
    expectUnchanged(w)
    expect(git(w.deps.dir, 'config', '--list')).not.toContain('fsmonitor')
    expect(logs.join('\n')).toMatch(/changed during the run; the original file is back and the agent's edits to it are discarded/)
    expect(logs.join('\n')).toContain(w.deps.config)
  })

  withGit("a config deleted or replaced by a symlink comes back as the file; the symlink's target is never written", async () => {
    const w = workspaceWithCheckouts()
    const target = path.join(w.root, 'precious.txt')
    writeFileSync(target, 'precious\n')
    const hidden = await hideCredentials(w.workspace, new Redactor(), newCredentialState(w.runnerTemp))
    unlinkSync(w.deps.config)
    symlinkSync(target, w.deps.config)
    unlinkSync(w.deep.config)
    expect(await hidden.restore()).toEqual([])
    expect(readFileSync(target, 'utf8')).toBe('precious\n')
    expect(lstatSync(w.deps.config).isFile()).toBe(true)
    expectUnchanged(w)
  })

  withGit('a .git folder swapped for a symlink: nothing is written through it, the state is kept and the problem reported', async () => {
    const w = workspaceWithCheckouts()
    const ref = newCredentialState(w.runnerTemp)
    const hidden = await hideCredentials(w.workspace, new Redactor(), ref)
    const elsewhere = path.join(w.root, 'elsewhere')
    mkdirSync(elsewhere)
    renameSync(path.join(w.deps.dir, '.git'), path.join(w.root, 'moved-git'))
    symlinkSync(elsewhere, path.join(w.deps.dir, '.git'))
    const problems = await hidden.restore()
    expect(problems.join('\n')).toMatch(
      new RegExp(`not put back in ${w.deps.config.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: its folder was replaced`)
    )
    expect(readdirSync(elsewhere)).toEqual([])
    expect(credentialsPending(ref)).toBe(true) // the post step may try again
    // the other files are back
    expect(readFileSync(w.deep.config).equals(w.bytes.get(w.deep.config) as Buffer)).toBe(true)
  })

  withGit('the saved state is encrypted, only ours (0600), and useless without its key', async () => {
    const w = workspaceWithCheckouts()
    const ref = newCredentialState(w.runnerTemp)
    await hideCredentials(w.workspace, new Redactor(), ref)
    const file = ref.slice(ref.indexOf(':') + 1)
    expect(lstatSync(file).mode & 0o777).toBe(0o600)
    expect(filesHolding(path.dirname(file), Object.values(w.secrets))).toEqual([])
    const wrong = `${randomBytes(32).toString('hex')}:${file}`
    expect((await restoreFromState(wrong)).join('\n')).toMatch(/saved state could not be read/)
    expect(await restoreFromState(ref)).toEqual([])
    expectUnchanged(w)
  })

  withGit('collectCredentials (sandbox: user) teaches the redactor and changes nothing', async () => {
    const w = workspaceWithCheckouts()
    const redactor = new Redactor()
    expect(await collectCredentials(w.workspace, redactor)).toHaveLength(5)
    expectUnchanged(w)
    for (const s of Object.values(w.secrets)) expect(redactor.redact(s)).toBe('***')
  })

  withGit(
    "the runner user's global config and credential store (git config --global url...insteadOf with a token, the store helper)",
    async () => {
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
      const hidden = await hideCredentials(w.workspace, redactor, newCredentialState(w.runnerTemp), undefined, { home })
      expect(filesHolding(home, [token, storePassword])).toEqual([])
      const shown = execFileSync('git', ['config', '--global', '--list'], {
        env: { ...GIT_ENV, HOME: home, GIT_CONFIG_GLOBAL: gitconfig }
      }).toString()
      expect(shown).toContain('user.name=runner')
      expect(shown).not.toContain('credential.helper')
      // each on its own: side by side, pieces of both may be masked as one run (redact-runs.ts), the space with them
      for (const secret of [token, storePassword]) expect(redactor.redact(`(${secret})`)).toBe('(***)')
      expect(await hidden.restore()).toEqual([])
      expect(readFileSync(gitconfig).equals(before[0])).toBe(true)
      expect(readFileSync(store).equals(before[1])).toBe(true)
      expect(lstatSync(store).mode & 0o777).toBe(0o600)
    }
  )

  withGit('a hard-linked config is rewritten in place: no other name keeps the credential', async () => {
    const w = workspaceWithCheckouts()
    const twin = path.join(w.root, 'twin-config')
    execFileSync('ln', [w.deps.config, twin])
    const hidden = await hideCredentials(w.workspace, new Redactor(), newCredentialState(w.runnerTemp))
    expect(filesHolding(w.root, [w.secrets.pat])).toEqual([])
    expect(readFileSync(twin).equals(readFileSync(w.deps.config))).toBe(true)
    expect(await hidden.restore()).toEqual([])
    expect(lstatSync(twin).ino).toBe(lstatSync(w.deps.config).ino)
    expectUnchanged(w)
  })

  withGit(
    'a gitfile or include pointing outside the workspace never gets a system file changed: only git directories and git configs are',
    async () => {
      const w = workspaceWithCheckouts()
      // a "system" folder with an INI-like file that is no git config, and one that is a valid config holding a token
      const system = path.join(w.root, 'etc')
      mkdirSync(system)
      const hash = `$6$${alnum(16)}$${alnum(80)}`
      const shadow = path.join(system, 'config')
      writeFileSync(shadow, `root:${hash}:19000:0:99999:7:::\n`)
      const unit = path.join(system, 'service.conf')
      const unitToken = alnum(40)
      writeFileSync(unit, `[service]\n\tenvironment = TOKEN=${unitToken}\n`)
      const before = [readFileSync(shadow), readFileSync(unit)]
      // planted by an earlier step's tarball: a gitfile to the folder, includes of both files
      const planted = path.join(w.workspace, 'vendor', 'evil')
      mkdirSync(planted, { recursive: true })
      writeFileSync(path.join(planted, '.git'), `gitdir: ${system}\n`)
      appendFileSync(w.deps.config, `[include]\n\tpath = ${unit}\n\tpath = ${shadow}\n`)
      w.bytes.set(w.deps.config, readFileSync(w.deps.config))
      const redactor = new Redactor()
      const { logs, log } = logsOf()
      const hidden = await hideCredentials(w.workspace, redactor, newCredentialState(w.runnerTemp), log)
      expect(readFileSync(shadow).equals(before[0])).toBe(true)
      expect(readFileSync(unit).equals(before[1])).toBe(true)
      expect(hidden.files).not.toContain(shadow)
      expect(hidden.files).not.toContain(unit)
      // the valid config's value is redacted all the same, and the repository no longer includes it
      expect(redactor.redact(unitToken)).toBe('***')
      expect(readFileSync(w.deps.config, 'utf8')).not.toContain(unit)
      expect(readFileSync(w.deps.config, 'utf8')).toContain(shadow) // no credentials file: the include stays
      expect(logs.join('\n')).toContain(`${unit} (included by a repository's config) holds credentials`)
      expect(await hidden.restore()).toEqual([])
      expect(readFileSync(shadow).equals(before[0])).toBe(true)
      expectUnchanged(w)
    }
  )

  withGit('placeholder passwords of local services are taken out of URLs but not taught (they would wreck output)', async () => {
    const root = mkdtempSync(path.join(tmp, 'pg-'))
    const r = newRepo(path.join(root, 'svc'))
    git(r.dir, 'config', 'remote.db.url', 'postgres://postgres:postgres@localhost/db')
    const redactor = new Redactor()
    const hidden = await hideCredentials(root, redactor, newCredentialState(root))
    expect(git(r.dir, 'config', 'remote.db.url').trim()).toBe('postgres://localhost/db')
    expect(redactor.redact('connect as postgres')).toBe('connect as postgres')
    expect(await hidden.restore()).toEqual([])
  })

  withGit('the state cannot be saved: the credentials are taken out all the same (fail closed) and this step puts them back', async () => {
    const w = workspaceWithCheckouts()
    const ref = newCredentialState(path.join(w.root, 'no-such-folder'))
    const { logs, log } = logsOf()
    const hidden = await hideCredentials(w.workspace, new Redactor(), ref, log)
    expect(filesHolding(w.workspace, Object.values(w.secrets))).toEqual([])
    expect(logs.join('\n')).toMatch(/could not be saved for the post step .*; if this step is killed, they stay removed/)
    expect(await hidden.restore()).toEqual([])
    expectUnchanged(w)
  })

  withGit(
    'removeCredentials (a working copy): every credential inside goes for good, nothing outside is changed, nothing saved',
    async () => {
      const w = workspaceWithCheckouts()
      const redactor = new Redactor()
      const credsBefore = readFileSync(w.credentials)
      const tempBefore = readdirSync(w.runnerTemp).sort()
      expect(await removeCredentials(w.workspace, redactor)).toEqual([])
      expect(filesHolding(w.workspace, Object.values(w.secrets))).toEqual([])
      expect(readFileSync(w.credentials).equals(credsBefore)).toBe(true) // checkout's file outside the copy: untouched
      expect(readdirSync(w.runnerTemp).sort()).toEqual(tempBefore) // no state written
      expect(git(w.top.dir, 'config', '--list', '--includes')).not.toMatch(/extraheader/i)
      for (const s of Object.values(w.secrets)) expect(redactor.redact(s)).toBe('***')
    }
  )

  test('a workspace without repositories, or none holding credentials: nothing written, not even the state', async () => {
    const dir = mkdtempSync(path.join(tmp, 'plain-'))
    writeFileSync(path.join(dir, 'a.txt'), 'x')
    const ref = newCredentialState(dir)
    const hidden = await hideCredentials(dir, new Redactor(), ref)
    expect(hidden.files).toEqual([])
    expect(existsSync(ref.slice(ref.indexOf(':') + 1))).toBe(false)
    expect(await restoreFromState(ref)).toEqual([])
  })

  withGit('owner-only and unusual modes, CRLF lines and non-UTF-8 bytes come back exactly', async () => {
    const root = mkdtempSync(path.join(tmp, 'crlf-'))
    const repo = newRepo(path.join(root, 'x', 'y'))
    const token = `ghs_${alnum(36)}`
    const bytes = Buffer.concat([
      Buffer.from(
        `[core]\r\n\tbare = false\r\n# caf\xe9 \xff\r\n[http "https://github.com/"]\r\n\textraheader = AUTHORIZATION: basic ${b64(`x-access-token:${token}`)}\r\n[user]\r\n\tname = r\xe9my\r\n`,
        'latin1'
      )
    ])
    writeFileSync(repo.config, bytes)
    chmodSync(repo.config, 0o640)
    const hidden = await hideCredentials(root, new Redactor(), newCredentialState(root))
    const during = readFileSync(repo.config)
    expect(during.toString('latin1')).toBe(
      `[core]\r\n\tbare = false\r\n# caf\xe9 \xff\r\n[http "https://github.com/"]\r\n[user]\r\n\tname = r\xe9my\r\n`
    )
    expect(lstatSync(repo.config).mode & 0o777).toBe(0o640)
    expect(await hidden.restore()).toEqual([])
    expect(readFileSync(repo.config).equals(bytes)).toBe(true)
    expect(lstatSync(repo.config).mode & 0o777).toBe(0o640)
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
