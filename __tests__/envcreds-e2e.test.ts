// Issue 8, points 4 to 6, end to end through the built action (dist/): the
// environment allowlist with `sandbox: none` (commands as the runner user in
// the workspace), and nested checkouts' credentials with `sandbox: user` (none
// hides nothing: a command could get around it): a scripted model runs what an
// attacker would, and nothing the action sends or writes holds the job's
// unnamed secrets or a nested checkout's credential, in any encoding; pass-env
// works; every config is byte-identical afterwards.
import { afterAll, describe, expect, test } from '@jest/globals'
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startFakeAnthropic, text, type FakeAnthropic, type Reply } from './helpers/fake-anthropic'
import { startFakeGitHub, type FakeGitHub } from './helpers/fake-github'
import { cleanupRuns, runAction, type ActionRun, type RunOptions } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'

const hasGit = spawnSync('git', ['--version']).status === 0
const privileged = process.platform === 'linux' && (process.getuid?.() === 0 || spawnSync('sudo', ['-n', 'true']).status === 0)
const withUserSandbox = hasGit && privileged ? test : test.skip

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const alnum = (n: number) => Array.from(randomBytes(n), b => ALNUM[b % ALNUM.length]).join('')
const b64 = (s: string) => Buffer.from(s).toString('base64')
const hex = (s: string) => Buffer.from(s).toString('hex')

const API_KEY = `sk-ant-api03-${alnum(80)}AA`
const JOB_TOKEN = `ghs_${alnum(36)}`

const created: string[] = []
afterAll(() => {
  cleanupRuns()
  for (const d of created) rmSync(d, { recursive: true, force: true })
})

/** Forms a command could print a secret in: as is, base64 (whole and its stable cores), base64url, hex. */
function formsOf(secret: string): string[] {
  const bytes = Buffer.from(secret)
  const out = new Set([secret, bytes.toString('base64'), bytes.toString('base64url'), hex(secret), encodeURIComponent(secret)])
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64')
    out.add(enc.slice(k > 0 ? 4 : 0, (k + bytes.length) % 3 !== 0 ? enc.length - 4 : enc.length))
  }
  return [...out].filter(f => f.length >= 8)
}

interface Done {
  run: ActionRun
  fake: FakeAnthropic
  gh: FakeGitHub
  /** every tool_result text the model received */
  results: string[]
}

/** Everything the action sent or wrote, by where it went. */
function sinks(d: Done): Array<[string, string]> {
  const out: Array<[string, string]> = []
  d.fake.requests.forEach((r, i) => out.push([`model request ${i + 1}`, JSON.stringify(r.body)]))
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
  for (const [where, content] of sinks(d)) {
    for (const [name, secret] of Object.entries(secrets)) {
      for (const form of formsOf(secret)) if (content.includes(form)) found.push(`${name} (${form.slice(0, 10)}…) in ${where}`)
    }
  }
  return found
}

async function run(
  script: Reply[],
  o: {
    workspace?: string
    runnerTemp?: string
    env?: Record<string, string>
    inputs?: Record<string, string>
    extra?: Partial<RunOptions>
  } = {}
): Promise<Done> {
  const fake = await startFakeAnthropic(script, { apiKey: API_KEY })
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  try {
    const r = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent look around' }),
      workspace: o.workspace,
      githubToken: JOB_TOKEN,
      inputs: { 'anthropic-api-key': API_KEY, 'anthropic-base-url': fake.url, sandbox: 'none', 'blocked-commands': '', ...o.inputs },
      env: { GITHUB_API_URL: gh.url, GITHUB_TOKEN: JOB_TOKEN, ...(o.runnerTemp ? { RUNNER_TEMP: o.runnerTemp } : {}), ...o.env },
      timeoutMs: 120_000,
      ...o.extra
    })
    const results: string[] = []
    for (const req of fake.requests) {
      for (const m of req.body?.messages ?? []) {
        if (!Array.isArray(m.content)) continue
        for (const b of m.content) {
          if (b.type === 'tool_result')
            results.push(typeof b.content === 'string' ? b.content : (b.content ?? []).map((c: { text?: string }) => c.text ?? '').join(''))
        }
      }
    }
    return { run: r, fake, gh, results }
  } finally {
    await Promise.all([fake.close(), gh.close()])
  }
}

// ---------------------------------------------------------------------------

/** Secrets set at job level under names no denylist knows (issue 8, point 5). */
const UNNAMED: Record<string, string> = {
  DEPLOY_KEY: `dk-${alnum(30)}`,
  SSH_KEY: `sk-${alnum(30)}`,
  SIGNING_KEY: `sg-${alnum(30)}`,
  NPM_PASS: `np-${alnum(16)}`,
  DB_PWD: `db-${alnum(16)}`,
  REGISTRY_PAT: `rp-${alnum(30)}`,
  SLACK_WEBHOOK_URL: `https://hooks.slack.com/services/T0${alnum(8)}/B0${alnum(8)}/${alnum(24)}`,
  SENTRY_DSN: `https://${randomBytes(16).toString('hex')}@o12345.ingest.sentry.io/67890`,
  COOKIE: `session=${alnum(40)}`
}

describe('environment by allowlist, through dist/ (sandbox: none)', () => {
  test('job-level secrets under any name and a random FOO_*_CREDENTIALS never reach a command; pass-env passes a name, and redacts a credential passed', async () => {
    const foo = `FOO_${alnum(5).toUpperCase()}_CREDENTIALS`
    const secrets = { ...UNNAMED, [foo]: `fc-${alnum(24)}` }
    const passedToken = `pt${alnum(30)}9Zz` // no known shape: only pass-env's redaction hides it
    const d = await run(
      [
        {
          content: [
            { type: 'tool_use', id: 'toolu_env', name: 'bash', input: { command: 'env' } },
            { type: 'tool_use', id: 'toolu_names', name: 'bash', input: { command: "env | cut -d= -f1 | sort | tr '\\n' ' '" } },
            {
              type: 'tool_use',
              id: 'toolu_enc',
              name: 'bash',
              input: { command: 'env | base64 -w0; echo; env | od -An -tx1 | tr -d " \\n"' }
            },
            {
              type: 'tool_use',
              id: 'toolu_pass',
              name: 'bash',
              input: { command: 'echo "flag=$MY_FLAG"; echo "tok=$EXTRA_API_TOKEN" | base64' }
            }
          ],
          stop_reason: 'tool_use'
        },
        text('Done.')
      ],
      { env: { ...secrets, MY_FLAG: 'on-42', EXTRA_API_TOKEN: passedToken }, inputs: { 'pass-env': 'MY_FLAG\nEXTRA_*' } }
    )
    expect(d.run.code).toBe(0)
    const names = d.results[1].split(' ')
    for (const name of Object.keys(secrets)) expect(names).not.toContain(name)
    for (const name of ['PATH', 'HOME', 'GITHUB_REPOSITORY', 'GITHUB_SHA', 'RUNNER_OS', 'MY_FLAG', 'EXTRA_API_TOKEN'])
      expect(names).toContain(name)
    for (const name of ['GITHUB_TOKEN', 'GITHUB_ENV', 'GITHUB_OUTPUT', 'GITHUB_STATE', 'GITHUB_PATH', 'GITHUB_STEP_SUMMARY', 'RUNNER_TEMP'])
      expect(names).not.toContain(name)
    expect(names.filter(n => /^(INPUT_|ACTIONS_|ANTHROPIC_)/.test(n))).toEqual([])
    expect(d.results[3]).toContain('flag=on-42')
    expect(leaks(d, { ...secrets, API_KEY, JOB_TOKEN })).toEqual([])
    // the passed credential is readable by design, and redacted as is, in base64 and in hex
    expect(leaks(d, { passedToken })).toEqual([])
  })
})

// ---------------------------------------------------------------------------

const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: GIT_ENV }).toString()

function repo(dir: string): string {
  mkdirSync(dir, { recursive: true })
  git(dir, 'init', '-q', '-b', 'main')
  git(dir, 'config', 'remote.origin.url', 'https://github.com/octo-org/lib')
  writeFileSync(path.join(dir, 'README.md'), '# lib\n')
  git(dir, 'add', '-A')
  git(dir, '-c', 'user.name=a', '-c', 'user.email=a@b.c', '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'init')
  return path.join(dir, '.git', 'config')
}

/** A workspace with checkouts two and three folders deep, each with an extraheader: a PAT, and a secret of no known shape. */
function nestedCheckouts() {
  const base = mkdtempSync(path.join(os.tmpdir(), 'envcreds-'))
  created.push(base)
  const workspace = path.join(base, 'work', 'repo')
  const runnerTemp = path.join(base, 'work', '_temp')
  mkdirSync(runnerTemp, { recursive: true })
  const top = repo(workspace)
  git(workspace, 'config', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${b64(`x-access-token:${JOB_TOKEN}`)}`)
  const pat = `github_pat_${alnum(22)}_${alnum(59)}`
  const opaque = `Zx7-${alnum(14)}.${alnum(8)}`
  const deps = repo(path.join(workspace, 'deps', 'lib'))
  git(
    path.join(workspace, 'deps', 'lib'),
    'config',
    'http.https://github.com/.extraheader',
    `AUTHORIZATION: basic ${b64(`x-access-token:${pat}`)}`
  )
  const deep = repo(path.join(workspace, 'a', 'b', 'c'))
  git(
    path.join(workspace, 'a', 'b', 'c'),
    'config',
    'http.https://git.example.com/.extraheader',
    `AUTHORIZATION: basic ${b64(`ci:${opaque}`)}`
  )
  const configs = [top, deps, deep]
  return {
    workspace,
    runnerTemp,
    configs,
    bytes: configs.map(c => readFileSync(c)),
    modes: configs.map(c => lstatSync(c).mode),
    secrets: { pat, opaque, JOB_TOKEN }
  }
}

/** What an agent would run to find credentials, in every encoding. */
const STEAL: Record<string, string> = {
  list: 'for d in . deps/lib a/b/c; do git -C $d config --list --show-origin; done',
  cat: 'cat .git/config deps/lib/.git/config a/b/c/.git/config',
  b64: 'cat deps/lib/.git/config a/b/c/.git/config | base64 -w0',
  hex: 'od -An -tx1 deps/lib/.git/config a/b/c/.git/config | tr -d " \\n"; xxd -p a/b/c/.git/config 2>/dev/null | tr -d "\\n"',
  grep: 'grep -rIa -i "extraheader\\|authorization" . 2>/dev/null | head -50; echo searched',
  // every place a program of the runner's may write temporary files, not all of / (a walk that takes seconds on a
  // machine with much on it)
  temp: 'ls -la "${RUNNER_TEMP:-/nonexistent}" 2>&1; for f in $(find "${RUNNER_TEMP:-/nonexistent}" /tmp /var/tmp /dev/shm /run "$HOME" -name node_modules -prune -o -name "bash-agent-git-*" -print 2>/dev/null); do od -An -tx1 "$f" | tr -d " \\n"; base64 -w0 "$f"; done'
}

// sandbox: none hides nothing (SPEC: a command could get around it), so this is the user sandbox's copy.
describe('git credentials at any depth, through dist/ (sandbox: user)', () => {
  withUserSandbox(
    'checkouts two and three folders deep: no credential readable by any command in any encoding; configs byte-identical afterwards',
    async () => {
      const w = nestedCheckouts()
      const d = await run(
        [
          {
            content: Object.entries(STEAL).map(([id, command]) => ({
              type: 'tool_use' as const,
              id: `toolu_${id}`,
              name: 'bash',
              input: { command }
            })),
            stop_reason: 'tool_use'
          },
          text('Nothing found.')
        ],
        { workspace: w.workspace, runnerTemp: w.runnerTemp, inputs: { sandbox: 'user' } }
      )
      expect(d.run.code).toBe(0)
      const all = d.results.join('\n')
      // nothing to redact: the commands could not read them at all, in any encoding
      for (const s of Object.values(w.secrets)) for (const f of formsOf(s)) expect(all).not.toContain(f)
      expect(all).not.toMatch(/extraheader|authorization/i)
      // Not even redacted: absent. The hex dumps of the configs' public parts (`//github.com`) stay as they are:
      // only the credential of a URL or header is learned.
      expect(all).not.toContain('***')
      expect(leaks(d, w.secrets)).toEqual([])
      w.configs.forEach((c, i) => {
        expect({ c, same: readFileSync(c).equals(w.bytes[i]) }).toEqual({ c, same: true })
        expect(lstatSync(c).mode).toBe(w.modes[i])
      })
    }
  )
})
