// The client for the configured provider. The Claude API with a key is built at once from the
// SDK the action loads anyway (the common start); every other provider's SDK is imported only
// when asked for, so ncc puts it in a chunk of its own that the common start never loads.
import type { ProviderConfig } from './config'
import { federatedClient, keyClient, type KeyOptions } from './anthropic'
import type { OpenedProvider, ProviderContext } from './types'

export type { OpenedProvider, ProviderContext, StreamingClient } from './types'

/** The client, synchronously, when no other SDK is needed; undefined otherwise (call openProvider). */
export function openKeyClient(provider: ProviderConfig | undefined, key: KeyOptions): OpenedProvider | undefined {
  if (provider && (provider.name !== 'anthropic' || provider.federation)) return undefined
  return keyClient(key)
}

export async function openProvider(provider: ProviderConfig, ctx: ProviderContext): Promise<OpenedProvider> {
  switch (provider.name) {
    case 'anthropic':
      return federatedClient(provider.federation!, ctx)
    case 'bedrock':
      return (await import('./bedrock')).open(provider, ctx)
    case 'vertex':
      return (await import('./vertex')).open(provider, ctx)
    case 'foundry':
      return (await import('./foundry')).open(provider, ctx)
  }
}
