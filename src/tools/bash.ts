// The agent's one tool: run one shell command and record what came of it.
import { spawn, type ChildProcess } from 'node:child_process'
import { statSync } from 'node:fs'
import type { Readable } from 'node:stream'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import path from 'node:path'
import type { CommandRecord } from '../types'
import { OutputCapture, captureBytes, finishOutput } from './output'
import { clampDelay, messageOf } from '../util'
import { killTree } from '../sandbox/proc'

/**
 * A command started elsewhere (the sandbox's command server): what runBash
 * needs of it. `kill` kills its whole process tree; `forget` tells the
 * starter that nothing more of it is wanted.
 */
export interface Launched {
  pid?: number
  stdout: Readable | null
  on(event: 'exit', listener: (code: number | null) => void): unknown
  on(event: 'error', listener: (e: Error) => void): unknown
  kill(): void
  forget?(): void
}

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
  /** start the command somewhere else (the sandbox); default: bash spawned here, in its own process group */
  launch?: (command: string, o: { cwd: string; env: Record<string, string> }) => Launched
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

function findBash(envPath: string | undefined): string {
  const dirs = (envPath ?? '').split(path.delimiter).filter(d => d !== '')
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

  const hit = opts.blocked.find(s => s !== '' && command.includes(s))
  if (hit !== undefined) {
    return { ...rec, blocked: true, output: `Error: command refused: it contains the blocked substring "${hit}"` }
  }
  if (opts.signal?.aborted) {
    const why = 'the run was cancelled before this command started'
    return { ...rec, aborted: true, error: why, output: `Error: ${why}` }
  }
  if (!opts.launch) {
    try {
      if (!statSync(opts.cwd).isDirectory()) throw new Error(`working directory is not a directory: ${opts.cwd}`)
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? `working directory does not exist: ${opts.cwd}` : messageOf(e)
      return { ...rec, error: why, output: `Error: ${why}` }
    }
  }

  const margin = opts.redactMargin ?? 512
  const bytes = captureBytes(opts.maxOutputChars, margin)
  const capture = new OutputCapture(bytes, bytes)
  const started = Date.now()

  let child: Launched
  try {
    if (opts.launch) {
      child = opts.launch(command, { cwd: opts.cwd, env: opts.env })
    } else {
      const c: ChildProcess = spawn(findBash(opts.env.PATH), ['-c', SELF_SCRIPT, 'bash', command], {
        cwd: opts.cwd,
        env: opts.env,
        stdio: ['ignore', 'pipe', 'ignore'],
        detached: true
      })
      child = {
        get pid() {
          return c.pid
        },
        stdout: c.stdout,
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        on: (event: string, listener: (...a: any[]) => void) => c.on(event, listener),
        kill: () => {
          if (c.pid !== undefined) killTree(c.pid)
        }
      }
    }
  } catch (e) {
    const why = messageOf(e)
    return { ...rec, error: why, output: `Error: ${why}` }
  }

  return new Promise<CommandRecord>(resolve => {
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
      child.forget?.()
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
      if (!exited) child.kill()
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

    child.on('error', e => {
      // spawn failure (no exit will follow) or a failed signal (ignored)
      if (child.pid === undefined) {
        spawnError = messageOf(e)
        finish()
      }
    })

    child.on('exit', code => {
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
  const isError = rec.blocked || rec.timedOut || rec.aborted === true || rec.error !== undefined || rec.exitCode !== 0
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
