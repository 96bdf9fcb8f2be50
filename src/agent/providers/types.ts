// What every provider file returns: the SDK client (only its streaming Messages call is used,
// so the loop never knows which provider serves it) and one line saying where the model runs.
import type { Message } from '../../types'

export interface StreamingClient {
  messages: {
    stream(body: never, options: { signal: AbortSignal; headers: Record<string, string> }): { finalMessage(): Promise<unknown> }
  }
}

export interface OpenedProvider {
  client: StreamingClient
  description: string
}

export type { Message }

export interface ProviderContext {
  /** anthropic-base-url: a gateway or private endpoint in place of the provider's own */
  baseUrl?: string
  maxRetries: number
  /** every request of the client goes through it: it teaches the redactor the credentials it carries (./learn.ts) */
  fetch: typeof fetch
  /** a credential found at run time (a minted token): redacted from here on */
  learn: (secret: string) => void
}
