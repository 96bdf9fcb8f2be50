// The agent's one tool: run one shell command and record what came of it.
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync, readdirSync, readlinkSync, readSync, statSync } from 'node:fs'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import type { CommandRecord } from '../types'
import { OutputCapture, captureBytes, finishOutput } from './output'
import { clampDelay, currentUid, messageOf } from '../util'

/**
 * A run tag: an open, read-only file descriptor of the action process that
 * every command inherits at fd TAG_FD. Unlike the BASH_AGENT_RUN variable it
 * survives `env -i` and `setsid`, and a sandboxed command cannot forge it (the
 * file sits in a folder only the action's user can open), so leftovers of a
 * run are found by it and processes of other live runs are spared.
 */
export interface RunTag {
  /** descriptor open in this process */
  fd: number
  /** the file's path, `<dir>/run-<pid>-<marker>` (what /proc/PID/fd/N links to) */
  path: string
}

export type Identity =
  | { kind: 'self'; tag?: RunTag } // run as the current user
  | {
      kind: 'uid'
      user: string
      uid: number
      gid: number
      home: string
      tag?: RunTag
      /** RLIMIT_NPROC of the user's commands (fork bombs); none when unset */
      maxProcesses?: number
    } // we are root: spawn with Node's uid/gid options
  | {
      kind: 'sudo'
      user: string
      home: string
      /** the sudo binary, default `sudo` from PATH */
      sudo?: string
      /**
       * the bash that calls sudo (it runs as us, not as the sandbox user, so it
       * must not come from a PATH folder the sandbox user can write); default
       * bash from PATH
       */
      shell?: string
      maxProcesses?: number
    } // we have passwordless sudo: wrap in `sudo -n -u USER -- env -i K=V... <argv>`

/** The descriptor number a run tag has in every command. */
export const TAG_FD = 19

export interface BashOptions {
  cwd: string
  /** the complete environment of the command (already scrubbed by the caller); used as is */
  env: Record<string, string>
  timeoutMs: number
  maxOutputChars: number
  /** substrings that refuse a command (case-sensitive `includes`); empty array allows all */
  blocked: string[]
  /** applied to captured text before it is cut */
  redact: (text: string) => string
  /** chars of extra context kept around each cut for redaction, default 512 */
  redactMargin?: number
  /** default { kind: 'self' } */
  identity?: Identity
  /** aborting kills the whole process group at once; the record gets aborted: true */
  signal?: AbortSignal
}

/** After exit, wait at most this long for the pipe to close ... */
const DRAIN_MAX_MS = 500
/** ... and stop early once nothing arrived for this long. */
const DRAIN_IDLE_MS = 25
/** After a kill, give up waiting for the process to exit after this long. */
const KILL_GRACE_MS = 5000

// Runs inside the spawned bash: merge stderr into the one stdout pipe, then
// replace itself with a fresh bash running the command, so the command keeps
// its own semantics ($?, exit, syntax errors reported by bash).
const SELF_SCRIPT = 'exec 2>&1; exec "$BASH" -c "$1" bash'
const SUDO_SCRIPT = 'exec 2>&1; exec "$@"'
/** The same, first capping the user's processes (a sandbox user cannot raise the cap again). */
const limitScript = (maxProcesses: number): string =>
  `exec 2>&1; ulimit -u ${Math.max(64, Math.floor(maxProcesses))} 2>/dev/null; exec "$BASH" -c "$1" bash`

function findBash(envPath: string | undefined): string {
  const dirs = (envPath ?? '').split(path.delimiter).filter((d) => d !== '')
  for (const dir of [...dirs, '/bin', '/usr/bin', '/usr/local/bin']) {
    const p = path.join(dir, 'bash')
    try {
      if (statSync(p).isFile()) return p
    } catch {
      // not here
    }
  }
  return 'bash'
}

/**
 * A /proc file read into one buffer kept for the purpose: the text, or (without
 * an encoding) how many bytes are in `procBuf`. /proc files report size 0, so
 * readFileSync allocates 64 KiB for each; a sweep over every process made
 * megabytes of garbage at once. Throws when the file is gone.
 */
let procBuf = Buffer.allocUnsafe(16 * 1024)
function readProc(file: string): number
function readProc(file: string, encoding: 'latin1'): string
function readProc(file: string, encoding?: 'latin1'): string | number {
  const fd = openSync(file, 'r')
  try {
    let n = 0
    for (;;) {
      if (n === procBuf.length) {
        const bigger = Buffer.allocUnsafe(procBuf.length * 2)
        procBuf.copy(bigger, 0, 0, n)
        procBuf = bigger
      }
      const r = readSync(fd, procBuf, n, procBuf.length - n, null)
      if (r === 0) break
      n += r
    }
    return encoding ? procBuf.toString(encoding, 0, n) : n
  } finally {
    closeSync(fd)
  }
}

/**
 * A young-generation collection every YOUNG_GC_BYTES of command output. Each
 * chunk read from the pipe is a new 64 KiB buffer outside the JS heap, and V8
 * collects those only after tens of megabytes: a command printing a gigabyte
 * raised the action's memory by ~30 MB. A scavenge takes well under a
 * millisecond. It uses V8's gc extension, which --expose-gc installs in
 * contexts made after it is set; where that fails nothing is done.
 */
const YOUNG_GC_BYTES = 1024 * 1024
let youngGc: ((options: { type: 'minor' }) => void) | null | undefined
function collectYoung(): void {
  if (youngGc === undefined) {
    try {
      setFlagsFromString('--expose-gc')
      youngGc = runInNewContext('typeof gc === "function" ? gc : null') as typeof youngGc
    } catch {
      youngGc = null
    }
  }
  youngGc?.({ type: 'minor' })
}

/** Process groups of `pid`'s descendants, read from /proc (empty without /proc). */
function descendantGroups(pid: number): number[] {
  const parent = new Map<number, number>()
  const group = new Map<number, number>()
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return []
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readProc(`/proc/${name}/stat`, 'latin1')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      parent.set(Number(name), Number(fields[1]))
      group.set(Number(name), Number(fields[2]))
    } catch {
      // gone or unreadable
    }
  }
  const children = new Map<number, number[]>()
  for (const [p, pp] of parent) {
    const list = children.get(pp)
    if (list) list.push(p)
    else children.set(pp, [p])
  }
  const groups = new Set<number>()
  const queue = [...(children.get(pid) ?? [])]
  const seen = new Set<number>(queue)
  while (queue.length > 0) {
    const p = queue.shift() as number
    const g = group.get(p)
    if (g !== undefined && g > 1) groups.add(g)
    for (const c of children.get(p) ?? []) {
      if (!seen.has(c)) {
        seen.add(c)
        queue.push(c)
      }
    }
  }
  return [...groups]
}

/** SIGKILL the process group of `pid` (and the groups of its descendants). Never throws. */
function killGroup(pid: number, identity: Identity): void {
  const groups = [...new Set([pid, ...descendantGroups(pid)])]
  if (identity.kind === 'sudo') {
    // the runner cannot signal the sandbox user's processes: kill as that user
    try {
      const k = spawn(identity.sudo ?? 'sudo', ['-n', '-u', identity.user, 'kill', '-KILL', '--', ...groups.map((g) => `-${g}`)], {
        stdio: 'ignore'
      })
      k.on('error', () => undefined)
    } catch {
      // best effort
    }
  }
  for (const g of groups) {
    try {
      process.kill(-g, 'SIGKILL')
    } catch {
      // gone already, or not ours to signal
    }
  }
}

function baseRecord(command: string): CommandRecord {
  return {
    command,
    exitCode: null,
    durationMs: 0,
    output: '(no output)',
    truncated: false,
    timedOut: false,
    blocked: false
  }
}

/** Run one command with bash. Never throws: every failure becomes a record. */
export async function runBash(command: string, opts: BashOptions): Promise<CommandRecord> {
  const rec = baseRecord(command)

  const hit = opts.blocked.find((s) => s !== '' && command.includes(s))
  if (hit !== undefined) {
    return { ...rec, blocked: true, output: `Error: command refused: it contains the blocked substring "${hit}"` }
  }
  if (opts.signal?.aborted) {
    const why = 'the run was cancelled before this command started'
    return { ...rec, aborted: true, error: why, output: `Error: ${why}` }
  }
  try {
    if (!statSync(opts.cwd).isDirectory()) throw new Error(`working directory is not a directory: ${opts.cwd}`)
  } catch (e) {
    const why =
      (e as NodeJS.ErrnoException).code === 'ENOENT' ? `working directory does not exist: ${opts.cwd}` : messageOf(e)
    return { ...rec, error: why, output: `Error: ${why}` }
  }

  const identity: Identity = opts.identity ?? { kind: 'self' }
  const margin = opts.redactMargin ?? 512
  const bash = identity.kind === 'sudo' && identity.shell ? identity.shell : findBash(opts.env.PATH)
  let args: string[]
  let env: Record<string, string> = opts.env
  let ids: { uid?: number; gid?: number } = {}
  let tag: RunTag | undefined
  if (identity.kind === 'self') {
    args = ['-c', SELF_SCRIPT, 'bash', command]
    tag = identity.tag
  } else if (identity.kind === 'uid') {
    env = { ...opts.env, HOME: identity.home, USER: identity.user, LOGNAME: identity.user }
    ids = { uid: identity.uid, gid: identity.gid }
    const script = identity.maxProcesses ? limitScript(identity.maxProcesses) : SELF_SCRIPT
    args = ['-c', script, 'bash', command]
    tag = identity.tag
  } else {
    // sudo closes inherited descriptors, so no run tag: the sandbox user's processes are found by owner
    const inner = { ...opts.env, HOME: identity.home, USER: identity.user, LOGNAME: identity.user }
    const pairs = Object.entries(inner)
      .filter(([k]) => k !== '' && !k.includes('=') && !k.startsWith('-'))
      .map(([k, v]) => `${k}=${v}`)
    const invocation = identity.maxProcesses
      ? ['bash', '-c', limitScript(identity.maxProcesses), 'bash', command]
      : ['bash', '-c', command]
    args = ['-c', SUDO_SCRIPT, 'bash', identity.sudo ?? 'sudo', '-n', '-u', identity.user, '--', 'env', '-i', ...pairs, ...invocation]
  }
  const stdio: Array<'ignore' | 'pipe' | number> = ['ignore', 'pipe', 'ignore']
  if (tag !== undefined) {
    while (stdio.length < TAG_FD) stdio.push('ignore')
    stdio.push(tag.fd)
  }

  const bytes = captureBytes(opts.maxOutputChars, margin)
  const capture = new OutputCapture(bytes, bytes)
  const started = Date.now()

  let child: ChildProcess
  try {
    child = spawn(bash, args, {
      cwd: opts.cwd,
      env,
      stdio,
      detached: true,
      ...ids
    })
  } catch (e) {
    const why = messageOf(e)
    return { ...rec, error: why, output: `Error: ${why}` }
  }

  return new Promise<CommandRecord>((resolve) => {
    const stdout = child.stdout
    let done = false
    let exited = false
    let streamClosed = false
    let exitCode: number | null = null
    let timedOut = false
    let aborted = false
    let spawnError: string | undefined
    let drainTimer: NodeJS.Timeout | undefined
    let drainCap: NodeJS.Timeout | undefined
    let graceTimer: NodeJS.Timeout | undefined

    const finish = (): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      clearTimeout(drainTimer)
      clearTimeout(drainCap)
      clearTimeout(graceTimer)
      opts.signal?.removeEventListener('abort', onAbort)
      if (stdout) {
        stdout.removeAllListeners('data')
        stdout.on('error', () => undefined)
        stdout.destroy()
      }
      const durationMs = Date.now() - started
      if (spawnError !== undefined && !exited && capture.totalBytes === 0) {
        resolve({ ...rec, durationMs, error: spawnError, output: `Error: ${spawnError}` })
        return
      }
      let out: { output: string; truncated: boolean }
      try {
        out = finishOutput(capture.snapshot(), opts.maxOutputChars, margin, opts.redact)
      } catch (e) {
        // a throwing redact must not leak the unredacted text
        out = { output: `Error: the output could not be processed: ${messageOf(e)}`, truncated: false }
      }
      const result: CommandRecord = {
        ...rec,
        exitCode: timedOut || aborted ? null : exitCode,
        durationMs,
        output: out.output,
        truncated: out.truncated,
        timedOut
      }
      if (aborted) result.aborted = true
      if (spawnError !== undefined) result.error = spawnError
      resolve(result)
    }

    const kill = (): void => {
      if (child.pid !== undefined && !exited) killGroup(child.pid, identity)
      if (graceTimer === undefined) graceTimer = setTimeout(finish, KILL_GRACE_MS)
    }

    const timer = setTimeout(() => {
      if (exited || done) return
      timedOut = true
      kill()
    }, clampDelay(opts.timeoutMs))

    const onAbort = (): void => {
      if (exited || done) return
      aborted = true
      kill()
    }
    opts.signal?.addEventListener('abort', onAbort, { once: true })

    const idle = (): void => {
      clearTimeout(drainTimer)
      drainTimer = setTimeout(finish, DRAIN_IDLE_MS)
    }

    if (stdout) {
      let sinceGc = 0
      stdout.on('data', (chunk: Buffer) => {
        capture.push(chunk)
        sinceGc += chunk.length
        if (sinceGc >= YOUNG_GC_BYTES) {
          sinceGc = 0
          collectYoung()
        }
        if (exited) idle()
      })
      stdout.on('error', () => undefined)
      stdout.on('close', () => {
        streamClosed = true
        if (exited) finish()
      })
    } else {
      streamClosed = true
    }

    child.on('error', (e) => {
      // spawn failure (no exit will follow) or a failed signal (ignored)
      if (child.pid === undefined) {
        spawnError = messageOf(e)
        finish()
      }
    })

    child.on('exit', (code) => {
      exited = true
      exitCode = code
      if (streamClosed) {
        finish()
        return
      }
      // background children may hold the pipe open: take what is there, then stop
      idle()
      drainCap = setTimeout(finish, DRAIN_MAX_MS)
    })
  })
}

/** The text sent back to the model as the tool_result content, and whether it is an error. */
export function toolResult(rec: CommandRecord, timeoutMs: number): { content: string; isError: boolean } {
  const isError =
    rec.blocked || rec.timedOut || rec.aborted === true || rec.error !== undefined || rec.exitCode !== 0
  if (rec.blocked || (rec.error !== undefined && rec.exitCode === null && !rec.timedOut && !rec.aborted)) {
    return { content: rec.output, isError }
  }
  const lines = [rec.output]
  if (rec.exitCode !== null && rec.exitCode !== 0) lines.push(`[exit code ${rec.exitCode}]`)
  if (rec.timedOut) {
    lines.push(`Error: the command timed out after ${timeoutMs / 1000} s and its process group was killed`)
  } else if (rec.aborted) {
    lines.push('Error: the run was cancelled while this command ran, and its process group was killed')
  } else if (rec.exitCode === null) {
    lines.push('[the command was killed by a signal]')
  }
  return { content: lines.join('\n'), isError }
}

/** Run a helper command, never throwing; resolves with its exit code (null on failure) and stdout. */
function run(file: string, args: string[], timeoutMs = 10000): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    let out = ''
    let settled = false
    const settle = (code: number | null): void => {
      if (settled) return
      settled = true
      clearTimeout(t)
      resolve({ code, stdout: out })
    }
    let child: ChildProcess
    try {
      child = spawn(file, args, { stdio: ['ignore', 'pipe', 'ignore'] })
    } catch {
      resolve({ code: null, stdout: '' })
      return
    }
    const t = setTimeout(() => {
      try {
        child.kill('SIGKILL')
      } catch {
        // gone
      }
      settle(null)
    }, timeoutMs)
    child.stdout?.on('data', (d: Buffer) => {
      if (out.length < 1_000_000) out += d.toString('utf8')
    })
    child.on('error', () => settle(null))
    child.on('close', (code) => settle(code))
  })
}

function tryKill(pid: number): boolean {
  try {
    process.kill(pid, 'SIGKILL')
    return true
  } catch {
    return false
  }
}

/** Real and effective uid of a live (not zombie) process; undefined when gone or unreadable. */
function procIds(pid: number): { uid: number; euid: number } | undefined {
  try {
    const status = readProc(`/proc/${pid}/status`, 'latin1')
    if (/^State:\s+[ZX]/m.test(status)) return undefined
    const line = /^Uid:\s+(\d+)\s+(\d+)/m.exec(status)
    return line ? { uid: Number(line[1]), euid: Number(line[2]) } : undefined
  } catch {
    return undefined
  }
}

/** What the open descriptors of a process point to (empty when unreadable). */
function fdLinks(pid: number): string[] {
  const dir = `/proc/${pid}/fd`
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  const links: string[] = []
  for (const n of names) {
    try {
      links.push(readlinkSync(`${dir}/${n}`))
    } catch {
      // closed meanwhile
    }
  }
  return links
}

function hasEnvEntry(pid: number, entry: string): boolean {
  try {
    // compared as bytes in the kept buffer: no string for every variable of every process
    const n = readProc(`/proc/${pid}/environ`)
    const want = Buffer.from(`\0${entry}\0`)
    const env = procBuf.subarray(0, n)
    return env.indexOf(want) !== -1 || (n >= want.length - 1 && env.compare(want, 1, want.length, 0, want.length - 1) === 0)
  } catch {
    return false
  }
}

/** Whether `pid` is a live process (a zombie counts as gone). */
function alive(pid: number): boolean {
  return Number.isInteger(pid) && pid > 0 && procIds(pid) !== undefined
}

/**
 * Whether a descriptor link is the tag of a live run other than `own`: a file
 * `run-<pid>-<marker>` in the tag folder that still exists, made by a process
 * that is still alive.
 */
function isForeignLiveTag(link: string, tagDir: string, own: string): boolean {
  if (link === own || !link.startsWith(`${tagDir}/run-`) || link.endsWith(' (deleted)')) return false
  const pid = Number(/^run-(\d+)-/.exec(link.slice(tagDir.length + 1))?.[1])
  return alive(pid) && existsSync(link)
}

/** Count a user's processes with pgrep (best effort, 0 when unknown). */
async function countUserProcesses(user: string): Promise<number> {
  const r = await run('pgrep', ['-u', user])
  return r.stdout.split('\n').filter((l) => /^\d+$/.test(l.trim())).length
}

/** Rounds of scanning and killing: a dying loop may have forked once more. */
const KILL_ROUNDS = 20

/**
 * Kill every process a run left behind (background jobs, `setsid` children,
 * children that dropped their environment with `env -i`). The caller puts
 * `BASH_AGENT_RUN=<marker>` in every command's env; the identity's run tag (an
 * inherited descriptor) marks them too.
 *
 * - `uid`: every process of the sandbox user, except those holding the tag of
 *   another live run (several runs may share the user on one machine).
 * - `self`: every process with the marker in its environment or the run tag open.
 * - `sudo`: every process of the sandbox user, killed through sudo.
 *
 * Returns how many processes were killed (best effort). Never throws.
 */
export async function killLeftovers(marker: string, identity: Identity): Promise<number> {
  try {
    if (identity.kind === 'sudo') {
      const sudo = identity.sudo ?? 'sudo'
      // through sudo (its secure_path), never a pgrep the sandbox user could plant on our PATH
      const listed = await run(sudo, ['-n', 'pgrep', '-u', identity.user])
      const count = listed.stdout.split('\n').filter((l) => /^\d+$/.test(l.trim())).length
      for (let round = 0; round < 3; round++) {
        const r = await run(sudo, ['-n', 'pkill', '-KILL', '-u', identity.user])
        if (r.code === 1) break // nothing left
        if (r.code !== 0) {
          // no root via sudo: kill, as the sandbox user, everything that user may signal
          await run(sudo, ['-n', '-u', identity.user, 'kill', '-KILL', '-1'])
        }
      }
      return count
    }

    const ownUid = currentUid()
    // never sweep root's or our own user's processes by owner
    const sweepUid =
      identity.kind === 'uid' && identity.uid !== 0 && identity.uid !== ownUid ? identity.uid : undefined

    if (!existsSync('/proc/self/environ')) {
      if (identity.kind !== 'uid' || sweepUid === undefined) return 0
      const count = await countUserProcesses(identity.user)
      await run('pkill', ['-KILL', '-u', identity.user])
      return count
    }

    const entry = marker !== '' ? `BASH_AGENT_RUN=${marker}` : undefined
    const tag = identity.tag
    const tagDir = tag ? path.dirname(tag.path) : undefined
    if (entry === undefined && sweepUid === undefined && tag === undefined) return 0
    const killed = new Set<number>()
    for (let round = 0; round < KILL_ROUNDS; round++) {
      let names: string[]
      try {
        names = await readdir('/proc')
      } catch {
        break
      }
      let found = 0
      for (const name of names) {
        if (!/^\d+$/.test(name)) continue
        const pid = Number(name)
        if (pid === process.pid || pid <= 1) continue
        const ids = procIds(pid)
        if (ids === undefined) continue
        let target: boolean
        if (sweepUid !== undefined && (ids.uid === sweepUid || ids.euid === sweepUid)) {
          const links = tag ? fdLinks(pid) : []
          target =
            tag === undefined ||
            links.includes(tag.path) ||
            !links.some((l) => isForeignLiveTag(l, tagDir as string, tag.path))
        } else {
          target =
            (entry !== undefined && hasEnvEntry(pid, entry)) || (tag !== undefined && fdLinks(pid).includes(tag.path))
        }
        if (target && tryKill(pid)) {
          killed.add(pid)
          found++
        }
      }
      if (found === 0) break
      await new Promise((r) => setTimeout(r, 10))
    }
    return killed.size
  } catch {
    return 0
  }
}
