// What every place a command can run offers (one file per kind in this
// folder: local for the CLI, sandboxed for the action's command server).
import type { Readable } from 'node:stream'
import type { CommandRecord } from '../types'

/** How one command runs and what of its output comes back: the same everywhere. */
export interface CommandOptions {
  timeoutMs: number
  maxOutputChars: number
  /** substrings that refuse a command (case-sensitive `includes`); empty array allows all */
  blocked: string[]
  /** applied to captured text before it is cut: the one way output reaches the model */
  redact: (text: string) => string
  /** chars of extra context kept around each cut for redaction, default 512 */
  redactMargin?: number
  /** aborting kills the command's whole process tree; the record gets aborted: true */
  signal?: AbortSignal
}

export interface StopResult {
  ok: boolean
  detail?: string
}

export interface Environment {
  /** Run one command; never throws: every failure becomes a record. */
  run(command: string, opts: CommandOptions): Promise<CommandRecord>
  /** Kill every process the commands started; ok when they are verified gone. */
  stopAll(): Promise<StopResult>
  /** Put back what the environment changed; what could not be. */
  release(): Promise<string[]>
}

/**
 * A command an environment started, as runBash follows it: its output (stderr
 * joined), its exit, `kill` for its whole process tree, and `forget` once
 * nothing more of it is wanted.
 */
export interface Started {
  readonly pid?: number
  readonly stdout: Readable | null
  on(event: 'exit', listener: (code: number | null) => void): unknown
  on(event: 'error', listener: (e: Error) => void): unknown
  kill(): void
  forget?(): void
}

/** Start `command` with bash in `cwd` with exactly `env`; may throw (then the record says why). */
export type Start = (command: string, where: { cwd: string; env: Record<string, string> }) => Started
