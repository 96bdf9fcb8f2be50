// Amazon Bedrock through @anthropic-ai/bedrock-sdk: SigV4 with the AWS credentials
// aws-actions/configure-aws-credentials exports (the session token too), or a Bedrock API key
// sent as a bearer token. Loaded only when provider is bedrock (a chunk of its own).
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk'
import type { ProviderConfig } from './config'
import type { OpenedProvider, ProviderContext } from './types'

export function open(p: ProviderConfig & { name: 'bedrock' }, ctx: ProviderContext): OpenedProvider {
  const common = {
    awsRegion: p.region,
    // null: never ANTHROPIC_BEDROCK_BASE_URL or another variable the action did not read itself
    baseURL: ctx.baseUrl || `https://bedrock-runtime.${p.region}.amazonaws.com`,
    maxRetries: ctx.maxRetries,
    fetch: ctx.fetch,
    openTelemetry: false as const
  }
  const client = p.apiKey
    ? new AnthropicBedrock({ ...common, apiKey: p.apiKey })
    : new AnthropicBedrock({
        ...common,
        apiKey: null,
        awsAccessKey: p.accessKeyId as string,
        awsSecretKey: p.secretAccessKey as string,
        awsSessionToken: p.sessionToken ?? null
      })
  return { client: client as never, description: `Amazon Bedrock (${p.region}${p.apiKey ? ', Bedrock API key' : ''})` }
}
