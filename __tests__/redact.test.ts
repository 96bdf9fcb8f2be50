import { describe, expect, it } from '@jest/globals'
import { randomBytes, randomInt } from 'node:crypto'
import { Redactor, secretsFromEnv } from '../src/report/redact'

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
function rand(n: number, alphabet = ALNUM): string {
  let s = ''
  for (let i = 0; i < n; i++) s += alphabet[randomInt(alphabet.length)]
  return s
}

const ANTHROPIC_KEY = `sk-ant-api03-${rand(60, `${ALNUM}-_`)}AA`
const GITHUB_TOKEN = `ghs_${rand(36)}`
/** No known shape, and characters that URL-encoding and base64 care about. */
const CUSTOM = `Zq9/zP+w=Lm7&kT2"vR4 ${rand(12)}`
const SECRETS = [ANTHROPIC_KEY, GITHUB_TOKEN, CUSTOM]

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64')
const b64url = (s: string): string => Buffer.from(s, 'utf8').toString('base64url')

/** Base64 groups that depend only on `s`, at each byte alignment (independent of the implementation). */
function cores(s: string): string[] {
  const out: string[] = []
  for (let k = 0; k < 3; k++) {
    const e = Buffer.concat([Buffer.alloc(k, 0x41), Buffer.from(s, 'utf8')]).toString('base64')
    const core = e.slice(k > 0 ? 4 : 0, (k + Buffer.byteLength(s)) % 3 ? e.length - 4 : e.length)
    out.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'))
  }
  return out
}

/** No 12-character slice of the secret survives, raw or base64-encoded at any alignment. */
function expectNoLeak(out: string, secret: string): void {
  for (let i = 0; i + 12 <= secret.length; i++) {
    const slice = secret.slice(i, i + 12)
    expect(out).not.toContain(slice)
    expect(out).not.toContain(encodeURIComponent(slice))
    for (const core of cores(slice)) expect(out).not.toContain(core)
  }
}

const redactor = new Redactor(SECRETS)

describe('Redactor: known secrets', () => {
  it.each(SECRETS.map(s => [s.slice(0, 8), s]))('redacts %s… exactly and inside other text', (_, secret) => {
    expect(redactor.redact(secret)).toBe('***')
    const out = redactor.redact(`before ${secret} middle${secret}after\n${secret}`)
    expect(out).toBe('before *** middle***after\n***')
    expectNoLeak(out, secret)
  })

  it.each(SECRETS.map(s => [s.slice(0, 8), s]))('redacts base64 and base64url of %s… alone', (_, secret) => {
    for (const encoded of [b64(secret), b64url(secret), b64(`${secret}\n`)]) {
      const out = redactor.redact(`value: ${encoded} end`)
      expect(out).toContain('***')
      expectNoLeak(out, secret)
    }
  })

  it.each(SECRETS.map(s => [s.slice(0, 8), s]))('redacts the base64 of x-access-token:%s… entirely', (_, secret) => {
    expect(redactor.redact(b64(`x-access-token:${secret}`))).toBe('***')
    const out = redactor.redact(b64url(`x-access-token:${secret}`))
    expectNoLeak(out, secret)
  })

  it.each([0, 1, 2, 5])('redacts base64 of a long text holding the secrets at offset %i', offset => {
    for (const secret of SECRETS) {
      const text = `${'p'.repeat(offset)}${secret} and then a long tail of ordinary words, enough to pad the encoding`
      for (const encoded of [b64(text), b64url(text), b64(`prefix ${text}`)]) {
        const out = redactor.redact(encoded)
        expect(out).toContain('***')
        expectNoLeak(out, secret)
      }
    }
  })

  it('redacts the checkout extraheader line of .git/config', () => {
    const line = `\textraheader = AUTHORIZATION: basic ${b64(`x-access-token:${GITHUB_TOKEN}`)}`
    expect(redactor.redact(line)).toBe('\textraheader = AUTHORIZATION: basic ***')
    const config = `[http "https://github.com/"]\n${line}\n[core]\n\tbare = false\n`
    const out = redactor.redact(config)
    expect(out).toBe(`[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ***\n[core]\n\tbare = false\n`)
    expectNoLeak(out, GITHUB_TOKEN)
  })

  it('redacts the URL-encoded form, with hex digits in either case', () => {
    const encoded = encodeURIComponent(CUSTOM)
    expect(encoded).not.toBe(CUSTOM)
    expect(encoded).toMatch(/%2F/)
    for (const form of [encoded, encoded.replace(/%[0-9A-F]{2}/g, m => m.toLowerCase()), CUSTOM.replace(/\//g, '%2f')]) {
      const out = redactor.redact(`https://example.com/cb?token=${form}&next=1`)
      expect(out).toBe('https://example.com/cb?token=***&next=1')
      expectNoLeak(out, CUSTOM)
    }
    // Form encoding writes a space as `+`.
    expect(redactor.redact(encodeURIComponent(CUSTOM).replace(/%20/g, '+'))).toBe('***')
  })

  it('redacts JSON-escaped and HTML-escaped forms', () => {
    const json = JSON.stringify({ password: CUSTOM })
    expect(json).toContain('\\"')
    expect(redactor.redact(json)).toBe('{"password":"***"}')
    const html = CUSTOM.replace(/&/g, '&amp;').replace(/"/g, '&quot;')
    expect(redactor.redact(`<code>${html}</code>`)).toBe('<code>***</code>')
  })

  it('redacts each line of a multi-line secret', () => {
    const pem = `-----BEGIN KEY-----\n${rand(64)}\n${rand(64)}\n-----END KEY-----\n`
    const r = new Redactor([pem])
    const lines = pem.trim().split('\n')
    const out = r.redact(`key:\r\n${lines.join('\r\n')}`)
    for (const line of lines) expectNoLeak(out, line)
    expect(r.redact(lines[1])).toBe('***')
  })

  it('ignores short values and duplicates', () => {
    const r = new Redactor(['true', '1', '  1234567  ', '', '\n\n'])
    expect(r.size).toBe(0)
    expect(r.redact('true 1 1234567')).toBe('true 1 1234567')
    r.add('  12345678  ')
    r.add('12345678')
    expect(r.size).toBe(1)
    expect(r.redact('id 12345678.')).toBe('id ***.')
  })

  it('picks up secrets added later', () => {
    const r = new Redactor()
    expect(r.redact('late-secret-value')).toBe('late-secret-value')
    r.add('late-secret-value')
    expect(r.redact('x late-secret-value y')).toBe('x *** y')
    r.add('late-secret-value-longer')
    expect(r.redact('late-secret-value-longer')).toBe('***')
  })

  it('reports the longest form it searches for', () => {
    const r = new Redactor([CUSTOM])
    expect(r.maxFormLength).toBeGreaterThanOrEqual(256)
    const long = `k${rand(400)}/=`
    r.add(long)
    expect(r.maxFormLength).toBeGreaterThanOrEqual(b64(`x-access-token:${long}`).length)
    expect(r.maxFormLength).toBeGreaterThanOrEqual(encodeURIComponent(long).length)
  })

  it('never throws', () => {
    expect(redactor.redact('')).toBe('')
    expect(redactor.redact(undefined as unknown as string)).toBe('undefined')
    expect(redactor.redact(GITHUB_TOKEN as unknown as string)).toBe('***')
  })
})

describe('Redactor.contains', () => {
  it('is true exactly when redact would change the text: every form, run, wrapped encoding and shape, and clean look-alikes', () => {
    const wrap = (t: string, width: number) => t.match(new RegExp(`.{1,${width}}`, 'g'))?.join('\n') ?? ''
    const texts = ['', 'plain words', 'ghp_short sk-ant-abc docs', 'version 1.2.3, file eyJfoo.eyJbar.baz', 'x'.repeat(100_000)]
    for (const secret of SECRETS) {
      texts.push(
        `a ${secret} b`,
        `run: ${secret.slice(3, 17)} end`,
        `rev ${[...secret].reverse().join('')}`,
        encodeURIComponent(secret),
        `x ${b64(secret)} y`,
        wrap(b64(`${'pad '.repeat(20)}${secret}${' tail'.repeat(20)}`), 16),
        wrap(Buffer.from(secret).toString('hex'), 60),
        `${'clean line\n'.repeat(50)}${secret.slice(0, 12)}`
      )
    }
    texts.push(`token=ghs_${rand(36)}`, `Bearer ${b64url('{"alg":"RS256","typ":"JWT"}')}.${b64url('{"iss":"x","sub":"y"}')}.${rand(40)}`)
    for (const text of texts)
      expect({ text: text.slice(0, 60), found: redactor.contains(text) }).toEqual({
        text: text.slice(0, 60),
        found: redactor.redact(text) !== text
      })
    expect(texts.filter(t => redactor.contains(t)).length).toBeGreaterThan(20)
  })
})

describe('Redactor: token-shaped strings with no known secret', () => {
  const r = new Redactor()

  it.each(['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'])('redacts %s tokens', prefix => {
    const token = `${prefix}${rand(36)}`
    const out = r.redact(`token=${token}; next`)
    expect(out).toBe('token=***; next')
    expectNoLeak(out, token)
  })

  it('redacts fine-grained PATs and Anthropic keys', () => {
    const pat = `github_pat_${rand(22)}_${rand(59)}`
    const key = `sk-ant-api03-${rand(90, `${ALNUM}-_`)}`
    const out = r.redact(`GH=${pat}\nKEY="${key}"\nadmin key sk-ant-admin01-${rand(20)}`)
    expect(out).toBe('GH=***\nKEY="***"\nadmin key ***')
  })

  it('leaves look-alikes that are too short', () => {
    const text = 'ghp_short github_pat_x sk-ant-abc ghx_0123456789012345678901234 sk-ant- docs'
    expect(r.redact(text)).toBe(text)
  })

  it('redacts JWTs, also after a URL-encoded space or a word character', () => {
    const jwt = [
      b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: rand(10) })),
      b64url(JSON.stringify({ iss: 'https://token.actions.githubusercontent.com', sub: 'repo:o/r:ref:refs/heads/main', aud: rand(8) })),
      randomBytes(256).toString('base64url')
    ].join('.')
    expect(jwt.startsWith('eyJ')).toBe(true)
    for (const [text, want] of [
      [`Authorization: Bearer ${jwt}`, 'Authorization: Bearer ***'],
      [`{"value":"${jwt}","count":1}`, '{"value":"***","count":1}'],
      [`Bearer%20${jwt}`, 'Bearer%20***'],
      [`token=${jwt}. Done.`, 'token=***. Done.'],
      [`x${jwt}.extra`, 'x***.extra']
    ]) {
      const out = r.redact(text)
      expect(out).toBe(want)
      expectNoLeak(out, jwt)
    }
  })

  it('leaves ordinary dotted words alone', () => {
    const text = 'version 1.2.3, host api.github.com, file eyJfoo.eyJbar.baz, a.b.c.d.e'
    expect(r.redact(text)).toBe(text)
  })
})

describe('Redactor.redactDeep', () => {
  it('redacts strings (values and keys) in nested objects and arrays, as a copy', () => {
    const input = {
      role: 'user',
      count: 3,
      ok: true,
      none: null,
      missing: undefined,
      content: [
        { type: 'text', text: `key ${ANTHROPIC_KEY}` },
        { type: 'tool_result', content: [`token ${GITHUB_TOKEN}`, b64(`x-access-token:${GITHUB_TOKEN}`), 42] }
      ],
      [CUSTOM]: 'custom as a key',
      nested: { deeper: { deepest: [[[CUSTOM]]] } }
    }
    const before = JSON.stringify(input)
    const out = redactor.redactDeep(input)
    expect(JSON.stringify(input)).toBe(before)
    expect(out).not.toBe(input)
    expect(out).toEqual({
      role: 'user',
      count: 3,
      ok: true,
      none: null,
      missing: undefined,
      content: [
        { type: 'text', text: 'key ***' },
        { type: 'tool_result', content: ['token ***', '***', 42] }
      ],
      '***': 'custom as a key',
      nested: { deeper: { deepest: [[['***']]] } }
    })
    const json = JSON.stringify(out)
    for (const s of SECRETS) expectNoLeak(json, s)
  })

  it('handles plain values, errors and cycles', () => {
    expect(redactor.redactDeep(GITHUB_TOKEN)).toBe('***')
    expect(redactor.redactDeep(7)).toBe(7)
    expect(redactor.redactDeep(null)).toBeNull()
    const err = redactor.redactDeep(new Error(`bad credentials ${GITHUB_TOKEN}`))
    expect(err).toBeInstanceOf(Error)
    expect(err.message).toBe('bad credentials ***')
    expect(err.stack).not.toContain(GITHUB_TOKEN)
    const cyclic: Record<string, unknown> = { s: ANTHROPIC_KEY }
    cyclic.self = cyclic
    const out = redactor.redactDeep(cyclic)
    expect(out.s).toBe('***')
    expect(out.self).toBe(out)
  })
})

describe('secretsFromEnv', () => {
  const oidcUrl = `https://pipelines.actions.githubusercontent.com/${rand(40)}/00000000-0000-0000-0000-000000000000/_apis/distributedtask/hubs/Actions/plans/abc/jobs/def/idtoken?api-version=2.0`
  const runtimeToken = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJ${rand(200)}.${rand(120)}`
  const dbPassword = `hunter2-${rand(16)}`
  const env: Record<string, string | undefined> = {
    'INPUT_ANTHROPIC-API-KEY': ANTHROPIC_KEY,
    'INPUT_GITHUB-TOKEN': GITHUB_TOKEN,
    INPUT_PROMPT: 'fix the tests',
    INPUT_MODEL: 'claude-sonnet-4-5',
    ANTHROPIC_BASE_URL: 'https://api.anthropic.com',
    ACTIONS_RUNTIME_TOKEN: runtimeToken,
    ACTIONS_RUNTIME_URL: 'https://pipelines.actions.githubusercontent.com/abc/',
    ACTIONS_ID_TOKEN_REQUEST_URL: oidcUrl,
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: runtimeToken,
    ACTIONS_CACHE_URL: 'https://artifactcache.actions.githubusercontent.com/abc/',
    ACTIONS_RESULTS_URL: 'https://results-receiver.actions.githubusercontent.com/',
    GH_TOKEN: GITHUB_TOKEN,
    GITHUB_TOKEN: GITHUB_TOKEN,
    MY_DB_PASSWORD: dbPassword,
    NPM_AUTH_TOKEN: 'short',
    SSH_AUTH_SOCK: '/tmp/ssh-XXXX/agent.123',
    // An innocent name holding a known secret.
    REMOTE_URL: `https://x-access-token:${GITHUB_TOKEN}@github.com/o/r.git`,
    GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${b64(`x-access-token:${GITHUB_TOKEN}`)}`,
    GITHUB_ENV: '/home/runner/work/_temp/_runner_file_commands/set_env_1',
    GITHUB_PATH: '/home/runner/work/_temp/_runner_file_commands/add_path_1',
    GITHUB_OUTPUT: '/home/runner/work/_temp/_runner_file_commands/set_output_1',
    GITHUB_STEP_SUMMARY: '/home/runner/work/_temp/_runner_file_commands/step_summary_1',
    UNSET: undefined,
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: '/home/runner',
    USER: 'runner',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'xterm',
    SHELL: '/bin/bash',
    TMPDIR: '/tmp',
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: '/home/runner/work/r/r',
    GITHUB_REPOSITORY: 'octo-org/octo-repo',
    GITHUB_SHA: 'ffac537e6cbbf934b08745a378932722df287a53',
    GITHUB_REF: 'refs/heads/main',
    GITHUB_EVENT_PATH: '/home/runner/work/_temp/_github_workflow/event.json',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_API_URL: 'https://api.github.com',
    RUNNER_OS: 'Linux',
    RUNNER_ARCH: 'X64',
    RUNNER_TEMP: '/home/runner/work/_temp',
    JAVA_HOME: '/usr/lib/jvm/temurin-17-jdk-amd64',
    GIT_AUTHOR_NAME: 'github-actions[bot]',
    GIT_AUTHOR_EMAIL: '41898282+github-actions[bot]@users.noreply.github.com'
  }

  it('finds secret values by name', () => {
    const found = secretsFromEnv(env)
    expect(found).toEqual(
      expect.arrayContaining([ANTHROPIC_KEY, GITHUB_TOKEN, runtimeToken, oidcUrl, dbPassword, '/tmp/ssh-XXXX/agent.123'])
    )
    expect(new Set(found).size).toBe(found.length)
    expect(found).not.toContain('short')
    expect(found).not.toContain('github-actions[bot]')
    expect(found).not.toContain('/home/runner')
    expect(found).not.toContain('https://api.anthropic.com')
  })

  it('treats hyphens as underscores and knows the secret-looking names', () => {
    const value = `v-${rand(20)}`
    for (const name of [
      'ANTHROPIC_AUTH_TOKEN',
      'INPUT_ANTHROPIC-API-KEY',
      'MY-SECRET',
      'db_passwd',
      'OPENAI_APIKEY',
      'SSH_PRIVATE_KEY',
      'GOOGLE_CREDENTIALS',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_ACCESS_KEY_ID',
      'HTTP_AUTHORIZATION',
      'BASIC_AUTH'
    ]) {
      expect(secretsFromEnv({ [name]: value })).toEqual([value])
    }
    for (const name of ['GIT_AUTHOR_NAME', 'AUTHORS_FILE', 'PATH', 'KEYBOARD', 'GITHUB_REPOSITORY']) {
      expect(secretsFromEnv({ [name]: value })).toEqual([])
    }
  })
})

describe('Redactor performance sanity', () => {
  it('handles a 1 MB string with no secrets and leaves it unchanged', () => {
    const r = new Redactor([...SECRETS, ...Array.from({ length: 20 }, () => rand(40))])
    const line = 'npm WARN deprecated left-pad@1.3.0: use String.prototype.padStart() instead; eyJ 1.2.3 ghp_x\n'
    const text = line.repeat(Math.ceil(1_000_000 / line.length))
    expect(r.redact(text)).toBe(text)
    const b = randomBytes(750_000).toString('base64')
    expect(r.redact(b).length).toBeGreaterThan(900_000)
  })

  it('handles adversarial repetitions', () => {
    const r = new Redactor(SECRETS)
    for (const text of [
      'eyJ'.repeat(200_000),
      `${'0eyJ'.repeat(200_000)}.x`,
      'a.b '.repeat(200_000),
      'github_pat_'.repeat(50_000),
      '%'.repeat(500_000)
    ]) {
      expect(r.redact(text).length).toBeGreaterThan(0)
    }
  })
})
