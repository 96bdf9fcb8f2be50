// A conversation carried over to a new question (the local session's next
// line, a thread's next /agent comment). Pure functions over messages: no I/O.
//
// A run can end in the middle of a turn (a limit, a cancel, a crash): its last
// message is then an assistant turn whose tool calls got no result, and the
// API rejects any request that goes on from there. closeUnfinished answers each
// such call with a result saying it was not run, so the next question can
// follow.
import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from '../types'
import { elideOldToolResults, estimateTokens } from './context'

/** The text a tool call that never ran is answered with. */
export const NOT_RUN = 'Not run: the run ended before this command was run.'

const toolUseIds = (m: MessageParam | undefined): string[] =>
  m && m.role === 'assistant' && Array.isArray(m.content)
    ? m.content.filter(b => b.type === 'tool_use').map(b => (b as { id: string }).id)
    : []

const resultIds = (m: MessageParam | undefined): Set<string> =>
  new Set(
    m && m.role === 'user' && Array.isArray(m.content)
      ? m.content.filter(b => b.type === 'tool_result').map(b => (b as ToolResultBlockParam).tool_use_id)
      : []
  )

/**
 * A copy of `messages` that the API accepts as the start of a next request:
 * every tool_use of the last assistant turn has its tool_result (the missing
 * ones say they were not run, with is_error), placed first in the following
 * user message as the API requires. Earlier turns are left as they are (the
 * loop always answers a turn before it asks again). Does not change its input.
 */
export function closeUnfinished(messages: readonly MessageParam[]): MessageParam[] {
  const out = messages.map(m => ({ ...m, content: Array.isArray(m.content) ? [...m.content] : m.content })) as MessageParam[]
  let lastAssistant = -1
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i].role === 'assistant') {
      lastAssistant = i
      break
    }
  }
  if (lastAssistant < 0) return out
  const ids = toolUseIds(out[lastAssistant])
  if (ids.length === 0) return out
  const next = out[lastAssistant + 1]
  const answered = resultIds(next)
  const missing: ToolResultBlockParam[] = ids
    .filter(id => !answered.has(id))
    .map(id => ({ type: 'tool_result', tool_use_id: id, content: NOT_RUN, is_error: true }))
  if (missing.length === 0) return out
  if (next && next.role === 'user') {
    const rest = typeof next.content === 'string' ? [{ type: 'text' as const, text: next.content }] : next.content
    const results = rest.filter(b => b.type === 'tool_result')
    const others = rest.filter(b => b.type !== 'tool_result')
    out[lastAssistant + 1] = { role: 'user', content: [...results, ...missing, ...others] }
  } else {
    out.splice(lastAssistant + 1, 0, { role: 'user', content: missing })
  }
  return out
}

/**
 * Adds a new question after `messages` (which closeUnfinished has closed):
 * as its own user message, or, when the conversation already ends with a user
 * message (tool results of a run that was stopped before it asked again),
 * after that message's blocks, so user and assistant turns keep alternating.
 */
export function appendTask(messages: MessageParam[], task: string): MessageParam[] {
  const last = messages.at(-1)
  if (last?.role === 'user') {
    const blocks: ContentBlockParam[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content]
    messages[messages.length - 1] = { role: 'user', content: [...blocks, { type: 'text', text: task }] }
  } else {
    messages.push({ role: 'user', content: task })
  }
  return messages
}

/** What stands for the turns fitHistory left out. */
export const LEFT_OUT = (n: number): string =>
  `[${n} earlier message${n === 1 ? '' : 's'} of this conversation left out to fit the context]`

/**
 * `messages` within `budgetTokens` (estimated): first old tool outputs are
 * replaced by a stub (every tool_use keeps its tool_result), and when that is
 * not enough, the oldest turns are replaced by one user message saying how many
 * were left out; the cut is made before an assistant turn, so every tool_use
 * that stays keeps its result. Returns a new array (the blocks of elided
 * results are new objects too).
 */
export function fitHistory(messages: readonly MessageParam[], budgetTokens: number): MessageParam[] {
  const copy = structuredClone(messages) as MessageParam[]
  if (estimateTokens(copy) <= budgetTokens) return copy
  elideOldToolResults(copy, { budgetTokens, keepRecent: 0 })
  if (estimateTokens(copy) <= budgetTokens) return copy
  for (let cut = 1; cut < copy.length; cut++) {
    if (copy[cut].role !== 'assistant') continue
    const rest: MessageParam[] = [{ role: 'user', content: LEFT_OUT(cut) }, ...copy.slice(cut)]
    if (estimateTokens(rest) <= budgetTokens || cut === copy.length - 1) return rest
  }
  return copy
}
