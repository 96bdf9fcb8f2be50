// Keeps a long run from resending huge old command outputs on every turn: once the conversation
// grows past a budget, the oldest tool results are replaced by a one-line stub.
import type { MessageParam } from '../types'

export interface ElideOptions {
  /** start eliding when the estimated size of the messages passes this many tokens */
  budgetTokens: number
  /** the last this-many user messages that carry tool results are never touched */
  keepRecent: number
}

const STUB_PREFIX = '[output elided to save context: '
const stub = (chars: number): string => `${STUB_PREFIX}${chars} characters; the command is in the transcript]`

/** After eliding, go down to this share of the budget, so the very next turn does not elide (and bust the prompt cache) again. */
const TARGET_SHARE = 0.6

/** ~4 characters per token: Anthropic's rule of thumb for English text and code. An estimate, not a count. */
const CHARS_PER_TOKEN = 4

type Block = Record<string, unknown>

const isBlock = (v: unknown): v is Block => typeof v === 'object' && v !== null

function jsonLength(v: unknown): number {
  try {
    return JSON.stringify(v)?.length ?? 0
  } catch {
    return 0
  }
}

/** Characters a content block stands for: its text, or its JSON when it has no plain text. */
function blockChars(block: unknown): number {
  if (typeof block === 'string') return block.length
  if (!isBlock(block)) return 0
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text.length : jsonLength(block)
    case 'thinking':
      return typeof block.thinking === 'string' ? block.thinking.length : jsonLength(block)
    case 'tool_use':
      return (typeof block.name === 'string' ? block.name.length : 0) + jsonLength(block.input)
    case 'tool_result':
      return contentChars(block.content)
    default:
      return jsonLength(block)
  }
}

function contentChars(content: unknown): number {
  if (content === undefined || content === null) return 0
  if (typeof content === 'string') return content.length
  if (Array.isArray(content)) return content.reduce((n: number, b: unknown) => n + blockChars(b), 0)
  return blockChars(content)
}

function messagesChars(messages: MessageParam[]): number {
  return messages.reduce((n, m) => n + contentChars(m.content), 0)
}

/**
 * A cheap estimate of the tokens in `messages`: characters of text (and of JSON for tool inputs
 * and other structured blocks) divided by 4. Real counts depend on the tokenizer; this is only
 * meant to decide when to elide.
 */
export function estimateTokens(messages: MessageParam[]): number {
  return Math.ceil(messagesChars(messages) / CHARS_PER_TOKEN)
}

function toolResults(message: MessageParam): Block[] {
  if (message.role !== 'user' || !Array.isArray(message.content)) return []
  return (message.content as unknown[]).filter((b): b is Block => isBlock(b) && b.type === 'tool_result')
}

const isElided = (block: Block): boolean => typeof block.content === 'string' && block.content.startsWith(STUB_PREFIX)

/**
 * Returns how many tool results it shortened. When the estimated size of `messages` passes
 * budgetTokens, replace the content of the OLDEST tool_result blocks (never those in the last
 * `keepRecent` user messages that carry tool results) by a stub
 * `[output elided to save context: N characters; the command is in the transcript]`, oldest
 * first, until the estimate is under budgetTokens * 0.6 (so it does not bust the prompt cache
 * again on the very next turn). Mutates messages in place. The conversation stays valid: every
 * tool_use keeps its tool_result with the same tool_use_id, is_error kept, nothing else changes;
 * already-elided results are skipped.
 */
export function elideOldToolResults(messages: MessageParam[], opts: ElideOptions): number {
  let chars = messagesChars(messages)
  const tokens = (): number => Math.ceil(chars / CHARS_PER_TOKEN)
  if (tokens() <= opts.budgetTokens) return 0

  const carriers = messages.filter(m => toolResults(m).length > 0)
  const keep = Math.max(0, Math.floor(opts.keepRecent))
  const candidates = carriers.slice(0, Math.max(0, carriers.length - keep))
  const target = opts.budgetTokens * TARGET_SHARE

  let elided = 0
  for (const message of candidates) {
    for (const block of toolResults(message)) {
      if (tokens() < target) return elided
      if (isElided(block)) continue
      const before = contentChars(block.content)
      const replacement = stub(before)
      // A short output costs less than its stub: leave it as it is.
      if (replacement.length >= before) continue
      block.content = replacement
      chars += replacement.length - before
      elided++
    }
  }
  return elided
}
