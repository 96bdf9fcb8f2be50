// prepareSandbox / release on this machine, without mocks: a real user (when
// we are root on Linux, like CI), real git repositories, real processes.
// Users created here are test-specific and deleted in afterAll.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { prepareSandbox, recoverSandbox, type Sandbox, type SandboxOptions } from '../src/tools/sandbox'
import { runBash } from '../src/tools/bash'
import { Redactor, secretsFromEnv } from '../src/report/redact'

const isRoot = process.platform === 'linux' && typeof process.getuid === 'function' && process.getuid() === 0
const hasUseradd = ['/usr/sbin/useradd', '/sbin/useradd', '/usr/bin/useradd'].some(p => existsSync(p))
const hasGit = spawnSync('git', ['--version']).status === 0
const asRoot = isRoot && hasUseradd ? test : test.skip
const withGit = hasGit ? test : test.skip

const suffix = randomBytes(3).toString('hex')
/** test-specific users and groups, removed in afterAll */
const users: string[] = []
const groups: string[] = []
const tmp = mkdtempSync(path.join(os.tmpdir(), 'sandbox-test-'))
const runDir = path.join(tmp, 'runs')
const open: Sandbox[] = []

function newUser(tagName: string): string {
  const name = `ba-${tagName}-${suffix}`
  users.push(name)
  return name
}

afterAll(async () => {
  for (const s of open) await s.release().catch(() => undefined)
  for (const u of users) {
    spawnSync('pkill', ['-KILL', '-u', u])
    spawnSync('userdel', ['-r', '-f', u], { stdio: 'ignore' })
  }
  for (const g of groups) spawnSync('groupdel', [g], { stdio: 'ignore' })
  rmSync(tmp, { recursive: true, force: true })
})

const GH_TOKEN = `ghs_${randomBytes(18).toString('hex')}`
const API_KEY = `sk-ant-api03-${randomBytes(24).toString('hex')}`
const DEPLOY = `deploy/${randomBytes(8).toString('hex')}+pw=&x y`
const b64 = (s: string) => Buffer.from(s).toString('base64')

function runnerEnv(workspace: string, runnerTemp: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/root',
    LANG: 'C.UTF-8',
    TMPDIR: '/tmp',
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: workspace,
    GITHUB_REPOSITORY: 'octo-org/octo-repo',
    GITHUB_EVENT_PATH: path.join(runnerTemp, 'event.json'),
    GITHUB_OUTPUT: path.join(runnerTemp, 'output'),
    RUNNER_TEMP: runnerTemp,
    'INPUT_ANTHROPIC-API-KEY': API_KEY,
    'INPUT_GITHUB-TOKEN': GH_TOKEN,
    INPUT_TASK: 'do things',
    ANTHROPIC_API_KEY: API_KEY,
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    GITHUB_TOKEN: GH_TOKEN,
    GH_TOKEN,
    ACTIONS_RUNTIME_TOKEN: `eyJhbGciOiJSUzI1NiJ9.eyJ${randomBytes(30).toString('hex')}.${randomBytes(30).toString('hex')}`,
    ACTIONS_ID_TOKEN_REQUEST_URL: 'https://token.actions.example/abc',
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: `tok-${randomBytes(20).toString('hex')}`,
    MY_DEPLOY_PASSWORD: DEPLOY,
    INNOCENT_NAME: `prefix ${DEPLOY} suffix`,
    SSH_AUTH_SOCK: '/tmp/ssh-agent.sock'
  }
}

interface Layout {
  base: string
  /** mode 0700, like the runner's home */
  closed: string
  /** mode 0750 */
  work: string
  workspace: string
  runnerTemp: string
}

/** base(0700)/closed(0710)/work(0750)/repo: folders above the workspace closed to others, as on a runner. */
function layout(): Layout {
  const base = mkdtempSync(path.join(tmp, 'l-'))
  chmodSync(base, 0o700)
  const closed = path.join(base, 'home')
  mkdirSync(closed, { mode: 0o710 })
  chmodSync(closed, 0o710)
  const work = path.join(closed, 'work')
  mkdirSync(work)
  chmodSync(work, 0o750)
  const workspace = path.join(work, 'repo')
  mkdirSync(workspace)
  const runnerTemp = path.join(work, '_temp')
  mkdirSync(runnerTemp)
  chmodSync(runnerTemp, 0o755)
  return { base, closed, work, workspace, runnerTemp }
}

function options(over: Partial<SandboxOptions> & { workspace: string; env: NodeJS.ProcessEnv }): SandboxOptions & { logs: string[] } {
  const logs: string[] = []
  return {
    mode: 'none',
    redactor: new Redactor(secretsFromEnv(over.env)),
    marker: randomUUID(),
    log: m => logs.push(m),
    runDir,
    logs,
    ...over
  }
}

async function prepare(o: SandboxOptions): Promise<Sandbox> {
  const s = await prepareSandbox(o)
  open.push(s)
  return s
}

async function release(s: Sandbox): Promise<void> {
  open.splice(open.indexOf(s), 1)
  await s.release()
}

function sh(s: Sandbox, command: string, cwd: string, timeoutMs = 30000) {
  return runBash(command, { cwd, env: s.env, timeoutMs, maxOutputChars: 50000, blocked: [], redact: t => t, identity: s.identity })
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } }).toString()
}

function gitRepo(dir: string): void {
  git(dir, 'init', '-q', '-b', 'main')
  writeFileSync(path.join(dir, 'README.md'), '# repo\n')
}

const mode = (p: string) => lstatSync(p).mode & 0o7777

function pidGone(pid: number): boolean {
  try {
    return /^State:\s+[ZX]/m.test(readFileSync(`/proc/${pid}/status`, 'latin1'))
  } catch {
    return true
  }
}

async function waitGone(pids: number[], ms = 10000): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (pids.every(pidGone)) return true
    await new Promise(r => setTimeout(r, 50))
  }
  return pids.every(pidGone)
}

function userRecord(name: string): { uid: number; gid: number; home: string } | undefined {
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const f = line.split(':')
    if (f[0] === name) return { uid: Number(f[2]), gid: Number(f[3]), home: f[5] }
  }
  return undefined
}

// ---------------------------------------------------------------------------

describe('environment', () => {
  test('none: a scrubbed environment with the run marker; PATH, HOME, CI and GITHUB_* context kept', async () => {
    const l = layout()
    const o = options({ workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) })
    const s = await prepare(o)
    expect(s.mode).toBe('none')
    expect(s.note).toBe('none')
    expect(s.identity.kind).toBe('self')
    for (const name of Object.keys(s.env)) {
      expect(name).not.toMatch(/^(INPUT_|ANTHROPIC_|ACTIONS_)/)
    }
    for (const gone of ['GITHUB_TOKEN', 'GH_TOKEN', 'MY_DEPLOY_PASSWORD', 'INNOCENT_NAME', 'SSH_AUTH_SOCK', 'GITHUB_OUTPUT']) {
      expect(s.env).not.toHaveProperty(gone)
    }
    expect(s.env).toMatchObject({
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: '/root',
      CI: 'true',
      GITHUB_WORKSPACE: l.workspace,
      GITHUB_REPOSITORY: 'octo-org/octo-repo',
      BASH_AGENT_RUN: o.marker
    })
    const dump = JSON.stringify(s.env)
    for (const secret of [GH_TOKEN, API_KEY, DEPLOY]) expect(dump).not.toContain(secret)
    expect(o.logs.join('\n')).toMatch(/Sandbox: none/)
    await release(s)
  })
})

describe('fallback to none', () => {
  test('no root and no passwordless sudo: none, said in the note and the log', async () => {
    const l = layout()
    const o = options({ mode: 'user', privilege: 'unavailable', workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) })
    const s = await prepare(o)
    expect(s.mode).toBe('none')
    expect(s.note).toBe('none (user sandbox unavailable: not root and no passwordless sudo)')
    expect(s.identity.kind).toBe('self')
    expect(o.logs.join('\n')).toContain('user sandbox is unavailable (not root and no passwordless sudo)')
    // nothing above the workspace was touched
    expect(mode(l.base)).toBe(0o700)
    expect(mode(l.runnerTemp)).toBe(0o755)
    await release(s)
  })

  test('a sudo that asks for a password counts as no sudo', async () => {
    const l = layout()
    const o = options({ mode: 'user', privilege: 'sudo', sudo: '/bin/false', workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) })
    const s = await prepare(o)
    expect(s.note).toBe('none (user sandbox unavailable: not root and no passwordless sudo)')
    await release(s)
  })

  asRoot('useradd failing: none, with useradd\'s reason', async () => {
    // useradd --user-group refuses a name that is already a group's
    const name = `ba-grp-${suffix}`
    execFileSync('groupadd', [name])
    groups.push(name)
    const l = layout()
    const o = options({ mode: 'user', user: name, workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) })
    const s = await prepare(o)
    expect(s.mode).toBe('none')
    expect(s.note).toMatch(/^none \(user sandbox unavailable: useradd failed: .*group/)
    expect(o.logs.join('\n')).toContain('useradd failed')
    expect(userRecord(name)).toBeUndefined()
    await release(s)
  })

  asRoot('a workspace holding RUNNER_TEMP (or a home, or /) is not lent', async () => {
    const l = layout()
    const o = options({ mode: 'user', user: newUser('held'), workspace: l.work, env: runnerEnv(l.work, l.runnerTemp) })
    const s = await prepare(o)
    expect(s.note).toBe(`none (user sandbox unavailable: the workspace ${l.work} holds RUNNER_TEMP)`)
    expect(lstatSync(l.work).uid).toBe(0)
    expect(mode(l.base)).toBe(0o700)
    await release(s)
  })

  asRoot('an existing user in a powerful group is refused', async () => {
    const name = newUser('adm')
    execFileSync('useradd', ['--user-group', '-G', 'adm', name])
    const l = layout()
    const o = options({ mode: 'user', user: name, workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) })
    const s = await prepare(o)
    expect(s.note).toBe(`none (user sandbox unavailable: the user ${name} is in the group adm)`)
    expect(lstatSync(l.workspace).uid).toBe(0)
    await release(s)
  })
})

describe('user sandbox (as root)', () => {
  let name: string
  let l: Layout
  let s: Sandbox
  let o: ReturnType<typeof options>
  const owners = new Map<string, { uid: number; gid: number }>()

  beforeAll(async () => {
    if (!isRoot || !hasUseradd) return
    name = newUser('user')
    expect(userRecord(name)).toBeUndefined()
    l = layout()
    chownSync(l.runnerTemp, 0, 0)
    gitRepo(l.workspace)
    writeFileSync(path.join(l.workspace, 'private.txt'), 'only the owner reads this\n', { mode: 0o600 })
    mkdirSync(path.join(l.workspace, 'src', 'deep'), { recursive: true })
    writeFileSync(path.join(l.workspace, 'src', 'deep', 'a.txt'), 'a\n')
    chownSync(path.join(l.workspace, 'src', 'deep', 'a.txt'), 0, 4) // another group: must come back
    writeFileSync(path.join(l.workspace, 'nobodys.txt'), 'not the owner\'s\n')
    chownSync(path.join(l.workspace, 'nobodys.txt'), 65534, 65534)
    symlinkSync('/etc/hostname', path.join(l.workspace, 'link-out'))
    writeFileSync(path.join(l.runnerTemp, 'step.sh'), `echo ${DEPLOY}\n`, { mode: 0o644 })
    for (const rel of ['.', 'private.txt', 'src', 'src/deep', 'src/deep/a.txt', 'nobodys.txt', 'link-out', '.git', '.git/config']) {
      const st = lstatSync(path.join(l.workspace, rel))
      owners.set(rel, { uid: st.uid, gid: st.gid })
    }
    o = options({ mode: 'user', user: name, workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) })
    s = await prepare(o)
  })

  asRoot('the user is created on first use: own home, no root ids, no powerful groups', () => {
    const rec = userRecord(name)
    expect(rec).toBeDefined()
    const u = rec as { uid: number; gid: number; home: string }
    expect(u.uid).toBeGreaterThan(0)
    expect(u.gid).toBeGreaterThan(0)
    const st = statSync(u.home)
    expect(st.isDirectory()).toBe(true)
    expect(st.uid).toBe(u.uid)
    expect(st.mode & 0o077).toBe(0)
    const groupsOf = execFileSync('id', ['-Gn', name]).toString().trim().split(/\s+/)
    for (const g of ['sudo', 'adm', 'docker', 'wheel', 'root']) expect(groupsOf).not.toContain(g)
    expect(s.mode).toBe('user')
    expect(s.note).toBe(`user (${name})`)
    expect(s.identity).toMatchObject({ kind: 'uid', user: name, uid: u.uid, gid: u.gid, home: u.home })
    expect(s.env).toMatchObject({ HOME: u.home, USER: name, LOGNAME: name })
    expect(s.env.TMPDIR).toBe('/tmp')
    expect(o.logs.join('\n')).toContain(`commands run as the unprivileged user ${name}`)
  })

  asRoot('commands run as the user, can write the workspace by its path, and cannot read the runner\'s secrets', async () => {
    const r = await sh(
      s,
      [
        'id -un',
        `cd / && cd ${JSON.stringify(l.workspace)} && echo reached`,
        'echo new > new.txt && mkdir -p made/inner && echo x > made/inner/f && echo wrote',
        'cat private.txt',
        'cat /proc/$PPID/environ >/dev/null 2>&1 && echo ENV-READABLE || echo env-denied',
        `cat ${JSON.stringify(path.join(l.runnerTemp, 'step.sh'))} 2>/dev/null || echo temp-denied`,
        `ls ${JSON.stringify(l.runnerTemp)} >/dev/null 2>&1 || echo temp-list-denied`,
        'echo nobody > nobodys.txt 2>/dev/null || echo not-owner-denied',
        'ulimit -u'
      ].join('; '),
      l.workspace
    )
    const lines = r.output.split('\n')
    expect(lines[0]).toBe(name)
    expect(r.output).toContain('reached')
    expect(r.output).toContain('wrote')
    expect(r.output).toContain('only the owner reads this')
    expect(r.output).toContain('env-denied')
    expect(r.output).not.toContain('ENV-READABLE')
    expect(r.output).toContain('temp-denied')
    expect(r.output).toContain('temp-list-denied')
    expect(r.output).not.toContain(DEPLOY)
    expect(r.output).toContain('not-owner-denied')
    expect(lines.at(-1)).toBe('4096')
    expect(lstatSync(l.workspace).uid).toBe(userRecord(name)?.uid)
    // traversal only: the folders above can be passed, not listed
    expect(mode(l.base)).toBe(0o701)
    expect(mode(l.closed)).toBe(0o711)
    expect(mode(l.work)).toBe(0o751)
    expect(mode(l.runnerTemp)).toBe(0o750)
  })

  asRoot('release: leftovers killed, ownership and folder modes put back exactly, new files given to the owner', async () => {
    const bg = await sh(s, 'sleep 300 & echo $!; setsid sleep 300 & echo $!; env -i setsid sh -c "sleep 300" & echo $!', l.workspace)
    const pids = bg.output.split('\n').map(Number)
    expect(pids).toHaveLength(3)
    await release(s)
    expect(await waitGone(pids)).toBe(true)
    for (const [rel, who] of owners) {
      const st = lstatSync(path.join(l.workspace, rel))
      expect({ rel, uid: st.uid, gid: st.gid }).toEqual({ rel, ...who })
    }
    for (const rel of ['new.txt', 'made', 'made/inner', 'made/inner/f']) {
      const st = lstatSync(path.join(l.workspace, rel))
      expect({ rel, uid: st.uid, gid: st.gid }).toEqual({ rel, uid: 0, gid: 0 })
    }
    expect(lstatSync('/etc/hostname').uid).toBe(0)
    expect(mode(l.base)).toBe(0o700)
    expect(mode(l.closed)).toBe(0o710)
    expect(mode(l.work)).toBe(0o750)
    expect(mode(l.runnerTemp)).toBe(0o755)
  })

  asRoot('a second run cleans what the first left in the user\'s home and temp files', async () => {
    const l2 = layout()
    const u = userRecord(name) as { uid: number; gid: number; home: string }
    const junk = path.join('/tmp', `ba-junk-${suffix}`)
    writeFileSync(junk, 'left behind')
    chownSync(junk, u.uid, u.gid)
    writeFileSync(path.join(u.home, '.gitconfig'), '[core]\n\tfsmonitor = evil\n')
    const s2 = await prepare(options({ mode: 'user', user: name, workspace: l2.workspace, env: runnerEnv(l2.workspace, l2.runnerTemp) }))
    expect(s2.mode).toBe('user')
    expect(existsSync(junk)).toBe(false)
    expect(existsSync(path.join(u.home, '.gitconfig'))).toBe(false)
    await release(s2)
  })
})

describe('leftover processes', () => {
  test('none: background, setsid and env -i children are killed by release', async () => {
    const l = layout()
    const s = await prepare(options({ workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) }))
    const r = await sh(
      s,
      'sleep 300 & echo $!; setsid sleep 300 & echo $!; env -i setsid sh -c "sleep 300 & echo \\$!" ; for i in $(seq 50); do sleep 300 & done; echo $!',
      l.workspace
    )
    const pids = r.output.split('\n').map(Number)
    expect(pids.length).toBe(4)
    for (const p of pids) expect(pidGone(p)).toBe(false)
    await release(s)
    expect(await waitGone(pids)).toBe(true)
  })

  asRoot('user: the processes of another live run sharing the user are spared', async () => {
    const name = newUser('share')
    const la = layout()
    const lb = layout()
    const a = await prepare(options({ mode: 'user', user: name, workspace: la.workspace, env: runnerEnv(la.workspace, la.runnerTemp) }))
    const b = await prepare(options({ mode: 'user', user: name, workspace: lb.workspace, env: runnerEnv(lb.workspace, lb.runnerTemp) }))
    expect(a.mode).toBe('user')
    expect(b.mode).toBe('user')
    const pa = Number((await sh(a, 'env -i setsid sleep 300 >/dev/null 2>&1 & echo $!', la.workspace)).output)
    const pb = Number((await sh(b, 'setsid sleep 300 >/dev/null 2>&1 & echo $!', lb.workspace)).output)
    await release(a)
    expect(await waitGone([pa])).toBe(true)
    expect(pidGone(pb)).toBe(false)
    await release(b)
    expect(await waitGone([pb])).toBe(true)
  })
})

describe('git credentials', () => {
  const token = `ghs_${randomBytes(18).toString('hex')}`
  const header = `AUTHORIZATION: basic ${b64(`x-access-token:${token}`)}`
  const otherHeader = `AUTHORIZATION: bearer ${randomBytes(20).toString('hex')}`

  /** A checkout as actions/checkout leaves it: extraheader in .git/config (v4), includeIf to a credentials file under RUNNER_TEMP (v6). */
  function checkout(l: Layout): { config: string; credentials: string } {
    gitRepo(l.workspace)
    const credentials = path.join(l.runnerTemp, `git-credentials-${randomUUID()}.config`)
    writeFileSync(credentials, `[http "https://github.com/"]\n\textraheader = ${header}\n`)
    git(l.workspace, 'config', '--local', 'user.name', 'someone')
    git(l.workspace, 'config', '--local', 'http.https://github.com/.extraheader', header)
    git(l.workspace, 'config', '--local', 'remote.origin.url', 'https://github.com/octo-org/octo-repo')
    git(l.workspace, 'config', '--local', `includeIf.gitdir:${l.workspace}/.git.path`, credentials)
    git(l.workspace, 'config', '--local', `includeIf.gitdir:${l.workspace}/.git/worktrees/*.path`, credentials)
    git(l.workspace, 'config', '--local', 'includeIf.gitdir:/github/workspace/.git.path', `/github/runner_temp/${path.basename(credentials)}`)
    git(l.workspace, 'config', '--local', '--add', 'http.https://example.com/.extraheader', otherHeader)
    git(l.workspace, 'config', '--local', 'core.bare', 'false')
    return { config: path.join(l.workspace, '.git', 'config'), credentials }
  }

  const listCredentials = (cwd: string) => {
    try {
      return git(cwd, 'config', '--local', '--get-regexp', '^(http\\..*\\.extraheader|includeif\\..*)$')
    } catch {
      return ''
    }
  }

  withGit('extraheader and includeIf credentials are removed for the run and put back byte for byte', async () => {
    const l = layout()
    const { config, credentials } = checkout(l)
    const before = readFileSync(config)
    const credsBefore = readFileSync(credentials)
    const listed = listCredentials(l.workspace)
    expect(listed).toContain('extraheader')
    const o = options({ workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) })
    const s = await prepare(o)

    expect(listCredentials(l.workspace)).toBe('')
    const during = readFileSync(config, 'utf8')
    expect(during).not.toMatch(/extraheader|git-credentials|AUTHORIZATION/i)
    expect(during).toContain('someone') // the rest of the config is untouched
    expect(readFileSync(credentials, 'utf8')).not.toMatch(/extraheader|AUTHORIZATION/i)
    const r = await sh(s, 'git config --list --show-origin; cat .git/config; cat "$RUNNER_TEMP"/git-credentials-*.config', l.workspace)
    expect(r.output).not.toContain(token)
    expect(r.output).not.toMatch(/AUTHORIZATION/i)
    // the redactor learnt the token, the header and its base64
    expect(o.redactor.redact(`t=${token} h=${header} b=${b64(`x-access-token:${token}`)}`)).toBe('t=*** h=*** b=***')
    expect(o.logs.join('\n')).toMatch(/Git credentials taken out for the run: \S*\.git\/config: http\.https:\/\/github\.com\/\.extraheader, includeif\./)

    await release(s)
    expect(readFileSync(config).equals(before)).toBe(true)
    expect(readFileSync(credentials).equals(credsBefore)).toBe(true)
    expect(listCredentials(l.workspace)).toBe(listed)
  })

  withGit('when the agent changed the config, its exact original bytes come back and the agent\'s edits are discarded', async () => {
    const l = layout()
    const { config } = checkout(l)
    const before = readFileSync(config)
    const o = options({ workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) })
    const s = await prepare(o)
    const r = await sh(s, 'git config user.email agent@example.com && git config core.fsmonitor "touch /tmp/x" && git config --add http.https://github.com/.extraheader "X-Agent: 1"', l.workspace)
    expect(r.exitCode).toBe(0)
    await release(s)
    expect(readFileSync(config).equals(before)).toBe(true)
    expect(o.logs.join('\n')).toContain('the agent\'s edits to it are discarded')
  })

  withGit('a config replaced by a symlink is not written through: the symlink is replaced by the original file', async () => {
    const l = layout()
    const { config } = checkout(l)
    const before = readFileSync(config)
    const target = path.join(tmp, `target-${randomUUID()}`)
    writeFileSync(target, 'precious\n')
    const s = await prepare(options({ workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) }))
    unlinkSync(config)
    symlinkSync(target, config)
    await release(s)
    expect(readFileSync(target, 'utf8')).toBe('precious\n')
    expect(lstatSync(config).isFile()).toBe(true)
    expect(readFileSync(config).equals(before)).toBe(true)
  })

  withGit('submodule configs are covered too', async () => {
    const l = layout()
    gitRepo(l.workspace)
    const mod = path.join(l.workspace, '.git', 'modules', 'lib')
    mkdirSync(mod, { recursive: true })
    const modConfig = path.join(mod, 'config')
    writeFileSync(modConfig, `[core]\n\tbare = false\n[http "https://github.com/"]\n\textraheader = ${header}\n`)
    const before = readFileSync(modConfig)
    const s = await prepare(options({ workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) }))
    expect(readFileSync(modConfig, 'utf8')).not.toContain('extraheader')
    await release(s)
    expect(readFileSync(modConfig).equals(before)).toBe(true)
  })

  asRoot('in user mode the config comes back after the workspace is given back', async () => {
    const l = layout()
    const { config, credentials } = checkout(l)
    const before = readFileSync(config)
    const name = newUser('git')
    const s = await prepare(options({ mode: 'user', user: name, workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) }))
    expect(s.mode).toBe('user')
    const r = await sh(s, `git config --get-regexp extraheader; cat ${JSON.stringify(credentials)}; git status --short | head -3; echo done`, l.workspace)
    expect(r.output).not.toContain(token)
    expect(r.output).toContain('done')
    await release(s)
    expect(readFileSync(config).equals(before)).toBe(true)
    expect(lstatSync(config).uid).toBe(0)
  })
})

describe('a workspace owned by another user than the action\'s (as root, like a container job)', () => {
  asRoot('owners come back exactly: files, the git config git rewrote, and what the agent made', async () => {
    const l = layout()
    gitRepo(l.workspace)
    const token = `ghs_${randomBytes(18).toString('hex')}`
    git(l.workspace, 'config', '--local', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${b64(`x-access-token:${token}`)}`)
    execFileSync('chown', ['-R', '65534:65534', l.workspace])
    const config = path.join(l.workspace, '.git', 'config')
    const before = readFileSync(config)
    const name = newUser('owner')
    const s = await prepare(options({ mode: 'user', user: name, workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) }))
    expect(s.mode).toBe('user')
    expect(lstatSync(config).uid).toBe(userRecord(name)?.uid)
    const r = await sh(s, 'git config user.name agent && touch made.txt && echo ok', l.workspace)
    expect(r.output).toBe('ok')
    await release(s)
    for (const p of [l.workspace, config, path.join(l.workspace, 'made.txt'), path.join(l.workspace, 'README.md')]) {
      const st = lstatSync(p)
      expect({ p, uid: st.uid, gid: st.gid }).toEqual({ p, uid: 65534, gid: 65534 })
    }
    // the exact original bytes: the agent's edit to the config is discarded
    expect(readFileSync(config).equals(before)).toBe(true)
  })
})

describe('programs run with privileges after the agent', () => {
  asRoot('a git the agent plants on PATH (in the workspace) is never run', async () => {
    const l = layout()
    gitRepo(l.workspace)
    const token = `ghs_${randomBytes(18).toString('hex')}`
    git(l.workspace, 'config', '--local', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${b64(`x-access-token:${token}`)}`)
    const bin = path.join(l.workspace, 'bin')
    mkdirSync(bin)
    const pwned = path.join('/tmp', `ba-pwned-${randomUUID()}`)
    const evil = `#!/bin/sh\ntouch ${pwned}\nexec /usr/bin/git "$@"\n`
    // one planted before the run too (root-owned, but inside the workspace)
    writeFileSync(path.join(bin, 'sudo'), evil, { mode: 0o755 })
    const env = { ...runnerEnv(l.workspace, l.runnerTemp), PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` }
    const name = newUser('path')
    const s = await prepare(options({ mode: 'user', user: name, workspace: l.workspace, env }))
    expect(s.mode).toBe('user')
    // the agent plants git and changes the config, so release has to run git to put the credentials back
    const r = await sh(s, `printf '%b' '${evil.replace(/\n/g, '\\n')}' > bin/git && chmod +x bin/git && git config user.name agent && echo ok`, l.workspace)
    expect(r.output).toBe('ok')
    expect(existsSync(pwned)).toBe(true) // the agent's own git call ran it, as the agent
    rmSync(pwned)
    await release(s)
    const ranAfter = existsSync(pwned)
    rmSync(pwned, { force: true })
    expect(ranAfter).toBe(false)
    expect(readFileSync(path.join(l.workspace, '.git', 'config'), 'utf8')).toContain(b64(`x-access-token:${token}`))
  })
})

describe('recovery by the post step, when the main step died before release', () => {
  const header = (token: string) => `AUTHORIZATION: basic ${b64(`x-access-token:${token}`)}`

  asRoot('user: leftovers killed, credentials, ownership and modes put back; only once', async () => {
    const l = layout()
    gitRepo(l.workspace)
    git(l.workspace, 'config', '--local', 'http.https://github.com/.extraheader', header(`ghs_${randomBytes(18).toString('hex')}`))
    const config = path.join(l.workspace, '.git', 'config')
    const before = readFileSync(config)
    const o = options({ mode: 'user', user: newUser('recover'), workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) })
    const s = await prepare(o)
    expect(s.mode).toBe('user')
    const r = await sh(s, 'touch made.txt; git config user.name agent; env -i setsid sleep 300 >/dev/null 2>&1 & echo $!', l.workspace)
    const pid = Number(r.output)
    // the main step is gone without release(); the post step recovers
    const logs: string[] = []
    expect(await recoverSandbox(o.marker, m => logs.push(m), runDir)).toBe(true)
    expect(await waitGone([pid])).toBe(true)
    expect(readFileSync(config, 'utf8')).toContain(before.toString().trim().split('\n').at(-1) as string)
    expect(readFileSync(config, 'utf8')).toContain('extraheader')
    expect(lstatSync(path.join(l.workspace, 'made.txt')).uid).toBe(0)
    expect(lstatSync(l.workspace).uid).toBe(0)
    expect(mode(l.base)).toBe(0o700)
    expect(mode(l.runnerTemp)).toBe(0o755)
    expect(logs.join('\n')).toMatch(/main step ended before putting everything back; done now\.$/m)
    expect(await recoverSandbox(o.marker, () => undefined, runDir)).toBe(false)
    // a late release changes nothing and does not fail
    const after = readFileSync(config)
    await release(s)
    expect(readFileSync(config).equals(after)).toBe(true)
  })

  test('none: processes that dropped the marker are found by the run descriptor', async () => {
    const l = layout()
    const o = options({ workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) })
    const s = await prepare(o)
    const pid = Number((await sh(s, 'env -i setsid sleep 300 >/dev/null 2>&1 & echo $!', l.workspace)).output)
    expect(await recoverSandbox(o.marker, () => undefined, runDir)).toBe(true)
    expect(await waitGone([pid])).toBe(true)
    await release(s)
  })

  test('nothing to do after a release that finished', async () => {
    const l = layout()
    const o = options({ workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) })
    const s = await prepare(o)
    await release(s)
    expect(await recoverSandbox(o.marker, () => undefined, runDir)).toBe(false)
    expect(await recoverSandbox('never-a-run', () => undefined, runDir)).toBe(false)
  })
})

describe('through sudo (a stand-in sudo, as root)', () => {
  asRoot('the sudo identity: user created, workspace lent and given back, leftovers killed', async () => {
    const bin = mkdtempSync(path.join(tmp, 'bin-'))
    const sudo = path.join(bin, 'sudo')
    // -n, -u USER, -l -U USER and -- like sudo; runs as USER with setpriv, else as root
    writeFileSync(
      sudo,
      [
        '#!/bin/bash',
        'user=; list=',
        'while [ $# -gt 0 ]; do case "$1" in -n) shift;; -u) user=$2; shift 2;; -U) shift 2;; -l) list=1; shift;; --) shift; break;; *) break;; esac; done',
        'if [ -n "$list" ]; then echo "User is not allowed to run sudo on this host."; exit 1; fi',
        'if [ -n "$user" ]; then exec setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --clear-groups -- "$@"; fi',
        'exec "$@"',
        ''
      ].join('\n')
    )
    chmodSync(sudo, 0o755)
    const name = newUser('sudo')
    const l = layout()
    writeFileSync(path.join(l.workspace, 'file.txt'), 'x\n')
    gitRepo(l.workspace)
    const token = `ghs_${randomBytes(18).toString('hex')}`
    git(l.workspace, 'config', '--local', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${b64(`x-access-token:${token}`)}`)
    const config = path.join(l.workspace, '.git', 'config')
    const configBefore = readFileSync(config)
    const s = await prepare(options({ mode: 'user', user: name, privilege: 'sudo', sudo, workspace: l.workspace, env: runnerEnv(l.workspace, l.runnerTemp) }))
    expect(s.note).toBe(`user (${name})`)
    expect(s.identity).toMatchObject({ kind: 'sudo', user: name, sudo })
    // the bash that calls sudo runs as us: an absolute, trusted path, never from the workspace
    expect((s.identity as { shell?: string }).shell).toMatch(/^\/(usr\/)?(local\/)?bin\/bash$/)
    const r = await sh(s, 'id -un; echo y >> file.txt && echo ok; echo "$HOME"; setsid sleep 300 >/dev/null 2>&1 & echo $!; git config --get-regexp extraheader', l.workspace)
    const lines = r.output.split('\n')
    expect(lines[0]).toBe(name)
    expect(lines[1]).toBe('ok')
    expect(lines[2]).toBe(userRecord(name)?.home)
    const pid = Number(lines[3])
    await release(s)
    expect(await waitGone([pid])).toBe(true)
    expect(r.output).not.toContain('extraheader')
    expect(lstatSync(path.join(l.workspace, 'file.txt')).uid).toBe(0)
    expect(readFileSync(config).equals(configBefore)).toBe(true)
    expect(lstatSync(config).uid).toBe(0)
    expect(mode(l.base)).toBe(0o700)
  })
})
