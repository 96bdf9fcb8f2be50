// Shared data shapes: one run flows through these as plain values.
import type Anthropic from '@anthropic-ai/sdk'

export type MessageParam = Anthropic.MessageParam
export type Message = Anthropic.Message
export type ContentBlockParam = Anthropic.ContentBlockParam
export type ToolResultBlockParam = Anthropic.ToolResultBlockParam
/**
 * `thinking.display: "updates"` (beta `thinking-display-updates-2026-08-18`) is newer than
 * this SDK's non-beta types, which know `summarized` and `omitted`: the wire field, typed.
 */
export interface ThinkingWithUpdates {
  type: 'adaptive'
  display: 'updates'
}

/** A request body as this action sends it (see agent/request.ts). */
export type MessageCreateParams = Omit<Anthropic.MessageCreateParamsNonStreaming, 'thinking'> & {
  thinking?: Anthropic.ThinkingConfigParam | ThinkingWithUpdates
}

/** One shell command the model asked for, and what came of it. */
export interface CommandRecord {
  command: string
  /** null when the process was killed by a signal, refused, or never started */
  exitCode: number | null
  durationMs: number
  /** stdout and stderr merged, decoded, cleaned, redacted and cut to the limit; `(no output)` when empty */
  output: string
  /** output was longer than the limit and its middle was cut */
  truncated: boolean
  timedOut: boolean
  /** refused by a blocked substring, never run */
  blocked: boolean
  /** the run was cancelled or hit its deadline while this command ran */
  aborted?: boolean
  /** the kernel killed a process of the command for memory (the agent's cgroup): what the report says */
  outOfMemory?: string
  /** spawn failure or tool-call problem, when the command could not run at all */
  error?: string
  /** what the model wrote just before asking for this command (its note between tool calls); agent text */
  note?: string
}

export interface Usage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
}

/** The model's own endings (tool_use and pause_turn go on). */
export type ModelStop = Exclude<Anthropic.StopReason, 'tool_use' | 'pause_turn'>

export type ExitReason = ModelStop | 'max_turns' | 'timeout' | 'budget' | 'skipped' | 'error' | 'cancelled' | 'invalid-output'

/** With output-schema: what came of the final answer (see src/structured). */
export interface StructuredResult {
  /** the final answer as compact JSON, redacted and valid against the schema; undefined when the run ended without one */
  json?: string
  /** what was wrong with the last answer checked (the validator's errors, one a line), when it was not valid */
  errors?: string[]
  /** the endpoint refused output_config.format (its words): the schema was not sent, the answer still checked */
  unsupported?: string
}

/** Why a run was stopped from outside the loop: the reason its AbortSignal carries. */
export type AbortCause = 'cancelled' | 'timeout' | 'crash'

/** The ending an abort reason stands for (one place decodes it). */
export function exitReasonOfAbort(reason: unknown): ExitReason {
  return reason === 'timeout' ? 'timeout' : reason === 'crash' ? 'error' : 'cancelled'
}

export interface RunResult {
  finalText: string
  exitReason: ExitReason
  turns: number
  commands: CommandRecord[]
  usage: Usage
  /** estimated dollars, null when the model's prices are unknown */
  costUsd: number | null
  messages: MessageParam[]
  /** a sentence for the user when exitReason is error (already free of secrets) */
  error?: string
  /** who stopped the run with `/agent stop`, when someone did */
  stoppedBy?: string
  /** with output-schema: the structured output, or why there is none */
  structured?: StructuredResult
}

export const emptyUsage = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0
})

/** A command that was still running when the run ended. */
export function stoppedRecord(command: string, durationMs: number, why: string): CommandRecord {
  return { command, exitCode: null, durationMs, output: `(${why})`, truncated: false, timedOut: false, blocked: false, aborted: true }
}
