// A Microsoft Entra ID access token for Foundry, got with the job's OIDC token: the OAuth 2.0
// client-credentials grant with the OIDC token as the client assertion (a federated credential
// of the app AZURE_CLIENT_ID in tenant AZURE_TENANT_ID, as azure/login uses them), scope
// https://ai.azure.com/.default. Written here rather than through @azure/identity: its MSAL
// client (with msal-browser, ~2 MB) accepts only https authorities, so no test could speak to it
// on 127.0.0.1 (docs/providers.md). AZURE_AUTHORITY_HOST points it at another cloud.
import type { ProviderContext } from './types'

const SCOPE = 'https://ai.azure.com/.default'
/** The audience Entra's federated credentials expect of a GitHub OIDC token. */
const AUDIENCE = 'api://AzureADTokenExchange'
/** Renewed this long before it expires. */
const MARGIN_MS = 5 * 60_000

export function entraTokenProvider(
  e: { clientId: string; tenantId: string; authorityHost: string },
  ctx: ProviderContext
): () => Promise<string> {
  let cached: { token: string; expiresAt: number } | undefined
  return async () => {
    if (cached && Date.now() < cached.expiresAt - MARGIN_MS) return cached.token
    const { getIDToken } = await import('@actions/core')
    const assertion = await getIDToken(AUDIENCE)
    ctx.learn(assertion)
    const url = `${e.authorityHost}/${encodeURIComponent(e.tenantId)}/oauth2/v2.0/token`
    const res = await ctx.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: e.clientId,
        scope: SCOPE,
        grant_type: 'client_credentials',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertion
      }).toString()
    })
    const body = (await res.json().catch(() => ({}))) as {
      access_token?: string
      expires_in?: number
      error?: string
      error_description?: string
    }
    if (!res.ok || typeof body.access_token !== 'string') {
      // only the standard error fields: the body may echo what was sent
      const why = [body.error, body.error_description?.split('\n')[0]].filter(Boolean).join(': ')
      throw new Error(
        `Microsoft Entra ID refused the job's OIDC token (${res.status}${why ? ` ${why}` : ''}): check AZURE_CLIENT_ID, AZURE_TENANT_ID and the app's federated credential for this repository.`
      )
    }
    ctx.learn(body.access_token)
    cached = { token: body.access_token, expiresAt: Date.now() + (Number(body.expires_in) || 3600) * 1000 }
    return cached.token
  }
}
