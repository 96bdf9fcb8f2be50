// Where the model runs (the `provider` input) and what each provider needs, read from the
// inputs and the variables each platform's own GitHub action leaves (docs/providers.md). Pure
// and synchronous: a missing region, project or credential fails the step at start, in one line
// naming it and what supplies it, before any model request. The SDKs themselves are loaded only
// when their provider is asked for (./index.ts).
import { readFileSync } from 'node:fs'

export const PROVIDERS = ['anthropic', 'bedrock', 'vertex', 'foundry'] as const
export type ProviderName = (typeof PROVIDERS)[number]

/** The Claude API without a stored key: the job's OIDC token exchanged by the SDK (workload identity federation). */
export interface Federation {
  ruleId: string
  organizationId: string
  workspaceId?: string
  serviceAccountId?: string
  /** the audience of the job's OIDC token the federation rule expects */
  audience: string
}

export type ProviderConfig =
  | { name: 'anthropic'; federation?: Federation }
  | {
      name: 'bedrock'
      region: string
      /** a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK), sent as a bearer token */
      apiKey?: string
      accessKeyId?: string
      secretAccessKey?: string
      sessionToken?: string
    }
  | { name: 'vertex'; region: string; projectId: string; credentialsFile: string }
  | {
      name: 'foundry'
      resource?: string
      apiKey?: string
      /** a Microsoft Entra ID token got with the job's OIDC token (a federated app registration) */
      entra?: { clientId: string; tenantId: string; authorityHost: string }
    }

export class ProviderError extends Error {}

/** The current Sonnet on each platform (model ids are the provider's). */
export const DEFAULT_MODEL_ID = 'claude-sonnet-5-5'

/**
 * The default model of a provider. Bedrock serves today's models through cross-region
 * inference profiles, named by the geography of the region (us., eu., apac.); elsewhere the
 * global profile.
 */
export function defaultModel(p: ProviderConfig): string {
  if (p.name !== 'bedrock') return DEFAULT_MODEL_ID
  const geo = p.region.startsWith('us-') ? 'us' : p.region.startsWith('eu-') ? 'eu' : p.region.startsWith('ap-') ? 'apac' : 'global'
  return `${geo}.anthropic.${DEFAULT_MODEL_ID}`
}

/** What the provider is called in the report and the log. */
export function providerLabel(p: ProviderConfig): string {
  switch (p.name) {
    case 'anthropic':
      return p.federation ? 'Claude API (workload identity federation)' : 'Claude API'
    case 'bedrock':
      return `Amazon Bedrock (${p.region})`
    case 'vertex':
      return `Google Vertex AI (${p.projectId}, ${p.region})`
    case 'foundry':
      return 'Microsoft Foundry'
  }
}

/** Whether the provider bills at prices other than Anthropic's list prices (the report then says the cost is an estimate at Anthropic's prices). */
export const pricedElsewhere = (p: ProviderConfig): boolean => p.name !== 'anthropic'

const OIDC_MISSING =
  "the job's OIDC token, which needs `permissions: id-token: write` on the job (ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN are not set)"

const hasOidc = (env: NodeJS.ProcessEnv): boolean => Boolean(env.ACTIONS_ID_TOKEN_REQUEST_URL && env.ACTIONS_ID_TOKEN_REQUEST_TOKEN)

/** The `provider` input, checked. */
export function providerName(raw: string): ProviderName {
  const name = (raw || 'anthropic').trim().toLowerCase()
  if (!(PROVIDERS as readonly string[]).includes(name)) {
    throw new ProviderError(`Input provider must be one of ${PROVIDERS.map(p => `"${p}"`).join(', ')}, got "${raw.trim()}".`)
  }
  return name as ProviderName
}

const v = (env: NodeJS.ProcessEnv, name: string): string | undefined => env[name]?.trim() || undefined

/** Workload identity federation for the Claude API, when its variables are set; undefined when none is. */
export function federationOf(env: NodeJS.ProcessEnv): Federation | undefined {
  const ruleId = v(env, 'ANTHROPIC_FEDERATION_RULE_ID')
  const organizationId = v(env, 'ANTHROPIC_ORGANIZATION_ID')
  if (!ruleId && !organizationId) return undefined
  if (!ruleId)
    throw new ProviderError(
      'Workload identity federation needs ANTHROPIC_FEDERATION_RULE_ID (the federation rule of the Claude Console, set it in env:) beside ANTHROPIC_ORGANIZATION_ID.'
    )
  if (!organizationId)
    throw new ProviderError(
      'Workload identity federation needs ANTHROPIC_ORGANIZATION_ID (the organization of the Claude Console, set it in env:) beside ANTHROPIC_FEDERATION_RULE_ID.'
    )
  if (!hasOidc(env)) throw new ProviderError(`Workload identity federation for the Claude API needs ${OIDC_MISSING}.`)
  return {
    ruleId,
    organizationId,
    workspaceId: v(env, 'ANTHROPIC_WORKSPACE_ID'),
    serviceAccountId: v(env, 'ANTHROPIC_SERVICE_ACCOUNT_ID'),
    audience: v(env, 'ANTHROPIC_OIDC_AUDIENCE') ?? 'https://api.anthropic.com'
  }
}

const AWS_ACTION = 'aws-actions/configure-aws-credentials'

export function bedrockOf(env: NodeJS.ProcessEnv): ProviderConfig & { name: 'bedrock' } {
  const region = v(env, 'AWS_REGION') ?? v(env, 'AWS_DEFAULT_REGION')
  if (!region)
    throw new ProviderError(
      `Provider bedrock needs a region: AWS_REGION (set by ${AWS_ACTION} from its aws-region input, or in env:) is not set.`
    )
  const apiKey = v(env, 'AWS_BEARER_TOKEN_BEDROCK')
  if (apiKey) return { name: 'bedrock', region, apiKey }
  const accessKeyId = v(env, 'AWS_ACCESS_KEY_ID')
  const secretAccessKey = v(env, 'AWS_SECRET_ACCESS_KEY')
  if (!accessKeyId || !secretAccessKey) {
    const missing =
      !accessKeyId && !secretAccessKey
        ? 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'
        : !accessKeyId
          ? 'AWS_ACCESS_KEY_ID'
          : 'AWS_SECRET_ACCESS_KEY'
    throw new ProviderError(
      `Provider bedrock needs AWS credentials: ${missing} not set (${AWS_ACTION} exports them, with role-to-assume and permissions id-token: write), or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK.`
    )
  }
  return { name: 'bedrock', region, accessKeyId, secretAccessKey, sessionToken: v(env, 'AWS_SESSION_TOKEN') }
}

const GOOGLE_ACTION = 'google-github-actions/auth'

export function vertexOf(env: NodeJS.ProcessEnv): ProviderConfig & { name: 'vertex' } {
  const region = v(env, 'CLOUD_ML_REGION')
  if (!region)
    throw new ProviderError('Provider vertex needs a region: CLOUD_ML_REGION (e.g. us-east5 or global, set it in env:) is not set.')
  // google-github-actions/auth exports GOOGLE_CLOUD_PROJECT when it knows the project
  const projectId = v(env, 'ANTHROPIC_VERTEX_PROJECT_ID') ?? v(env, 'GOOGLE_CLOUD_PROJECT')
  if (!projectId)
    throw new ProviderError(
      `Provider vertex needs a project: ANTHROPIC_VERTEX_PROJECT_ID (set it in env:, or GOOGLE_CLOUD_PROJECT, which ${GOOGLE_ACTION} exports with its project_id input) is not set.`
    )
  const credentialsFile = v(env, 'GOOGLE_APPLICATION_CREDENTIALS')
  if (!credentialsFile)
    throw new ProviderError(
      `Provider vertex needs Google credentials: GOOGLE_APPLICATION_CREDENTIALS (written by ${GOOGLE_ACTION} in a step before this one, with permissions id-token: write) is not set.`
    )
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(credentialsFile, 'utf8'))
  } catch {
    throw new ProviderError(
      `Provider vertex needs Google credentials: the file GOOGLE_APPLICATION_CREDENTIALS names cannot be read as JSON (${GOOGLE_ACTION} writes it; run it in the same job, after actions/checkout).`
    )
  }
  if (typeof (parsed as { type?: unknown })?.type !== 'string')
    throw new ProviderError(
      'Provider vertex needs Google credentials: the file GOOGLE_APPLICATION_CREDENTIALS names has no credential type.'
    )
  return { name: 'vertex', region, projectId, credentialsFile }
}

export function foundryOf(keyInput: string, baseUrl: string | undefined, env: NodeJS.ProcessEnv): ProviderConfig & { name: 'foundry' } {
  const resource = v(env, 'ANTHROPIC_FOUNDRY_RESOURCE')
  if (!resource && !baseUrl && !v(env, 'ANTHROPIC_FOUNDRY_BASE_URL'))
    throw new ProviderError(
      'Provider foundry needs its resource: ANTHROPIC_FOUNDRY_RESOURCE (the Foundry resource name, set it in env:) or the input anthropic-base-url is not set.'
    )
  const apiKey = keyInput || v(env, 'ANTHROPIC_FOUNDRY_API_KEY')
  if (apiKey) return { name: 'foundry', resource, apiKey }
  const clientId = v(env, 'AZURE_CLIENT_ID')
  const tenantId = v(env, 'AZURE_TENANT_ID')
  if (!clientId || !tenantId)
    throw new ProviderError(
      `Provider foundry needs a credential: the input anthropic-api-key (or ANTHROPIC_FOUNDRY_API_KEY), or ${!clientId && !tenantId ? 'AZURE_CLIENT_ID and AZURE_TENANT_ID' : !clientId ? 'AZURE_CLIENT_ID' : 'AZURE_TENANT_ID'} of an app with a federated credential for this repository (as azure/login takes them) for a Microsoft Entra ID token.`
    )
  if (!hasOidc(env)) throw new ProviderError(`Provider foundry with a Microsoft Entra ID token needs ${OIDC_MISSING}.`)
  const authorityHost = (v(env, 'AZURE_AUTHORITY_HOST') ?? 'https://login.microsoftonline.com').replace(/\/+$/, '')
  return { name: 'foundry', resource, entra: { clientId, tenantId, authorityHost } }
}

/** Keys of a Google credentials file that hold no secret (every other string in it is taught to the redactor). */
const GOOGLE_PUBLIC_KEYS = new Set([
  'type',
  'audience',
  'subject_token_type',
  'token_url',
  'service_account_impersonation_url',
  'token_info_url',
  'universe_domain',
  'quota_project_id',
  'project_id',
  'client_email',
  'client_id',
  'auth_uri',
  'token_uri',
  'auth_provider_x509_cert_url',
  'client_x509_cert_url',
  'subject_token_field_name',
  'workforce_pool_user_project',
  'environment_id',
  'region_url',
  'regional_cred_verification_url',
  // the runner's ID-token URL: no secret without the request token beside it (withheld from commands all the same)
  'url'
])

/**
 * Every secret a provider's configuration holds, to be redacted wherever output goes (and
 * withheld from the agent's copy): the keys and tokens, and of a Google credentials file each of
 * its values that can be a secret (a private key, a refresh token, the runner's OIDC request
 * token in its credential_source headers). Not the file's whole text: the redactor masks every
 * 12-character run of a secret, and the file's public parts (URLs, the service account's
 * address) would then vanish from every output; a copy of the file holds its secrets, so it is
 * still found.
 */
export function providerSecrets(p: ProviderConfig): string[] {
  switch (p.name) {
    case 'anthropic':
      return []
    case 'bedrock':
      return [p.apiKey, p.accessKeyId, p.secretAccessKey, p.sessionToken].filter((s): s is string => !!s)
    case 'foundry':
      return p.apiKey ? [p.apiKey] : []
    case 'vertex':
      return googleFileSecrets(p.credentialsFile)
  }
}

/**
 * The values of a Google credentials file that can be secrets (see providerSecrets); whatever
 * the provider, when GOOGLE_APPLICATION_CREDENTIALS names one (google-github-actions/auth ran
 * for another step of the job), so a copy of it is still known for what it holds.
 */
export function googleFileSecrets(file: string | undefined): string[] {
  if (!file) return []
  let text = ''
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return []
  }
  const out: string[] = []
  const walk = (value: unknown, key: string): void => {
    if (typeof value === 'string') {
      if (!GOOGLE_PUBLIC_KEYS.has(key)) out.push(value, value.replace(/^(bearer|basic|token)\s+/i, ''))
    } else if (value && typeof value === 'object') for (const [k, x] of Object.entries(value)) walk(x, k)
  }
  try {
    walk(JSON.parse(text), '')
  } catch {
    // not JSON: vertexOf says so at start
  }
  return out
}
