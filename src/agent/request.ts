// The one place a Messages API request body is made. Everything the loop and the local CLI
// send passes through buildRequest, so what today's models refuse is never sent.
//
// Never sent (each returns 400 on Claude Sonnet 5.5, and the sampling ones on every 5.x model;
// https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5): `temperature`,
// `top_p`, `top_k`; a `tool_choice` that forces a tool (`any`, `tool`); a thinking budget
// (`thinking.type: "enabled"` with `budget_tokens`); `thinking.type: "disabled"`; an assistant
// turn at the end of `messages` (a prefill), except the paused turn that `pause_turn` asks
// to have sent back as it came.
import type Anthropic from '@anthropic-ai/sdk'
import type { MessageCreateParams, MessageParam } from '../types'
import { returnsProgressUpdates } from './limits'

export const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const
export type Effort = (typeof EFFORTS)[number]

/** The beta that lets `thinking.display` be `updates`. */
export const DISPLAY_UPDATES_BETA = 'thinking-display-updates-2026-08-18'

export type RequestBody = MessageCreateParams

export interface RequestInput {
  model: string
  system: string
  messages: MessageParam[]
  tools: Anthropic.Tool[]
  maxTokens: number
  effort?: Effort
  /** output-schema: sent as output_config.format, so the final answer is JSON matching it */
  format?: Record<string, unknown>
  /** the last message is the assistant turn a `pause_turn` stop returned, sent back to go on */
  continuing?: boolean
}

export class ForbiddenRequestError extends Error {}

/**
 * The request body. Thinking: on the models that can (limits.ts) the request asks for
 * adaptive thinking (what they run anyway when `thinking` is absent) with
 * `display: "updates"` under the `thinking-display-updates-2026-08-18` beta: the short
 * notes the model writes between tool calls come back as text, while its reasoning stays
 * hidden (empty text, signature only) and is never billed as returned text. `summarized`
 * would return (and make us show) a summary of all reasoning; `omitted`, the default on
 * these models, returns no notes at all. See
 * https://platform.claude.com/docs/en/build-with-claude/thinking#controlling-thinking-display.
 * Other models get no `thinking` field: their default, never `disabled`, never a budget.
 */
export function buildRequest(input: RequestInput): RequestBody {
  const last = input.messages[input.messages.length - 1]
  if (!last) throw new ForbiddenRequestError('A request needs at least one message.')
  if (last.role === 'assistant' && !input.continuing) {
    throw new ForbiddenRequestError("A request may not end with an assistant turn (a prefill): today's models refuse it.")
  }
  const body: RequestBody = {
    model: input.model,
    system: input.system,
    messages: input.messages,
    tools: input.tools,
    max_tokens: input.maxTokens
  }
  if (returnsProgressUpdates(input.model)) body.thinking = { type: 'adaptive', display: 'updates' }
  if (input.effort || input.format) {
    body.output_config = {
      ...(input.effort ? { effort: input.effort } : {}),
      ...(input.format ? { format: { type: 'json_schema', schema: input.format } } : {})
    }
  }
  return body
}

/** Extra headers a body needs (the beta its thinking display asks for). */
export function headersFor(body: RequestBody): Record<string, string> {
  return (body.thinking as { display?: string } | undefined)?.display === 'updates' ? { 'anthropic-beta': DISPLAY_UPDATES_BETA } : {}
}

/**
 * What in `body` today's models refuse, one phrase each; empty when nothing. The model call
 * checks this before anything goes out (defence in depth: buildRequest never adds them).
 */
export function forbiddenSettings(body: object): string[] {
  const b = body as Record<string, unknown>
  const found: string[] = []
  for (const k of ['temperature', 'top_p', 'top_k']) if (b[k] !== undefined) found.push(k)
  const choice = (b.tool_choice as { type?: unknown } | undefined)?.type
  if (choice === 'any' || choice === 'tool') found.push(`tool_choice of type ${choice}`)
  const thinking = b.thinking as { type?: unknown; budget_tokens?: unknown } | undefined
  if (thinking?.budget_tokens !== undefined || thinking?.type === 'enabled') found.push('a thinking budget')
  if (thinking?.type === 'disabled') found.push('thinking disabled')
  return found
}
