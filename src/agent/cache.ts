// Prompt caching: where the cache_control breakpoints go.
import type { MessageCreateParams, MessageParam } from '../types'

/**
 * Breakpoints on the system prompt (which caches the tools before it too) and
 * on the last block of the two newest user messages: each turn then reads the
 * previous turn's prefix from the cache and writes only what is new. Three of
 * the API's four allowed breakpoints. The stored history is never modified.
 */
export function withCacheBreakpoints(params: MessageCreateParams): MessageCreateParams {
  const system =
    typeof params.system === 'string'
      ? [{ type: 'text' as const, text: params.system, cache_control: { type: 'ephemeral' as const } }]
      : params.system
  const messages = params.messages.slice()
  let marked = 0
  for (let i = messages.length - 1; i >= 0 && marked < 2; i--) {
    if (messages[i].role !== 'user') continue
    messages[i] = markLastBlock(messages[i])
    marked++
  }
  return { ...params, system, messages }
}

function markLastBlock(message: MessageParam): MessageParam {
  const content =
    typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content.slice()
  if (content.length === 0) return message
  const last = content[content.length - 1]
  content[content.length - 1] = { ...last, cache_control: { type: 'ephemeral' } } as typeof last
  return { ...message, content } as MessageParam
}
