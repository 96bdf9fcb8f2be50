// The hand-back judged as what later steps will run, and the files the agent
// never gets (SPEC "Checked", "Not given"), end to end through dist/ with
// sandbox: user in both privilege kinds, real git, and the commit made through
// the fake GitHub's Git database (a real bare repository):
//   - gha-creds-*.json as google-github-actions/auth writes it (the job's OIDC
//     request token as a bearer header): not in the agent's copy, named in the
//     report, never in the patch, the workspace or a commit, even recreated;
//   - a symlink chain (`d/up -> ..`, `link -> d/up/d/up/../../proc/self/environ`):
//     held back, not applied, not committed;
//   - a new readme.md beside the unchanged README.md: held back;
//   - an executable `git` in a workspace folder that an earlier step put on
//     PATH (and one added through the GITHUB_PATH file): held back, and a later
//     step's `git` by PATH lookup is the real one.
import { afterAll, describe, expect, it, test } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bash, startFakeAnthropic, text, type Reply } from './helpers/fake-anthropic'
import { startFakeGitHub, type FakeComment } from './helpers/fake-github'
import { createFakeGitDb, type FakeGitDb } from './helpers/fake-git-db'
import { cleanupRuns, REPO_ROOT, runAction, type ActionRun } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { commitAll, gitEnv } from './helpers/git'
import { sandboxKinds, type Kind } from './helpers/kinds'
import { ghaCreds } from './helpers/gha-creds'

const KINDS = sandboxKinds()
if (!KINDS.length) test.skip('the user sandbox needs root or passwordless sudo on Linux', () => undefined)

const API_KEY = 'sk-ant-api03-handbackChecksKey0000000000000000'
const REPO = 'Codertocat/Hello-World'
const OIDC_TOKEN = 'oidcRequestTokenE2E0123456789abcdefABCDEFxyz'
const OIDC_URL = 'https://pipelines.actions.example/abc/_apis/distributedtask/hubs/Actions/plans/p/jobs/j/idtoken?api-version=2.0'
const CREDS = 'gha-creds-0123abcd4567ef89.json'
const GIT_ENV = gitEnv('Octo Cat', 'octocat@example.com')

afterAll(() => cleanupRuns())

/**
 * Whether the built command server leaves `withhold` files out of the copy
 * (its side is built beside this one, in the trusted folder): the listing and
 * `cat` assertions need it; everything else holds without it.
 */
const SERVER_WITHHOLDS = readdirSync(join(REPO_ROOT, 'dist'), { withFileTypes: true })
  .filter(d => d.isDirectory() && d.name !== 'cli')
  .some(d => {
    const f = join(REPO_ROOT, 'dist', d.name, 'index.js')
    return existsSync(f) && readFileSync(f, 'utf8').includes('withhold')
  })

interface Ran {
  run: ActionRun
  ws: string
  db: FakeGitDb
  comment: string
  results: string[]
  tree: string[]
}

function workspace(kind: Kind, extra: (ws: string) => void): string {
  const ws = mkdtempSync(join(tmpdir(), 'handback-checks-'))
  writeFileSync(join(ws, 'README.md'), '# Hello-World\n')
  mkdirSync(join(ws, 'src'))
  writeFileSync(join(ws, 'src/add.js'), 'export const add = (a, b) => a - b\n')
  commitAll(ws, GIT_ENV)
  extra(ws)
  if (kind.asUser) execFileSync('chown', ['-R', `${kind.asUser.uid}:${kind.asUser.gid}`, ws])
  return ws
}

async function handback(kind: Kind, script: Reply[], o: { ws: string; env?: Record<string, string> }): Promise<Ran> {
  const db = await createFakeGitDb(o.ws, { repo: REPO })
  const fake = await startFakeAnthropic([...script, text('Done.')], { apiKey: API_KEY })
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' }, routes: db.routes })
  try {
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent fix the add function', issueNumber: 7 }),
      inputs: { 'anthropic-api-key': API_KEY, 'anthropic-base-url': fake.url, sandbox: 'user', changes: 'branch' },
      env: { GITHUB_API_URL: gh.url, ...o.env },
      workspace: o.ws,
      asUser: kind.asUser,
      timeoutMs: 240_000
    })
    const comments = [...gh.comments.values()] as FakeComment[]
    expect(comments).toHaveLength(1)
    const last = fake.requests[fake.requests.length - 1]
    const results: string[] = []
    for (const m of last?.body?.messages ?? [])
      if (Array.isArray(m.content))
        for (const b of m.content)
          if (b.type === 'tool_result')
            results.push(typeof b.content === 'string' ? b.content : b.content.map((c: { text?: string }) => c.text ?? '').join(''))
    const sha = run.outputs['commit-sha']
    const tree = sha
      ? execFileSync('git', ['ls-tree', '-r', '--name-only', sha], { env: { ...GIT_ENV, GIT_DIR: db.dir } })
          .toString()
          .split('\n')
          .filter(Boolean)
      : []
    return { run, ws: o.ws, db, comment: comments[0].body, results, tree }
  } finally {
    await Promise.all([fake.close(), gh.close()])
  }
}

const FIX = "sed -i 's/a - b/a + b/' src/add.js"

describe.each(KINDS)('the hand-back judges files as later steps will run them ($name)', kind => {
  it('gha-creds-*.json holding the job’s OIDC request token: not given to the agent, named in the report, never handed back even when recreated', async () => {
    const creds = ghaCreds(OIDC_TOKEN, OIDC_URL)
    const ws = workspace(kind, d => writeFileSync(join(d, CREDS), creds))
    const r = await handback(
      kind,
      [
        bash('ls -a', `cat ${CREDS}; echo "cat exit $?"`),
        bash(FIX, `printf '{"type":"external_account","agent":"wrote this"}\\n' > ${CREDS}`, 'rm -f gha-creds-other.json')
      ],
      { ws, env: { ACTIONS_ID_TOKEN_REQUEST_TOKEN: OIDC_TOKEN, ACTIONS_ID_TOKEN_REQUEST_URL: OIDC_URL } }
    )
    expect(r.run.code).toBe(0)
    // named in the report (never its content), in the Changes section
    expect(r.comment).toMatch(/Not given to the agent[^]*gha-creds-0123abcd4567ef89\.json/)
    for (const text of [r.comment, r.run.summary, r.run.stdout, ...r.results]) expect(text).not.toContain(OIDC_TOKEN)
    // the workspace keeps the real file, untouched; the agent's version never lands
    expect(readFileSync(join(r.ws, CREDS), 'utf8')).toBe(creds)
    // the fix comes back; the credentials file is in neither the patch nor the commit
    expect(r.tree).toContain('src/add.js')
    expect(r.tree).not.toContain(CREDS)
    const patch = r.run.outputs.patch ? readFileSync(r.run.outputs.patch, 'utf8') : ''
    expect(patch).toContain('src/add.js')
    expect(patch).not.toContain('gha-creds')
    expect(r.run.outputs['changed-files']).toBe('1')
    if (SERVER_WITHHOLDS) {
      // the agent's listing of its copy does not show it, and it cannot read it
      expect(r.results[0]).not.toContain('gha-creds')
      expect(r.results[1]).toMatch(/No such file or directory[^]*cat exit 1/)
    }
  }, 300_000)

  it('a symlink chain that leaves the repository (`d/up -> ..`, `link -> d/up/d/up/../../proc/self/environ`) is held back: not applied, not committed', async () => {
    const ws = workspace(kind, () => undefined)
    const r = await handback(kind, [bash(FIX, 'mkdir -p d && ln -s .. d/up && ln -s d/up/d/up/../../proc/self/environ link')], { ws })
    expect(r.run.code).toBe(0)
    expect(r.comment).toMatch(/link: a symlink that resolves to outside the repository through other links/)
    expect(existsSync(join(r.ws, 'link'))).toBe(false)
    expect(() => readFileSync(join(r.ws, 'link'))).toThrow(/ENOENT/) // a later step reads nothing through it
    expect(r.tree).toContain('src/add.js')
    expect(r.tree).not.toContain('link')
  }, 300_000)

  it('a new readme.md beside the unchanged README.md is held back', async () => {
    const ws = workspace(kind, () => undefined)
    const r = await handback(kind, [bash(FIX, 'echo lower > readme.md')], { ws })
    expect(r.run.code).toBe(0)
    expect(r.comment).toMatch(/readme\.md: its path differs only in case from "README\.md"/)
    expect(readdirSync(r.ws)).not.toContain('readme.md')
    expect(r.tree).not.toContain('readme.md')
    expect(r.tree).toContain('src/add.js')
  }, 300_000)

  it("an executable git in workspace folders on the job's PATH (from an earlier step's PATH, and from the GITHUB_PATH file) is held back; a later step's git is the real one", async () => {
    let pathFile = ''
    const ws = workspace(kind, d => {
      pathFile = join(d, '..', `${d.split('/').pop()}-github-path`)
      writeFileSync(pathFile, `${d}/bin\n`)
      if (kind.asUser) chownSync(pathFile, kind.asUser.uid, kind.asUser.gid)
      chmodSync(pathFile, 0o644)
    })
    const plant = `printf '#!/bin/sh\\necho planted-git\\n' > "$1/git" && chmod +x "$1/git"`
    const r = await handback(
      kind,
      [bash(FIX, `mkdir -p .venv/bin bin && set -- .venv/bin && ${plant} && set -- bin && ${plant} && echo planted`)],
      { ws, env: { PATH: `${ws}/.venv/bin:${process.env.PATH}`, GITHUB_PATH: pathFile } }
    )
    expect(r.run.code).toBe(0)
    for (const p of ['.venv/bin/git', 'bin/git']) {
      expect(r.comment).toContain(`${p}: it lands in`)
      expect(existsSync(join(r.ws, p))).toBe(false)
      expect(r.tree).not.toContain(p)
    }
    expect(r.comment).toMatch(/a workspace folder on the job's PATH/)
    // a later step: PATH lookup with both folders first finds the real git
    const later = execFileSync('sh', ['-c', 'git --version'], { env: { PATH: `${ws}/bin:${ws}/.venv/bin:${process.env.PATH}` } }).toString()
    expect(later).toMatch(/^git version/)
    expect(r.tree).toContain('src/add.js')
  }, 300_000)
})
