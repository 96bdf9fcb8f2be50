// The trust boundary around the commands the model runs: whom they run as,
// what environment they get, which credentials are out of their reach while
// they run, and what is put back afterwards. SECURITY.md explains the model.
//
// prepareSandbox, in every mode:
//   - gives commands an allowlisted environment (sandbox/env.ts);
//   - takes the git credentials out of every repository's config in the
//     workspace, at any depth, and teaches the redactor their values
//     (sandbox/credentials.ts: file bytes only, never a command line);
//   - opens a run tag (an inherited descriptor) that finds the run's leftover
//     processes even when they dropped their environment.
// In `user` mode, where the action is root or has passwordless sudo (Linux), it
// also creates the unprivileged user `bash-agent` (no sudo, no powerful
// groups), lends it the workspace (ownership of what the workspace owner owns,
// recorded entry by entry), lets it traverse the folders above the workspace
// (o+x), and closes RUNNER_TEMP to it (o-rwx). Anything that fails falls back
// to `none`, said in the log and in `note`.
//
// release() kills what the run left running, then puts everything back, the
// quick and important first: ownership entry by entry and the folder modes,
// then the git configs' exact bytes; last it wipes the sandbox user's own
// files when no other run uses it. Programs run with privileges are resolved
// before the agent runs, never from a folder it could write.
import { spawn } from 'node:child_process'
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  unlinkSync,
  writeFileSync,
  type Stats
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Identity, RunTag } from './bash'
import { killLeftovers, TAG_FD } from './bash'
import type { Redactor } from '../report/redact'
import { commandEnv } from '../sandbox/env'
import { hideCredentials, newCredentialState, restoreFromState, type HiddenCredentials } from '../sandbox/credentials'

export type SandboxMode = 'user' | 'none'

export interface Sandbox {
  /** the mode in force (user may fall back to none) */
  mode: SandboxMode
  identity: Identity
  /** what the report footer says about it */
  note: string
  /** the environment of every command */
  env: Record<string, string>
  /** puts back what was changed (git credentials, ownership) and kills leftover processes */
  release(): Promise<void>
}

export interface SandboxOptions {
  mode: SandboxMode
  workspace: string
  env: NodeJS.ProcessEnv
  redactor: Redactor
  marker: string
  log: (message: string) => void
  /** the sandbox user's name (default `bash-agent`) */
  user?: string
  /**
   * How to act as root: `auto` (we are root, else passwordless sudo), `sudo`
   * (always through sudo, even as root), `unavailable` (behave as on a runner
   * that allows neither, e.g. to test the fallback). Default `auto`.
   */
  privilege?: 'auto' | 'sudo' | 'unavailable'
  /** the sudo program (default: `sudo` found on PATH) */
  sudo?: string
  /** folder of the run tags (default `<tmpdir>/bash-agent-runs-<uid>`) */
  runDir?: string
  /** names from the pass-env input */
  passEnv?: string[]
  /** where the git configs' original bytes are kept (newCredentialState; saved in the action's state by the caller) */
  credentialState?: string
}

/** The default sandbox user. */
export const SANDBOX_USER = 'bash-agent'

/** Most processes (and threads) the sandbox user may have at once: a fork bomb stops here. */
export const SANDBOX_MAX_PROCESSES = 4096

/** Groups that amount to root, or to reading what the runner reads. */
const POWERFUL_GROUPS = new Set([
  'root', 'sudo', 'admin', 'wheel', 'adm', 'docker', 'lxd', 'libvirt', 'disk', 'shadow', 'systemd-journal', 'kvm'
])

/** The sandbox user's own temp files are removed from these when no other run uses the user. */
const TEMP_DIRS = ['/tmp', '/var/tmp', '/dev/shm']

// ---------------------------------------------------------------------------
// Running helper programs
// ---------------------------------------------------------------------------

interface ExecResult {
  code: number | null
  stdout: string
  stderr: string
  /** spawn failure or timeout */
  error?: string
}

interface ExecOptions {
  input?: string
  timeoutMs?: number
  env?: NodeJS.ProcessEnv
  uid?: number
  gid?: number
  /** a run tag to hand down at TAG_FD, so leftover sweeps of other runs know whose it is */
  tag?: RunTag
}

/** Run a program, never throwing. */
function exec(file: string, args: string[], o: ExecOptions = {}): Promise<ExecResult> {
  return new Promise(resolve => {
    let stdout = ''
    let stderr = ''
    let settled = false
    const settle = (r: ExecResult): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(r)
    }
    let child: ReturnType<typeof spawn>
    const stdio: Array<'ignore' | 'pipe' | number> = [o.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe']
    if (o.tag) {
      while (stdio.length < TAG_FD) stdio.push('ignore')
      stdio.push(o.tag.fd)
    }
    try {
      child = spawn(file, args, {
        cwd: '/', // never inside the workspace: no repository discovery, no relative lookups
        stdio,
        env: o.env ?? { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C', LC_ALL: 'C' },
        ...(o.uid !== undefined ? { uid: o.uid, gid: o.gid } : {})
      })
    } catch (e) {
      resolve({ code: null, stdout: '', stderr: '', error: (e as Error).message })
      return
    }
    const timer = setTimeout(() => {
      try {
        child.kill('SIGKILL')
      } catch {
        // gone
      }
      settle({ code: null, stdout, stderr, error: `${path.basename(file)} did not finish in time` })
    }, o.timeoutMs ?? 60_000)
    child.stdout?.setEncoding('utf8')
    child.stderr?.setEncoding('utf8')
    child.stdout?.on('data', (d: string) => {
      stdout += d
    })
    child.stderr?.on('data', (d: string) => {
      if (stderr.length < 100_000) stderr += d
    })
    child.on('error', e => settle({ code: null, stdout, stderr, error: e.message }))
    child.on('close', code => settle({ code, stdout, stderr }))
    if (o.input !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined)
      child.stdin.end(o.input)
    }
  })
}

function firstLine(r: ExecResult): string {
  const text = (r.error ?? (r.stderr.trim() || r.stdout.trim())) || `exit code ${r.code}`
  return text.split('\n')[0].slice(0, 200)
}

/**
 * A program we may run with privileges after the agent ran: found on `envPath`
 * or in the system folders, outside `avoid` (the workspace), and neither it
 * nor its folder writable by anyone but root or us. A `git` the agent planted
 * in a folder on PATH it can write (`$GITHUB_WORKSPACE/node_modules/.bin`,
 * `/tmp`...) is never picked.
 */
function findProgram(name: string, envPath: string | undefined, avoid?: string): string | undefined {
  const me = typeof process.getuid === 'function' ? process.getuid() : -1
  const safe = (st: Stats) => (st.uid === 0 || st.uid === me) && (st.mode & 0o022) === 0
  const dirs = [...(envPath ?? '').split(path.delimiter), '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']
  for (const dir of dirs) {
    if (!dir || !path.isAbsolute(dir)) continue
    try {
      const real = realpathSync(path.join(dir, name))
      if (avoid && isInside(real, avoid)) continue
      const st = statSync(real)
      if (st.isFile() && safe(st) && safe(statSync(path.dirname(real)))) return real
    } catch {
      // not here
    }
  }
  return undefined
}

/** How we act as root: we are root, or through passwordless sudo. */
type Privilege = { kind: 'root' } | { kind: 'sudo'; sudo: string }

/** Run a program as root. */
function asRoot(priv: Privilege, argv: string[], o: ExecOptions = {}): Promise<ExecResult> {
  if (priv.kind === 'root') return exec(argv[0], argv.slice(1), o)
  return exec(priv.sudo, ['-n', '--', ...argv], o)
}

async function findPrivilege(opts: SandboxOptions): Promise<Privilege | string> {
  const none = 'not root and no passwordless sudo'
  if (opts.privilege === 'unavailable') return none
  if (process.platform !== 'linux') return `not Linux (${process.platform})`
  if (opts.privilege !== 'sudo' && typeof process.getuid === 'function' && process.getuid() === 0) return { kind: 'root' }
  const sudo = opts.sudo ?? findProgram('sudo', opts.env.PATH, realpathOr(opts.workspace))
  if (!sudo) return none
  const r = await exec(sudo, ['-n', 'true'], { timeoutMs: 15_000 })
  return r.code === 0 ? { kind: 'sudo', sudo } : none
}

// ---------------------------------------------------------------------------
// The root helper: a small program run as root (directly or through sudo) in
// its own process, so a big workspace never blocks the action's event loop and
// the same code serves both ways of being root. It never follows symlinks and
// never crosses into another file system.
// ---------------------------------------------------------------------------

function rootHelper(): void {
  const fs = process.getBuiltinModule('node:fs')
  const pathMod = process.getBuiltinModule('node:path')
  const [op, ...args] = process.argv.slice(1)
  const input = (): unknown => JSON.parse(fs.readFileSync(0, 'utf8') || 'null')
  let failed = 0
  const walk = (root: string, visit: (p: string, st: import('node:fs').Stats) => void): void => {
    const top = fs.lstatSync(root)
    visit(root, top)
    if (!top.isDirectory()) return
    const stack = [root]
    while (stack.length > 0) {
      const dir = stack.pop() as string
      let names: string[]
      try {
        names = fs.readdirSync(dir)
      } catch {
        failed++
        continue
      }
      for (const name of names) {
        const p = pathMod.join(dir, name)
        let st: import('node:fs').Stats
        try {
          st = fs.lstatSync(p)
        } catch {
          continue
        }
        if (st.dev !== top.dev) continue
        visit(p, st)
        if (st.isDirectory()) stack.push(p)
      }
    }
  }
  const chown = (p: string, uid: number, gid: number): boolean => {
    try {
      fs.lchownSync(p, uid, gid)
      return true
    } catch {
      failed++
      return false
    }
  }
  let result: unknown = null
  if (op === 'give') {
    // lend the sandbox user everything the owner owns; record what was changed
    const [root, owner, to] = [args[0], Number(args[1]), Number(args[2])]
    const changed: Array<[string, number, number]> = []
    walk(root, (p, st) => {
      if (st.uid === owner && chown(p, to, st.gid)) changed.push([p, st.uid, st.gid])
    })
    result = { changed }
  } else if (op === 'restore') {
    // put recorded owners back; what the sandbox user made goes to the workspace's owner
    const [root, from, uid, gid] = [args[0], Number(args[1]), Number(args[2]), Number(args[3])]
    let restored = 0
    let adopted = 0
    for (const [p, u, g] of (input() as Array<[string, number, number]>) ?? []) {
      try {
        if (fs.lstatSync(p).uid === from && chown(p, u, g)) restored++
      } catch {
        // gone
      }
    }
    try {
      walk(root, (p, st) => {
        if (st.uid === from && chown(p, uid, gid)) adopted++
      })
    } catch {
      failed++
    }
    result = { restored, adopted }
  } else if (op === 'chmod') {
    for (const [p, mode] of (input() as Array<[string, number]>) ?? []) {
      try {
        const st = fs.lstatSync(p)
        if (st.isDirectory()) fs.chmodSync(p, mode)
        else failed++
      } catch {
        failed++
      }
    }
  } else if (op === 'home') {
    const [home, uid, gid] = [args[0], Number(args[1]), Number(args[2])]
    if (!fs.existsSync(home)) fs.mkdirSync(home, { recursive: true, mode: 0o700 })
    const st = fs.lstatSync(home)
    if (!st.isDirectory()) throw new Error(`${home} is not a folder`)
    fs.lchownSync(home, uid, gid)
    fs.chmodSync(home, 0o700)
  } else if (op === 'scrub') {
    // the sandbox user's files from earlier runs: its home's content, its temp files, its crontab
    const [uid, user, home, ...temps] = [Number(args[0]), args[1], args[2], ...args.slice(3)]
    try {
      const st = fs.lstatSync(home)
      if (st.isDirectory() && st.uid === uid) {
        for (const name of fs.readdirSync(home)) fs.rmSync(pathMod.join(home, name), { recursive: true, force: true })
      }
    } catch {
      // no home yet
    }
    for (const dir of temps) {
      let names: string[] = []
      try {
        names = fs.readdirSync(dir)
      } catch {
        continue
      }
      for (const name of names) {
        const p = pathMod.join(dir, name)
        try {
          if (fs.lstatSync(p).uid === uid) fs.rmSync(p, { recursive: true, force: true })
        } catch {
          failed++
        }
      }
    }
    for (const p of [`/var/spool/cron/crontabs/${user}`, `/var/spool/cron/${user}`]) {
      try {
        if (fs.lstatSync(p).isFile()) fs.unlinkSync(p)
      } catch {
        // none
      }
    }
  } else {
    throw new Error(`unknown operation ${op}`)
  }
  process.stdout.write(JSON.stringify({ result, failed }))
}

const HELPER_SOURCE = `(${rootHelper.toString()})()`

interface HelperResult<T> {
  ok: boolean
  result?: T
  failed: number
  error?: string
}

/** Run the helper as root (`priv`), or as ourselves (`priv` undefined). */
async function helper<T>(priv: Privilege | undefined, args: string[], input?: unknown): Promise<HelperResult<T>> {
  const r = await asRoot(priv ?? { kind: 'root' }, [process.execPath, '-e', HELPER_SOURCE, ...args], {
    input: input === undefined ? undefined : JSON.stringify(input),
    timeoutMs: 15 * 60_000
  })
  if (r.code !== 0) return { ok: false, failed: 0, error: firstLine(r) }
  try {
    const parsed = JSON.parse(r.stdout) as { result: T; failed: number }
    return { ok: true, result: parsed.result, failed: parsed.failed }
  } catch {
    return { ok: false, failed: 0, error: 'unreadable answer from the root helper' }
  }
}

// ---------------------------------------------------------------------------
// Run tags: which runs are live on this machine
// ---------------------------------------------------------------------------

/** The folder of run tags and saved states: ours, and closed to everyone else. */
function runDirOf(runDir: string | undefined): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1
  return runDir ?? path.join(os.tmpdir(), `bash-agent-runs-${uid}`)
}

const safeMarker = (marker: string) => marker.replace(/[^A-Za-z0-9_-]/g, '') || 'x'

function openRunTag(marker: string, runDir: string | undefined): RunTag | undefined {
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1
  const dir = runDirOf(runDir)
  try {
    try {
      mkdirSync(dir, { mode: 0o700 })
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return undefined
    }
    // only a folder of ours that nobody else can write is trusted
    const st = lstatSync(dir)
    if (!st.isDirectory() || (uid >= 0 && st.uid !== uid) || (st.mode & 0o077) !== 0) return undefined
    const file = path.join(realpathSync(dir), `run-${process.pid}-${safeMarker(marker)}`)
    writeFileSync(file, '', { mode: 0o600 })
    return { fd: openSync(file, 'r'), path: file }
  } catch {
    return undefined
  }
}

function closeRunTag(tag: RunTag | undefined): void {
  if (!tag) return
  try {
    closeSync(tag.fd)
  } catch {
    // closed
  }
  try {
    unlinkSync(tag.path)
  } catch {
    // gone
  }
}

function pidAlive(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1')
    return !/^State:\s+[ZX]/m.test(status)
  } catch {
    return false
  }
}

/** How many other runs on this machine are live (their tags exist and their action process is alive). Stale tags are removed. */
function otherLiveRuns(tag: RunTag | undefined): number {
  if (!tag) return 0
  const dir = path.dirname(tag.path)
  let n = 0
  let names: string[] = []
  try {
    names = readdirSync(dir)
  } catch {
    return 0
  }
  for (const name of names) {
    const file = path.join(dir, name)
    if (file === tag.path) continue
    const pid = Number(/^run-(\d+)-/.exec(name)?.[1])
    if (!Number.isInteger(pid)) continue
    if (pidAlive(pid)) n++
    else {
      try {
        unlinkSync(file)
      } catch {
        // someone else cleaned it
      }
    }
  }
  return n
}

// ---------------------------------------------------------------------------
// The sandbox user
// ---------------------------------------------------------------------------

interface Account {
  name: string
  uid: number
  gid: number
  home: string
}

function lookupUser(name: string): Account | undefined {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':')
      if (f[0] === name && f.length >= 7) return { name, uid: Number(f[2]), gid: Number(f[3]), home: f[5] }
    }
  } catch {
    // no passwd file
  }
  return undefined
}

function groupsOf(account: Account): string[] {
  const out: string[] = []
  try {
    for (const line of readFileSync('/etc/group', 'utf8').split('\n')) {
      const f = line.split(':')
      if (f.length < 4) continue
      if (Number(f[2]) === account.gid || f[3].split(',').includes(account.name)) out.push(f[0])
    }
  } catch {
    // no group file
  }
  return out
}

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms))

/** The sandbox user, created on first use; an error text when it cannot be had safely. */
async function ensureUser(priv: Privilege, name: string, sudoBin: string | undefined): Promise<Account | string> {
  if (!/^[a-z_][a-z0-9_-]{0,30}$/.test(name)) return `invalid user name "${name}"`
  let account = lookupUser(name)
  if (!account) {
    let last: ExecResult | undefined
    for (let attempt = 0; attempt < 6 && !account; attempt++) {
      // another run may be creating it, or holding the passwd lock
      last = await asRoot(priv, ['useradd', '--create-home', '--shell', '/bin/bash', '--user-group', '--comment', 'bash-agent action sandbox', name], {
        env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C', LC_ALL: 'C' },
        timeoutMs: 60_000
      })
      account = lookupUser(name)
      if (!account && last.code !== 10) break
      if (!account) await sleep(200 + attempt * 300)
    }
    if (!account) return `useradd failed: ${last ? firstLine(last) : 'not run'}`
  }
  if (!Number.isInteger(account.uid) || account.uid === 0 || account.gid === 0) return `the user ${name} has root's uid or gid`
  if (!path.isAbsolute(account.home) || account.home === '/') return `the user ${name} has no home folder of its own (${account.home})`
  const powerful = groupsOf(account).filter(g => POWERFUL_GROUPS.has(g))
  if (powerful.length > 0) return `the user ${name} is in the group ${powerful.join(', ')}`
  if (sudoBin) {
    const r = await asRoot(priv, [sudoBin, '-n', '-l', '-U', name], { timeoutMs: 15_000 })
    if (/may run the following commands/i.test(r.stdout)) return `the user ${name} may use sudo`
  }
  return account
}

function realpathOr(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return path.resolve(p)
  }
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child)
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))
}

/** Folders above the workspace that others cannot traverse, and RUNNER_TEMP if others can use it. */
function modeChanges(workspace: string, runnerTemp: string | undefined): Array<{ path: string; from: number; to: number }> {
  const out: Array<{ path: string; from: number; to: number }> = []
  const seen = new Set<string>()
  const ancestors = (p: string): string[] => {
    const list: string[] = []
    for (let d = path.dirname(p); ; d = path.dirname(d)) {
      list.push(d)
      if (path.dirname(d) === d) break
    }
    return list
  }
  let real = workspace
  try {
    real = realpathSync(workspace)
  } catch {
    // checked later
  }
  for (const dir of [...ancestors(path.resolve(workspace)), ...ancestors(real)]) {
    if (seen.has(dir)) continue
    seen.add(dir)
    try {
      const st = lstatSync(dir)
      if (!st.isDirectory()) continue
      const mode = st.mode & 0o7777
      if ((mode & 0o001) === 0) out.push({ path: dir, from: mode, to: mode | 0o001 })
    } catch {
      // not there
    }
  }
  if (runnerTemp) {
    try {
      const rt = realpathSync(runnerTemp)
      const st = lstatSync(rt)
      const mode = st.mode & 0o7777
      if (st.isDirectory() && !isInside(real, rt) && !isInside(rt, real) && (mode & 0o007) !== 0 && !seen.has(rt)) {
        out.push({ path: rt, from: mode, to: mode & ~0o007 })
      }
    } catch {
      // none
    }
  }
  return out
}

/** What was lent to the sandbox user, to be put back. */
interface Lent {
  /** how we act as root */
  priv: Privilege
  /** the sandbox user's uid */
  uid: number
  /** the workspace's real path and its owner */
  workspace: string
  owner: { uid: number; gid: number }
  /** entries chowned to the sandbox user, with their owner before */
  given: Array<[string, number, number]>
  /** folder modes changed */
  changes: Array<{ path: string; from: number; to: number }>
}

/** Give the workspace back to its owner (entry by entry) and the folders their modes. */
async function restoreWorkspace(lent: Lent): Promise<string[]> {
  const problems: string[] = []
  const back = await helper<{ restored: number; adopted: number }>(
    lent.priv,
    ['restore', lent.workspace, String(lent.uid), String(lent.owner.uid), String(lent.owner.gid)],
    lent.given
  )
  if (!back.ok) problems.push(`workspace ownership not put back: ${back.error}`)
  else if (back.failed > 0) problems.push(`workspace ownership: ${back.failed} entries could not be put back`)
  if (lent.changes.length > 0) {
    const modes = await helper(lent.priv, ['chmod'], lent.changes.map(c => [c.path, c.from]))
    if (!modes.ok || modes.failed > 0) problems.push(`folder modes not all put back: ${modes.error ?? `${modes.failed} failed`}`)
  }
  return problems
}

interface UserSandbox {
  account: Account
  identity: Identity
  /** how we act as root */
  priv: Privilege
  lent: Lent
  /** put back the workspace's ownership and the folder modes; problems found */
  restore(): Promise<string[]>
  /** remove the user's files (home content, temp files, crontab) when no other run uses the user */
  scrub(): Promise<string | undefined>
}

async function setUpUser(
  opts: SandboxOptions,
  tag: RunTag | undefined
): Promise<UserSandbox | string> {
  const priv = await findPrivilege(opts)
  if (typeof priv === 'string') return priv
  const sudoBin = priv.kind === 'sudo' ? priv.sudo : (opts.sudo ?? findProgram('sudo', opts.env.PATH, realpathOr(opts.workspace)))
  const account = await ensureUser(priv, opts.user ?? SANDBOX_USER, sudoBin)
  if (typeof account === 'string') return account

  const identity: Identity =
    priv.kind === 'root'
      ? { kind: 'uid', user: account.name, uid: account.uid, gid: account.gid, home: account.home, tag, maxProcesses: SANDBOX_MAX_PROCESSES }
      : {
          kind: 'sudo',
          user: account.name,
          home: account.home,
          sudo: priv.sudo,
          shell: findProgram('bash', opts.env.PATH, realpathOr(opts.workspace)) ?? '/bin/bash',
          maxProcesses: SANDBOX_MAX_PROCESSES
        }

  let workspaceReal: string
  let owner: Stats
  try {
    workspaceReal = realpathSync(opts.workspace)
    owner = lstatSync(workspaceReal)
    if (!owner.isDirectory()) return `the workspace ${opts.workspace} is not a folder`
  } catch (e) {
    return `the workspace cannot be read (${(e as Error).message})`
  }
  if (owner.uid === account.uid) return `the workspace already belongs to ${account.name}`
  // only a project folder is lent: never one that holds the system, a home, the runner's temp or node itself
  const held: Array<[string, string | undefined]> = [
    ['the root folder', '/'],
    ['the home folder of the action\'s user', os.homedir()],
    ['RUNNER_TEMP', opts.env.RUNNER_TEMP],
    ['the node program running the action', process.execPath]
  ]
  for (const [what, p] of held) {
    if (p && isInside(realpathOr(p), workspaceReal)) return `the workspace ${opts.workspace} holds ${what}`
  }
  if (workspaceReal.split(path.sep).filter(Boolean).length < 2) return `the workspace ${opts.workspace} is a system folder`
  if (isInside(account.home, workspaceReal) || isInside(workspaceReal, account.home)) {
    return `the home folder of ${account.name} (${account.home}) overlaps the workspace`
  }

  const temps = [...new Set([...TEMP_DIRS, os.tmpdir()])].filter(d => existsSync(d))
  const scrub = async (): Promise<string | undefined> => {
    if (otherLiveRuns(tag) > 0) return undefined
    await killLeftovers('', identity)
    const r = await helper(priv, ['scrub', String(account.uid), account.name, account.home, ...temps])
    return r.ok ? undefined : `could not clean up after the sandbox user: ${r.error}`
  }

  // processes and files an earlier run of the user may have left
  await scrub()
  const home = await helper(priv, ['home', account.home, String(account.uid), String(account.gid)])
  if (!home.ok) return `could not prepare the home folder of ${account.name}: ${home.error}`

  const changes = modeChanges(opts.workspace, opts.env.RUNNER_TEMP)
  const lent: Lent = { priv, uid: account.uid, workspace: workspaceReal, owner: { uid: owner.uid, gid: owner.gid }, given: [], changes }
  const undo = () => restoreWorkspace(lent)

  if (changes.length > 0) {
    const r = await helper(priv, ['chmod'], changes.map(c => [c.path, c.to]))
    if (!r.ok || r.failed > 0) {
      await undo()
      return `could not open the folders above the workspace: ${r.error ?? `${r.failed} failed`}`
    }
  }
  const give = await helper<{ changed: Array<[string, number, number]> }>(priv, ['give', workspaceReal, String(owner.uid), String(account.uid)])
  lent.given = give.result?.changed ?? []
  if (!give.ok) {
    await undo()
    return `could not lend the workspace to ${account.name}: ${give.error}`
  }

  // the user must reach and write the workspace by its path
  const probe = ['/bin/sh', '-c', 'cd "$1" && test -w "$1" && test -x "$1"', 'sh', opts.workspace]
  const check =
    priv.kind === 'root'
      ? await exec(probe[0], probe.slice(1), { uid: account.uid, gid: account.gid, tag, timeoutMs: 15_000 })
      : await exec(priv.sudo, ['-n', '-u', account.name, '--', ...probe], { timeoutMs: 15_000 })
  if (check.code !== 0) {
    await undo()
    return `${account.name} cannot write the workspace (${firstLine(check)})`
  }

  return { account, identity, priv, lent, restore: undo, scrub }
}

// ---------------------------------------------------------------------------
// Saved state: what release() must put back, kept in the run folder (ours,
// mode 0700) until release() has done it, so the post step can finish the job
// when the main step was killed first (recoverSandbox).
// ---------------------------------------------------------------------------

interface SavedState {
  version: 2
  marker: string
  /** the git credentials' state (see sandbox/credentials.ts) */
  credentials: string
  user?: { account: Account; lent: Lent }
}

function stateFileOf(dir: string, marker: string): string {
  return path.join(dir, `state-${safeMarker(marker)}.json`)
}

function saveState(tag: RunTag | undefined, state: SavedState): string | undefined {
  if (!tag) return undefined
  const file = stateFileOf(path.dirname(tag.path), state.marker)
  try {
    writeFileSync(file, JSON.stringify(state), { mode: 0o600 })
    return file
  } catch {
    return undefined
  }
}

/**
 * Finish what a run's release() did not (the main step was killed, or gave up
 * waiting for it): kill the run's leftover processes, put the git credentials
 * back, give the workspace back and the folders their modes. For the post
 * step, with the marker the main step used. Does nothing (false) when that
 * run's release() finished, or there was nothing to put back. Never throws.
 */
export async function recoverSandbox(marker: string, log: (message: string) => void, runDir?: string): Promise<boolean> {
  const file = stateFileOf(runDirOf(runDir), marker)
  let state: SavedState
  try {
    const st = lstatSync(file)
    const me = typeof process.getuid === 'function' ? process.getuid() : -1
    // only a state file we wrote ourselves
    if (!st.isFile() || (me >= 0 && st.uid !== me) || (st.mode & 0o077) !== 0) return false
    state = JSON.parse(readFileSync(file, 'utf8')) as SavedState
    if (state.version !== 2 || state.marker !== marker) return false
  } catch {
    return false
  }
  const problems: string[] = []
  // the run's tag file (its descriptor died with the main step; processes that inherited it still point to it)
  const dir = path.dirname(file)
  let tagPath = path.join(dir, `run-0-${safeMarker(marker)}`)
  try {
    const found = readdirSync(dir).find(n => n.startsWith('run-') && n.endsWith(`-${safeMarker(marker)}`))
    if (found) tagPath = path.join(dir, found)
  } catch {
    // no folder
  }
  const tag: RunTag = { fd: -1, path: tagPath }
  try {
    const user = state.user
    const identity: Identity = !user
      ? { kind: 'self', tag }
      : user.lent.priv.kind === 'root'
        ? { kind: 'uid', user: user.account.name, uid: user.account.uid, gid: user.account.gid, home: user.account.home, tag }
        : { kind: 'sudo', user: user.account.name, home: user.account.home, sudo: user.lent.priv.sudo }
    const killed = await killLeftovers(marker, identity)
    if (killed > 0) log(`Stopped ${killed} process${killed === 1 ? '' : 'es'} the agent left running.`)
    // ownership first: the configs are then written back as their owner
    if (user) problems.push(...(await restoreWorkspace(user.lent)))
    problems.push(...(await restoreFromState(state.credentials, log)))
  } catch (e) {
    problems.push((e as Error).message)
  } finally {
    for (const f of [file, tagPath]) {
      try {
        unlinkSync(f)
      } catch {
        // gone
      }
    }
  }
  log(`Sandbox: the main step ended before putting everything back; done now${problems.length ? ` (problems: ${problems.join('; ')})` : ''}.`)
  return true
}

// ---------------------------------------------------------------------------

export async function prepareSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const tag = openRunTag(opts.marker, opts.runDir)

  // Credentials first: their values join the redactor before the environment is chosen.
  const credentialState = opts.credentialState ?? newCredentialState(tag ? path.dirname(tag.path) : os.tmpdir())
  let git: HiddenCredentials = { files: [], restore: async () => [] }
  try {
    // the runner user's own configs and credential store too: commands run as that user in none mode (also a fallback to it)
    git = await hideCredentials(opts.workspace, opts.redactor, credentialState, opts.log, { home: opts.env.HOME ?? os.homedir() })
  } catch (e) {
    opts.log(`Git credentials: could not check the workspace git configs (${(e as Error).message}).`)
  }

  const runner = { home: opts.env.HOME ?? os.homedir(), user: opts.env.USER ?? os.userInfo().username, tmpdir: opts.env.TMPDIR ?? os.tmpdir() }
  const envFor = (who: { home: string; user: string; tmpdir: string }) =>
    commandEnv(opts.env, { passEnv: opts.passEnv ?? [], redactor: opts.redactor, ...who })
  let env: Record<string, string> = { ...envFor(runner), BASH_AGENT_RUN: opts.marker }

  let user: UserSandbox | undefined
  let note = 'none'
  if (opts.mode === 'user') {
    let why: string
    try {
      const r = await setUpUser(opts, tag)
      if (typeof r === 'string') why = r
      else {
        user = r
        why = ''
      }
    } catch (e) {
      why = `unexpected error: ${(e as Error).message}`
    }
    if (user) {
      note = `user (${user.account.name})`
      env = { ...envFor({ home: user.account.home, user: user.account.name, tmpdir: '/tmp' }), BASH_AGENT_RUN: opts.marker }
      opts.log(
        `Sandbox: commands run as the unprivileged user ${user.account.name} (uid ${user.account.uid}), which holds the workspace for the run.`
      )
    } else {
      note = `none (user sandbox unavailable: ${why})`
      opts.log(`Sandbox: the user sandbox is unavailable (${why}); commands run as the runner user (sandbox: none).`)
    }
  } else {
    opts.log('Sandbox: none; commands run as the runner user, with an allowlisted environment.')
  }

  const identity: Identity = user ? user.identity : { kind: 'self', tag }
  const stateFile = saveState(tag, {
    version: 2,
    marker: opts.marker,
    credentials: credentialState,
    user: user ? { account: user.account, lent: user.lent } : undefined
  })
  let released = false
  return {
    mode: user ? 'user' : 'none',
    identity,
    note,
    env,
    release: async () => {
      if (released) return
      released = true
      const problems: string[] = []
      try {
        // Most important first (the caller may stop waiting): stop the agent's
        // processes, put the credentials back (quick), give the workspace back
        // (a walk over it); the clean-up of the sandbox user's files comes last.
        const killed = await killLeftovers(opts.marker, identity)
        if (killed > 0) opts.log(`Stopped ${killed} process${killed === 1 ? '' : 'es'} the agent left running.`)
        // ownership first: the configs are then written back as their owner
        if (user) problems.push(...(await user.restore()))
        problems.push(...(await git.restore()))
        if (user) {
          const cleaned = await user.scrub()
          if (cleaned) problems.push(cleaned)
        } else {
          await killLeftovers(opts.marker, identity)
        }
      } finally {
        if (stateFile) {
          try {
            unlinkSync(stateFile)
          } catch {
            // gone
          }
        }
        closeRunTag(tag)
      }
      if (problems.length > 0) throw new Error(problems.join('; '))
    }
  }
}
