// The Claude API (or any Anthropic-compatible endpoint) with a key, or keyless through the SDK's
// workload identity federation: the job's OIDC token, asked of the runner with @actions/core's
// getIDToken, exchanged by the SDK for a short-lived token (jwt-bearer grant at
// <base>/v1/oauth/token), which the SDK caches and renews.
// The client is the SDK's base with only the Messages resource: the full client loads every
// resource of the API (~0.5 MB of the bundle), compiled before the first request.
import { BaseAnthropic } from '@anthropic-ai/sdk'
import { Messages } from '@anthropic-ai/sdk/resources/messages/messages'
import type { Federation } from './config'
import type { OpenedProvider, ProviderContext } from './types'

/** The SDK's client with the one resource this action uses. */
class MessagesClient extends BaseAnthropic {
  readonly messages = new Messages(this)
}

export interface KeyOptions {
  apiKey: string
  authToken?: string
  baseUrl?: string
  maxRetries: number
}

/** With a key (or ANTHROPIC_AUTH_TOKEN): synchronous, nothing more loaded (the common start). */
export function keyClient(opts: KeyOptions): OpenedProvider {
  const client = new MessagesClient({
    apiKey: opts.apiKey || null,
    authToken: opts.apiKey ? null : (opts.authToken ?? null),
    baseURL: opts.baseUrl || undefined,
    // This SDK sends the key as a bearer token; Anthropic-compatible gateways
    // commonly read x-api-key, so both carry it.
    defaultHeaders: opts.apiKey ? { 'x-api-key': opts.apiKey } : undefined,
    maxRetries: opts.maxRetries,
    // No OpenTelemetry spans or trace headers, whatever the environment says: nothing here reads them, a
    // span would hold the repository's text, and each request cost ~0.15 ms of span work (npm run bench)
    openTelemetry: false
  })
  return { client: client as never, description: 'Claude API' }
}

/** Keyless: the SDK's OIDC federation provider, fed the job's OIDC token. */
export async function federatedClient(f: Federation, ctx: ProviderContext): Promise<OpenedProvider> {
  const [{ oidcFederationProvider }, { getIDToken }] = await Promise.all([
    import('@anthropic-ai/sdk/lib/credentials/oidc-federation'),
    import('@actions/core')
  ])
  const baseURL = (ctx.baseUrl || 'https://api.anthropic.com').replace(/\/+$/, '')
  const exchange = oidcFederationProvider({
    identityTokenProvider: async () => {
      const jwt = await getIDToken(f.audience)
      ctx.learn(jwt)
      return jwt
    },
    federationRuleId: f.ruleId,
    organizationId: f.organizationId,
    serviceAccountId: f.serviceAccountId,
    workspaceId: f.workspaceId,
    baseURL,
    fetch: ctx.fetch
  })
  const credentials = async (o?: { forceRefresh?: boolean }) => {
    const token = await exchange(o)
    ctx.learn(token.token)
    return token
  }
  const client = new MessagesClient({
    credentials,
    baseURL,
    maxRetries: ctx.maxRetries,
    fetch: ctx.fetch,
    openTelemetry: false
  })
  return { client: client as never, description: 'Claude API (workload identity federation)' }
}
