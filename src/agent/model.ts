// The Messages API at the edge: the SDK client, cache breakpoints, and errors
// turned into one sentence a user can act on.
import Anthropic from '@anthropic-ai/sdk'
import type { Message, MessageCreateParams } from '../types'
import { withCacheBreakpoints } from './cache'

export type ModelCall = (params: MessageCreateParams, signal: AbortSignal) => Promise<Message>

export interface ClientOptions {
  apiKey: string
  authToken?: string
  baseUrl?: string
  maxRetries?: number
}

export const MAX_RETRIES = 4

export function createModelCall(opts: ClientOptions): ModelCall {
  const client = new Anthropic({
    apiKey: opts.apiKey || null,
    authToken: opts.apiKey ? null : (opts.authToken ?? null),
    baseURL: opts.baseUrl || undefined,
    // This SDK sends the key as a bearer token; Anthropic-compatible gateways
    // commonly read x-api-key, so both carry it.
    defaultHeaders: opts.apiKey ? { 'x-api-key': opts.apiKey } : undefined,
    // The SDK backs off exponentially and honours retry-after on 408/409/429/5xx
    // and connection errors; 400/401/403/404 fail at once.
    maxRetries: opts.maxRetries ?? MAX_RETRIES
  })
  return (params, signal) => client.messages.create(withCacheBreakpoints(params), { signal })
}

/** One sentence saying why the model API failed, without retrying advice noise. */
export function describeModelError(error: unknown, model: string): string {
  const detail = (e: InstanceType<typeof Anthropic.APIError>) => {
    const body = e.error as { error?: { message?: string } } | undefined
    return body?.error?.message ?? e.message
  }
  if (error instanceof Anthropic.AuthenticationError) {
    return `The model API rejected the API key (401 ${detail(error)}): check the anthropic-api-key secret.`
  }
  if (error instanceof Anthropic.PermissionDeniedError) {
    return `The model API refused this key access (403 ${detail(error)}): check the key's permissions for model "${model}".`
  }
  if (error instanceof Anthropic.NotFoundError) {
    return `The model API does not know the model "${model}" or the endpoint (404 ${detail(error)}): check the model input and anthropic-base-url.`
  }
  if (error instanceof Anthropic.BadRequestError) {
    return `The model API rejected the request as invalid (400 ${detail(error)}).`
  }
  if (error instanceof Anthropic.RateLimitError) {
    return `The model API kept rate-limiting the run (429 ${detail(error)}) after ${MAX_RETRIES} retries with backoff.`
  }
  if (error instanceof Anthropic.APIConnectionError) {
    return `The model API could not be reached (${error.message}) after ${MAX_RETRIES} retries.`
  }
  if (error instanceof Anthropic.APIError) {
    const status = error.status ?? 'no status'
    const kind = status === 529 ? 'overloaded' : 'failing'
    return `The model API was ${kind} (${status} ${detail(error)}) after ${MAX_RETRIES} retries with backoff.`
  }
  return `Unexpected error: ${error instanceof Error ? error.message : String(error)}`
}
