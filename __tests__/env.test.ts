// The commands' environment by allowlist (issue 8, point 5), as a job's `env:`
// would set it: every secret under a name no denylist knows stays out, the
// harmless context and toolchain locations go in, pass-env adds names, and a
// passed credential is still redacted. Real bash prints what it gets.
import { describe, expect, test } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { commandEnv, looksLikeCredential, BUILTIN_NAMES } from '../src/sandbox/env'
import { Redactor, secretsFromEnv } from '../src/report/redact'

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const rand = (n: number) => Array.from(randomBytes(n), b => ALNUM[b % ALNUM.length]).join('')
const b64 = (s: string) => Buffer.from(s).toString('base64')

const GITHUB_TOKEN = `ghs_${rand(36)}`
const API_KEY = `sk-ant-api03-${rand(60)}AA`

/** Secrets a job sets under names no denylist catches (the names of issue 8). */
export const UNNAMED_SECRETS: Record<string, string> = {
  DEPLOY_KEY: `-----BEGIN OPENSSH PRIVATE KEY-----\n${rand(60)}\n-----END OPENSSH PRIVATE KEY-----`,
  SSH_KEY: rand(40),
  SIGNING_KEY: rand(32),
  NPM_PASS: `pass-${rand(12)}`,
  DB_PWD: `hunter2-${rand(10)}`,
  REGISTRY_PAT: rand(30),
  SLACK_WEBHOOK_URL: `https://hooks.slack.com/services/T0${rand(8)}/B0${rand(8)}/${rand(24)}`,
  SENTRY_DSN: `https://${randomBytes(16).toString('hex')}@o12345.ingest.sentry.io/67890`,
  COOKIE: `session=${rand(40)}`,
  FOO_CREDENTIALS: rand(20)
}

/** A runner's environment, as the action's process sees it. */
function runnerEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/home/runner',
    USER: 'runner',
    LOGNAME: 'runner',
    TMPDIR: '/home/runner/tmp',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    LC_CTYPE: 'C.UTF-8',
    TZ: 'UTC',
    TERM: 'xterm',
    SHELL: '/bin/bash',
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_REPOSITORY: 'octo-org/octo-repo',
    GITHUB_SHA: 'ffac537e6cbbf934b08745a378932722df287a53',
    GITHUB_REF: 'refs/heads/main',
    GITHUB_RUN_ID: '1234',
    GITHUB_WORKSPACE: '/home/runner/work/r/r',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_API_URL: 'https://api.github.com',
    RUNNER_OS: 'Linux',
    RUNNER_ARCH: 'X64',
    JAVA_HOME: '/usr/lib/jvm/temurin-17-jdk-amd64',
    JAVA_HOME_17_X64: '/usr/lib/jvm/temurin-17-jdk-amd64',
    ANDROID_SDK_ROOT: '/usr/local/lib/android/sdk',
    GOROOT: '/opt/hostedtoolcache/go/1.22.1/x64',
    Python3_ROOT_DIR: '/opt/hostedtoolcache/Python/3.11.5/x64',
    // never
    GITHUB_TOKEN,
    GH_TOKEN: GITHUB_TOKEN,
    'INPUT_GITHUB-TOKEN': GITHUB_TOKEN,
    'INPUT_ANTHROPIC-API-KEY': API_KEY,
    INPUT_TASK: 'do things',
    ANTHROPIC_API_KEY: API_KEY,
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    ACTIONS_RUNTIME_TOKEN: `eyJ0eXAiOiJKV1QifQ.eyJ${rand(60)}.${rand(40)}`,
    ACTIONS_ID_TOKEN_REQUEST_URL: `https://pipelines.example/${rand(30)}/idtoken`,
    ACTIONS_CACHE_URL: 'https://artifactcache.example/abc/',
    GITHUB_ENV: '/home/runner/work/_temp/_runner_file_commands/set_env_1',
    GITHUB_PATH: '/home/runner/work/_temp/_runner_file_commands/add_path_1',
    GITHUB_OUTPUT: '/home/runner/work/_temp/_runner_file_commands/set_output_1',
    GITHUB_STATE: '/home/runner/work/_temp/_runner_file_commands/save_state_1',
    GITHUB_STEP_SUMMARY: '/home/runner/work/_temp/_runner_file_commands/step_summary_1',
    GITHUB_EVENT_PATH: '/home/runner/work/_temp/_github_workflow/event.json',
    RUNNER_TEMP: '/home/runner/work/_temp',
    SSH_AUTH_SOCK: '/tmp/ssh-XXXX/agent.1',
    STATE_isPost: 'true',
    ...UNNAMED_SECRETS,
    ...extra
  }
}

const sandboxUser = { home: '/home/bash-agent', user: 'bash-agent', tmpdir: '/tmp' }

function build(env: Record<string, string | undefined>, passEnv: string[] = []) {
  const redactor = new Redactor(secretsFromEnv(env))
  redactor.add(GITHUB_TOKEN)
  redactor.add(API_KEY)
  return { out: commandEnv(env, { passEnv, redactor, ...sandboxUser }), redactor }
}

/** What a real bash started with this environment prints with `env`. */
function envSeenByBash(env: Record<string, string>): string {
  return execFileSync('/bin/bash', ['-c', 'env -0'], { env }).toString('utf8')
}

describe('commandEnv', () => {
  test('the secrets of issue 8 and a random *_CREDENTIALS never reach a command (env printed by bash)', () => {
    const extra = `FOO_${rand(6).toUpperCase()}_CREDENTIALS`
    const env = runnerEnv({ [extra]: `creds-${rand(16)}` })
    const { out } = build(env)
    const printed = envSeenByBash(out)
    const names = printed.split('\0').map(l => l.slice(0, l.indexOf('=')))
    for (const name of [...Object.keys(UNNAMED_SECRETS), extra]) {
      expect(names).not.toContain(name)
      expect(printed).not.toContain(env[name] as string)
    }
  })

  test('never: inputs, ANTHROPIC_*, ACTIONS_*, the job token, the file-command files, RUNNER_TEMP, the event file, an SSH agent, saved state', () => {
    const { out } = build(runnerEnv())
    for (const name of Object.keys(out)) expect(name).not.toMatch(/^(INPUT_|ANTHROPIC_|ACTIONS_|STATE_)/)
    for (const name of [
      'GITHUB_TOKEN',
      'GH_TOKEN',
      'GITHUB_ENV',
      'GITHUB_PATH',
      'GITHUB_OUTPUT',
      'GITHUB_STATE',
      'GITHUB_STEP_SUMMARY',
      'GITHUB_EVENT_PATH',
      'RUNNER_TEMP',
      'SSH_AUTH_SOCK'
    ]) {
      expect(out).not.toHaveProperty(name)
    }
    const dump = JSON.stringify(out)
    expect(dump).not.toContain(GITHUB_TOKEN)
    expect(dump).not.toContain(API_KEY)
  })

  test("the harmless context, the locale and toolchain locations pass; HOME, USER, LOGNAME and TMPDIR are the sandbox user's", () => {
    const env = runnerEnv()
    const { out } = build(env)
    for (const name of [
      'PATH',
      'LANG',
      'LC_ALL',
      'LC_CTYPE',
      'TZ',
      'TERM',
      'SHELL',
      'CI',
      'GITHUB_ACTIONS',
      'GITHUB_REPOSITORY',
      'GITHUB_SHA',
      'GITHUB_REF',
      'GITHUB_RUN_ID',
      'GITHUB_WORKSPACE',
      'RUNNER_OS',
      'RUNNER_ARCH',
      'JAVA_HOME',
      'JAVA_HOME_17_X64',
      'ANDROID_SDK_ROOT',
      'GOROOT',
      'Python3_ROOT_DIR'
    ]) {
      expect({ name, value: out[name] }).toEqual({ name, value: env[name] })
    }
    expect(out).toMatchObject({ HOME: '/home/bash-agent', USER: 'bash-agent', LOGNAME: 'bash-agent', TMPDIR: '/tmp' })
  })

  test('a *_HOME or *_ROOT that holds a credential, a URL or a secret-looking name is not a location', () => {
    const token = rand(40)
    const { out } = build(
      runnerEnv({
        MY_HOME: token,
        CACHE_ROOT: `/srv/${token}`,
        REPO_HOME: `https://user:${rand(12)}@example.com/x`,
        TOKEN_HOME: '/opt/token',
        SECRET_ROOT: '/opt/secret',
        WEIRD_HOME: 'relative/path',
        NIX_JDK_HOME: '/nix/store/0c7m7zb5w6xqk0fwl8q1hsw5x4kmhq6v-openjdk-17'
      })
    )
    for (const name of ['MY_HOME', 'CACHE_ROOT', 'REPO_HOME', 'TOKEN_HOME', 'SECRET_ROOT', 'WEIRD_HOME'])
      expect(out).not.toHaveProperty(name)
    expect(out.NIX_JDK_HOME).toBe('/nix/store/0c7m7zb5w6xqk0fwl8q1hsw5x4kmhq6v-openjdk-17')
  })

  test('a harmless name holding a known secret or a credential is withheld, and LC_* does not let a secret-looking name in', () => {
    const env = runnerEnv({
      TERM: `xterm ${GITHUB_TOKEN}`,
      LANG: `https://u:${rand(12)}@h/`,
      LC_NAME: `AUTHORIZATION: basic ${b64(`x:${rand(20)}`)}`,
      LC_API_TOKEN: 'plain-looking'
    })
    const out = commandEnv(env, { passEnv: [], redactor: new Redactor([GITHUB_TOKEN]), ...sandboxUser })
    for (const name of ['TERM', 'LANG', 'LC_NAME', 'LC_API_TOKEN']) expect(out).not.toHaveProperty(name)
  })

  test('pass-env: a name, and a prefix with *, are passed; a credential-looking value passed is taught to the redactor', () => {
    const npmToken = `npm_${rand(36)}`
    const env = runnerEnv({ MY_FLAG: 'on', NPM_CONFIG_REGISTRY: 'https://registry.example/', NPM_CONFIG_TOKEN: npmToken })
    const { out, redactor } = build(env, ['MY_FLAG', 'NPM_CONFIG_*', 'DB_PWD'])
    expect(out.MY_FLAG).toBe('on')
    expect(out.NPM_CONFIG_REGISTRY).toBe('https://registry.example/')
    expect(out.NPM_CONFIG_TOKEN).toBe(npmToken)
    expect(out.DB_PWD).toBe(UNNAMED_SECRETS.DB_PWD)
    // still redacted everywhere, in every form
    expect(redactor.redact(`t=${npmToken}`)).toBe('t=***')
    expect(redactor.redact(b64(npmToken))).not.toContain(b64(npmToken).slice(0, 12))
    expect(out).not.toHaveProperty('DEPLOY_KEY') // not named
  })

  test('pass-env cannot pass the never-list, nor the job token or API key under another name', () => {
    const env = runnerEnv({
      MY_TOKEN_COPY: GITHUB_TOKEN,
      KEY_IN_URL: `https://x-access-token:${GITHUB_TOKEN}@github.com/o/r`,
      B64_KEY: b64(`x:${API_KEY}`)
    })
    const { out } = build(env, [
      'GITHUB_TOKEN',
      'INPUT_*',
      'ACTIONS_*',
      'ANTHROPIC_API_KEY',
      'GITHUB_ENV',
      'RUNNER_TEMP',
      'MY_TOKEN_COPY',
      'KEY_IN_URL',
      'B64_KEY',
      'HOME'
    ])
    for (const name of ['GITHUB_TOKEN', 'ANTHROPIC_API_KEY', 'GITHUB_ENV', 'RUNNER_TEMP', 'MY_TOKEN_COPY', 'KEY_IN_URL', 'B64_KEY'])
      expect(out).not.toHaveProperty(name)
    for (const name of Object.keys(out)) expect(name).not.toMatch(/^(INPUT_|ACTIONS_)/)
    expect(out.HOME).toBe('/home/bash-agent')
    expect(JSON.stringify(out)).not.toContain(GITHUB_TOKEN)
  })

  test('pass-env names are exact and case-sensitive; a GitHub token passed by name is still redacted by shape', () => {
    const pat = `ghp_${rand(36)}`
    const { out, redactor } = build(runnerEnv({ deploy_key: 'lower', EXTRA_PAT: pat }), ['DEPLOY', 'Deploy_Key', 'EXTRA_PAT'])
    expect(out).not.toHaveProperty('DEPLOY_KEY')
    expect(out).not.toHaveProperty('deploy_key')
    expect(out.EXTRA_PAT).toBe(pat)
    expect(redactor.redact(pat)).toBe('***')
  })

  test('the built-in list holds no secret-looking or never-passed name', () => {
    for (const name of BUILTIN_NAMES)
      expect(name).not.toMatch(
        /TOKEN|SECRET|PASSWORD|KEY|CREDENTIAL|^INPUT_|^ACTIONS_|^ANTHROPIC_|^GITHUB_(ENV|PATH|OUTPUT|STATE|STEP_SUMMARY|EVENT_PATH)$/
      )
  })
})

describe('looksLikeCredential', () => {
  test('token shapes, headers, URLs with credentials and random runs', () => {
    for (const v of [
      `ghp_${rand(36)}`,
      `xoxb-${rand(30)}`,
      `AKIA${'ABCDEFGHIJKLMNOP'}`,
      `https://u:${rand(10)}@host/`,
      `https://${randomBytes(16).toString('hex')}@o1.ingest.sentry.io/1`,
      `Bearer ${rand(8)} AUTHORIZATION: bearer ${rand(30)}`,
      rand(30) + 'aA1',
      randomBytes(20).toString('hex'),
      '-----BEGIN RSA PRIVATE KEY-----'
    ]) {
      expect({ v, yes: looksLikeCredential(v) }).toEqual({ v, yes: true })
    }
    for (const v of [
      '/usr/lib/jvm/temurin-17-jdk-amd64',
      'C.UTF-8',
      'octo-org/octo-repo',
      'refs/heads/main',
      'https://api.github.com',
      'xterm-256color',
      '/opt/hostedtoolcache/Python/3.11.5/x64'
    ]) {
      expect({ v, yes: looksLikeCredential(v) }).toEqual({ v, yes: false })
    }
  })
})

describe('docs/configuration.md documents the built-in list', () => {
  test('every built-in name and location name is in its list, and every never-passed kind is named', async () => {
    const { readFileSync } = await import('node:fs')
    const { LOCATION_NAMES } = await import('../src/sandbox/env')
    const page = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8')
    const start = page.indexOf('## The environment of the commands')
    expect(start).toBeGreaterThan(-1)
    const next = page.indexOf('\n## ', start + 3)
    const section = page.slice(start, next === -1 ? undefined : next)
    for (const name of [...BUILTIN_NAMES, ...LOCATION_NAMES, 'LC_*'])
      expect({ name, documented: section.includes(`\`${name}\``) }).toEqual({ name, documented: true })
    for (const name of [
      'INPUT_*',
      'ANTHROPIC_*',
      'ACTIONS_*',
      'GITHUB_TOKEN',
      'GITHUB_ENV',
      'GITHUB_PATH',
      'GITHUB_OUTPUT',
      'GITHUB_STATE',
      'GITHUB_STEP_SUMMARY'
    ]) {
      expect(section).toContain(`\`${name}\``)
    }
  })
})

describe('the pass-env input', () => {
  const read = async (passEnv: string | undefined) => {
    const { readSettings } = await import('../src/settings')
    const env: NodeJS.ProcessEnv = { 'INPUT_ANTHROPIC-API-KEY': 'sk-ant-test-key-123456' }
    if (passEnv !== undefined) env['INPUT_PASS-ENV'] = passEnv
    const saved = { ...process.env }
    try {
      for (const k of Object.keys(process.env)) if (k.startsWith('INPUT_')) delete process.env[k]
      Object.assign(process.env, env)
      return readSettings(process.env)
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
      Object.assign(process.env, saved)
    }
  }

  test('one name a line, blank lines and spaces ignored, a trailing * allowed; empty by default', async () => {
    expect((await read(undefined)).passEnv).toEqual([])
    expect((await read('  MY_FLAG \n\nNPM_CONFIG_*\r\n')).passEnv).toEqual(['MY_FLAG', 'NPM_CONFIG_*'])
  })

  test('a lone *, a * inside a name, or something that is not a name fails with a line naming the input', async () => {
    for (const bad of ['*', 'A*B', 'FOO BAR', '$(id)', 'X=1', '-X']) {
      await expect(read(`OK\n${bad}`)).rejects.toThrow(/^Input pass-env must list variable names/)
    }
  })
})
