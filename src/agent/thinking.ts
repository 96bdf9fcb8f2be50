// Thinking blocks: what may be sent back, and the notes read from them.
//
// Today's models (Sonnet 5.5, Opus 5.x, Fable 5.x) answer with `thinking` blocks (text and
// a `signature`) and sometimes `redacted_thinking` blocks (`data`). They must go back exactly
// as received, in place; and they are bound to the model and the conversation that produced
// them, so a history another model wrote is sent without them
// (https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5#thinking-blocks-are-tied-to-the-model-that-produced-them).
import type Anthropic from '@anthropic-ai/sdk'
import type { MessageParam } from '../types'

const isThinking = (b: { type: string }): boolean => b.type === 'thinking' || b.type === 'redacted_thinking'

/**
 * `messages` as `model` may receive them. `writtenBy` is the model whose responses the
 * assistant turns are (the model stored with a saved history; undefined when not known):
 * when it is `model`, the history goes as is; otherwise every thinking and redacted-thinking
 * block is left out, and an assistant turn that held nothing else is dropped. Pure: the
 * input is not changed, and the messages that need no change are the same objects.
 *
 * A history passed through this holds only `model`'s blocks, so storing it with `model`
 * keeps the rule true for the next run.
 */
export function forModel(messages: readonly MessageParam[], model: string, writtenBy: string | undefined): MessageParam[] {
  if (writtenBy !== undefined && sameModel(writtenBy, model)) return [...messages]
  const out: MessageParam[] = []
  for (const m of messages) {
    if (m.role !== 'assistant' || typeof m.content === 'string' || !m.content.some(isThinking)) {
      out.push(m)
      continue
    }
    const content = m.content.filter(b => !isThinking(b))
    if (content.length > 0) out.push({ ...m, content })
  }
  return out
}

function sameModel(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase()
}

/**
 * The notes the model wrote in one response, each with the index of the content block it
 * leads to: the text of thinking blocks (returned as text only for the progress updates
 * between tool calls, see request.ts) and of text blocks, joined per stretch between tool
 * calls. `before` is the index of the tool_use block the note precedes, or -1 for a note
 * after the last tool call.
 */
export function notesOf(content: readonly Anthropic.ContentBlock[]): Array<{ note: string; before: number }> {
  const notes: Array<{ note: string; before: number }> = []
  let parts: string[] = []
  content.forEach((b, i) => {
    if (b.type === 'thinking' && b.thinking.trim()) parts.push(b.thinking.trim())
    else if (b.type === 'text' && b.text.trim()) parts.push(b.text.trim())
    else if (b.type === 'tool_use') {
      if (parts.length) notes.push({ note: parts.join('\n\n'), before: i })
      parts = []
    }
  })
  if (parts.length) notes.push({ note: parts.join('\n\n'), before: -1 })
  return notes
}
