// The entry of the providers' own bundle (dist/providers/index.js): Bedrock, Vertex and Foundry
// with their SDKs. A bundle of its own, not a chunk of the action's: the platform SDKs use the
// whole @anthropic-ai/sdk (every resource of the API), and webpack keeps in the action's bundle
// every export any of its chunks uses, which made the common start's bundle half as big again
// (580 KB to 850 KB, ~15 ms more to compile). Here they have their own copy of the SDK, so the
// errors they throw are turned into the action's SDK's classes (describeModelError, the retries
// of a stream's error event).
import * as own from '@anthropic-ai/sdk/core/error'
import type { ProviderConfig } from './config'
import type { OpenedProvider, ProviderContext, StreamingClient } from './types'

type Errors = typeof own

/** The same error as `to`'s classes: status, body and headers kept. */
export function convertError(e: unknown, to: Errors): unknown {
  if (e instanceof own.APIUserAbortError) return new to.APIUserAbortError({ message: e.message })
  if (e instanceof own.APIConnectionTimeoutError) return new to.APIConnectionTimeoutError({ message: e.message })
  if (e instanceof own.APIConnectionError) return new to.APIConnectionError({ message: e.message, cause: e.cause as Error })
  if (e instanceof own.APIError) {
    const body = e.error as object | undefined
    if (e.status === undefined) return new to.APIError(undefined, body, body ? undefined : e.message, e.headers)
    return to.APIError.generate(e.status, body, body ? undefined : e.message, e.headers)
  }
  if (e instanceof own.AnthropicError) return new to.AnthropicError(e.message)
  return e
}

export async function openBundled(provider: ProviderConfig, ctx: ProviderContext, errors: Errors): Promise<OpenedProvider> {
  let opened: OpenedProvider
  if (provider.name === 'bedrock') opened = (await import('./bedrock')).open(provider, ctx)
  else if (provider.name === 'vertex') opened = (await import('./vertex')).open(provider, ctx)
  else if (provider.name === 'foundry') opened = (await import('./foundry')).open(provider, ctx)
  else throw new Error(`provider ${provider.name} is not in this bundle`)
  if ((errors as unknown) === own) return opened // the same SDK (tests from src/)
  const inner = opened.client
  const client: StreamingClient = {
    messages: {
      stream: (body, options) => {
        const s = inner.messages.stream(body, options)
        return { finalMessage: () => s.finalMessage().catch((e: unknown) => Promise.reject(convertError(e, errors))) }
      }
    }
  }
  return { client, description: opened.description }
}
