// A scripted stand-in for the Anthropic Messages API, served over real HTTP on
// 127.0.0.1 so the real `@anthropic-ai/sdk` (pointed at it with
// ANTHROPIC_BASE_URL / baseURL) talks to it exactly as it talks to the API.
//
//   const fake = await startFakeAnthropic([bash('ls'), text('done')])
//   ... run the action with ANTHROPIC_BASE_URL=fake.url ...
//   expect(fake.requests[1].body.messages.at(-1).content[0].type).toBe('tool_result')
//   await fake.close()
//
// Each POST .../v1/messages consumes the next scripted reply. Requests the real
// API would reject (400 invalid_request_error: tool_use without a matching
// tool_result in the next message, tool_result pointing at no tool_use, text
// before tool_result, empty text blocks, more than 4 cache_control
// breakpoints, missing model/max_tokens/messages) are answered 400 WITHOUT
// consuming a scripted reply (turn off with { validate: false }).
// `stream: true` requests get a server-sent-event stream built from the reply
// (text_delta, input_json_delta, thinking_delta and signature_delta in pieces, as the API sends).
//
// Today's models (see ../../src/agent/request.ts): replies may carry `thinking` blocks (a
// `signature`; their text shown per `thinking.display`: `omitted` (the default) empties
// all, `summarized` shows all, `updates` (needs the thinking-display-updates-2026-08-18
// beta) shows only the progress notes, `kind: 'update'`) and `redacted_thinking` blocks.
// Validation then also answers 400, like the API: a request carrying temperature, top_p,
// top_k, a forced tool_choice, a thinking budget or `thinking: disabled`; a prefilled
// assistant turn (other than a pause_turn reply sent back as it came); a thinking block
// this fake never sent, changed, moved, left out of its turn, or sent to another model;
// an `output_config` other than `{effort?, format?: {type: "json_schema", schema: {...}}}`.
// `refuseFormat` makes it an endpoint without structured outputs (400 naming output_config.format).
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { createHash, randomBytes } from 'node:crypto'

export interface UsageJson {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
}

export type ContentBlock =
  | { type: 'text'; text: string }
  /** `cut`: the reply stopped (max_tokens) halfway through this call's input */
  | { type: 'tool_use'; id?: string; name: string; input: unknown; cut?: boolean }
  /** `kind` (default reasoning) decides what each display mode shows; never sent */
  | { type: 'thinking'; thinking: string; signature?: string; kind?: 'update' | 'reasoning' }
  | { type: 'redacted_thinking'; data?: string }

export type Reply =
  | { content: Array<ContentBlock>; stop_reason?: string; usage?: Partial<UsageJson>; model?: string }
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { hang: true }
  /** a stream that starts (200), sends the blocks of `partial`, then `event: error` (non-streaming requests get the error's status) */
  | { streamError: { type: string; message?: string }; partial?: Array<ContentBlock> }
  | ((req: RecordedRequest, index: number) => Reply | Promise<Reply>)

export interface RecordedRequest {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
  headers: Record<string, string | string[] | undefined>
  path: string
  method: string
  /** when the request body had been read: Date.now()'s clock, to the microsecond (the bench's gaps are a few ms) */
  at: number
  /** the HTTP status the fake answered (undefined while a reply is pending or hanging) */
  status?: number
  /** set when the fake rejected the request itself (validation, script ran out) */
  error?: string
  /** the usage the fake reported for this request (after any explicit override) */
  usage?: UsageJson
  /** the body was valid JSON whose every string (keys included) is well-formed UTF-16 (no lone surrogate) */
  wellFormed?: boolean
}

export interface FakeAnthropic {
  url: string
  /** every POST .../v1/messages, in arrival order (including rejected ones) */
  requests: RecordedRequest[]
  /** anything else that reached the server (answered 404, or count_tokens) */
  otherRequests: RecordedRequest[]
  /** scripted replies not consumed yet (array scripts only; Infinity for a function script) */
  remaining(): number
  /** the content of every successful reply as the fake sent it (ids, signatures, display applied), with its model and stop reason */
  sent(): Array<{ content: unknown[]; model: string; stop: string }>
  close(): Promise<void>
}

export interface FakeAnthropicOptions {
  /** answered once the script is exhausted; default: a 500 api_error saying the script ran out */
  afterScript?: Reply
  /** reject malformed conversations with a 400 like the real API (default true) */
  validate?: boolean
  /** prefixes shorter than this many tokens are never cached (real API: 1024 for Sonnet/Opus); default 0 */
  minCacheableTokens?: number
  /** when set, a request must carry this key (as `x-api-key` or `authorization: Bearer`), else 401 authentication_error (not consuming the script) */
  apiKey?: string
  /**
   * an Anthropic-compatible endpoint without structured outputs: a request carrying
   * `output_config.format` gets this 400 (default: the message below) without consuming the script
   */
  refuseFormat?: boolean | string
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  502: 'api_error',
  503: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error'
}

const ERROR_MESSAGES: Record<string, string> = {
  invalid_request_error: 'Invalid request',
  authentication_error: 'invalid x-api-key',
  billing_error: 'Your credit balance is too low to access the Anthropic API.',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'Not found',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
  api_error: 'Internal server error',
  timeout_error: 'Request timed out',
  overloaded_error: 'Overloaded'
}

/** An Anthropic-shaped error body for `status`. */
export function errorBody(status: number, message?: string): { type: 'error'; error: { type: string; message: string } } {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
  return { type: 'error', error: { type, message: message ?? ERROR_MESSAGES[type] ?? 'Error' } }
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
function randomId(prefix: string, length = 24): string {
  const bytes = randomBytes(length)
  let out = prefix
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length]
  return out
}

/** One assistant text reply (stop_reason end_turn). */
export const text = (t: string, usage?: Partial<UsageJson>): Reply => ({
  content: [{ type: 'text', text: t }],
  stop_reason: 'end_turn',
  ...(usage ? { usage } : {})
})

/** One assistant text reply holding `value` as JSON (a structured answer; stop_reason end_turn). */
export const json = (value: unknown, usage?: Partial<UsageJson>): Reply => text(JSON.stringify(value), usage)

/** One assistant reply with one `bash` tool_use block per command (stop_reason tool_use). */
export const bash = (...commands: string[]): Reply => ({
  content: commands.map(command => ({ type: 'tool_use' as const, id: randomId('toolu_01'), name: 'bash', input: { command } })),
  stop_reason: 'tool_use'
})

/** A thinking block holding a progress note between tool calls (shown with display `updates` or `summarized`). */
export const note = (t: string): ContentBlock => ({ type: 'thinking', thinking: t, kind: 'update' })

/** A thinking block of reasoning (shown only with display `summarized`). */
export const reasoning = (t = 'Let me think about this step by step.'): ContentBlock => ({
  type: 'thinking',
  thinking: t,
  kind: 'reasoning'
})

/** A redacted_thinking block (opaque `data`). */
export const redacted = (): ContentBlock => ({ type: 'redacted_thinking' })

/** One `bash` tool_use block. */
export const bashBlock = (command: string): ContentBlock => ({ type: 'tool_use', name: 'bash', input: { command } })

/** A reply cut at max_tokens halfway through a `bash` call (after `before` blocks). */
export const cutBash = (command: string, ...before: ContentBlock[]): Reply => ({
  content: [...before, { type: 'tool_use', name: 'bash', input: { command }, cut: true }],
  stop_reason: 'max_tokens'
})

/** One assistant reply with a single tool_use block of any tool name and input. */
export const toolUse = (name: string, input: unknown): Reply => ({
  content: [{ type: 'tool_use', id: randomId('toolu_01'), name, input }],
  stop_reason: 'tool_use'
})

// ---------------------------------------------------------------------------
// Usage / prompt-caching model.
//
// The request is flattened, in the order the API caches it (tools, then system,
// then messages), into a list of blocks, each serialized as JSON without its
// cache_control (message blocks are prefixed with their role). Token counts are
// ceil(characters / 4) of the joined serialization.
//  - No cache_control anywhere: everything is input_tokens.
//  - With breakpoints (a block's cache_control, or a top-level cache_control,
//    which marks the last block): the prefix up to the LAST breakpoint is the
//    cacheable part. cache_read_input_tokens = the longest prefix written by an
//    earlier request's breakpoint (any earlier request to this fake, not just
//    the previous one; no TTL) that this request starts with;
//    cache_creation_input_tokens = the rest of the cacheable part;
//    input_tokens = everything after the last breakpoint.
//  - Prefixes shorter than minCacheableTokens are neither written nor read.
// output_tokens = ceil(JSON length of the reply content / 4).
// A reply's explicit `usage` overrides any of these fields.
// ---------------------------------------------------------------------------

const tokens = (chars: number): number => Math.ceil(chars / 4)
const SEP = '\u0001'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function withoutCacheControl(block: any): unknown {
  if (block === null || typeof block !== 'object' || Array.isArray(block)) return block
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { cache_control: _cc, ...rest } = block
  return rest
}

interface Flattened {
  text: string
  /** end offsets (in `text`) of every block carrying a breakpoint */
  breakpoints: number[]
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function flatten(body: any): Flattened {
  const parts: Array<{ s: string; bp: boolean }> = []
  const add = (s: string, bp: boolean): void => {
    parts.push({ s, bp })
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const hasCC = (b: any): boolean => b !== null && typeof b === 'object' && b.cache_control != null
  for (const tool of Array.isArray(body?.tools) ? body.tools : []) add(JSON.stringify(withoutCacheControl(tool)), hasCC(tool))
  if (typeof body?.system === 'string') add(JSON.stringify(body.system), false)
  else if (Array.isArray(body?.system)) for (const b of body.system) add(JSON.stringify(withoutCacheControl(b)), hasCC(b))
  for (const m of Array.isArray(body?.messages) ? body.messages : []) {
    if (typeof m?.content === 'string') add(`${m.role}:${JSON.stringify(m.content)}`, false)
    else if (Array.isArray(m?.content)) for (const b of m.content) add(`${m?.role}:${JSON.stringify(withoutCacheControl(b))}`, hasCC(b))
  }
  if (body?.cache_control != null && parts.length > 0) parts[parts.length - 1].bp = true
  let text = ''
  const breakpoints: number[] = []
  for (const p of parts) {
    text += p.s + SEP
    if (p.bp) breakpoints.push(text.length)
  }
  return { text, breakpoints }
}

class CacheModel {
  /** prefix length -> sha256 of prefixes of that length written so far */
  private written = new Map<number, Set<string>>()
  constructor(private minTokens: number) {}

  private static hash(s: string): string {
    return createHash('sha256').update(s).digest('hex')
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  usage(body: any): Omit<UsageJson, 'output_tokens'> {
    const { text, breakpoints } = flatten(body)
    const total = tokens(text.length)
    const usable = breakpoints.filter(end => tokens(end) >= this.minTokens)
    if (usable.length === 0) return { input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
    const last = usable[usable.length - 1]
    let readChars = 0
    const lengths = [...this.written.keys()].filter(l => l <= last).sort((a, b) => b - a)
    for (const len of lengths) {
      if (this.written.get(len)?.has(CacheModel.hash(text.slice(0, len)))) {
        readChars = len
        break
      }
    }
    for (const end of usable) {
      let set = this.written.get(end)
      if (!set) this.written.set(end, (set = new Set()))
      set.add(CacheModel.hash(text.slice(0, end)))
    }
    const read = tokens(readChars)
    const cacheable = tokens(last)
    return {
      cache_read_input_tokens: read,
      cache_creation_input_tokens: Math.max(0, cacheable - read),
      input_tokens: Math.max(0, total - cacheable)
    }
  }
}

// ---------------------------------------------------------------------------
// Validation mirroring the real API's most common 400s.
// ---------------------------------------------------------------------------

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** The path of the first string (or key) in `value` holding a lone UTF-16 surrogate, if any. */
export function loneSurrogateAt(value: unknown, path = 'body'): string | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : undefined
  if (value === null || typeof value !== 'object') return undefined
  for (const [k, v] of Object.entries(value)) {
    if (LONE_SURROGATE.test(k)) return `${path} (a key)`
    const found = loneSurrogateAt(v, `${path}.${k}`)
    if (found) return found
  }
  return undefined
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function validate(body: any): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'request body must be a JSON object'
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required'
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required (a positive integer)'
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required'
  let breakpoints = 0
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const countCC = (b: any): void => {
    if (b !== null && typeof b === 'object' && b.cache_control != null) breakpoints++
  }
  if (Array.isArray(body.tools)) {
    for (const [i, t] of body.tools.entries()) {
      if (typeof t?.name !== 'string' || !t.name) return `tools.${i}.name: Field required`
      if (t.type === undefined || t.type === 'custom') {
        if (t.input_schema === null || typeof t.input_schema !== 'object') return `tools.${i}.custom.input_schema: Field required`
      }
      countCC(t)
    }
  }
  if (Array.isArray(body.system)) {
    for (const [i, b] of body.system.entries()) {
      if (b?.type === 'text' && typeof b.text === 'string' && b.text.length === 0)
        return `system.${i}: text content blocks must be non-empty`
      countCC(b)
    }
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const blocksOf = (m: any): any[] => (Array.isArray(m?.content) ? m.content : [])
  for (const [i, m] of body.messages.entries()) {
    if (m?.role !== 'user' && m?.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`
    if (typeof m.content === 'string') {
      if (m.content.length === 0 && !(m.role === 'assistant' && i === body.messages.length - 1)) {
        return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`
      }
      continue
    }
    if (!Array.isArray(m.content)) return `messages.${i}.content: Input should be a valid list or string`
    if (m.content.length === 0 && !(m.role === 'assistant' && i === body.messages.length - 1)) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`
    }
    let seenOther = false
    for (const [j, b] of m.content.entries()) {
      countCC(b)
      if (b?.type === 'text' && (typeof b.text !== 'string' || b.text.length === 0))
        return `messages.${i}.content.${j}.text: text content blocks must be non-empty`
      if (b?.type === 'tool_result') {
        if (m.role !== 'user') return `messages.${i}.content.${j}: tool_result blocks are only allowed in user messages`
        if (seenOther) return `messages.${i}: tool_result blocks must come before any other content in a user message`
      } else seenOther = true
      if (b?.type === 'tool_use' && m.role !== 'assistant')
        return `messages.${i}.content.${j}: tool_use blocks are only allowed in assistant messages`
    }
    // every tool_use must be answered in the very next message
    const uses = blocksOf(m)
      .filter(b => b?.type === 'tool_use')
      .map(b => String(b.id))
    if (m.role === 'assistant' && uses.length > 0 && i < body.messages.length - 1) {
      const results = new Set(
        blocksOf(body.messages[i + 1])
          .filter(b => b?.type === 'tool_result')
          .map(b => String(b.tool_use_id))
      )
      const missing = uses.filter(id => !results.has(id))
      if (missing.length > 0) {
        return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
      }
    }
    if (m.role === 'user') {
      const prevUses = new Set(
        i > 0
          ? blocksOf(body.messages[i - 1])
              .filter(b => b?.type === 'tool_use')
              .map(b => String(b.id))
          : []
      )
      const orphans = blocksOf(m)
        .filter(b => b?.type === 'tool_result')
        .map(b => String(b.tool_use_id))
        .filter(id => !prevUses.has(id))
      if (orphans.length > 0) {
        return `messages.${i}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${orphans.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
      }
    }
  }
  if (breakpoints > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`
  return undefined
}

/** What the fake sent in earlier replies, to check thinking blocks and pause_turn sent back. */
interface SentLedger {
  /** signature (thinking) or data (redacted_thinking) -> the block as sent, the model it came from, its place */
  blocks: Map<string, { json: string; model: string; reply: number; position: number }>
  /** every reply sent: canonical JSON of its content, and the model and stop reason */
  replies: Array<{ content: unknown[]; json: string; model: string; stop: string }>
  /** tool_use id -> reply index */
  toolUses: Map<string, number>
}

/** JSON with sorted keys and without cache_control: two blocks are "the same" when this is equal. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function canonical(v: any): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .filter(k => k !== 'cache_control' && v[k] !== undefined)
      .sort()
      .map(k => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(v)
}

const thinkingKey = (b: { type?: unknown; signature?: unknown; data?: unknown }): string | undefined =>
  b?.type === 'thinking' ? String(b.signature) : b?.type === 'redacted_thinking' ? String(b.data) : undefined

/**
 * `output_config` as the API takes it: an object with `effort` (a level) and `format`
 * (`{type: "json_schema", schema: {...}}`, structured outputs), nothing else.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function validateOutputConfig(config: any): string | undefined {
  if (config === undefined) return undefined
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return 'output_config: Input should be a valid dictionary'
  for (const k of Object.keys(config)) if (k !== 'effort' && k !== 'format') return `output_config.${k}: Extra inputs are not permitted`
  const { effort, format } = config
  if (effort !== undefined && effort !== null && !['low', 'medium', 'high', 'xhigh', 'max'].includes(effort)) {
    return `output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'`
  }
  if (format === undefined || format === null) return undefined
  if (typeof format !== 'object' || Array.isArray(format)) return 'output_config.format: Input should be a valid dictionary'
  for (const k of Object.keys(format))
    if (k !== 'type' && k !== 'schema') return `output_config.format.${k}: Extra inputs are not permitted`
  if (format.type !== 'json_schema') return `output_config.format.type: Input should be 'json_schema'`
  if (format.schema === null || typeof format.schema !== 'object' || Array.isArray(format.schema)) {
    return 'output_config.format.schema: Input should be a valid dictionary'
  }
  return undefined
}

/** The 400s today's models give for settings they refuse, for prefills, and for thinking blocks that do not come back as sent. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function validateModern(body: any, sent: SentLedger): string | undefined {
  for (const k of ['temperature', 'top_p', 'top_k']) {
    if (body[k] !== undefined) return `${k}: sampling parameters are not supported on ${body.model}; remove ${k}.`
  }
  if (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool') {
    return `tool_choice: forced tool use (type "${body.tool_choice.type}") is not supported on ${body.model}; use "auto" or "none".`
  }
  if (body.thinking?.type === 'enabled' || body.thinking?.budget_tokens !== undefined) {
    return `thinking.budget_tokens: manual extended thinking is not supported on ${body.model}; use thinking.type "adaptive" and output_config.effort.`
  }
  if (body.thinking?.type === 'disabled') return `thinking.type: "disabled" is not supported on ${body.model}; use "between_tools" instead.`
  if (body.thinking?.display !== undefined && !['summarized', 'omitted', 'updates'].includes(body.thinking.display)) {
    return `thinking.display: Input should be 'summarized', 'omitted' or 'updates'`
  }
  const outputConfig = validateOutputConfig(body.output_config)
  if (outputConfig) return outputConfig
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const msgs: any[] = body.messages
  const last = msgs[msgs.length - 1]
  if (last?.role === 'assistant') {
    const json = canonical(typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content)
    if (!sent.replies.some(r => r.stop === 'pause_turn' && r.json === json)) {
      return `This model does not support assistant message prefill. The conversation must end with a user message.`
    }
  }
  for (const [i, m] of msgs.entries()) {
    if (m?.role !== 'assistant' || !Array.isArray(m.content)) continue
    let from: number | undefined
    for (const [j, b] of m.content.entries()) {
      const key = thinkingKey(b)
      if (b?.type === 'tool_use' && sent.toolUses.has(String(b.id))) from ??= sent.toolUses.get(String(b.id))
      if (key === undefined) continue
      const rec = sent.blocks.get(key)
      if (!rec) return `messages.${i}.content.${j}: Invalid \`signature\` in \`${b.type}\` block`
      if (rec.model !== body.model) {
        return `messages.${i}.content.${j}: \`${b.type}\` blocks were produced by ${rec.model} and cannot be sent to ${body.model}; remove them from the history.`
      }
      if (canonical(b) !== rec.json)
        return `messages.${i}.content.${j}: \`${b.type}\` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`
      if (rec.position !== j)
        return `messages.${i}.content.${j}: \`${b.type}\` blocks must stay in their original position in the assistant message.`
      from ??= rec.reply
    }
    // Every thinking block of the reply this turn is must come back with it (same model).
    if (from !== undefined && sent.replies[from].model === body.model) {
      for (const [pos, b] of sent.replies[from].content.entries()) {
        const key = thinkingKey(b as never)
        if (key !== undefined && thinkingKey(m.content[pos]) !== key) {
          return `messages.${i}.content.${pos}: the \`${(b as { type: string }).type}\` block of this assistant turn is missing; thinking blocks must be passed back unmodified and in their original order.`
        }
      }
    }
  }
  return undefined
}

// ---------------------------------------------------------------------------

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = typeof body === 'string' ? body : JSON.stringify(body)
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
    'request-id': randomId('req_011'),
    'anthropic-organization-id': '00000000-0000-4000-8000-000000000000',
    ...headers
  })
  res.end(payload)
}

/** `text` in two pieces (one when short), as the API streams text a few tokens at a time. */
const pieces = (text: string): string[] =>
  text.length < 2 ? [text] : [text.slice(0, Math.ceil(text.length / 2)), text.slice(Math.ceil(text.length / 2))]

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function sendStream(res: http.ServerResponse, message: any, opts: { cut?: number; error?: { type: string; message: string } } = {}): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': randomId('req_011')
  })
  const event = (name: string, data: unknown): void => {
    res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
  }
  event('message_start', {
    type: 'message_start',
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } }
  })
  event('ping', { type: 'ping' })
  for (const [index, block] of message.content.entries()) {
    const delta = (d: unknown): void => event('content_block_delta', { type: 'content_block_delta', index, delta: d })
    if (block.type === 'text') {
      event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } })
      for (const t of pieces(block.text)) delta({ type: 'text_delta', text: t })
    } else if (block.type === 'tool_use') {
      event('content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } })
      const json = JSON.stringify(block.input ?? {})
      // A cut call: only the first half of its input arrives.
      for (const j of pieces(index === opts.cut ? json.slice(0, Math.floor(json.length / 2)) : json))
        delta({ type: 'input_json_delta', partial_json: j })
    } else if (block.type === 'thinking') {
      event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } })
      if (block.thinking) for (const t of pieces(block.thinking)) delta({ type: 'thinking_delta', thinking: t })
      delta({ type: 'signature_delta', signature: block.signature })
    } else {
      event('content_block_start', { type: 'content_block_start', index, content_block: block })
    }
    event('content_block_stop', { type: 'content_block_stop', index })
  }
  if (opts.error) {
    event('error', { type: 'error', error: opts.error })
    res.end()
    return
  }
  event('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens }
  })
  event('message_stop', { type: 'message_stop' })
  res.end()
}

function headersOf(req: http.IncomingMessage): Record<string, string | string[] | undefined> {
  return { ...req.headers }
}

/** `display: "updates"` without its beta header. */
function betaMissing(rec: RecordedRequest): string | undefined {
  if (rec.body?.thinking?.display !== 'updates') return undefined
  const betas = String(rec.headers['anthropic-beta'] ?? '')
    .split(',')
    .map(b => b.trim())
  return betas.includes('thinking-display-updates-2026-08-18')
    ? undefined
    : 'thinking.display: "updates" requires the anthropic-beta header thinking-display-updates-2026-08-18'
}

export async function startFakeAnthropic(
  script: Reply[] | ((req: RecordedRequest, index: number) => Reply | Promise<Reply>),
  opts: FakeAnthropicOptions = {}
): Promise<FakeAnthropic> {
  const requests: RecordedRequest[] = []
  const otherRequests: RecordedRequest[] = []
  const cache = new CacheModel(opts.minCacheableTokens ?? 0)
  const shouldValidate = opts.validate ?? true
  const sent: SentLedger = { blocks: new Map(), replies: [], toolUses: new Map() }
  let consumed = 0
  const sockets = new Set<Socket>()

  const nextReply = async (rec: RecordedRequest): Promise<Reply> => {
    const index = consumed++
    if (typeof script === 'function') return script(rec, index)
    if (index < script.length) return script[index]
    if (opts.afterScript !== undefined) return opts.afterScript
    return {
      status: 500,
      body: errorBody(500, `fake-anthropic: the script ran out (${script.length} scripted replies, this is request #${index + 1})`)
    }
  }

  const answer = async (rec: RecordedRequest, res: http.ServerResponse, reply: Reply, index: number): Promise<void> => {
    let r = reply
    for (let depth = 0; typeof r === 'function'; depth++) {
      if (depth > 20) throw new Error('fake-anthropic: reply functions nested too deeply')
      r = await r(rec, index)
    }
    if ('hang' in r) return // never answer; close() destroys the socket
    if ('status' in r) {
      rec.status = r.status
      const body = r.body === undefined ? errorBody(r.status) : r.body
      sendJson(res, r.status, body, r.headers)
      return
    }
    if ('streamError' in r) {
      const error = { type: r.streamError.type, message: r.streamError.message ?? ERROR_MESSAGES[r.streamError.type] ?? 'Error' }
      const status = Number(Object.entries(ERROR_TYPES).find(([, t]) => t === error.type)?.[0] ?? 500)
      if (rec.body?.stream !== true) {
        rec.status = status
        sendJson(res, status, { type: 'error', error })
        return
      }
      rec.status = 200
      rec.error = `stream error: ${error.type}`
      const content = materialize(r.partial ?? [], rec)
      const message = {
        id: randomId('msg_01'),
        type: 'message',
        role: 'assistant',
        model: rec.body?.model,
        content,
        stop_reason: null,
        stop_sequence: null,
        usage: { ...cache.usage(rec.body), output_tokens: 1 }
      }
      sendStream(res, message, { error })
      return
    }
    const cutAt = r.content.findIndex(b => b.type === 'tool_use' && b.cut)
    const content = materialize(r.content, rec)
    const stop_reason = r.stop_reason ?? (content.some(b => b.type === 'tool_use') ? 'tool_use' : 'end_turn')
    const usage: UsageJson = {
      ...cache.usage(rec.body),
      output_tokens: Math.max(1, tokens(JSON.stringify(content).length)),
      ...(r.usage ?? {})
    } as UsageJson
    rec.usage = usage
    const model = String(rec.body?.model ?? 'claude-sonnet-5-5')
    const message = {
      id: randomId('msg_01'),
      type: 'message',
      role: 'assistant',
      model: r.model ?? model,
      content: cutAt === -1 || rec.body?.stream === true ? content : content.map((b, i) => (i === cutAt ? { ...b, input: {} } : b)),
      stop_reason,
      stop_sequence: null,
      usage
    }
    // Remember what went out, to check what comes back.
    const replyIndex = sent.replies.length
    sent.replies.push({ content, json: canonical(content), model, stop: stop_reason })
    content.forEach((b, position) => {
      const key = thinkingKey(b as never)
      if (key !== undefined) sent.blocks.set(key, { json: canonical(b), model, reply: replyIndex, position })
      if (b.type === 'tool_use') sent.toolUses.set(String((b as { id: string }).id), replyIndex)
    })
    rec.status = 200
    if (rec.body?.stream === true) sendStream(res, message, { cut: cutAt === -1 ? undefined : cutAt })
    else sendJson(res, 200, message)
  }

  /** Scripted blocks as the API would send them: ids, signatures, and thinking text per the request's display mode. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const materialize = (blocks: ContentBlock[], rec: RecordedRequest): any[] => {
    const display = rec.body?.thinking?.display ?? 'omitted'
    return blocks.map(b => {
      if (b.type === 'tool_use') {
        // eslint-disable-next-line @typescript-eslint/no-unused-vars
        const { cut: _cut, ...rest } = b
        return { ...rest, id: b.id ?? randomId('toolu_01') }
      }
      if (b.type === 'thinking') {
        const shown = display === 'summarized' || (display === 'updates' && b.kind === 'update')
        return { type: 'thinking', thinking: shown ? b.thinking : '', signature: b.signature ?? randomBytes(48).toString('base64') }
      }
      if (b.type === 'redacted_thinking') return { type: 'redacted_thinking', data: b.data ?? randomBytes(64).toString('base64') }
      return b
    })
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const path = req.url ?? '/'
        const pathname = path.split('?')[0].replace(/\/+$/, '')
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        let body: any = raw
        let parseError: string | undefined
        if (raw.length > 0) {
          try {
            body = JSON.parse(raw)
          } catch (e) {
            parseError = `There was an error parsing the body: ${(e as Error).message}`
          }
        }
        const rec: RecordedRequest = {
          body,
          headers: headersOf(req),
          path,
          method: req.method ?? 'GET',
          at: performance.timeOrigin + performance.now()
        }
        // The real API refuses a body with a lone surrogate (JSON.stringify writes it as a \udXXX escape).
        const lone = parseError ? undefined : loneSurrogateAt(body)
        rec.wellFormed = parseError === undefined && lone === undefined
        if (lone) parseError = `The request body is not valid JSON: ${lone} holds a lone UTF-16 surrogate`
        const isMessages = req.method === 'POST' && pathname.endsWith('/v1/messages')
        if (!isMessages) {
          otherRequests.push(rec)
          if (req.method === 'POST' && pathname.endsWith('/v1/messages/count_tokens') && !parseError) {
            rec.status = 200
            sendJson(res, 200, { input_tokens: tokens(flatten(body).text.length) })
            return
          }
          rec.status = 404
          rec.error = 'not found'
          sendJson(res, 404, errorBody(404, `fake-anthropic: no route for ${req.method} ${path}`))
          return
        }
        requests.push(rec)
        if (opts.apiKey !== undefined) {
          const bearer = String(req.headers.authorization ?? '').replace(/^bearer\s+/i, '')
          if (req.headers['x-api-key'] !== opts.apiKey && bearer !== opts.apiKey) {
            rec.status = 401
            rec.error = 'invalid x-api-key'
            sendJson(res, 401, errorBody(401))
            return
          }
        }
        const refused =
          opts.refuseFormat && body?.output_config?.format != null
            ? typeof opts.refuseFormat === 'string'
              ? opts.refuseFormat
              : 'output_config.format: Extra inputs are not permitted'
            : undefined
        const invalid =
          parseError ?? refused ?? (shouldValidate ? (validate(body) ?? validateModern(body, sent) ?? betaMissing(rec)) : undefined)
        if (invalid) {
          rec.status = 400
          rec.error = invalid
          sendJson(res, 400, errorBody(400, invalid))
          return
        }
        const index = consumed
        const reply = await nextReply(rec)
        await answer(rec, res, reply, index)
      })().catch(err => {
        try {
          if (!res.headersSent) sendJson(res, 500, errorBody(500, `fake-anthropic: ${(err as Error)?.stack ?? String(err)}`))
          else res.end()
        } catch {
          // the client went away
        }
      })
    })
  })
  server.on('connection', socket => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  let closed: Promise<void> | undefined

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    otherRequests,
    remaining: () => (typeof script === 'function' ? Infinity : Math.max(0, script.length - consumed)),
    sent: () => sent.replies.map(r => ({ content: r.content, model: r.model, stop: r.stop })),
    close: () => {
      closed ??= new Promise<void>(resolve => {
        server.close(() => resolve())
        server.closeAllConnections()
        for (const s of sockets) s.destroy()
      })
      return closed
    }
  }
}
