// Fakes of the model providers' wire protocols on 127.0.0.1, as the official SDKs speak them,
// in front of the Messages fake (./fake-anthropic.ts): each checks the provider's
// authentication as the real service does (refusing a bad signature or token), turns the
// request into a Messages request, lets the Messages fake answer it from the same scripted
// replies, and sends its answer back in the provider's framing.
//
//   const f = await startFakeProviders([bash('ls'), text('done')], scenario)
//   ... run with provider: bedrock, AWS_* = f.scenario.aws, anthropic-base-url: f.url ...
//   f.inner.requests: the Messages requests, as the loop made them
//
// One server speaks them all:
//   - the runner's OIDC endpoint (ACTIONS_ID_TOKEN_REQUEST_URL = f.oidcRequestUrl, bearer
//     f.scenario.oidcRequestToken): a JWT for the audience asked, signed with the fake's key;
//   - Bedrock: POST /model/{model}/invoke-with-response-stream, SigV4 (service bedrock) recomputed
//     from the scenario's credentials and region, or a Bedrock API key as a bearer token; the
//     answer in AWS event-stream frames (prelude and message CRC32s), each a `chunk` event whose
//     payload is {"bytes": base64(event JSON)};
//   - Vertex: Google STS (POST /sts/v1/token, an RFC 8693 token exchange of the job's OIDC
//     token), IAM credentials (POST /iam/v1/projects/-/serviceAccounts/{sa}:generateAccessToken)
//     and POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{m}:streamRawPredict;
//   - Foundry: POST /anthropic/v1/messages with x-api-key, or a bearer token from the Entra fake
//     (POST /entra/{tenant}/oauth2/v2.0/token, client assertion = the job's OIDC token);
//   - the Claude API's federation: POST /v1/oauth/token (jwt-bearer grant), then /v1/messages
//     with the minted bearer token.
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { startFakeAnthropic, type FakeAnthropic, type FakeAnthropicOptions, type Reply } from './fake-anthropic'

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const alnum = (n: number) => Array.from(randomBytes(n), b => ALNUM[b % ALNUM.length]).join('')

export interface Scenario {
  oidcRequestToken: string
  aws: { accessKeyId: string; secretAccessKey: string; sessionToken: string; region: string; bearer: string }
  google: { project: string; region: string; serviceAccount: string; audience: string; oidcAudience: string }
  foundry: { apiKey: string; clientId: string; tenantId: string }
  federation: { ruleId: string; organizationId: string; workspaceId: string }
}

/** Fresh credentials of every provider (random, so a leak scan finds them). */
export function newScenario(): Scenario {
  return {
    oidcRequestToken: `oidcreq${alnum(40)}`,
    aws: {
      accessKeyId: `ASIA${alnum(16).toUpperCase()}`,
      secretAccessKey: alnum(40),
      sessionToken: `IQoJb3JpZ2luX2Vj${alnum(120)}`,
      region: 'us-west-2',
      bearer: `ABSKQmVkcm9jay${alnum(60)}`
    },
    google: {
      project: 'octo-vertex-1234',
      region: 'us-east5',
      serviceAccount: 'agent@octo-vertex-1234.iam.gserviceaccount.com',
      audience: '//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/github/providers/octo',
      oidcAudience: 'https://iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/github/providers/octo'
    },
    foundry: { apiKey: alnum(84), clientId: '0b4e7a52-1c3d-4e5f-8a9b-0c1d2e3f4a5b', tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47' },
    federation: { ruleId: `fdrl_${alnum(24)}`, organizationId: '3f2e8c1a-0b4d-4e6f-9a7b-5c3d2e1f0a9b', workspaceId: `wrkspc_${alnum(24)}` }
  }
}

export interface ProviderRequest {
  kind: string
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  body: string
  /** why the fake refused it, when it did */
  refused?: string
}

export interface FakeProviders {
  url: string
  /** ACTIONS_ID_TOKEN_REQUEST_URL for the action */
  oidcRequestUrl: string
  scenario: Scenario
  inner: FakeAnthropic
  requests: ProviderRequest[]
  /** every token the fakes minted (ID tokens, STS, IAM, Entra, federation): secrets for the leak scan */
  minted: string[]
  /** an external_account credentials file, as google-github-actions/auth writes it */
  externalAccount(opts?: { impersonate?: boolean }): Record<string, unknown>
  close(): Promise<void>
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url')
const sha256hex = (b: Buffer | string) => createHash('sha256').update(b).digest('hex')
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest()

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** RFC 3986 escaping as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
const escapeUri = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/**
 * Recomputes the request's SigV4 signature (AWS's documented algorithm, written here from the
 * spec, not the SDK's signer) and says what is wrong, or undefined when it verifies.
 */
export function sigV4Problem(
  req: { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer },
  creds: { accessKeyId: string; secretAccessKey: string; sessionToken?: string; region: string },
  service = 'bedrock'
): string | undefined {
  const auth = String(req.headers.authorization ?? '')
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth
    )
  if (!m) return 'no SigV4 authorization header'
  const [, akid, date, region, svc, signedList, signature] = m
  if (akid !== creds.accessKeyId) return 'The security token included in the request is invalid (unknown access key id)'
  if (region !== creds.region) return `Credential should be scoped to a valid region (${region})`
  if (svc !== service) return `Credential should be scoped to correct service: '${service}'`
  const amzDate = String(req.headers['x-amz-date'] ?? '')
  if (!amzDate.startsWith(date)) return 'x-amz-date does not match the credential scope'
  const signed = signedList.split(';')
  if (!signed.includes('host') || !signed.includes('x-amz-date')) return 'host and x-amz-date must be signed'
  if (creds.sessionToken !== undefined) {
    if (req.headers['x-amz-security-token'] !== creds.sessionToken) return 'The security token included in the request is invalid'
    if (!signed.includes('x-amz-security-token')) return 'x-amz-security-token must be signed'
  }
  const payloadHash = sha256hex(req.body)
  const declared = req.headers['x-amz-content-sha256']
  if (declared !== undefined && declared !== payloadHash) return 'x-amz-content-sha256 does not match the body'
  const url = new URL(req.url, 'http://fake')
  const canonicalUri = escapeUri(url.pathname).replace(/%2F/g, '/')
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => [escapeUri(k), escapeUri(v)])
    .sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
  const headerLines = signed.map(h => {
    const raw = req.headers[h]
    const value = Array.isArray(raw) ? raw.join(',') : (raw ?? '')
    return `${h}:${value.trim().replace(/\s+/g, ' ')}\n`
  })
  const canonical = [req.method, canonicalUri, query, headerLines.join(''), signedList, payloadHash].join('\n')
  const scope = `${date}/${region}/${service}/aws4_request`
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256hex(canonical)].join('\n')
  const key = hmac(hmac(hmac(hmac(`AWS4${creds.secretAccessKey}`, date), region), service), 'aws4_request')
  const expected = createHmac('sha256', key).update(toSign).digest('hex')
  return safeEqual(expected, signature) ? undefined : 'The request signature we calculated does not match the signature you provided.'
}

/** One AWS event-stream message: prelude (total and headers length, CRC32), string headers, payload, message CRC32. */
export function eventStreamFrame(headers: Record<string, string>, payload: Buffer): Buffer {
  const hs = Buffer.concat(
    Object.entries(headers).map(([k, v]) => {
      const kb = Buffer.from(k)
      const vb = Buffer.from(v)
      const b = Buffer.alloc(4 + kb.length + vb.length)
      b.writeUInt8(kb.length, 0)
      kb.copy(b, 1)
      b.writeUInt8(7, 1 + kb.length) // string
      b.writeUInt16BE(vb.length, 2 + kb.length)
      vb.copy(b, 4 + kb.length)
      return b
    })
  )
  const prelude = Buffer.alloc(12)
  prelude.writeUInt32BE(16 + hs.length + payload.length, 0)
  prelude.writeUInt32BE(hs.length, 4)
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8)
  const message = Buffer.concat([prelude, hs, payload])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(message), 0)
  return Buffer.concat([message, crc])
}

/** The events of a server-sent-event stream, as JSON. */
function sseEvents(text: string): unknown[] {
  const out: unknown[] = []
  for (const block of text.split('\n\n')) {
    const data = block
      .split('\n')
      .filter(l => l.startsWith('data:'))
      .map(l => l.slice(5).trim())
      .join('\n')
    if (data) out.push(JSON.parse(data))
  }
  return out
}

export async function startFakeProviders(
  script: Reply[],
  scenario: Scenario = newScenario(),
  innerOpts: FakeAnthropicOptions = {}
): Promise<FakeProviders> {
  const inner = await startFakeAnthropic(script, innerOpts)
  const jwtKey = randomBytes(32)
  const requests: ProviderRequest[] = []
  const minted: string[] = []
  const tokens = { sts: new Set<string>(), iam: new Set<string>(), entra: new Set<string>(), federation: new Set<string>() }
  const sockets = new Set<Socket>()
  let base = ''

  const mint = (set: Set<string>, prefix: string) => {
    const t = `${prefix}${alnum(64)}`
    set.add(t)
    minted.push(t)
    return t
  }
  const issueJwt = (aud: string) => {
    const now = Math.floor(Date.now() / 1000)
    const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: 'fake' }))
    const body = b64url(
      JSON.stringify({
        iss: 'https://token.actions.githubusercontent.com',
        aud,
        sub: 'repo:Codertocat/Hello-World:ref:refs/heads/main',
        iat: now,
        exp: now + 300,
        jti: alnum(16)
      })
    )
    const jwt = `${head}.${body}.${b64url(hmac(jwtKey, `${head}.${body}`))}`
    minted.push(jwt)
    return jwt
  }
  /** the audience of a JWT this fake issued, or undefined when it did not issue it */
  const jwtAudience = (jwt: string): string | undefined => {
    const [h, b, s] = jwt.split('.')
    if (!h || !b || !s || !safeEqual(b64url(hmac(jwtKey, `${h}.${b}`)), s)) return undefined
    const claims = JSON.parse(Buffer.from(b, 'base64url').toString()) as { aud?: string; exp?: number }
    return (claims.exp ?? 0) * 1000 > Date.now() ? claims.aud : undefined
  }
  const bearer = (h: http.IncomingHttpHeaders) => /^bearer\s+(.+)$/i.exec(String(h.authorization ?? ''))?.[1]

  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(body))
  }
  const refuse = (rec: ProviderRequest, res: http.ServerResponse, status: number, why: string, body?: unknown) => {
    rec.refused = why
    json(
      res,
      status,
      body ?? { type: 'error', error: { type: status === 403 ? 'permission_error' : 'authentication_error', message: why } }
    )
  }

  /** The Messages request to the inner fake; its answer as status, headers and body text. */
  const forward = async (body: Record<string, unknown>, headers: Record<string, string>) => {
    const res = await fetch(`${inner.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body)
    })
    return { status: res.status, contentType: res.headers.get('content-type') ?? 'application/json', text: await res.text() }
  }
  const relay = async (res: http.ServerResponse, body: Record<string, unknown>, headers: Record<string, string>) => {
    const a = await forward(body, headers)
    res.writeHead(a.status, { 'content-type': a.contentType })
    res.end(a.text)
  }
  const betaHeaders = (h: http.IncomingHttpHeaders): Record<string, string> =>
    h['anthropic-beta'] ? { 'anthropic-beta': String(h['anthropic-beta']) } : {}

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer) => {
    const url = new URL(req.url ?? '/', base)
    const path = url.pathname
    const rec: ProviderRequest = {
      kind: 'other',
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body: raw.toString('utf8')
    }
    requests.push(rec)

    // The runner's ID-token endpoint (what @actions/core getIDToken and credential_source.url ask)
    if (path === '/oidc/token') {
      rec.kind = 'oidc'
      if (bearer(req.headers) !== scenario.oidcRequestToken)
        return refuse(rec, res, 401, 'bad ACTIONS_ID_TOKEN_REQUEST_TOKEN', { message: 'Unauthorized' })
      const aud = url.searchParams.get('audience')
      if (!aud) return refuse(rec, res, 400, 'no audience', { message: 'audience required' })
      return json(res, 200, { value: issueJwt(aud) })
    }

    // Amazon Bedrock
    const bedrock = /^\/model\/([^/]+)\/(invoke-with-response-stream|invoke)$/.exec(path)
    if (bedrock && req.method === 'POST') {
      rec.kind = 'bedrock'
      const token = bearer(req.headers)
      if (token !== undefined) {
        if (token !== scenario.aws.bearer)
          return refuse(rec, res, 403, 'Invalid API Key format: Must start with pre-defined prefix', { message: 'Authentication failed' })
      } else {
        const problem = sigV4Problem({ method: req.method, url: req.url ?? '/', headers: req.headers, body: raw }, { ...scenario.aws })
        if (problem) return refuse(rec, res, 403, problem, { message: problem })
      }
      const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>
      // the runtime API takes the version in the body
      if (typeof body.anthropic_version !== 'string')
        return refuse(rec, res, 400, 'anthropic_version is required', { message: 'Malformed input request' })
      if ('model' in body || 'stream' in body)
        return refuse(rec, res, 400, 'model and stream belong in the path', { message: 'Malformed input request: extraneous key' })
      const { anthropic_version: _v, anthropic_beta: betas, ...rest } = body
      void _v
      const stream = bedrock[2] === 'invoke-with-response-stream'
      const a = await forward(
        { ...rest, model: decodeURIComponent(bedrock[1]), stream },
        Array.isArray(betas) ? { 'anthropic-beta': betas.join(',') } : {}
      )
      if (a.status !== 200 || !stream) {
        res.writeHead(a.status, { 'content-type': 'application/json', 'x-amzn-errortype': a.status === 200 ? '' : 'ValidationException' })
        return res.end(a.text)
      }
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-bedrock-content-type': 'application/json' })
      for (const event of sseEvents(a.text)) {
        const payload = Buffer.from(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') }))
        res.write(eventStreamFrame({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, payload))
      }
      return res.end()
    }

    // Google: STS, IAM credentials, Vertex AI
    if (path === '/sts/v1/token' && req.method === 'POST') {
      rec.kind = 'sts'
      const form = new URLSearchParams(raw.toString('utf8'))
      const aud = jwtAudience(form.get('subject_token') ?? '')
      if (
        form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:token-exchange' ||
        form.get('subject_token_type') !== 'urn:ietf:params:oauth:token-type:jwt' ||
        form.get('audience') !== scenario.google.audience
      )
        return refuse(rec, res, 400, 'invalid token exchange', { error: 'invalid_request' })
      if (aud !== scenario.google.oidcAudience)
        return refuse(rec, res, 400, 'the subject token is invalid', {
          error: 'invalid_grant',
          error_description: 'The audience in ID Token does not match the expected audience.'
        })
      return json(res, 200, {
        access_token: mint(tokens.sts, 'ya29.sts'),
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: 3600
      })
    }
    const iam = /^\/iam\/v1\/projects\/-\/serviceAccounts\/([^/:]+):generateAccessToken$/.exec(path)
    if (iam && req.method === 'POST') {
      rec.kind = 'iam'
      if (!tokens.sts.has(bearer(req.headers) ?? ''))
        return refuse(rec, res, 401, 'Request had invalid authentication credentials.', { error: { code: 401, status: 'UNAUTHENTICATED' } })
      if (decodeURIComponent(iam[1]) !== scenario.google.serviceAccount)
        return refuse(rec, res, 403, 'Permission iam.serviceAccounts.getAccessToken denied', {
          error: { code: 403, status: 'PERMISSION_DENIED' }
        })
      return json(res, 200, { accessToken: mint(tokens.iam, 'ya29.iam'), expireTime: new Date(Date.now() + 3600_000).toISOString() })
    }
    const vertex =
      /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(streamRawPredict|rawPredict)$/.exec(path)
    if (vertex && req.method === 'POST') {
      rec.kind = 'vertex'
      const token = bearer(req.headers) ?? ''
      if (!tokens.iam.has(token) && !tokens.sts.has(token))
        return refuse(rec, res, 401, 'Request had invalid authentication credentials.', {
          error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' }
        })
      if (vertex[1] !== scenario.google.project || vertex[2] !== scenario.google.region)
        return refuse(rec, res, 403, 'wrong project or region', { error: { code: 403, status: 'PERMISSION_DENIED' } })
      const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>
      if (typeof body.anthropic_version !== 'string' || 'model' in body)
        return refuse(rec, res, 400, 'bad Vertex body', { error: { code: 400, status: 'INVALID_ARGUMENT' } })
      const { anthropic_version: _v, ...rest } = body
      void _v
      return relay(
        res,
        { ...rest, model: decodeURIComponent(vertex[3]), stream: vertex[4] === 'streamRawPredict' },
        betaHeaders(req.headers)
      )
    }

    // Microsoft Entra ID and Foundry
    const entra = /^\/entra\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path)
    if (entra && req.method === 'POST') {
      rec.kind = 'entra'
      const form = new URLSearchParams(raw.toString('utf8'))
      if (decodeURIComponent(entra[1]) !== scenario.foundry.tenantId || form.get('client_id') !== scenario.foundry.clientId)
        return refuse(rec, res, 400, 'AADSTS700016: application not found in the directory', { error: 'unauthorized_client' })
      if (
        form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' ||
        jwtAudience(form.get('client_assertion') ?? '') !== 'api://AzureADTokenExchange'
      )
        return refuse(rec, res, 400, 'AADSTS700211: No matching federated identity record found for presented assertion.', {
          error: 'invalid_client'
        })
      if (form.get('grant_type') !== 'client_credentials' || form.get('scope') !== 'https://ai.azure.com/.default')
        return refuse(rec, res, 400, 'bad grant', { error: 'invalid_request' })
      return json(res, 200, { token_type: 'Bearer', expires_in: 3599, access_token: mint(tokens.entra, 'eyEntra.') })
    }
    if (path === '/anthropic/v1/messages' && req.method === 'POST') {
      rec.kind = 'foundry'
      const key = req.headers['x-api-key']
      const ok = key !== undefined ? key === scenario.foundry.apiKey : tokens.entra.has(bearer(req.headers) ?? '')
      if (!ok) return refuse(rec, res, 401, 'Access denied due to invalid subscription key or wrong API endpoint.')
      return relay(res, JSON.parse(raw.toString('utf8')) as Record<string, unknown>, betaHeaders(req.headers))
    }

    // The Claude API's workload identity federation
    if (path === '/v1/oauth/token' && req.method === 'POST') {
      rec.kind = 'federation'
      const body = JSON.parse(raw.toString('utf8')) as Record<string, string>
      const betas = String(req.headers['anthropic-beta'] ?? '')
      if (!betas.includes('oidc-federation-2026-04-01'))
        return refuse(rec, res, 400, 'missing the federation beta header', { error: 'invalid_request' })
      if (
        body.grant_type !== 'urn:ietf:params:oauth:grant-type:jwt-bearer' ||
        body.federation_rule_id !== scenario.federation.ruleId ||
        body.organization_id !== scenario.federation.organizationId
      )
        return refuse(rec, res, 401, 'no federation rule matches', { error: 'invalid_grant' })
      if (jwtAudience(body.assertion ?? '') !== 'https://api.anthropic.com')
        return refuse(rec, res, 401, 'the assertion is invalid', { error: 'invalid_grant' })
      if (body.workspace_id !== undefined && body.workspace_id !== scenario.federation.workspaceId)
        return refuse(rec, res, 401, 'wrong workspace', { error: 'invalid_grant' })
      return json(res, 200, { access_token: mint(tokens.federation, 'sk-ant-oat01-'), token_type: 'Bearer', expires_in: 3600 })
    }
    if (path === '/v1/messages' && req.method === 'POST') {
      rec.kind = 'claude'
      if (!tokens.federation.has(bearer(req.headers) ?? '')) return refuse(rec, res, 401, 'invalid bearer token')
      return relay(res, JSON.parse(raw.toString('utf8')) as Record<string, unknown>, betaHeaders(req.headers))
    }
    refuse(rec, res, 404, `fake-providers: no route for ${req.method} ${path}`)
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks)).catch(err => {
        if (!res.headersSent) json(res, 500, { message: `fake-providers: ${(err as Error)?.stack ?? String(err)}` })
        else res.end()
      })
    })
  })
  server.on('connection', s => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const oidcRequestUrl = `${base}/oidc/token?api-version=2.0`
  let closed: Promise<void> | undefined
  return {
    url: base,
    oidcRequestUrl,
    scenario,
    inner,
    requests,
    minted,
    externalAccount: ({ impersonate = true } = {}) => {
      const source = new URL(oidcRequestUrl)
      source.searchParams.set('audience', scenario.google.oidcAudience)
      return {
        type: 'external_account',
        audience: scenario.google.audience,
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        token_url: `${base}/sts/v1/token`,
        credential_source: {
          url: source.toString(),
          headers: { Authorization: `Bearer ${scenario.oidcRequestToken}` },
          format: { type: 'json', subject_token_field_name: 'value' }
        },
        ...(impersonate
          ? {
              service_account_impersonation_url: `${base}/iam/v1/projects/-/serviceAccounts/${scenario.google.serviceAccount}:generateAccessToken`
            }
          : {})
      }
    },
    close: () => {
      closed ??= new Promise<void>(resolve => {
        server.close(() => resolve())
        server.closeAllConnections()
        for (const s of sockets) s.destroy()
      }).then(() => inner.close())
      return closed
    }
  }
}
