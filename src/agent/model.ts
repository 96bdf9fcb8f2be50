// The Messages API at the edge: the provider's SDK client (./providers), cache breakpoints,
// streaming, and errors turned into one sentence a user can act on.
import {
  AnthropicError,
  APIError,
  APIConnectionError,
  APIConnectionTimeoutError,
  AuthenticationError,
  BadRequestError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError
} from '@anthropic-ai/sdk'
import type { MessageStreamParams } from '@anthropic-ai/sdk/resources/messages/messages'
import type { Message, MessageCreateParams } from '../types'
import { withCacheBreakpoints } from './cache'
import { inertRequest } from '../report/inert'
import { messageOf } from '../util'
import { ForbiddenRequestError, forbiddenSettings, headersFor } from './request'
import type { ProviderConfig } from './providers/config'
import { openKeyClient, openProvider, type OpenedProvider } from './providers'
import { learningFetch } from './providers/learn'

export type ModelCall = (params: MessageCreateParams, signal: AbortSignal) => Promise<Message>

export interface ClientOptions {
  apiKey: string
  authToken?: string
  baseUrl?: string
  maxRetries?: number
  /** where the model runs; default the Claude API with apiKey/authToken */
  provider?: ProviderConfig
  /** told every credential a provider's client mints or sends (redacted from then on) */
  learn?: (secret: string) => void
}

/**
 * Retries of a failing request (429, 408, 409, 5xx, 529, connection errors).
 * The SDK waits what `retry-after` / `retry-after-ms` asks, else backs off
 * 0.5, 1, 2, 4 s (with jitter): about 8 s in all before a run gives up.
 * 400, 401, 403, 404 and the other 4xx fail at once.
 */
export const MAX_RETRIES = 4

export function createModelCall(opts: ClientOptions): ModelCall {
  const maxRetries = opts.maxRetries ?? MAX_RETRIES
  const keyed = openKeyClient(opts.provider, { apiKey: opts.apiKey, authToken: opts.authToken, baseUrl: opts.baseUrl, maxRetries })
  // Another provider's SDK is loaded on the first request (a chunk of its own; settings checked what it needs at start).
  let opened: Promise<OpenedProvider> | undefined = keyed && Promise.resolve(keyed)
  // each credential once (a token is sent with every request; the runner is told of it once)
  const learned = new Set<string>()
  const learn = (secret: string) => {
    if (learned.has(secret)) return
    learned.add(secret)
    opts.learn?.(secret)
  }
  const open = () => (opened ??= openProvider(opts.provider!, { baseUrl: opts.baseUrl, maxRetries, learn, fetch: learningFetch(learn) }))
  return async (params, signal) => {
    const { client } = keyed ?? (await open())
    const body = withCacheBreakpoints(inertRequest(params))
    const refused = forbiddenSettings(body)
    if (refused.length)
      throw new ForbiddenRequestError(`The request would carry ${refused.join(', ')}, which today's models refuse; it was not sent.`)
    // Streamed: thinking counts as output, and this SDK refuses a non-streaming request whose
    // max_tokens could take longer than ten minutes (above ~21,333). The SDK retries a failing
    // HTTP answer itself; an error that arrives inside the stream (`event: error`, e.g.
    // overloaded_error) is retried here the same number of times.
    for (let attempt = 0; ; attempt++) {
      try {
        // The cast: `thinking.display: "updates"` is newer than this SDK's non-beta types.
        const stream = client.messages.stream(body as unknown as MessageStreamParams as never, { signal, headers: headersFor(body) })
        return (await stream.finalMessage()) as Message
      } catch (error) {
        if (signal.aborted || attempt >= maxRetries || !retriableInStream(error)) throw error
        await sleep(backoffMs(attempt), signal)
      }
    }
  }
}

/** An error event inside a stream (no HTTP status) of a kind the SDK would retry as a status. */
function retriableInStream(error: unknown): boolean {
  if (!(error instanceof APIError) || error.status !== undefined) return false
  return ['overloaded_error', 'api_error', 'rate_limit_error', 'timeout_error'].includes(errorType(error) ?? '')
}

function errorType(error: APIError): string | undefined {
  const body = error.error as { error?: { type?: unknown }; type?: unknown } | undefined
  const t = body?.error?.type ?? body?.type
  return typeof t === 'string' ? t : undefined
}

/** 0.5, 1, 2, 4 s with up to 25% less (jitter), as the SDK backs off. */
function backoffMs(attempt: number): number {
  return Math.min(8000, 500 * 2 ** attempt) * (1 - Math.random() * 0.25)
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

function detail(e: APIError): string {
  const body = e.error as { error?: { message?: unknown }; message?: unknown } | undefined
  const m = body?.error?.message ?? body?.message
  const text = typeof m === 'string' && m ? m : e.message
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}

/** A 400 whose message says the model was retired or deprecated (or names it as no longer served). */
function retiredModel(error: APIError, model: string): boolean {
  const text = detail(error).toLowerCase()
  return (
    /\b(retired|deprecated|end[- ]of[- ]life|no longer (available|supported|served))\b/.test(text) &&
    (text.includes('model') || text.includes(model.toLowerCase()))
  )
}

/** The innermost cause's code or message (undici hides ECONNREFUSED two levels down). */
function rootCause(error: unknown): string | undefined {
  let found: string | undefined
  let e = (error as { cause?: unknown })?.cause
  for (let depth = 0; e && depth < 5; depth++) {
    const c = e as { code?: unknown; message?: unknown; cause?: unknown }
    if (typeof c.code === 'string') found = c.code
    else if (typeof c.message === 'string' && c.message) found = c.message
    e = c.cause
  }
  return found
}

/** One sentence saying why the model API failed, naming the cause and what to check. */
export function describeModelError(error: unknown, model: string): string {
  const retried = `after ${MAX_RETRIES} retries with backoff`
  if (error instanceof AuthenticationError) {
    return `The model API rejected the API key (401 ${detail(error)}): check the anthropic-api-key secret (with another provider, its credentials: docs/providers.md).`
  }
  if (error instanceof PermissionDeniedError) {
    return `The model API refused this key access (403 ${detail(error)}): check the key's permissions for model "${model}".`
  }
  if (error instanceof NotFoundError) {
    return `The model API does not know the model "${model}" or the endpoint (404 ${detail(error)}): check the model input and anthropic-base-url.`
  }
  if (error instanceof BadRequestError && retiredModel(error, model)) {
    return `The model "${model}" is retired or deprecated (400 ${detail(error)}): set the model input to a current model, such as claude-sonnet-5-5.`
  }
  if (error instanceof BadRequestError) {
    return `The model API rejected the request as invalid (400 ${detail(error)}).`
  }
  if (error instanceof RateLimitError) {
    return `The model API kept rate-limiting the run (429 ${detail(error)}) ${retried}.`
  }
  if (error instanceof APIConnectionTimeoutError) {
    return `The model API did not answer in time (${error.message}) ${retried}.`
  }
  if (error instanceof APIConnectionError) {
    const why = rootCause(error) ?? error.message
    return `The model API could not be reached (${why}) ${retried}: check anthropic-base-url and the network.`
  }
  if (error instanceof APIError) {
    const status = error.status
    if (status === undefined && retriableInStream(error)) {
      const kind = errorType(error) === 'overloaded_error' ? 'overloaded' : 'failing'
      return `The model API was ${kind} (${errorType(error)} in the stream: ${detail(error)}) ${retried}.`
    }
    if (status === 402) return `The model API refused the request for billing reasons (402 ${detail(error)}): check the account's credit.`
    if (status === 413) return `The model API refused the request as too large (413 ${detail(error)}).`
    if (typeof status === 'number' && status >= 400 && status < 500 && ![408, 409, 429].includes(status)) {
      return `The model API rejected the request (${status} ${detail(error)}).`
    }
    if (status === undefined) return `The model API failed (${detail(error)}).`
    const kind = status === 529 ? 'overloaded' : 'failing'
    return `The model API was ${kind} (${status} ${detail(error)}) ${retried}.`
  }
  if (error instanceof ForbiddenRequestError) return error.message
  if (error instanceof AnthropicError) {
    return `The model request failed: ${error.message}`
  }
  return `Unexpected error: ${messageOf(error)}`
}
