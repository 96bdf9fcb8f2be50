// The thread is the session, for files: where the thread's last run committed
// to a branch, the next run's working copy starts from that branch and its
// commit goes onto it (parent: the last run's commit). End to end through
// dist/: two workflow runs in one issue, each on a fresh checkout of the same
// commit (as a runner makes), against one fake GitHub whose Git database is a
// real bare repository and which keeps the first run's history artifact.
// `sandbox: none` always; `sandbox: user` where the machine gives it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bash, startFakeAnthropic, text, type FakeAnthropic, type Reply } from './helpers/fake-anthropic'
import { runtimeToken, startFakeGitHub, type FakeGitHub } from './helpers/fake-github'
import { createFakeGitDb, type FakeGitDb } from './helpers/fake-git-db'
import { cleanupRuns, runAction, type ActionRun } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { commitAll, gitEnv } from './helpers/git'

const API_KEY = 'sk-ant-api03-threadBranchKey00000000000000000000'
const REPO = 'Codertocat/Hello-World'
const ISSUE = 12
const isRoot = process.platform === 'linux' && typeof process.getuid === 'function' && process.getuid() === 0
const privileged = isRoot || (process.platform === 'linux' && spawnSync('sudo', ['-n', 'true']).status === 0)
const MODES: string[] = privileged ? ['none', 'user'] : ['none']
if (!privileged) it.skip('sandbox user: the user sandbox needs root or passwordless sudo on Linux', () => undefined)

const dirs: string[] = []
afterAll(() => {
  cleanupRuns()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const GIT_ENV = gitEnv('Octo Cat', 'octocat@example.com')
const git = (cwd: string, args: string[], env: Record<string, string> = {}): string =>
  execFileSync('git', args, { cwd, env: { ...GIT_ENV, ...env } })
    .toString('utf8')
    .trim()
const inDb = (db: FakeGitDb, args: string[]) => git(db.dir, args, { GIT_DIR: db.dir })

/** The repository as pushed to GitHub: branch main, one commit. */
function makeOrigin(): { dir: string; base: string } {
  const dir = mkdtempSync(join(tmpdir(), 'thread-branch-origin-'))
  dirs.push(dir)
  mkdirSync(join(dir, 'src'))
  writeFileSync(join(dir, 'README.md'), '# Hello-World\n')
  writeFileSync(join(dir, 'src', 'add.js'), 'export function add(a, b) {\n  return a - b\n}\n')
  return { dir, base: commitAll(dir, GIT_ENV) }
}

/** What actions/checkout leaves on a fresh runner: a clone of the repository at `sha`. */
function checkout(origin: string, sha: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'thread-branch-ws-'))
  dirs.push(dir)
  // one shell: each git run forks the jest worker
  execFileSync('sh', ['-c', 'git clone -q --no-checkout "$1" . && git checkout -q --detach "$2"', 'sh', origin, sha], {
    cwd: dir,
    env: GIT_ENV
  })
  return dir
}

interface Run {
  run: ActionRun
  ai: FakeAnthropic
  report: string
}

async function runIn(o: {
  gh: FakeGitHub
  ws: string
  runId: number
  body: string
  script: Reply[]
  sandbox: string
  issue?: number
  changes?: string
  path?: string
}): Promise<Run> {
  const issue = o.issue ?? ISSUE
  const ai = await startFakeAnthropic(o.script, { apiKey: API_KEY })
  try {
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: o.body, login: 'octocat', issueNumber: issue }),
      inputs: { 'anthropic-api-key': API_KEY, 'anthropic-base-url': ai.url, sandbox: o.sandbox, changes: o.changes ?? 'branch' },
      env: {
        GITHUB_API_URL: o.gh.url,
        GITHUB_RUN_ID: String(o.runId),
        ACTIONS_RESULTS_URL: o.gh.url,
        ACTIONS_RUNTIME_TOKEN: runtimeToken(o.runId),
        ...(o.path ? { PATH: o.path } : {})
      },
      workspace: o.ws,
      timeoutMs: 120_000
    })
    const report = [...o.gh.comments.values()].find(c => c.issue_number === issue && c.body.includes(`run=${o.runId} `))?.body ?? ''
    return { run, ai, report }
  } finally {
    await ai.close()
  }
}

/** The output of the run's first command, as the model received it. */
function firstOutput(ai: FakeAnthropic): string {
  const messages = ai.requests[1].body.messages as Array<{ role: string; content: unknown }>
  const results = messages[messages.length - 1].content as Array<{ type: string; content: unknown }>
  const result = results.find(b => b.type === 'tool_result')
  return JSON.stringify(result?.content ?? '')
}

const FIX = "sed -i 's/return a - b/return a + b/' src/add.js"
const LATIN1 = "printf 'caf\\351 cr\\350me\\n' > notes.txt"
const LATIN1_BYTES = Buffer.from('caf\xe9 cr\xe8me\n', 'latin1')
const ADD_TEST = 'printf \'import { add } from "./add.js"\\nif (add(1, 2) !== 3) throw new Error("add")\\n\' > src/add.test.js'

describe.each(MODES)('sandbox %s: the second run continues on the branch the first committed to', sandbox => {
  let origin: { dir: string; base: string }
  let db: FakeGitDb
  let gh: FakeGitHub
  let first: Run
  let second: Run
  const runIds = sandbox === 'none' ? [3101, 3102] : [3201, 3202]

  beforeAll(async () => {
    origin = makeOrigin()
    db = await createFakeGitDb(origin.dir, { repo: REPO })
    gh = await startFakeGitHub({ permissions: { octocat: 'write' }, routes: db.routes })
    first = await runIn({
      gh,
      ws: checkout(origin.dir, origin.base),
      runId: runIds[0],
      body: '/agent fix the add function',
      // notes.txt is Latin-1 (not UTF-8): the carried patch must keep its bytes
      script: [bash(`${FIX} && ${LATIN1}`), text('Fixed add.')],
      sandbox
    })
    second = await runIn({
      gh,
      ws: checkout(origin.dir, origin.base),
      runId: runIds[1],
      body: '/agent now add a test for it',
      script: [bash('cat src/add.js'), bash(ADD_TEST), text('Added a test.')],
      sandbox
    })
  }, 300_000)
  afterAll(async () => {
    await gh.close()
    db.close()
  })

  it('the first run commits its fix to a new branch', () => {
    expect(first.run.outputs['exit-reason']).toBe('end_turn')
    expect(first.run.outputs.branch).toBe(`agent/issue-${ISSUE}-${runIds[0]}`)
    expect(inDb(db, ['rev-parse', `${first.run.outputs['commit-sha']}^`])).toBe(origin.base)
  })

  it("the second run's copy has the first run's change before its first command", () => {
    expect(second.run.outputs['exit-reason']).toBe('end_turn')
    expect(firstOutput(second.ai)).toContain('return a + b')
    if (process.env.SHOW_COMMENT) console.log(second.report)
    // the mode asked for is the one in force (no fallback hides a user-mode failure)
    if (sandbox === 'user') expect(second.report).toContain('sandbox: user (')
    expect(second.report).toContain(`The working copy starts from branch \`agent/issue-${ISSUE}-${runIds[0]}\``)
  })

  it("the second run's commit goes onto that branch, its parent the first run's commit, and holds only its own change", () => {
    const c1 = first.run.outputs['commit-sha']
    const c2 = second.run.outputs['commit-sha']
    expect(second.run.outputs.branch).toBe(first.run.outputs.branch)
    expect(c2).toMatch(/^[0-9a-f]{40}$/)
    expect(inDb(db, ['rev-parse', `refs/heads/${first.run.outputs.branch}`])).toBe(c2)
    expect(inDb(db, ['rev-parse', `${c2}^`])).toBe(c1)
    expect(inDb(db, ['diff', '--name-status', c1, c2])).toBe('A\tsrc/add.test.js')
    expect(inDb(db, ['show', `${c2}:src/add.js`])).toContain('return a + b')
    // the run's patch (report, output, patch file) holds its own change only, in both modes; the workspace
    // still receives the branch's change too (next test)
    expect(second.run.outputs['changed-files']).toBe('1')
    expect(readFileSync(second.run.outputs.patch, 'utf8')).toContain('src/add.test.js')
    expect(readFileSync(second.run.outputs.patch, 'utf8')).not.toContain('src/add.js\n')
  })

  it("the second run's workspace holds the branch's state for later steps, byte for byte", () => {
    expect(readFileSync(join(first.run.workspace, 'notes.txt'))).toEqual(LATIN1_BYTES)
    expect(readFileSync(join(second.run.workspace, 'notes.txt'))).toEqual(LATIN1_BYTES)
    expect(readFileSync(join(second.run.workspace, 'src/add.js'), 'utf8')).toContain('return a + b')
    expect(readFileSync(join(second.run.workspace, 'src/add.test.js'), 'utf8')).toContain('add(1, 2)')
  })

  it("a third run resumed from the branch: the agent's bin/git, for a workspace folder on PATH, is held back and never run", async () => {
    const ws = checkout(origin.dir, origin.base)
    const marks = mkdtempSync(join(tmpdir(), 'thread-branch-marks-'))
    const plant = `mkdir -p bin && printf '#!/bin/sh\\necho "$0" >> ${marks}/ran\\nexec /usr/bin/git "$@"\\n' > bin/git && chmod 755 bin/git`
    const third = await runIn({
      gh,
      ws,
      runId: runIds[1] + 50,
      body: '/agent plant',
      script: [bash(plant), text('Planted.')],
      sandbox,
      // an earlier step's `echo "$PWD/bin" >> $GITHUB_PATH`
      path: `${ws}/bin:${process.env.PATH}`
    })
    expect(third.run.outputs['exit-reason']).toBe('end_turn')
    expect(third.report).toContain(`The working copy starts from branch \`agent/issue-${ISSUE}-${runIds[0]}\``)
    // held back: a file landing in a workspace folder on the job's PATH never reaches the workspace (SPEC "Checked")
    expect(existsSync(join(ws, 'bin', 'git'))).toBe(false)
    expect(third.report).toContain('bin/git')
    expect(readdirSync(marks)).toEqual([])
  }, 180_000)
})

describe.each(MODES)('sandbox %s: when the branch cannot be had', sandbox => {
  it('the patch no longer applies to the checkout: the copy starts from the checkout, the commit goes to a new branch, one line says so', async () => {
    const origin = makeOrigin()
    const db = await createFakeGitDb(origin.dir, { repo: REPO })
    const gh = await startFakeGitHub({ permissions: { octocat: 'write' }, routes: db.routes })
    const [one, two] = sandbox === 'none' ? [3301, 3302] : [3311, 3312]
    try {
      const first = await runIn({
        gh,
        ws: checkout(origin.dir, origin.base),
        runId: one,
        body: '/agent fix the add function',
        script: [bash(FIX), text('Fixed add.')],
        sandbox
      })
      expect(first.run.outputs.branch).toBe(`agent/issue-${ISSUE}-${one}`)
      // an earlier step of the second job changed the very lines the fix touches
      const ws = checkout(origin.dir, origin.base)
      writeFileSync(join(ws, 'src', 'add.js'), 'export function add(a, b) {\n  return b - a - 0\n}\n')
      const second = await runIn({
        gh,
        ws,
        runId: two,
        body: '/agent now add a test for it',
        script: [bash('cat src/add.js'), bash(ADD_TEST), text('Added a test.')],
        sandbox
      })
      expect(second.run.outputs['exit-reason']).toBe('end_turn')
      expect(firstOutput(second.ai)).toContain('return b - a - 0')
      const lines = second.report.split('\n').filter(l => l.includes('The working copy starts from'))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain(`starts from the checked-out commit, not from branch \`agent/issue-12-${one}\``)
      expect(lines[0]).toContain('no longer apply')
      // the conversation still continues
      expect(second.report).toContain(`Continues the conversation of [run ${one}]`)
      // a new branch on the checkout; the first run's branch is untouched
      expect(second.run.outputs.branch).toBe(`agent/issue-${ISSUE}-${two}`)
      expect(inDb(db, ['rev-parse', `${second.run.outputs['commit-sha']}^`])).toBe(origin.base)
      expect(await db.branch(`agent/issue-${ISSUE}-${one}`)).toBe(first.run.outputs['commit-sha'])
    } finally {
      await gh.close()
      db.close()
    }
  }, 300_000)
})

describe('where the checkout is not the commit the branch was made from', () => {
  let origin: { dir: string; base: string }
  let db: FakeGitDb
  let gh: FakeGitHub
  beforeAll(async () => {
    origin = makeOrigin()
    db = await createFakeGitDb(origin.dir, { repo: REPO })
    gh = await startFakeGitHub({ permissions: { octocat: 'write' }, routes: db.routes })
  })
  afterAll(async () => {
    await gh.close()
    db.close()
  })
  const fix = (issue: number, runId: number) =>
    runIn({
      gh,
      issue,
      ws: checkout(origin.dir, origin.base),
      runId,
      body: '/agent fix add',
      script: [bash(FIX), text('Fixed.')],
      sandbox: 'none'
    })

  it("the checkout is the branch's commit (the workflow checked the branch out): nothing applied, the commit goes onto the branch", async () => {
    const first = await fix(21, 3401)
    const c1 = first.run.outputs['commit-sha']
    const ws = checkout(origin.dir, origin.base)
    git(ws, ['fetch', '-q', db.dir, c1])
    git(ws, ['checkout', '-q', '--detach', c1])
    const second = await runIn({
      gh,
      issue: 21,
      ws,
      runId: 3402,
      body: '/agent add a test',
      script: [bash('cat src/add.js'), bash(ADD_TEST), text('Added.')],
      sandbox: 'none'
    })
    expect(firstOutput(second.ai)).toContain('return a + b')
    expect(second.report).toContain('The working copy starts from branch `agent/issue-21-3401`')
    expect(second.run.outputs.branch).toBe('agent/issue-21-3401')
    expect(inDb(db, ['rev-parse', `${second.run.outputs['commit-sha']}^`])).toBe(c1)
    expect(inDb(db, ['diff', '--name-status', c1, second.run.outputs['commit-sha']])).toBe('A\tsrc/add.test.js')
  }, 300_000)

  it('main moved on since: the copy starts from the checkout, one line says why, the commit goes to a new branch on the checkout', async () => {
    const first = await fix(22, 3501)
    // another change lands on main; the next event's checkout is that commit
    writeFileSync(join(origin.dir, 'README.md'), '# Hello-World\n\nMore.\n')
    git(origin.dir, ['-c', 'commit.gpgsign=false', 'commit', '-q', '-am', 'More'])
    const moved = git(origin.dir, ['rev-parse', 'HEAD'])
    await db.git(['fetch', '-q', origin.dir, '+refs/heads/main:refs/heads/main'])
    const second = await runIn({
      gh,
      issue: 22,
      ws: checkout(origin.dir, moved),
      runId: 3502,
      body: '/agent add a test',
      script: [bash('cat src/add.js'), bash(ADD_TEST), text('Added.')],
      sandbox: 'none'
    })
    expect(firstOutput(second.ai)).toContain('return a - b')
    const lines = second.report.split('\n').filter(l => l.includes('The working copy starts from'))
    expect(lines).toEqual([
      `ℹ️ The working copy starts from the checked-out commit, not from branch \`agent/issue-22-3501\` where the last run committed: the checked-out commit ${moved.slice(0, 7)} is not ${origin.base.slice(0, 7)}, the one that branch was made from.`
    ])
    expect(second.run.outputs.branch).toBe('agent/issue-22-3502')
    expect(inDb(db, ['rev-parse', `${second.run.outputs['commit-sha']}^`])).toBe(moved)
    expect(await db.branch('agent/issue-22-3501')).toBe(first.run.outputs['commit-sha'])
  }, 300_000)
})

describe('with changes: pull-request', () => {
  it("the second run's commit goes onto the first run's draft pull request; no second pull request is opened", async () => {
    const origin = makeOrigin()
    const db = await createFakeGitDb(origin.dir, { repo: REPO })
    const gh = await startFakeGitHub({ permissions: { octocat: 'write' }, routes: db.routes })
    try {
      const common = { gh, issue: 23, sandbox: 'none', changes: 'pull-request' }
      const first = await runIn({
        ...common,
        ws: checkout(origin.dir, origin.base),
        runId: 3601,
        body: '/agent fix add',
        script: [bash(FIX), text('Fixed.')]
      })
      const pr = first.run.outputs['pull-request-url']
      expect(pr).toMatch(/\/pull\/\d+$/)
      const second = await runIn({
        ...common,
        ws: checkout(origin.dir, origin.base),
        runId: 3602,
        body: '/agent add a test',
        script: [bash(ADD_TEST), text('Added.')]
      })
      expect(second.run.outputs.branch).toBe('agent/issue-23-3601')
      expect(inDb(db, ['rev-parse', `${second.run.outputs['commit-sha']}^`])).toBe(first.run.outputs['commit-sha'])
      expect(second.run.outputs['pull-request-url']).toBe(pr)
      expect(db.created.pulls).toHaveLength(1)
      expect(second.report).toContain("to the pull request's branch [`agent/issue-23-3601`]")
    } finally {
      await gh.close()
      db.close()
    }
  }, 300_000)
})

describe('the branch moved on between the runs', () => {
  it("someone pushed to it: the commit (parent still the first run's) goes to a new branch, and the pushed work is not overwritten", async () => {
    const origin = makeOrigin()
    const db = await createFakeGitDb(origin.dir, { repo: REPO })
    const gh = await startFakeGitHub({ permissions: { octocat: 'write' }, routes: db.routes })
    try {
      const common = { gh, issue: 24, sandbox: 'none' }
      const first = await runIn({
        ...common,
        ws: checkout(origin.dir, origin.base),
        runId: 3701,
        body: '/agent fix add',
        script: [bash(FIX), text('Fixed.')]
      })
      const c1 = first.run.outputs['commit-sha']
      const pushed = inDb(db, ['commit-tree', `${c1}^{tree}`, '-p', c1, '-m', 'a push by hand'])
      await db.git(['update-ref', 'refs/heads/agent/issue-24-3701', pushed])
      const second = await runIn({
        ...common,
        ws: checkout(origin.dir, origin.base),
        runId: 3702,
        body: '/agent add a test',
        script: [bash('cat src/add.js'), bash(ADD_TEST), text('Added.')]
      })
      expect(firstOutput(second.ai)).toContain('return a + b')
      expect(await db.branch('agent/issue-24-3701')).toBe(pushed)
      expect(second.run.outputs.branch).toBe('agent/issue-24-3702')
      expect(inDb(db, ['rev-parse', `${second.run.outputs['commit-sha']}^`])).toBe(c1)
      expect(second.report).toContain('moved on')
    } finally {
      await gh.close()
      db.close()
    }
  }, 300_000)
})
