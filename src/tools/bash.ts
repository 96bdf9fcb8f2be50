// The agent's one tool: run one shell command and record what came of it.
// Where it runs is the environment's (src/environments/): this is what every
// environment shares: blocked substrings, the time limit, the abort, the
// output's cut and its redaction, and a record for every outcome.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { CommandRecord } from '../types'
import type { CommandOptions, Start, Started } from '../environments/types'
import { OutputCapture, captureBytes, finishOutput } from './output'
import { clampDelay, messageOf } from '../util'

export interface BashOptions extends CommandOptions {
  cwd: string
  /** the complete environment of the command (already scrubbed by the caller); used as is */
  env: Record<string, string>
  /** how the environment starts bash (environments/local.ts startLocal, or the command server) */
  launch: Start
}

/** After exit, wait at most this long for the pipe to close ... */
const DRAIN_MAX_MS = 500
/** ... and stop early once nothing arrived for this long. */
const DRAIN_IDLE_MS = 25
/** After a kill, give up waiting for the process to exit after this long. */
const KILL_GRACE_MS = 5000

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
  let child: Started
  try {
    child = opts.launch(command, { cwd: opts.cwd, env: opts.env })
  } catch (e) {
    const why = messageOf(e)
    return { ...rec, error: why, output: `Error: ${why}` }
  }
  return new RunningCommand(child, rec, opts).record
}

/** One started command, followed to its record: its output, its end, its time limit and abort. */
class RunningCommand {
  readonly record: Promise<CommandRecord>
  private resolve: (r: CommandRecord) => void = () => undefined
  private readonly capture: OutputCapture
  private readonly margin: number
  private readonly started = Date.now()
  private done = false
  private exited = false
  private outputClosed = false
  private exitCode: number | null = null
  /** why it was killed, if it was (a time-out, then an abort: both) */
  private readonly killedFor = new Set<'timedOut' | 'aborted'>()
  private spawnError: string | undefined
  private readonly timers = new Set<NodeJS.Timeout>()
  private idleTimer: NodeJS.Timeout | undefined
  private graceTimer: NodeJS.Timeout | undefined
  private readonly onAbort = (): void => this.killFor('aborted')

  constructor(
    private readonly child: Started,
    private readonly base: CommandRecord,
    private readonly opts: BashOptions
  ) {
    this.record = new Promise(r => (this.resolve = r))
    this.margin = opts.redactMargin ?? 512
    const bytes = captureBytes(opts.maxOutputChars, this.margin)
    this.capture = new OutputCapture(bytes, bytes)
    this.later(clampDelay(opts.timeoutMs), () => this.killFor('timedOut'))
    opts.signal?.addEventListener('abort', this.onAbort, { once: true })
    this.follow()
  }

  private later(ms: number, f: () => void): NodeJS.Timeout {
    const t = setTimeout(f, ms)
    this.timers.add(t)
    return t
  }

  private follow(): void {
    const { stdout } = this.child
    if (stdout) {
      let sinceGc = 0
      stdout.on('data', (chunk: Buffer) => {
        this.capture.push(chunk)
        sinceGc += chunk.length
        if (sinceGc >= YOUNG_GC_BYTES) {
          sinceGc = 0
          collectYoung()
        }
        if (this.exited) this.idle()
      })
      stdout.on('error', () => undefined)
      stdout.on('close', () => {
        this.outputClosed = true
        if (this.exited) this.finish()
      })
    } else this.outputClosed = true
    this.child.on('error', e => {
      // spawn failure (no exit will follow) or a failed signal (ignored)
      if (this.child.pid !== undefined) return
      this.spawnError = messageOf(e)
      this.finish()
    })
    this.child.on('exit', code => this.onExit(code))
  }

  private onExit(code: number | null): void {
    this.exited = true
    this.exitCode = code
    if (this.outputClosed) return this.finish()
    // background children may hold the pipe open: take what is there, then stop
    this.idle()
    this.later(DRAIN_MAX_MS, () => this.finish())
  }

  private idle(): void {
    clearTimeout(this.idleTimer)
    this.idleTimer = this.later(DRAIN_IDLE_MS, () => this.finish())
  }

  private killFor(why: 'timedOut' | 'aborted'): void {
    if (this.exited || this.done) return
    this.killedFor.add(why)
    this.child.kill()
    this.graceTimer ??= this.later(KILL_GRACE_MS, () => this.finish())
  }

  private finish(): void {
    if (this.done) return
    this.done = true
    for (const t of this.timers) clearTimeout(t)
    this.opts.signal?.removeEventListener('abort', this.onAbort)
    this.child.forget?.()
    const { stdout } = this.child
    if (stdout) {
      stdout.removeAllListeners('data')
      stdout.on('error', () => undefined)
      stdout.destroy()
    }
    this.resolve(this.result(Date.now() - this.started))
  }

  private result(durationMs: number): CommandRecord {
    const rec = this.base
    if (this.spawnError !== undefined && !this.exited && this.capture.totalBytes === 0)
      return { ...rec, durationMs, error: this.spawnError, output: `Error: ${this.spawnError}` }
    let out: { output: string; truncated: boolean }
    try {
      out = finishOutput(this.capture.snapshot(), this.opts.maxOutputChars, this.margin, this.opts.redact)
    } catch (e) {
      // a throwing redact must not leak the unredacted text
      out = { output: `Error: the output could not be processed: ${messageOf(e)}`, truncated: false }
    }
    const timedOut = this.killedFor.has('timedOut')
    const result: CommandRecord = {
      ...rec,
      exitCode: this.killedFor.size ? null : this.exitCode,
      durationMs,
      output: out.output,
      truncated: out.truncated,
      timedOut
    }
    if (this.killedFor.has('aborted')) result.aborted = true
    if (this.spawnError !== undefined) result.error = this.spawnError
    return result
  }
}
/** The text sent back to the model as the tool_result content, and whether it is an error. */
export function toolResult(rec: CommandRecord, timeoutMs: number): { content: string; isError: boolean } {
  const isError = rec.blocked || rec.timedOut || rec.aborted === true || rec.error !== undefined || rec.exitCode !== 0
  if (rec.blocked || (rec.error !== undefined && rec.exitCode === null && !rec.timedOut && !rec.aborted)) {
    return { content: rec.output, isError }
  }
  const lines = [rec.output]
  if (rec.exitCode !== null && rec.exitCode !== 0) lines.push(`[exit code ${rec.exitCode}]`)
  if (rec.outOfMemory) lines.push(`[${rec.outOfMemory}]`)
  if (rec.timedOut) {
    lines.push(`Error: the command timed out after ${timeoutMs / 1000} s and its process group was killed`)
  } else if (rec.aborted) {
    lines.push('Error: the run was cancelled while this command ran, and its process group was killed')
  } else if (rec.exitCode === null) {
    lines.push('[the command was killed by a signal]')
  }
  return { content: lines.join('\n'), isError }
}
