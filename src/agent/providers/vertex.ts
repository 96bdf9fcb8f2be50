// Google Vertex AI through @anthropic-ai/vertex-sdk: Application Default Credentials from the
// file GOOGLE_APPLICATION_CREDENTIALS names, as google-github-actions/auth writes it (its
// workload identity `external_account` form asks the runner for the job's OIDC token itself,
// then Google's STS, then, when the file says so, impersonates a service account). Loaded only
// when provider is vertex (a chunk of its own).
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk'
import { GoogleAuth } from 'google-auth-library'
import type { ProviderConfig } from './config'
import type { OpenedProvider, ProviderContext } from './types'

export function open(p: ProviderConfig & { name: 'vertex' }, ctx: ProviderContext): OpenedProvider {
  // the project given: GoogleAuth would otherwise ask Cloud Resource Manager for it
  const googleAuth = new GoogleAuth({
    keyFilename: p.credentialsFile,
    projectId: p.projectId,
    scopes: 'https://www.googleapis.com/auth/cloud-platform'
  })
  const client = new AnthropicVertex({
    googleAuth,
    region: p.region,
    projectId: p.projectId,
    ...(ctx.baseUrl ? { baseURL: ctx.baseUrl } : {}),
    maxRetries: ctx.maxRetries,
    fetch: ctx.fetch,
    openTelemetry: false
  })
  return { client: client as never, description: `Google Vertex AI (${p.projectId}, ${p.region})` }
}
