// Microsoft Foundry through @anthropic-ai/foundry-sdk: a Foundry API key, or a Microsoft Entra
// ID token got with the job's OIDC token (./entra.ts). Loaded only when provider is foundry.
import { AnthropicFoundry } from '@anthropic-ai/foundry-sdk'
import type { ProviderConfig } from './config'
import { entraTokenProvider } from './entra'
import type { OpenedProvider, ProviderContext } from './types'

export function open(p: ProviderConfig & { name: 'foundry' }, ctx: ProviderContext): OpenedProvider {
  // the resource or the base URL, never both (the SDK refuses both); null: not the SDK's own variable
  const where = ctx.baseUrl ? { baseURL: ctx.baseUrl, resource: null } : p.resource ? { resource: p.resource } : {}
  const auth = p.apiKey ? { apiKey: p.apiKey } : { azureADTokenProvider: entraTokenProvider(p.entra!, ctx) }
  const client = new AnthropicFoundry({ ...where, ...auth, maxRetries: ctx.maxRetries, fetch: ctx.fetch, openTelemetry: false })
  return { client: client as never, description: `Microsoft Foundry (${p.apiKey ? 'API key' : 'Microsoft Entra ID'})` }
}
