// The agent loop of the original harness (learn-claude-code s01): ask the
// model, run the bash commands it asks for, send the results back, until it
// stops asking. It knows nothing of GitHub: the model call, the command
// runner and the clock come in as parameters, and progress goes out through
// onEvent.
import type Anthropic from '@anthropic-ai/sdk'
import type { CommandRecord, ExitReason, MessageParam, RunResult, ToolResultBlockParam, Usage } from '../types'
import { emptyUsage, exitReasonOfAbort } from '../types'
import { addUsage, estimateCost } from './cost'
import { elideOldToolResults } from './context'
import { describeModelError, type ModelCall } from './model'

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
  | { type: 'response'; turn: number; usage: Usage; costUsd: number | null; text: string; stopReason: string }
  | { type: 'command-start'; turn: number; command: string }
  | { type: 'command-end'; turn: number; record: CommandRecord }
  | { type: 'tool-error'; turn: number; message: string }

export interface LoopConfig {
  model: string
  system: string
  maxTokens: number
  maxTurns: number
  /** epoch ms after which no new turn starts (the caller also aborts `signal` then) */
  deadline?: number
  maxCostUsd?: number
  /** elide old tool results past this many estimated tokens (0 = never) */
  contextBudgetTokens?: number
  /** aborted with reason 'cancelled' or 'timeout' */
  signal: AbortSignal
}

export interface LoopDeps {
  callModel: ModelCall
  runCommand: (command: string, signal: AbortSignal) => Promise<CommandOutcome>
  now?: () => number
  onEvent?: (event: AgentEvent) => void
}

export async function runLoop(messages: MessageParam[], config: LoopConfig, deps: LoopDeps): Promise<RunResult> {
  const { signal } = config
  const now = deps.now ?? Date.now
  const emit = deps.onEvent ?? (() => {})
  const usage = emptyUsage()
  const commands: CommandRecord[] = []
  let turns = 0
  let finalText = ''
  let exitReason: ExitReason = 'error'
  let error: string | undefined
  const cost = () => estimateCost(config.model, usage)
  const abortReason = (): ExitReason => exitReasonOfAbort(signal.reason)

  try {
    for (;;) {
      if (signal.aborted) {
        exitReason = abortReason()
        break
      }
      if (config.contextBudgetTokens) {
        elideOldToolResults(messages, { budgetTokens: config.contextBudgetTokens, keepRecent: 3 })
      }
      const response = await deps.callModel(
        { model: config.model, system: config.system, messages, tools: [BASH_TOOL], max_tokens: config.maxTokens },
        signal
      )
      turns++
      addUsage(usage, response.usage)
      messages.push({ role: 'assistant', content: response.content })
      const text = response.content
        .filter((b): b is Anthropic.TextBlock => b.type === 'text')
        .map(b => b.text)
        .join('\n\n')
        .trim()
      if (text) finalText = text
      const stop = response.stop_reason ?? 'end_turn'
      emit({ type: 'response', turn: turns, usage: { ...usage }, costUsd: cost(), text, stopReason: stop })

      if (stop !== 'tool_use' && stop !== 'pause_turn') {
        exitReason = stop
        break
      }
      // Limits are checked before the tools of this response run.
      const limit = passedLimit()
      if (limit) {
        exitReason = limit
        break
      }
      if (stop === 'pause_turn') continue // the API paused a long turn: send it back as is

      const results: ToolResultBlockParam[] = []
      for (const block of response.content) {
        if (block.type !== 'tool_use') continue
        results.push(await runTool(block))
      }
      messages.push({ role: 'user', content: results })
      if (signal.aborted) {
        exitReason = abortReason()
        break
      }
    }
  } catch (err) {
    if (signal.aborted) {
      exitReason = abortReason()
    } else {
      exitReason = 'error'
      error = describeModelError(err, config.model)
    }
  }
  return { finalText, exitReason, turns, commands, usage, costUsd: cost(), messages, error }

  function passedLimit(): ExitReason | undefined {
    if (turns >= config.maxTurns) return 'max_turns'
    if (config.deadline !== undefined && now() >= config.deadline) return 'timeout'
    const spent = cost()
    if (config.maxCostUsd !== undefined && spent !== null && spent > config.maxCostUsd) return 'budget'
    return undefined
  }

  async function runTool(block: Anthropic.ToolUseBlock): Promise<ToolResultBlockParam> {
    const fail = (message: string): ToolResultBlockParam => {
      emit({ type: 'tool-error', turn: turns, message })
      return { type: 'tool_result', tool_use_id: block.id, content: message, is_error: true }
    }
    if (block.name !== BASH_TOOL.name) return fail(`Error: unknown tool "${block.name}"; the only tool is bash.`)
    const command = (block.input as { command?: unknown } | null)?.command
    if (typeof command !== 'string' || command.trim() === '') {
      return fail('Error: the bash tool needs a "command" string.')
    }
    if (signal.aborted) return fail('Error: not run; the run was stopped.')
    emit({ type: 'command-start', turn: turns, command })
    const outcome = await deps.runCommand(command, signal)
    commands.push(outcome.record)
    emit({ type: 'command-end', turn: turns, record: outcome.record })
    return { type: 'tool_result', tool_use_id: block.id, content: outcome.content, is_error: outcome.isError || undefined }
  }
}
