// Prompt caching: where the cache_control breakpoints go.
//
// The API caches the prompt prefix (tools, then system, then messages) up to
// each breakpoint; a later request that starts with the same prefix reads it
// back at a tenth of the input price, and writing it costs 1.25x (5-minute
// cache). At most four breakpoints are allowed in one request.
import type { MessageCreateParams, MessageParam } from '../types'

const EPHEMERAL = { type: 'ephemeral' as const }

/**
 * Breakpoints on the system prompt (which caches the tool definitions before
 * it too) and on the last block of the two newest user messages: each turn
 * then reads everything up to the previous turn's newest message from the
 * cache and writes only what is new. The second message breakpoint keeps that
 * hit even when one turn adds more blocks than the API looks back over from a
 * breakpoint (about 20, e.g. many tool calls at once). Three of the API's four
 * allowed breakpoints; the stored history is never modified.
 */
export function withCacheBreakpoints(params: MessageCreateParams): MessageCreateParams {
  const system =
    typeof params.system === 'string'
      ? params.system
        ? [{ type: 'text' as const, text: params.system, cache_control: EPHEMERAL }]
        : params.system
      : params.system
  // A message given as a string is sent as one text block, marked or not, so the
  // task reads the same on every turn (`"task"` and `[{type:"text",text:"task"}]`
  // are different bytes, and a cache hit needs the same prefix).
  const messages = params.messages.map(asBlocks)
  let marked = 0
  for (let i = messages.length - 1; i >= 0 && marked < 2; i--) {
    if (messages[i].role !== 'user') continue
    const withMark = markLastBlock(messages[i])
    if (withMark === messages[i]) continue
    messages[i] = withMark
    marked++
  }
  return { ...params, system, messages }
}

/** String content as one text block (an empty string stays: an empty text block is invalid). */
function asBlocks(message: MessageParam): MessageParam {
  if (typeof message.content !== 'string' || message.content === '') return message
  return { ...message, content: [{ type: 'text', text: message.content }] } as MessageParam
}

/** The message with a breakpoint on its last block; the same object when it has no block that can carry one. */
function markLastBlock(message: MessageParam): MessageParam {
  if (typeof message.content === 'string') return message
  const content = message.content.slice()
  const last = content[content.length - 1]
  if (!last || (last.type === 'text' && last.text === '')) return message
  content[content.length - 1] = { ...last, cache_control: EPHEMERAL } as typeof last
  return { ...message, content } as MessageParam
}
