// The run's lifecycle controls: signals and crashes, the deadline, and the
// wind-down. Aborting `signal` stops the agent; its reason (an AbortCause) says
// why, and exitReasonOfAbort decodes it.
import * as core from '../actions-core'
import type { Log } from '../report/log'
import { clampDelay, messageOf, within } from '../util'
import { setSignalled } from './state'
import { exitReasonOfAbort, type AbortCause, type RunResult } from '../types'

/** The agent stops this long before timeout-minutes to leave time for the report. */
export function reportReserveMs(timeoutMs: number): number {
  return Math.min(15_000, Math.floor(timeoutMs / 10))
}

/** The runner sends SIGINT, SIGTERM 7.5 s later and kills 2.5 s after that: the report must be out by then. */
const CANCEL_BUDGET_MS = 9000
/**
 * After a stop (cancel, time limit, crash), how long the loop may take to wind
 * down before the report goes out without it. The loop may still send events
 * after that; the recorder ignores them once closed.
 */
export const WIND_DOWN_MS = 4000

/** starting: nothing to report yet; running: every ending is reported; finishing: the report is being written. */
export type Phase = 'starting' | 'running' | 'finishing'

export class RunControl {
  private readonly controller = new AbortController()
  private deadlineTimer: NodeJS.Timeout | undefined
  phase: Phase = 'starting'
  /** when the first SIGINT/SIGTERM arrived */
  signalAt: number | undefined
  /** the first crash while running (a sentence for the report) */
  crash: string | undefined
  /** epoch ms: the agent's deadline and the run's hard end (timeout-minutes) */
  deadline = Infinity
  hardEnd = Infinity

  constructor(private readonly out: Log) {}

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** Stops the agent (first cause wins). */
  stop(cause: AbortCause): void {
    if (!this.controller.signal.aborted) this.controller.abort(cause)
  }

  /**
   * Signals and crashes are handled from the first moment. Before the run
   * starts there is nothing to report: the step just ends. While it runs, the
   * agent is stopped and the report written. While the report is written, a
   * second signal (the runner's SIGTERM) changes nothing.
   */
  install(): void {
    const onSignal = (name: NodeJS.Signals) => {
      if (this.signalAt === undefined) setSignalled(name)
      this.signalAt ??= Date.now()
      if (this.phase === 'starting') {
        this.out.log(`Received ${name} before the agent started; nothing to report.`)
        core.setOutput('exit-reason', 'cancelled')
        core.setFailed('Cancelled before the agent started.')
        process.exit()
      }
      const first = !this.signal.aborted
      this.out.log(first ? `Received ${name}: stopping the agent and writing the report.` : `Received ${name}: still writing the report.`)
      this.stop('cancelled')
    }
    const onCrash = (error: unknown, origin: string) => {
      const message = `Unexpected error: ${messageOf(error)}`
      if (this.phase === 'starting') {
        core.setOutput('exit-reason', 'error')
        core.setFailed(this.out.redact(`The action crashed: ${messageOf(error)}`))
        process.exit()
      }
      if (this.phase === 'finishing') return this.out.warn(`${message} (while writing the report)`)
      this.out.warn(message)
      // A promise nobody waited for failed: worth a warning, not the run.
      if (origin === 'unhandledRejection') return
      this.crash ??= message
      this.stop('crash')
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
    process.on('uncaughtException', error => onCrash(error, 'uncaughtException'))
    process.on('unhandledRejection', reason => onCrash(reason, 'unhandledRejection'))
  }

  /** From here on every ending is reported; the agent stops at the deadline, leaving time for the report. */
  begin(startedAt: number, timeoutMinutes: number): void {
    this.phase = 'running'
    const timeoutMs = timeoutMinutes * 60_000
    this.hardEnd = startedAt + timeoutMs
    this.deadline = this.hardEnd - reportReserveMs(timeoutMs)
    this.deadlineTimer = setTimeout(
      () => {
        if (this.signal.aborted) return
        this.out.log(`The time limit (timeout-minutes: ${timeoutMinutes}) is reached: stopping the agent and writing the report.`)
        this.stop('timeout')
      },
      clampDelay(this.deadline - Date.now())
    )
    this.deadlineTimer.unref()
  }

  /** The run is over: a late signal or crash no longer changes its ending. */
  finishing(): void {
    clearTimeout(this.deadlineTimer)
    this.phase = 'finishing'
  }

  /**
   * The loop's result. Once the run is stopped the loop normally ends at once
   * (the model request is aborted, the command killed); if it does not within
   * WIND_DOWN_MS, the report goes out with what is known (`known`).
   */
  async windDown(loop: Promise<RunResult>, known: () => RunResult): Promise<RunResult> {
    const stopped = new Promise<void>(resolve => {
      if (this.signal.aborted) resolve()
      else this.signal.addEventListener('abort', () => resolve(), { once: true })
    })
    const late = Symbol('late')
    const result = await Promise.race([loop, stopped.then(() => within(loop, WIND_DOWN_MS, late))])
    if (result !== late) return result
    this.out.warn(`The agent did not stop within ${WIND_DOWN_MS / 1000} s; reporting what is known.`)
    return { ...known(), exitReason: exitReasonOfAbort(this.signal.reason) }
  }

  /** Time the slow parts of clean-up may take: less after a cancel, else up to half of what is left. */
  cleanupBudgetMs(): number {
    if (this.signalAt !== undefined) return 3000
    return Math.min(15_000, Math.max(2000, (this.hardEnd - Date.now() - 2000) / 2))
  }

  /** Time the final comment may take: until the runner's kill after a cancel, else until the time limit. */
  publishBudgetMs(): number {
    const now = Date.now()
    if (this.signalAt !== undefined) return Math.max(2000, this.signalAt + CANCEL_BUDGET_MS - now)
    return Math.min(120_000, Math.max(10_000, this.hardEnd - now - 1000))
  }
}
