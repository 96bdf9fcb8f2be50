// Issue 39 end to end through the built action (dist/): each provider completes a run with a
// command and a report, spoken to by its real SDK over the fakes of its wire protocol
// (helpers/fake-providers.ts); no credential of any provider (nor the job's OIDC request token,
// nor a token the fakes minted) appears anywhere the action sends or writes, plain or encoded,
// also when the agent dumps its environment (and, contained, every process's environment under
// /proc); the missing-region/project/credential lines and an unknown provider fail at start.
import { afterAll, describe, expect, test } from '@jest/globals'
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startFakeAnthropic, text, type Reply } from './helpers/fake-anthropic'
import { newScenario, startFakeProviders, type FakeProviders, type Scenario } from './helpers/fake-providers'
import { startFakeGitHub, type FakeGitHub } from './helpers/fake-github'
import { cleanupRuns, REPO_ROOT, runAction, type ActionRun } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { sandboxKinds } from './helpers/kinds'

const JOB_TOKEN = `ghs_${'J'.repeat(36)}`
const dirs: string[] = []
afterAll(() => {
  cleanupRuns()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** Forms a command could print a secret in: as is, base64 (whole and its stable cores), base64url, hex, URL-encoded. */
function formsOf(secret: string): string[] {
  const bytes = Buffer.from(secret)
  const out = new Set([secret, bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex'), encodeURIComponent(secret)])
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64')
    out.add(enc.slice(k > 0 ? 4 : 0, (k + bytes.length) % 3 !== 0 ? enc.length - 4 : enc.length))
  }
  return [...out].filter(f => f.length >= 8)
}

/** Every credential of the scenario, and what the fakes minted during the run. */
function secretsOf(s: Scenario, f: FakeProviders): Record<string, string> {
  const out: Record<string, string> = {
    oidcRequestToken: s.oidcRequestToken,
    awsSecret: s.aws.secretAccessKey,
    awsSession: s.aws.sessionToken,
    awsAccessKeyId: s.aws.accessKeyId,
    bedrockKey: s.aws.bearer,
    foundryKey: s.foundry.apiKey,
    jobToken: JOB_TOKEN
  }
  f.minted.forEach((t, i) => (out[`minted ${i}`] = t))
  return out
}

const DUMP: Reply = {
  content: [
    {
      type: 'tool_use',
      id: 'toolu_env',
      name: 'bash',
      input: { command: 'env; env | base64 -w0; echo; env | od -An -tx1 | tr -d " \\n"' }
    },
    {
      type: 'tool_use',
      id: 'toolu_proc',
      name: 'bash',
      input: {
        command:
          'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr "\\0" "\\n" < "$f"; done 2>/dev/null | sort -u | base64 -w0; ls -a'
      }
    }
  ],
  stop_reason: 'tool_use'
}

interface Done {
  run: ActionRun
  f: FakeProviders
  gh: FakeGitHub
  results: string[]
}

async function run(
  provider: string,
  env: (f: FakeProviders, workspace: string) => Record<string, string>,
  o: {
    inputs?: (f: FakeProviders) => Record<string, string>
    script?: Reply[]
    sandbox?: string
    asUser?: { uid: number; gid: number }
  } = {}
): Promise<Done> {
  const f = await startFakeProviders(o.script ?? [DUMP, text('Done: looked around.')], newScenario())
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  const workspace = mkdtempSync(join(tmpdir(), 'prov-e2e-'))
  dirs.push(workspace)
  try {
    const r = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent look around' }),
      githubToken: JOB_TOKEN,
      inputs: { provider, 'anthropic-base-url': f.url, sandbox: o.sandbox ?? 'none', 'blocked-commands': '', ...o.inputs?.(f) },
      env: {
        GITHUB_API_URL: gh.url,
        GITHUB_TOKEN: JOB_TOKEN,
        ACTIONS_ID_TOKEN_REQUEST_URL: f.oidcRequestUrl,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: f.scenario.oidcRequestToken,
        ...env(f, workspace)
      },
      ...(o.asUser ? { asUser: o.asUser } : {}),
      timeoutMs: 180_000
    })
    const results: string[] = []
    for (const req of f.inner.requests)
      for (const m of req.body?.messages ?? [])
        for (const b of Array.isArray(m.content) ? m.content : [])
          if (b.type === 'tool_result')
            results.push(typeof b.content === 'string' ? b.content : (b.content ?? []).map((c: { text?: string }) => c.text ?? '').join(''))
    return { run: r, f, gh, results }
  } finally {
    await Promise.all([f.close(), gh.close()])
  }
}

/** Everything the action sent or wrote, by where it went. */
function sinks(d: Done): Array<[string, string]> {
  const out: Array<[string, string]> = []
  d.f.inner.requests.forEach((r, i) => out.push([`model request ${i + 1}`, JSON.stringify(r.body)]))
  d.gh.requests.forEach((r, i) => out.push([`GitHub request ${i + 1}`, `${r.path}\n${JSON.stringify(r.body ?? '')}`]))
  for (const c of d.gh.comments.values()) c.updates.forEach((u, i) => out.push([`comment version ${i + 1}`, u]))
  const stdout = d.run.stdout
    .split('\n')
    .filter(l => !l.startsWith('::add-mask::'))
    .join('\n')
  out.push(['stdout', stdout], ['stderr', d.run.stderr], ['job summary', d.run.summary])
  const transcript = d.run.outputs.transcript
  if (transcript && existsSync(transcript)) out.push(['transcript', readFileSync(transcript, 'utf8')])
  for (const [k, v] of Object.entries(d.run.outputs)) out.push([`output ${k}`, v])
  return out
}

function leaks(d: Done, secrets: Record<string, string>): string[] {
  const found: string[] = []
  for (const [where, content] of sinks(d))
    for (const [name, secret] of Object.entries(secrets))
      for (const form of formsOf(secret)) if (content.includes(form)) found.push(`${name} (${form.slice(0, 10)}…) in ${where}`)
  return found
}

function completed(d: Done, label: RegExp): void {
  expect(d.run.code).toBe(0)
  expect(d.run.outputs['exit-reason']).toBe('end_turn')
  expect(d.run.outputs.commands).toBe('2')
  expect(d.results[0]).toContain('PATH=')
  const report = [...d.gh.comments.values()].at(-1)!.updates.at(-1)!
  expect(report).toContain('Done: looked around.')
  expect(report).toMatch(label)
}

const bedrockEnv = (f: FakeProviders) => ({
  AWS_REGION: f.scenario.aws.region,
  AWS_ACCESS_KEY_ID: f.scenario.aws.accessKeyId,
  AWS_SECRET_ACCESS_KEY: f.scenario.aws.secretAccessKey,
  AWS_SESSION_TOKEN: f.scenario.aws.sessionToken
})

describe('each provider through dist/ (sandbox: none): a run with commands and a report, no credential anywhere', () => {
  test('bedrock with the AWS credentials configure-aws-credentials exports (SigV4 verified by the fake)', async () => {
    const d = await run('bedrock', bedrockEnv)
    completed(d, /on Amazon Bedrock \(us-west-2\).*estimate at Anthropic's list prices/s)
    expect(d.f.requests.filter(r => r.kind === 'bedrock').every(r => !r.refused)).toBe(true)
    expect(d.f.inner.requests[0].body.model).toBe('us.anthropic.claude-sonnet-5-5')
    expect(d.results[0]).not.toMatch(/^AWS_/m)
    expect(leaks(d, secretsOf(d.f.scenario, d.f))).toEqual([])
  })

  test('bedrock with a Bedrock API key', async () => {
    const d = await run('bedrock', f => ({ AWS_REGION: f.scenario.aws.region, AWS_BEARER_TOKEN_BEDROCK: f.scenario.aws.bearer }))
    completed(d, /Amazon Bedrock/)
    expect(leaks(d, secretsOf(d.f.scenario, d.f))).toEqual([])
  })

  test('vertex through the external_account file google-github-actions/auth writes in the workspace', async () => {
    const d = await run(
      'vertex',
      (f, workspace) => {
        const file = join(workspace, 'gha-creds-0123456789abcdef.json')
        writeFileSync(file, JSON.stringify(f.externalAccount()), { mode: 0o600 })
        return {
          GOOGLE_APPLICATION_CREDENTIALS: file,
          CLOUD_ML_REGION: f.scenario.google.region,
          ANTHROPIC_VERTEX_PROJECT_ID: f.scenario.google.project
        }
      },
      { inputs: f => ({ 'anthropic-base-url': `${f.url}/v1` }) }
    )
    completed(d, /on Google Vertex AI/)
    expect(d.f.requests.map(r => r.kind)).toEqual(expect.arrayContaining(['oidc', 'sts', 'iam', 'vertex']))
    expect(leaks(d, secretsOf(d.f.scenario, d.f))).toEqual([])
  })

  test('foundry with a key (anthropic-api-key)', async () => {
    const d = await run('foundry', () => ({}), {
      inputs: f => ({ 'anthropic-base-url': `${f.url}/anthropic/`, 'anthropic-api-key': f.scenario.foundry.apiKey })
    })
    completed(d, /on Microsoft Foundry/)
    expect(leaks(d, secretsOf(d.f.scenario, d.f))).toEqual([])
  })

  test("foundry with a Microsoft Entra ID token got with the job's OIDC token", async () => {
    const d = await run(
      'foundry',
      f => ({
        AZURE_CLIENT_ID: f.scenario.foundry.clientId,
        AZURE_TENANT_ID: f.scenario.foundry.tenantId,
        AZURE_AUTHORITY_HOST: `${f.url}/entra`
      }),
      {
        inputs: f => ({ 'anthropic-base-url': `${f.url}/anthropic/` })
      }
    )
    completed(d, /on Microsoft Foundry/)
    expect(d.f.requests.map(r => r.kind)).toEqual(expect.arrayContaining(['oidc', 'entra', 'foundry']))
    expect(leaks(d, secretsOf(d.f.scenario, d.f))).toEqual([])
  })

  test('the Claude API with no key, through workload identity federation', async () => {
    const d = await run('anthropic', f => ({
      ANTHROPIC_FEDERATION_RULE_ID: f.scenario.federation.ruleId,
      ANTHROPIC_ORGANIZATION_ID: f.scenario.federation.organizationId,
      ANTHROPIC_WORKSPACE_ID: f.scenario.federation.workspaceId
    }))
    completed(d, /workload identity federation/)
    expect(d.f.requests.map(r => r.kind)).toEqual(expect.arrayContaining(['oidc', 'federation', 'claude']))
    expect(leaks(d, secretsOf(d.f.scenario, d.f))).toEqual([])
  })
})

describe('fails at start in one line, before any model request', () => {
  test.each([
    ['bedrock', {}, /Provider bedrock needs a region: AWS_REGION/],
    ['bedrock', { AWS_REGION: 'us-east-1' }, /Provider bedrock needs AWS credentials/],
    ['vertex', { CLOUD_ML_REGION: 'us-east5' }, /Provider vertex needs a project: ANTHROPIC_VERTEX_PROJECT_ID/],
    ['foundry', { ANTHROPIC_FOUNDRY_API_KEY: 'k'.repeat(40) }, /Provider foundry needs its resource: ANTHROPIC_FOUNDRY_RESOURCE/],
    ['gemini', {}, /Input provider must be one of "anthropic", "bedrock", "vertex", "foundry", got "gemini"/]
  ])('%s %j', async (provider, env, line) => {
    const d = await run(provider, () => env as Record<string, string>, { inputs: () => ({ 'anthropic-base-url': '' }), script: [] })
    expect(d.run.code).not.toBe(0)
    const errors = d.run.commands.filter(c => c.command === 'error').map(c => c.message)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatch(line)
    expect(d.f.requests).toHaveLength(0)
    expect(d.f.inner.requests).toHaveLength(0)
  })
})

describe('contained (sandbox: user): the environment of every process under /proc holds no provider credential', () => {
  for (const kind of sandboxKinds()) {
    test(`bedrock, ${kind.name}`, async () => {
      const d = await run('bedrock', bedrockEnv, { sandbox: 'user', asUser: kind.asUser })
      completed(d, /Amazon Bedrock/)
      expect(leaks(d, secretsOf(d.f.scenario, d.f))).toEqual([])
    })
  }
})

describe('the common start (provider anthropic with a key) loads no provider SDK', () => {
  test("the action's bundle and its chunks hold none of them: they are in dist/providers/ only", () => {
    const dist = join(REPO_ROOT, 'dist')
    for (const name of readdirSync(dist).filter(n => n.endsWith('.js'))) {
      const code = readFileSync(join(dist, name), 'utf8')
      expect([name, /AnthropicBedrock|AnthropicVertex|AnthropicFoundry|bedrock-runtime|aiplatform\.googleapis/.test(code)]).toEqual([
        name,
        false
      ])
    }
    expect(readFileSync(join(dist, 'providers', 'index.js'), 'utf8')).toContain('openBundled')
  })

  test('a run with a key completes from a dist/ without dist/providers/', async () => {
    const key = `sk-ant-api03-${'k'.repeat(80)}AA`
    const copy = mkdtempSync(join(tmpdir(), 'prov-dist-'))
    dirs.push(copy)
    cpSync(join(REPO_ROOT, 'dist'), copy, { recursive: true, filter: src => !src.startsWith(join(REPO_ROOT, 'dist', 'providers')) })
    expect(existsSync(join(copy, 'providers'))).toBe(false)
    const fake = await startFakeAnthropic([DUMP, text('Done: looked around.')], { apiKey: key })
    const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
    try {
      const r = await runAction({
        eventName: 'issue_comment',
        payload: issueCommentEvent({ body: '/agent look around' }),
        githubToken: JOB_TOKEN,
        entry: join(copy, 'index.js'),
        actionYml: join(REPO_ROOT, 'action.yml'),
        inputs: { 'anthropic-api-key': key, 'anthropic-base-url': fake.url, sandbox: 'none', 'blocked-commands': '' },
        env: { GITHUB_API_URL: gh.url, GITHUB_TOKEN: JOB_TOKEN },
        timeoutMs: 120_000
      })
      expect(r.code).toBe(0)
      expect(r.outputs['exit-reason']).toBe('end_turn')
      expect(fake.requests).toHaveLength(2)
    } finally {
      await Promise.all([fake.close(), gh.close()])
    }
  })
})
