// The client for the configured provider. The Claude API with a key is built at once from the
// SDK the action loads anyway (the common start), and keyless through the SDK's own federation;
// Bedrock, Vertex and Foundry come from a bundle of their own (bundle.ts: dist/providers/),
// imported only when asked for, which the action's bundle neither holds nor loads.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import * as errors from '@anthropic-ai/sdk/core/error'
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
    default: {
      // a path webpack does not follow (webpackIgnore): the bundle stays out of the action's
      const bundle = (await import(/* webpackIgnore: true */ providersBundle())) as typeof import('./bundle')
      return bundle.openBundled(provider, ctx, errors)
    }
  }
}

/** dist/providers/index.js beside the running action; from src/ (the tests), bundle.ts itself. */
export function providersBundle(): string {
  const here = fileURLToPath(import.meta.url)
  if (here.endsWith('.ts')) return join(dirname(here), 'bundle.ts')
  // dist/index.js (and its chunks), or dist/cli/index.js
  const beside = join(dirname(here), 'providers', 'index.js')
  return existsSync(beside) ? beside : join(dirname(here), '..', 'providers', 'index.js')
}
