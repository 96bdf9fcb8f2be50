// The agent loop of the original harness (learn-claude-code s01): ask the
// model, run the bash commands it asks for, send the results back, until it
// stops asking. It knows nothing of GitHub: the model call, the command
// runner and the clock come in as parameters, and progress goes out through
// onEvent.
import type Anthropic from '@anthropic-ai/sdk'
import type { CommandRecord, ExitReason, Message, MessageParam, RunResult, StructuredResult, ToolResultBlockParam, Usage } from '../types'
import { emptyUsage, exitReasonOfAbort } from '../types'
import { addUsage, estimateCost } from './cost'
import { elideOldToolResults } from './context'
import { describeModelError, type ModelCall } from './model'
import { buildRequest, type Effort, type RequestBody } from './request'
import { correctionText, refusesFormat, systemWithSchema, type AnswerCheck } from '../structured/answer'
import type { JsonSchema } from '../structured/schema'
import { maxOutputOf } from './limits'
import { forModel, notesOf } from './thinking'

export const BASH_TOOL: Anthropic.Tool = {
  name: 'bash',
  description: 'Run a shell command.',
  input_schema: {
    type: 'object',
    properties: { command: { type: 'string' } },
    required: ['command']
  }
}

export interface CommandOutcome {
  record: CommandRecord
  content: string
  isError: boolean
}

export type AgentEvent =
  | {
      type: 'response'
      turn: number
      usage: Usage
      costUsd: number | null
      text: string
      stopReason: string
      /** the model's notes in this response (text of its thinking blocks, the progress updates between tool calls); agent text */
      notes: string[]
    }
  | { type: 'command-start'; turn: number; command: string; note?: string }
  /** the reply stopped at max_tokens in the middle of a tool call: asked again with more room, the cut call not run */
  | { type: 'retry-longer'; turn: number; maxTokens: number }
  | { type: 'command-end'; turn: number; record: CommandRecord }
  | { type: 'tool-error'; turn: number; message: string }
  /** the final answer did not match output-schema: one correction turn follows (errors hold agent text) */
  | { type: 'correction'; turn: number; errors: string[] }
  /** the endpoint refused output_config.format: asked again without it (`detail`: its words) */
  | { type: 'format-refused'; turn: number; detail: string }

export interface LoopConfig {
  model: string
  system: string
  maxTokens: number
  /** output_config.effort; undefined leaves the model's default */
  effort?: Effort
  /**
   * The model that wrote the assistant turns already in `messages` (a continued session);
   * when it is not `model`, their thinking blocks are left out (they are bound to the model).
   * Undefined: not known, so they are left out too.
   */
  historyModel?: string
  maxTurns: number
  /** epoch ms after which no new turn starts (the caller also aborts `signal` then) */
  deadline?: number
  maxCostUsd?: number
  /** elide old tool results past this many estimated tokens (0 = never) */
  contextBudgetTokens?: number
  /** output-schema: sent as output_config.format; the final answer is checked with `checkAnswer` */
  outputSchema?: JsonSchema
  /** aborted with reason 'cancelled' or 'timeout' */
  signal: AbortSignal
}

export interface LoopDeps {
  callModel: ModelCall
  runCommand: (command: string, signal: AbortSignal) => Promise<CommandOutcome>
  now?: () => number
  onEvent?: (event: AgentEvent) => void
  /** with outputSchema: the final answer redacted, parsed and validated (src/structured/answer.ts) */
  checkAnswer?: (text: string) => AnswerCheck
}

/** One run's state: the loop owns it, the per-turn steps below update it. */
interface Run {
  readonly config: LoopConfig
  readonly deps: LoopDeps
  readonly now: () => number
  readonly emit: (event: AgentEvent) => void
  readonly messages: MessageParam[]
  readonly usage: Usage
  readonly commands: CommandRecord[]
  turns: number
  finalText: string
  /** the output room of the next request: grows after a reply cut in the middle of a tool call */
  maxTokens: number
  /** the last reply was a paused turn, sent back as is */
  continuing: boolean
  /** the system prompt sent (the schema is added to it where the endpoint refuses output_config.format) */
  system: string
  /** output_config.format is still sent (an endpoint that refuses it is asked again without it, once) */
  format: boolean
  /** the one correction turn of an invalid answer was taken */
  corrected: boolean
  /** with outputSchema: what came of the final answer */
  structured?: StructuredResult
}

/** What a reply leads to: the end of the run, another request, or its tool calls run. */
type Step = { kind: 'end'; exitReason: ExitReason } | { kind: 'ask-again' } | { kind: 'run-tools'; content: Anthropic.ContentBlock[] }

export async function runLoop(messages: MessageParam[], config: LoopConfig, deps: LoopDeps): Promise<RunResult> {
  const run: Run = {
    config,
    deps,
    now: deps.now ?? Date.now,
    emit: deps.onEvent ?? (() => {}),
    messages,
    usage: emptyUsage(),
    commands: [],
    turns: 0,
    finalText: '',
    maxTokens: config.maxTokens,
    continuing: false,
    system: config.system,
    format: config.outputSchema !== undefined,
    corrected: false,
    structured: config.outputSchema ? {} : undefined
  }
  const { signal } = config
  let exitReason: ExitReason | undefined
  let error: string | undefined
  try {
    // Thinking blocks another model wrote cannot be sent to this one. In place: the caller holds `messages`.
    if (config.historyModel !== config.model) messages.splice(0, messages.length, ...forModel(messages, config.model, config.historyModel))
    while (exitReason === undefined) {
      if (signal.aborted) {
        exitReason = exitReasonOfAbort(signal.reason)
        break
      }
      const step = await takeTurn(run)
      if (step.kind === 'end') exitReason = step.exitReason
      else if (step.kind === 'run-tools') messages.push({ role: 'user', content: await runTools(run, step.content) })
    }
  } catch (err) {
    exitReason = signal.aborted ? exitReasonOfAbort(signal.reason) : 'error'
    if (!signal.aborted) error = describeModelError(err, config.model)
  }
  const { finalText, turns, commands, usage, structured } = run
  // only an answer that ended the run well is the run's output (not one before a limit, a cancellation or an error)
  if (structured && exitReason !== 'end_turn' && exitReason !== 'stop_sequence' && exitReason !== 'max_tokens') structured.json = undefined
  return { finalText, exitReason, turns, commands, usage, costUsd: costOf(run), messages, error, ...(structured ? { structured } : {}) }
}

const costOf = (run: Run): number | null => estimateCost(run.config.model, run.usage)

/** One request to the model, its reply kept and told, and what comes next. */
async function takeTurn(run: Run): Promise<Step> {
  const { config, messages } = run
  if (config.contextBudgetTokens) elideOldToolResults(messages, { budgetTokens: config.contextBudgetTokens, keepRecent: 3 })
  const response = await ask(run)
  run.turns++
  addUsage(run.usage, response.usage)
  const stop = response.stop_reason ?? 'end_turn'
  const text = response.content
    .filter((b): b is Anthropic.TextBlock => b.type === 'text')
    .map(b => b.text)
    .join('\n\n')
    .trim()
  const notes = response.content
    .filter((b): b is Anthropic.ThinkingBlock => b.type === 'thinking' && b.thinking.trim() !== '')
    .map(b => b.thinking.trim())
  // A reply cut at max_tokens in the middle of a tool call (its last block, unfinished):
  // the call is never run and the reply not kept.
  const cut = stop === 'max_tokens' && response.content.at(-1)?.type === 'tool_use'
  if (!cut) messages.push({ role: 'assistant', content: response.content })
  if (text) run.finalText = text
  run.emit({ type: 'response', turn: run.turns, usage: { ...run.usage }, costUsd: costOf(run), text, stopReason: stop, notes })

  if (cut) return askLonger(run)
  if (stop !== 'tool_use' && stop !== 'pause_turn') return finalAnswer(run, stop, text)
  // Limits are checked before the tools of this response run.
  const limit = passedLimit(run)
  if (limit) return { kind: 'end', exitReason: limit }
  // The API paused a long turn: send it back as is (the one assistant turn that may end a request).
  run.continuing = stop === 'pause_turn'
  return run.continuing ? { kind: 'ask-again' } : { kind: 'run-tools', content: response.content }
}

const requestOf = (run: Run): RequestBody =>
  buildRequest({
    model: run.config.model,
    system: run.system,
    messages: run.messages,
    tools: [BASH_TOOL],
    maxTokens: run.maxTokens,
    effort: run.config.effort,
    format: run.format ? run.config.outputSchema : undefined,
    continuing: run.continuing
  })

/** The next request; an endpoint that refuses output_config.format (a 400 naming it) is asked again without it, once a run. */
async function ask(run: Run): Promise<Message> {
  const { callModel } = run.deps
  const { signal, outputSchema } = run.config
  try {
    return await callModel(requestOf(run), signal)
  } catch (error) {
    const detail = run.format && outputSchema && !signal.aborted ? refusesFormat(error) : undefined
    if (!detail || !outputSchema || !run.structured) throw error
    run.format = false
    run.structured.unsupported = detail
    run.system = systemWithSchema(run.config.system, outputSchema)
    run.emit({ type: 'format-refused', turn: run.turns + 1, detail })
    return await callModel(requestOf(run), signal)
  }
}

/**
 * A reply that ends the loop. With output-schema its text is the answer: checked (redacted
 * first); an invalid one gets one correction turn (counted against max-turns) that says what
 * is wrong; still invalid, or no turn left for it, the run ends with `invalid-output`.
 * A refusal or a full context window ends the run as it is, without an answer.
 */
function finalAnswer(run: Run, stop: ExitReason, text: string): Step {
  const { structured } = run
  const check = run.deps.checkAnswer
  if (!structured || !check || stop === 'refusal' || stop === 'model_context_window_exceeded') return { kind: 'end', exitReason: stop }
  const verdict = check(text)
  if (verdict.ok) {
    run.structured = { ...structured, json: verdict.json, errors: undefined }
    return { kind: 'end', exitReason: stop }
  }
  structured.errors = verdict.errors
  if (run.corrected || passedLimit(run)) return { kind: 'end', exitReason: 'invalid-output' }
  run.corrected = true
  run.continuing = false
  const schema = run.format ? undefined : run.config.outputSchema
  run.messages.push({ role: 'user', content: [{ type: 'text', text: correctionText(verdict.errors, schema) }] })
  run.emit({ type: 'correction', turn: run.turns, errors: verdict.errors })
  return { kind: 'ask-again' }
}

/**
 * After a reply cut in a tool call: asked again with more room, up to the model's output
 * limit (as Anthropic's tool-use docs advise). At the limit, the run ends with max_tokens,
 * the cut call still not in the history.
 */
function askLonger(run: Run): Step {
  const limit = passedLimit(run)
  if (limit) return { kind: 'end', exitReason: limit }
  const larger = Math.min(maxOutputOf(run.config.model), run.maxTokens * 2)
  if (larger <= run.maxTokens) return { kind: 'end', exitReason: 'max_tokens' }
  run.maxTokens = larger
  run.emit({ type: 'retry-longer', turn: run.turns, maxTokens: larger })
  return { kind: 'ask-again' }
}

function passedLimit(run: Run): ExitReason | undefined {
  const { config } = run
  if (run.turns >= config.maxTurns) return 'max_turns'
  if (config.deadline !== undefined && run.now() >= config.deadline) return 'timeout'
  const spent = costOf(run)
  if (config.maxCostUsd !== undefined && spent !== null && spent > config.maxCostUsd) return 'budget'
  return undefined
}

/** The reply's tool calls, run in order; each note the model wrote before a call goes with it. */
async function runTools(run: Run, content: Anthropic.ContentBlock[]): Promise<ToolResultBlockParam[]> {
  const noteBefore = new Map(notesOf(content).map(n => [n.before, n.note]))
  const results: ToolResultBlockParam[] = []
  for (const [i, block] of content.entries()) {
    if (block.type !== 'tool_use') continue
    results.push(await runTool(run, block, noteBefore.get(i)))
  }
  return results
}

async function runTool(run: Run, block: Anthropic.ToolUseBlock, note: string | undefined): Promise<ToolResultBlockParam> {
  const { emit, turns } = run
  const fail = (message: string): ToolResultBlockParam => {
    emit({ type: 'tool-error', turn: turns, message })
    return { type: 'tool_result', tool_use_id: block.id, content: message, is_error: true }
  }
  if (block.name !== BASH_TOOL.name) return fail(`Error: unknown tool "${block.name}"; the only tool is bash.`)
  const command = (block.input as { command?: unknown } | null)?.command
  if (typeof command !== 'string' || command.trim() === '') {
    return fail('Error: the bash tool needs a "command" string.')
  }
  const { signal } = run.config
  if (signal.aborted) return fail('Error: not run; the run was stopped.')
  emit({ type: 'command-start', turn: turns, command, ...(note ? { note } : {}) })
  const outcome = await run.deps.runCommand(command, signal)
  if (note) outcome.record.note = note
  run.commands.push(outcome.record)
  emit({ type: 'command-end', turn: turns, record: outcome.record })
  return { type: 'tool_result', tool_use_id: block.id, content: outcome.content, is_error: outcome.isError || undefined }
}
