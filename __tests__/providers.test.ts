// Issue 39: every provider spoken to by its real SDK (createModelCall, as the loop calls it) over
// the fakes of its wire protocol (helpers/fake-providers.ts), which refuse a bad signature or
// token; the settings' one-line failures; provider credentials withheld and redacted.
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createModelCall, describeModelError } from '../src/agent/model'
import { providerSecrets, type ProviderConfig } from '../src/agent/providers/config'
import { learningFetch } from '../src/agent/providers/learn'
import { readSettings, secretsOf } from '../src/settings'
import { commandEnv } from '../src/sandbox/env'
import { Redactor } from '../src/report/redact'
import { text } from './helpers/fake-anthropic'
import { eventStreamFrame, newScenario, sigV4Problem, startFakeProviders, type FakeProviders } from './helpers/fake-providers'
import type { MessageCreateParams } from '../src/types'
import { seal, unseal, type StoredHistory } from '../src/thread/history'
import { convertError } from '../src/agent/providers/bundle'
import * as errors from '@anthropic-ai/sdk/core/error'

const dir = mkdtempSync(join(tmpdir(), 'providers-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const params = (model: string): MessageCreateParams =>
  ({ model, max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] }) as unknown as MessageCreateParams

const saved = { ...process.env }
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
  Object.assign(process.env, saved)
})

const scenario = newScenario()
let fake: FakeProviders
beforeAll(async () => {
  fake = await startFakeProviders([], scenario, {})
})
afterAll(() => fake.close())

/** One model request through the real SDK of `provider`; the fake answers from a one-reply script. */
async function ask(provider: ProviderConfig, o: { baseUrl?: string; apiKey?: string; model?: string } = {}) {
  const f = await startFakeProviders([text('hello from the provider')], fake.scenario)
  process.env.ACTIONS_ID_TOKEN_REQUEST_URL = f.oidcRequestUrl
  process.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN = fake.scenario.oidcRequestToken
  const learned: string[] = []
  try {
    const call = createModelCall({
      apiKey: o.apiKey ?? '',
      baseUrl: o.baseUrl?.replace('{url}', f.url),
      provider,
      maxRetries: 0,
      learn: s => learned.push(s)
    })
    const model = o.model ?? 'claude-sonnet-5-5'
    const result = await call(params(model), new AbortController().signal).then(
      m => ({ ok: true as const, message: m }),
      (e: unknown) => ({ ok: false as const, error: describeModelError(e, model) })
    )
    return { result, f, learned }
  } finally {
    await f.close()
  }
}

const { aws, google, foundry, federation } = scenario

describe('Amazon Bedrock (@anthropic-ai/bedrock-sdk)', () => {
  test('SigV4 with the session credentials configure-aws-credentials exports: the fake recomputes the signature; the answer comes back through event-stream frames', async () => {
    const { aws } = fake.scenario
    const { result, f } = await ask(
      {
        name: 'bedrock',
        region: aws.region,
        accessKeyId: aws.accessKeyId,
        secretAccessKey: aws.secretAccessKey,
        sessionToken: aws.sessionToken
      },
      { baseUrl: '{url}', model: 'us.anthropic.claude-sonnet-5-5' }
    )
    expect(result).toMatchObject({ ok: true, message: { content: [{ type: 'text', text: 'hello from the provider' }] } })
    const req = f.requests.find(r => r.kind === 'bedrock')!
    expect(req.refused).toBeUndefined()
    expect(req.path).toBe('/model/us.anthropic.claude-sonnet-5-5/invoke-with-response-stream')
    expect(String(req.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=ASIA\w+\/\d{8}\/us-west-2\/bedrock\/aws4_request/)
    expect(f.inner.requests[0].body.model).toBe('us.anthropic.claude-sonnet-5-5')
  })

  test('a wrong secret key, region or session token is refused (403), never answered', async () => {
    const { aws } = fake.scenario
    for (const bad of [{ secretAccessKey: 'x'.repeat(40) }, { region: 'eu-west-1' }, { sessionToken: 'IQoJ-not-the-session' }]) {
      const { result, f } = await ask(
        {
          name: 'bedrock',
          region: aws.region,
          accessKeyId: aws.accessKeyId,
          secretAccessKey: aws.secretAccessKey,
          sessionToken: aws.sessionToken,
          ...bad
        },
        { baseUrl: '{url}' }
      )
      expect(result.ok).toBe(false)
      expect(f.requests.find(r => r.kind === 'bedrock')?.refused).toBeTruthy()
      expect(f.inner.requests).toHaveLength(0)
    }
  })

  test('the fake verifies a signature it did not make: one changed byte of the body is refused', () => {
    const body = Buffer.from('{"a":1}')
    const headers = { host: '127.0.0.1:1', 'x-amz-date': '20261207T120000Z', authorization: '' }
    const creds = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', region: 'us-west-2' }
    expect(sigV4Problem({ method: 'POST', url: '/model/m/invoke', headers, body }, creds)).toBe('no SigV4 authorization header')
    headers.authorization = `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261207/us-west-2/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`
    expect(sigV4Problem({ method: 'POST', url: '/model/m/invoke', headers, body }, creds)).toMatch(/does not match/)
  })

  test('event-stream frames carry valid CRC32s (prelude and message)', () => {
    const frame = eventStreamFrame({ ':event-type': 'chunk' }, Buffer.from('{}'))
    expect(frame.readUInt32BE(0)).toBe(frame.length)
  })

  test('a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) as a bearer token; a wrong one is refused', async () => {
    const { aws } = fake.scenario
    const ok = await ask({ name: 'bedrock', region: aws.region, apiKey: aws.bearer }, { baseUrl: '{url}' })
    expect(ok.result.ok).toBe(true)
    expect(ok.f.requests.find(r => r.kind === 'bedrock')?.headers.authorization).toBe(`Bearer ${aws.bearer}`)
    const bad = await ask({ name: 'bedrock', region: aws.region, apiKey: `ABSK${'z'.repeat(60)}` }, { baseUrl: '{url}' })
    expect(bad.result.ok).toBe(false)
    expect(bad.f.inner.requests).toHaveLength(0)
  })
})

describe('the Claude API keyless (workload identity federation of @anthropic-ai/sdk)', () => {
  test("the job's OIDC token (getIDToken) is exchanged by the SDK; the minted token is learned as a secret", async () => {
    const { federation } = fake.scenario
    const { result, f, learned } = await ask(
      {
        name: 'anthropic',
        federation: {
          ruleId: federation.ruleId,
          organizationId: federation.organizationId,
          workspaceId: federation.workspaceId,
          audience: 'https://api.anthropic.com'
        }
      },
      { baseUrl: '{url}' }
    )
    expect(result.ok).toBe(true)
    expect(f.requests.map(r => r.kind)).toEqual(['oidc', 'federation', 'claude'])
    for (const t of f.minted) expect(learned).toContain(t)
  })

  test('a rule the token does not match is refused: the run fails before any Messages request', async () => {
    const { result, f } = await ask(
      {
        name: 'anthropic',
        federation: {
          ruleId: 'fdrl_not_mine_000000',
          organizationId: fake.scenario.federation.organizationId,
          audience: 'https://api.anthropic.com'
        }
      },
      { baseUrl: '{url}' }
    )
    expect(result.ok).toBe(false)
    expect(f.inner.requests).toHaveLength(0)
  })
})

describe('Google Vertex AI (@anthropic-ai/vertex-sdk, Application Default Credentials)', () => {
  for (const impersonate of [true, false]) {
    test(`the external_account file google-github-actions/auth writes: OIDC, STS${impersonate ? ', service-account impersonation' : ''}, streamRawPredict`, async () => {
      const f0 = await startFakeProviders([text('hello from the provider')], fake.scenario)
      const file = join(dir, `gha-creds-${impersonate}.json`)
      writeFileSync(file, JSON.stringify(f0.externalAccount({ impersonate })))
      process.env.GOOGLE_APPLICATION_CREDENTIALS = file
      try {
        const learned: string[] = []
        const call = createModelCall({
          apiKey: '',
          baseUrl: `${f0.url}/v1`,
          maxRetries: 0,
          learn: s => learned.push(s),
          provider: { name: 'vertex', region: google.region, projectId: google.project, credentialsFile: file }
        })
        const m = await call(params('claude-sonnet-5-5'), new AbortController().signal)
        expect(m.content[0]).toMatchObject({ text: 'hello from the provider' })
        expect(f0.requests.map(r => r.kind)).toEqual(impersonate ? ['oidc', 'sts', 'iam', 'vertex'] : ['oidc', 'sts', 'vertex'])
        expect(f0.requests.every(r => !r.refused)).toBe(true)
        // the access token the model request carried was learned
        expect(learned).toContain(String(f0.requests.at(-1)!.headers.authorization).replace('Bearer ', ''))
      } finally {
        await f0.close()
      }
    })
  }

  test('a credential_source with the wrong OIDC request token is refused at the ID-token endpoint', async () => {
    const f0 = await startFakeProviders([text('never')], fake.scenario)
    const creds = f0.externalAccount() as { credential_source: { headers: Record<string, string> } }
    creds.credential_source.headers.Authorization = 'Bearer not-the-request-token'
    const file = join(dir, 'gha-creds-bad.json')
    writeFileSync(file, JSON.stringify(creds))
    process.env.GOOGLE_APPLICATION_CREDENTIALS = file
    try {
      const call = createModelCall({
        apiKey: '',
        baseUrl: `${f0.url}/v1`,
        maxRetries: 0,
        provider: { name: 'vertex', region: google.region, projectId: google.project, credentialsFile: file }
      })
      await expect(call(params('claude-sonnet-5-5'), new AbortController().signal)).rejects.toThrow()
      expect(f0.requests[0]).toMatchObject({ kind: 'oidc', refused: 'bad ACTIONS_ID_TOKEN_REQUEST_TOKEN' })
      expect(f0.inner.requests).toHaveLength(0)
    } finally {
      await f0.close()
    }
  })
})

describe('Microsoft Foundry (@anthropic-ai/foundry-sdk)', () => {
  test('with an API key (x-api-key); a wrong key is refused', async () => {
    const ok = await ask({ name: 'foundry', apiKey: foundry.apiKey }, { baseUrl: '{url}/anthropic/' })
    expect(ok.result.ok).toBe(true)
    expect(ok.f.requests.find(r => r.kind === 'foundry')?.headers['x-api-key']).toBe(foundry.apiKey)
    const bad = await ask({ name: 'foundry', apiKey: 'k'.repeat(84) }, { baseUrl: '{url}/anthropic/' })
    expect(bad.result.ok).toBe(false)
    expect(bad.f.inner.requests).toHaveLength(0)
  })

  test("with a Microsoft Entra ID token got with the job's OIDC token; a wrong client id is refused", async () => {
    const entra = (clientId: string, url: string) => ({ clientId, tenantId: foundry.tenantId, authorityHost: `${url}/entra` })
    const f0 = await startFakeProviders([text('hello from the provider')], fake.scenario)
    process.env.ACTIONS_ID_TOKEN_REQUEST_URL = f0.oidcRequestUrl
    process.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN = fake.scenario.oidcRequestToken
    try {
      const learned: string[] = []
      const call = createModelCall({
        apiKey: '',
        baseUrl: `${f0.url}/anthropic/`,
        maxRetries: 0,
        learn: s => learned.push(s),
        provider: { name: 'foundry', entra: entra(foundry.clientId, f0.url) }
      })
      await call(params('claude-sonnet-5-5'), new AbortController().signal)
      expect(f0.requests.map(r => r.kind)).toEqual(['oidc', 'entra', 'foundry'])
      for (const t of f0.minted) expect(learned).toContain(t)
      const refused = createModelCall({
        apiKey: '',
        baseUrl: `${f0.url}/anthropic/`,
        maxRetries: 0,
        provider: { name: 'foundry', entra: entra('11111111-2222-3333-4444-555555555555', f0.url) }
      })
      await expect(refused(params('claude-sonnet-5-5'), new AbortController().signal)).rejects.toThrow(/Entra ID refused/)
      expect(f0.inner.requests).toHaveLength(1)
    } finally {
      await f0.close()
    }
  })
})

// ---------------------------------------------------------------------------

const input = (name: string) => `INPUT_${name.toUpperCase()}`

describe('settings: provider and what it needs, one line each, before any request', () => {
  const base = { [input('github-token')]: 'ghs_x' }
  const fail = (env: Record<string, string>) => {
    try {
      readSettings({ ...base, ...env })
    } catch (e) {
      return (e as Error).message
    }
    return 'no error'
  }

  test('an unknown provider names the input', () => {
    expect(fail({ [input('provider')]: 'openai', ANTHROPIC_API_KEY: 'sk-ant-xxxxxxxxxxxx' })).toBe(
      'Input provider must be one of "anthropic", "bedrock", "vertex", "foundry", got "openai".'
    )
  })

  test('bedrock: a missing region, then missing credentials, each named with what supplies it', () => {
    const line = fail({ [input('provider')]: 'bedrock', AWS_ACCESS_KEY_ID: aws.accessKeyId, AWS_SECRET_ACCESS_KEY: aws.secretAccessKey })
    expect(line).toMatch(/needs a region: AWS_REGION .*aws-actions\/configure-aws-credentials/)
    expect(line.split('\n')).toHaveLength(1)
    expect(fail({ [input('provider')]: 'bedrock', AWS_REGION: 'us-east-1' })).toMatch(
      /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set \(aws-actions\/configure-aws-credentials/
    )
    expect(fail({ [input('provider')]: 'bedrock', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: aws.accessKeyId })).toMatch(
      /AWS_SECRET_ACCESS_KEY not set/
    )
    const s = readSettings({
      ...base,
      [input('provider')]: 'bedrock',
      AWS_DEFAULT_REGION: 'eu-central-1',
      AWS_BEARER_TOKEN_BEDROCK: aws.bearer
    })
    expect(s.provider).toEqual({ name: 'bedrock', region: 'eu-central-1', apiKey: aws.bearer })
    expect(s.model).toBe('eu.anthropic.claude-sonnet-5-5')
    expect(secretsOf(s)).toContain(aws.bearer)
  })

  test('vertex: region, project, credentials file', () => {
    expect(fail({ [input('provider')]: 'vertex' })).toMatch(/needs a region: CLOUD_ML_REGION/)
    expect(fail({ [input('provider')]: 'vertex', CLOUD_ML_REGION: 'us-east5' })).toMatch(/needs a project: ANTHROPIC_VERTEX_PROJECT_ID/)
    expect(fail({ [input('provider')]: 'vertex', CLOUD_ML_REGION: 'us-east5', ANTHROPIC_VERTEX_PROJECT_ID: 'p' })).toMatch(
      /GOOGLE_APPLICATION_CREDENTIALS \(written by google-github-actions\/auth/
    )
    const file = join(dir, 'sa.json')
    writeFileSync(
      file,
      JSON.stringify({
        type: 'service_account',
        private_key: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n',
        client_email: 'a@b.iam.gserviceaccount.com'
      })
    )
    const s = readSettings({
      ...base,
      [input('provider')]: 'vertex',
      CLOUD_ML_REGION: 'us-east5',
      GOOGLE_CLOUD_PROJECT: 'p2',
      GOOGLE_APPLICATION_CREDENTIALS: file
    })
    expect(s.provider).toMatchObject({ name: 'vertex', projectId: 'p2' })
    const r = new Redactor(secretsOf(s).filter((x): x is string => !!x))
    expect(r.redact('key: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC')).not.toContain('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC')
    // what holds no secret stays readable
    expect(r.redact('a@b.iam.gserviceaccount.com service_account')).toBe('a@b.iam.gserviceaccount.com service_account')
  })

  test('foundry: the resource, then a credential; the key from anthropic-api-key', () => {
    expect(fail({ [input('provider')]: 'foundry', ANTHROPIC_FOUNDRY_API_KEY: 'k'.repeat(20) })).toMatch(/ANTHROPIC_FOUNDRY_RESOURCE/)
    expect(fail({ [input('provider')]: 'foundry', ANTHROPIC_FOUNDRY_RESOURCE: 'r' })).toMatch(/AZURE_CLIENT_ID and AZURE_TENANT_ID/)
    expect(fail({ [input('provider')]: 'foundry', ANTHROPIC_FOUNDRY_RESOURCE: 'r', AZURE_CLIENT_ID: 'c', AZURE_TENANT_ID: 't' })).toMatch(
      /id-token: write/
    )
    const s = readSettings({
      ...base,
      [input('provider')]: 'foundry',
      ANTHROPIC_FOUNDRY_RESOURCE: 'r',
      [input('anthropic-api-key')]: foundry.apiKey
    })
    expect(s.provider).toEqual({ name: 'foundry', resource: 'r', apiKey: foundry.apiKey })
  })

  test('anthropic without a key: federation variables, the OIDC permission', () => {
    expect(fail({ ANTHROPIC_FEDERATION_RULE_ID: federation.ruleId })).toMatch(/needs ANTHROPIC_ORGANIZATION_ID/)
    expect(fail({ ANTHROPIC_FEDERATION_RULE_ID: federation.ruleId, ANTHROPIC_ORGANIZATION_ID: federation.organizationId })).toMatch(
      /id-token: write/
    )
    const s = readSettings({
      ...base,
      ANTHROPIC_FEDERATION_RULE_ID: federation.ruleId,
      ANTHROPIC_ORGANIZATION_ID: federation.organizationId,
      ACTIONS_ID_TOKEN_REQUEST_URL: 'http://127.0.0.1:9/x',
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'tok'
    })
    expect(s.provider).toMatchObject({ name: 'anthropic', federation: { ruleId: federation.ruleId } })
    expect(s.historyKey).toBe('')
    expect(
      readSettings({ ...s, ...base, ANTHROPIC_API_KEY: 'sk-ant-aaaaaaaaaaaa', [input('history-key')]: 'hk-secret-1234' } as never)
        .historyKey
    ).toBe('hk-secret-1234')
  })
})

describe('provider credentials never reach a command, and are redacted', () => {
  test('withheld from the commands even when pass-env names them; a value holding one under another name too', () => {
    const env = {
      PATH: '/usr/bin',
      AWS_ACCESS_KEY_ID: aws.accessKeyId,
      AWS_SECRET_ACCESS_KEY: aws.secretAccessKey,
      AWS_SESSION_TOKEN: aws.sessionToken,
      AWS_BEARER_TOKEN_BEDROCK: aws.bearer,
      GOOGLE_APPLICATION_CREDENTIALS: '/w/gha-creds-1.json',
      ANTHROPIC_FOUNDRY_API_KEY: foundry.apiKey,
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'oidcreq-abcdefgh12345',
      ACTIONS_ID_TOKEN_REQUEST_URL: 'https://pipelines.actions.example/idtoken',
      MY_COPY: aws.secretAccessKey
    }
    const out = commandEnv(env, {
      passEnv: ['AWS_*', 'GOOGLE_*', 'MY_COPY', 'ACTIONS_*'],
      home: '/h',
      user: 'u',
      tmpdir: '/t',
      redactor: new Redactor()
    })
    expect(Object.keys(out).sort()).toEqual(['HOME', 'LOGNAME', 'PATH', 'TMPDIR', 'USER'])
  })

  test('what a provider request carries is learned (a SigV4 signature is not)', async () => {
    const learned: string[] = []
    const inner = (async () => new Response('{}')) as unknown as typeof fetch
    const f = learningFetch(s => learned.push(s), inner)
    await f('http://x', { headers: { authorization: 'Bearer ya29.token-abcdef', 'x-amz-security-token': 'sess-123456789' } })
    await f('http://x', {
      headers: { authorization: 'AWS4-HMAC-SHA256 Credential=A/1/r/s/aws4_request, SignedHeaders=host, Signature=ab' }
    })
    expect(learned).toEqual(['ya29.token-abcdef', 'sess-123456789'])
  })

  test('a Google credentials file is known for what it holds whatever the provider (google-github-actions/auth ran for another step)', () => {
    const file = join(dir, 'gha-creds-other.json')
    const key = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ'
    writeFileSync(
      file,
      JSON.stringify({ type: 'service_account', private_key: `-----BEGIN PRIVATE KEY-----\n${key}\n-----END PRIVATE KEY-----\n` })
    )
    const s = readSettings({
      INPUT_GITHUB_TOKEN: 'ghs_x',
      ANTHROPIC_API_KEY: 'sk-ant-aaaaaaaaaaaaaaaa',
      GOOGLE_APPLICATION_CREDENTIALS: file
    })
    expect(new Redactor(secretsOf(s).filter((x): x is string => !!x)).redact(`k=${key}`)).toBe('k=***')
  })

  test('the external_account file: the OIDC request token inside is a secret', () => {
    const file = join(dir, 'gha-creds-x.json')
    const token = 'oidcreq-ZZZZZZZZZZZZZZZZZZZZ'
    writeFileSync(
      file,
      JSON.stringify({
        type: 'external_account',
        audience: '//iam',
        token_url: 'https://sts',
        credential_source: { url: 'https://runner/idtoken?audience=x', headers: { Authorization: `Bearer ${token}` } }
      })
    )
    const secrets = providerSecrets({ name: 'vertex', region: 'r', projectId: 'p', credentialsFile: file })
    expect(secrets).toContain(token)
    const r = new Redactor(secrets)
    expect(r.redact(`x ${Buffer.from(token).toString('base64')} y`)).not.toContain(Buffer.from(token).toString('base64'))
  })
})

describe("the thread's history without an API key (docs/providers.md)", () => {
  const thread = { kind: 'issue' as const, number: 4 }
  const h: StoredHistory = {
    version: 1,
    repository: 'o/r',
    thread: 'issue-4',
    runId: 9,
    model: 'm',
    messages: [{ role: 'user', content: 'hello there' }],
    savedAt: '2026-01-01T00:00:00Z'
  }

  test('with history-key: sealed with it, not readable without it', () => {
    const bytes = seal(h, 'hk-0123456789abcdef')
    expect(unseal(bytes, 'hk-0123456789abcdef', { repository: 'o/r', thread })).toEqual({ ok: true, history: h })
    expect(unseal(bytes, '', { repository: 'o/r', thread }).ok).toBe(false)
  })

  test('without any key: sealed with the empty key, so anyone can read it (as the docs say); a change is still refused', () => {
    const bytes = seal(h, '')
    expect(unseal(bytes, '', { repository: 'o/r', thread })).toEqual({ ok: true, history: h })
    const changed = Buffer.from(bytes)
    changed[changed.length - 1] ^= 1
    expect(unseal(changed, '', { repository: 'o/r', thread }).ok).toBe(false)
  })
})

describe('errors of the providers bundle become the action SDK classes', () => {
  test('status, body and class survive', () => {
    const e = convertError(
      new errors.APIError(401, { type: 'error', error: { type: 'authentication_error', message: 'bad' } }, undefined, new Headers()),
      errors
    )
    expect(e).toBeInstanceOf(errors.AuthenticationError)
    expect((e as errors.APIError).status).toBe(401)
    const inStream = convertError(
      new errors.APIError(undefined, { type: 'error', error: { type: 'overloaded_error', message: 'x' } }, undefined, undefined),
      errors
    )
    expect(inStream).toBeInstanceOf(errors.APIError)
    expect((inStream as errors.APIError).status).toBeUndefined()
    expect(convertError(new errors.APIConnectionTimeoutError(), errors)).toBeInstanceOf(errors.APIConnectionTimeoutError)
  })
})
