// The sandbox attacked end to end (issue 8): the built action run as the
// runner runs it, a scripted model doing what a prompt-injected one would,
// real bash, real git, real processes, real sudo where the machine has it.
//
// Privilege kinds: the action as this test's own user (root in CI's first
// pass, a non-root user with passwordless sudo in its second, which is the
// hosted-runner kind), and, when this test runs as root and BASH_AGENT_SUDO_USER
// names a user with passwordless sudo (`runner` on a machine shaped like the
// hosted images), the action launched as that user from a copy it owns. Not by
// default: it is the same kind CI's second pass runs, and would double this
// file's time in a newcomer's `npm test`.
//
// Processes are found from outside every namespace by what they run (a unique
// argument) and by heartbeat files they keep writing in a folder the test made
// writable for everyone (not under /tmp: each run has its own /tmp).
import { afterAll, describe, expect, test } from '@jest/globals'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startFakeAnthropic, text, type Reply } from './helpers/fake-anthropic'
import { startFakeGitHub } from './helpers/fake-github'
import { cleanupRuns, runAction, type ActionRun } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'

const isRoot = process.platform === 'linux' && typeof process.getuid === 'function' && process.getuid() === 0
const hasSudo = !isRoot && process.platform === 'linux' && spawnSync('sudo', ['-n', 'true']).status === 0
/** whether this machine gives the user sandbox (root or passwordless sudo, PID namespaces) */
const privileged = isRoot || hasSudo
const API_KEY = 'sk-ant-api03-containTestKey000000000000000000000'
const GH_TOKEN = `ghs_${randomBytes(18).toString('hex')}`
const RUNS_DIR = '/var/lib/bash-agent/runs'

interface Kind {
  name: string
  asUser?: { uid: number; gid: number; name: string }
}

function sudoUser(): Kind['asUser'] {
  const name = process.env.BASH_AGENT_SUDO_USER
  if (!isRoot || !name) return undefined
  // `id` asks NSS, as sudo does (the user may come from elsewhere than /etc/passwd)
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' })
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' })
  if (uid.status !== 0 || gid.status !== 0) return undefined
  if (spawnSync('sudo', ['-n', '-u', name, 'sudo', '-n', 'true'], { stdio: 'ignore' }).status !== 0) return undefined
  // runAction launches a copy of the action the user owns: nothing of this checkout must be open to it
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()), name }
}

const KINDS: Kind[] = [{ name: isRoot ? 'root' : `${os.userInfo().username} with sudo` }]
const su = sudoUser()
if (su) KINDS.push({ name: `${su.name} with passwordless sudo`, asUser: su })
else if (isRoot)
  console.log(
    process.env.BASH_AGENT_SUDO_USER
      ? `contain.test: ${process.env.BASH_AGENT_SUDO_USER} (BASH_AGENT_SUDO_USER) has no passwordless sudo: the action is not launched as that user here`
      : 'contain.test: the action launched as a non-root user with sudo runs in .ci/run (its second pass), or here with BASH_AGENT_SUDO_USER=runner'
  )

/** Run `argv` as root (we are, or through sudo). */
function asRoot(argv: string[]): string {
  return execFileSync(isRoot ? argv[0] : 'sudo', isRoot ? argv.slice(1) : ['-n', ...argv]).toString()
}

const cleanup: string[] = []
afterAll(() => {
  cleanupRuns()
  for (const d of cleanup) {
    try {
      asRoot(['rm', '-rf', '--', d])
    } catch {
      // best effort
    }
  }
})

/** A folder every user may write, outside /tmp (each run has its own /tmp). */
function sharedDir(): string {
  const dir = path.join('/var/lib/bash-agent-test', randomBytes(8).toString('hex'))
  asRoot(['install', '-d', '-m', '1777', dir])
  cleanup.push(dir)
  return dir
}

const gitEnv = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@e',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@e'
}
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: gitEnv }).toString()

/** A workspace as actions/checkout leaves it (persisted token), with what earlier steps added (ignored node_modules), owned by the action's user. */
function workspace(kind: Kind, o: { files?: number } = {}): string {
  const base = mkdtempSync(path.join(os.tmpdir(), 'contain-'))
  cleanup.push(base)
  const ws = path.join(base, 'repo')
  mkdirSync(ws)
  git(ws, 'init', '-q', '-b', 'main')
  writeFileSync(path.join(ws, 'README.md'), '# repo\n')
  writeFileSync(path.join(ws, '.gitignore'), 'node_modules/\n')
  mkdirSync(path.join(ws, 'src'))
  writeFileSync(path.join(ws, 'src', 'a.txt'), 'a\n')
  git(ws, 'add', '-A')
  git(ws, 'commit', '-qm', 'base')
  git(
    ws,
    'config',
    '--local',
    'http.https://github.com/.extraheader',
    `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${GH_TOKEN}`).toString('base64')}`
  )
  mkdirSync(path.join(ws, 'node_modules', 'dep'), { recursive: true })
  writeFileSync(path.join(ws, 'node_modules', 'dep', 'index.js'), 'module.exports = 1\n')
  if (o.files) {
    const many = path.join(ws, 'node_modules', 'many')
    mkdirSync(many)
    execFileSync('bash', [
      '-c',
      `cd "$1" && for d in $(seq ${Math.ceil(o.files / 1000)}); do mkdir $d; (cd $d && seq 1000 | xargs touch); done`,
      'bash',
      many
    ])
  }
  chmodSync(base, 0o700) // closed to others, as a runner's home is
  if (kind.asUser) execFileSync('chown', ['-R', `${kind.asUser.uid}:${kind.asUser.gid}`, base])
  return ws
}

/** Every file under `dir` (no symlinks followed): path -> mode, owner and content hash. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name)
      const st = lstatSync(p)
      const what = st.isSymbolicLink()
        ? `link ${readlinkSync(p)}`
        : st.isDirectory()
          ? 'dir'
          : createHash('sha256').update(readFileSync(p)).digest('hex')
      out[path.relative(dir, p)] = `${st.mode.toString(8)} ${st.uid}:${st.gid} ${what}`
      if (st.isDirectory()) walk(p)
    }
  }
  walk(dir)
  return out
}

/** The run folders on this machine (root-only listing). */
const runDirs = (): string[] => (existsSync(RUNS_DIR) ? asRoot(['ls', '-1', RUNS_DIR]).split('\n').filter(Boolean).sort() : [])
/**
 * The name of the run folder `run` recorded in the state it saved (before making the folder; a
 * finished clean-up later saves an empty value). Tests look for this folder only: other runs (the
 * other test worker's, other checkouts') come and go in RUNS_DIR meanwhile.
 */
function ownRunDir(run: ActionRun): string {
  const runDir = /"runDir":"([^"]*)"/.exec(readFileSync(run.stateFile, 'utf8'))?.[1] ?? ''
  expect(runDir).toMatch(new RegExp(`^${RUNS_DIR}/[0-9a-f]{32}$`))
  return path.basename(runDir)
}

/** Host processes whose command line holds `tag` (found from outside any namespace). */
function processesWith(tag: string): number[] {
  const found: number[] = []
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue
    try {
      const stat = readFileSync(`/proc/${n}/stat`, 'latin1')
      if (/^\S+ \(.*\) [ZX]/.test(stat)) continue
      if (readFileSync(`/proc/${n}/cmdline`, 'latin1').includes(tag)) found.push(Number(n))
    } catch {
      // gone
    }
  }
  return found
}

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms))

interface Ran {
  run: ActionRun
  results: string[]
  finalComment: string
}

/** One run of the action: each command its own turn, then a final text. */
async function agent(
  kind: Kind,
  ws: string,
  commands: string[],
  o: {
    sandbox?: 'user' | 'none'
    script?: Reply[]
    env?: Record<string, string>
    commandTimeout?: string
    onStdout?: Parameters<typeof runAction>[0]['onStdout']
  } = {}
): Promise<Ran> {
  const script: Reply[] = o.script ?? [
    ...commands.map((command, i) => ({
      content: [{ type: 'tool_use' as const, id: `toolu_${i}`, name: 'bash', input: { command } }],
      stop_reason: 'tool_use'
    })),
    text('Done.')
  ]
  const fake = await startFakeAnthropic(script, { apiKey: API_KEY })
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  try {
    const run = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent do it' }),
      workspace: ws,
      githubToken: GH_TOKEN,
      inputs: {
        'anthropic-api-key': API_KEY,
        'anthropic-base-url': fake.url,
        sandbox: o.sandbox ?? 'user',
        'blocked-commands': '',
        'command-timeout': o.commandTimeout ?? '30'
      },
      env: { GITHUB_API_URL: gh.url, ...o.env },
      asUser: kind.asUser,
      onStdout: o.onStdout,
      timeoutMs: 240_000
    })
    const results: string[] = []
    const last = fake.requests[fake.requests.length - 1]
    for (const m of last?.body?.messages ?? []) {
      if (!Array.isArray(m.content)) continue
      for (const b of m.content)
        if (b.type === 'tool_result')
          results.push(typeof b.content === 'string' ? b.content : b.content.map((c: { text?: string }) => c.text ?? '').join(''))
    }
    const comments = [...gh.comments.values()]
    return { run, results, finalComment: comments.length ? comments[comments.length - 1].body : '' }
  } finally {
    await Promise.all([fake.close(), gh.close()])
  }
}

/** The post step, as the runner runs it after the main step, with the state the main step saved. */
function postStep(kind: Kind, ws: string, main: ActionRun): Promise<ActionRun> {
  return runAction({
    eventName: 'issue_comment',
    payload: issueCommentEvent({ body: '/agent do it' }),
    workspace: ws,
    githubToken: GH_TOKEN,
    inputs: { 'anthropic-api-key': API_KEY, sandbox: 'user' },
    env: { GITHUB_API_URL: 'http://127.0.0.1:9' },
    post: true,
    state: main.state,
    asUser: kind.asUser,
    timeoutMs: 240_000
  })
}

/** The four kinds of survivor the issue names, each writing a heartbeat file in `hb` and running `sleep <tag>`. */
function survivors(hb: string, tag: string): string {
  const hop = `printf '#!/bin/sh\\ndate +%%s%%N > "$1/hopper"\\nsleep 0.05\\nsetsid "$0" "$1" "$2" > /dev/null 2>&1 &\\nexit 0\\n' > "$HOME/hop.sh"; chmod +x "$HOME/hop.sh"`
  return [
    // a forker whose PID changes every few milliseconds, started with setsid
    `${hop}; setsid "$HOME/hop.sh" "${hb}" ${tag} > /dev/null 2>&1 &`,
    // a double-forked setsid daemon
    `( setsid sh -c 'while :; do date +%s%N > "$0/daemon"; sleep 0.1; done' "${hb}" ${tag} > /dev/null 2>&1 & ) &`,
    // env -i, every descriptor closed
    `env -i /bin/sh -c 'exec 0<&- 1>&- 2>&- 3>&- 4>&- 5>&-; while :; do /bin/date +%s%N > "$0/envi"; /bin/sleep 0.1; done' "${hb}" ${tag} &`,
    // SIGTERM, SIGHUP and SIGINT ignored
    `sh -c 'trap "" TERM HUP INT; while :; do date +%s%N > "$0/term"; sleep 0.1; done' "${hb}" ${tag} > /dev/null 2>&1 &`,
    `sleep 1; ls "${hb}"`
  ].join('\n')
}

const kinds = privileged ? KINDS : []
if (!privileged) test.skip('the user sandbox needs root or passwordless sudo on Linux', () => undefined)

describe.each(kinds)('contained (action as $name)', kind => {
  test.each(['user', 'none'] as const)(
    'sandbox %s: a PID-hopping forker, a setsid daemon, an env -i process with closed descriptors and a SIGTERM-ignorer are all gone when the step ends',
    async mode => {
      const ws = workspace(kind)
      // the user sandbox's view is read-only outside the agent's own places: there its heartbeats stay in its temp,
      // and its survivors are seen by their tag only
      const hb = mode === 'none' ? sharedDir() : '/tmp'
      const tag = `4${randomBytes(3).readUIntBE(0, 3)}.5`
      const r = await agent(kind, ws, [survivors(hb, tag)], { sandbox: mode })
      expect(r.run.code).toBe(0)
      expect(r.results[0].split('\n').sort()).toEqual(['daemon', 'envi', 'hopper', 'term'])
      if (mode === 'none') {
        // plain local execution (SPEC `sandbox: none`): no namespace, so what left both its process group and its
        // environment (env -i after setsid) cannot be found; the report says the processes could not be verified gone
        expect(r.finalComment).toMatch(/WARNING: [^\n]*could not be verified gone/)
        for (const p of processesWith(tag)) process.kill(p, 'SIGKILL')
        return
      }
      expect(r.finalComment).not.toContain('WARNING')
      await sleep(1500)
      expect(processesWith(tag)).toEqual([])
    },
    300_000
  )

  test("the agent's planted git config, hooks and commit never run in the workspace; .git stays byte-identical; its file edits land", async () => {
    const ws = workspace(kind)
    const hb = sharedDir()
    const before = snapshot(path.join(ws, '.git'))
    const plant = [
      `git config core.fsmonitor "touch ${hb}/fsmonitor; false"`,
      'mkdir -p myhooks',
      `printf '#!/bin/sh\\ntouch ${hb}/hookspath\\n' > myhooks/post-checkout; chmod +x myhooks/post-checkout`,
      'git config core.hooksPath myhooks',
      `git config filter.evil.clean "touch ${hb}/filter; cat"`,
      "echo '* filter=evil' > .gitattributes",
      `printf '[core]\\n\\tfsmonitor = touch ${hb}/include\\n' > "$HOME/inc.cfg"; git config include.path "$HOME/inc.cfg"`,
      `printf '#!/bin/sh\\ntouch ${hb}/hook\\n' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout`,
      'echo edited >> README.md && echo new > added.txt && git rm -q src/a.txt && git add -A && git -c user.name=a -c user.email=a@b commit -qm "agent commit" && echo after-commit > later.txt && echo committed',
      // what its own git ran in its own copy is its business; from here on nothing may run what it planted
      `rm -f ${hb}/*`
    ]
    const r = await agent(kind, ws, [plant.join('\n')])
    expect(r.run.code).toBe(0)
    expect(r.results[0]).toContain('committed')
    // the agent's changes, as plain files
    expect(readFileSync(path.join(ws, 'README.md'), 'utf8')).toBe('# repo\nedited\n')
    expect(readFileSync(path.join(ws, 'added.txt'), 'utf8')).toBe('new\n')
    expect(readFileSync(path.join(ws, 'later.txt'), 'utf8')).toBe('after-commit\n')
    expect(existsSync(path.join(ws, 'src', 'a.txt'))).toBe(false)
    // .git exactly as before: no config, hook, ref or object of the agent's
    expect(snapshot(path.join(ws, '.git'))).toEqual(before)
    // actions/checkout's post step, as its user runs it in the workspace
    const checkoutPost = [
      "git submodule foreach --recursive sh -c \"git config --local --name-only --get-regexp 'http\\.https\\:\\/\\/github\\.com\\/\\.extraheader' && git config --local --unset-all 'http.https://github.com/.extraheader' || :\"",
      "git config --local --name-only --get-regexp 'http\\.https\\:\\/\\/github\\.com\\/\\.extraheader' && git config --local --unset-all 'http.https://github.com/.extraheader' || :",
      'git status --porcelain > /dev/null',
      'git checkout -q -- README.md || :'
    ].join('; ')
    spawnSync('bash', ['-c', checkoutPost], { cwd: ws, env: { PATH: process.env.PATH, HOME: os.homedir() }, ...(kind.asUser ?? {}) })
    expect(readdirSync(hb)).toEqual([])
  }, 300_000)

  test('the workspace, its .git, RUNNER_TEMP and GITHUB_ENV / GITHUB_PATH / GITHUB_OUTPUT / GITHUB_STATE are not writable by the agent; nothing outside its copy is', async () => {
    const ws = workspace(kind)
    const tries = [
      'echo pwned=1 >> "$GITHUB_OUTPUT"',
      'echo pwned=1 >> "$GITHUB_STATE"',
      'echo PWNED=1 >> "$GITHUB_ENV"',
      'echo /pwned >> "$GITHUB_PATH"',
      'echo x > "$RUNNER_TEMP/pwned"',
      `echo x > "${ws}/pwned"`,
      `echo x >> "${ws}/.git/config"`,
      'ls /var/lib/bash-agent/runs'
    ]
    const r = await agent(kind, ws, [
      tries.map(t => `(${t}) 2>/dev/null && echo "WROTE: ${t.replace(/"/g, '')}" || echo refused`).join('\n')
    ])
    expect(r.run.code).toBe(0)
    expect(r.results[0].split('\n')).toEqual(tries.map(() => 'refused'))
    expect(r.run.outputs.pwned).toBeUndefined()
    expect(r.run.state.pwned).toBeUndefined()
    expect(r.run.exportedEnv.PWNED).toBeUndefined()
    expect(r.run.addedPath).not.toContain('/pwned')
    expect(existsSync(path.join(ws, 'pwned'))).toBe(false)
    expect(readFileSync(path.join(ws, '.git', 'config'), 'utf8')).not.toContain('\nx\n')
  }, 300_000)

  test("the copy holds no credential, the earlier steps' ignored files and the commit checked out; ps shows only the run", async () => {
    const ws = workspace(kind)
    // nested checkouts two and three folders deep, each with a persisted token
    const nestedToken = `ghp_${randomBytes(18).toString('hex')}`
    for (const sub of ['deps/lib', 'vendor/a/b']) {
      const d = path.join(ws, sub)
      mkdirSync(d, { recursive: true })
      git(d, 'init', '-q', '-b', 'main')
      writeFileSync(path.join(d, 'lib.txt'), 'lib\n')
      git(d, 'add', '-A')
      git(d, 'commit', '-qm', 'lib')
      git(
        d,
        'config',
        '--local',
        'http.https://github.com/.extraheader',
        `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${nestedToken}`).toString('base64')}`
      )
      git(d, 'config', '--local', 'remote.origin.url', `https://x-access-token:${nestedToken}@github.com/o/lib`)
      git(d, 'config', '--local', 'includeIf.gitdir:/x/.path', '/x/git-credentials-1.config')
    }
    if (kind.asUser) execFileSync('chown', ['-R', `${kind.asUser.uid}:${kind.asUser.gid}`, ws])
    const forms = [nestedToken, Buffer.from(`x-access-token:${nestedToken}`).toString('base64'), 'AUTHORIZATION', 'git-credentials']
    const r = await agent(kind, ws, [
      `for f in ${forms.map(f => `'${f}'`).join(' ')}; do grep -r -l -a -i -F -- "$f" . 2>/dev/null; done | wc -l; git -C deps/lib remote get-url origin; git -C vendor/a/b config --list | grep -c -i extraheader`,
      'cat .git/config; git log --oneline | wc -l; cat node_modules/dep/index.js; grep -r -l -a "AUTHORIZATION\\|x-access-token" . 2>/dev/null | wc -l; test -w . && echo writable',
      'ps -e -o user=,comm= | sort -u'
    ])
    expect(r.finalComment).toContain('sandbox: user')
    expect(r.results[0]).toBe('0\nhttps://github.com/o/lib\n0\n[exit code 1]')
    expect(r.results[1]).not.toMatch(/extraheader|AUTHORIZATION/i)
    expect(r.results[1]).toContain('module.exports = 1')
    expect(r.results[1]).toMatch(/^1$/m) // one commit, no grep hit below it is 0
    expect(r.results[1]).toMatch(/^0$/m)
    expect(r.results[1]).toContain('writable')
    // the namespace's init and server (root), and the sandbox user's command: nothing of the runner's
    for (const line of r.results[2].split('\n')) expect(line).toMatch(/^(root|bash-ag\S*)\s/)
  }, 300_000)

  test('symlinks in the workspace at set-up, swapped in during set-up, or planted by the agent before release never make the action touch anything outside the copy', async () => {
    const ws = workspace(kind, { files: 5000 })
    const victims = path.join(sharedDir(), 'victims')
    mkdirSync(victims)
    writeFileSync(path.join(victims, 'file'), 'victim\n', { mode: 0o644 })
    mkdirSync(path.join(victims, 'dir'))
    writeFileSync(path.join(victims, 'dir', 'inner'), 'inner\n', { mode: 0o644 })
    chmodSync(victims, 0o755)
    symlinkSync(path.join(victims, 'file'), path.join(ws, 'link-file'))
    symlinkSync(path.join(victims, 'dir'), path.join(ws, 'link-dir'))
    if (kind.asUser)
      execFileSync('chown', ['-h', `${kind.asUser.uid}:${kind.asUser.gid}`, path.join(ws, 'link-file'), path.join(ws, 'link-dir')])
    const before = snapshot(victims)
    // a swapper flipping a folder of the workspace to a symlink and back while the action sets up (until the first command)
    const stop = path.join(sharedDir(), 'set-up-done')
    const swapper = spawn(
      'bash',
      [
        '-c',
        `cd "$1"; for i in $(seq 4000); do [ -e "$3" ] && break; rm -rf swap; mkdir swap; touch swap/f; rm -rf swap; ln -s "$2" swap; done; rm -rf swap`,
        'bash',
        ws,
        path.join(victims, 'dir'),
        stop
      ],
      { stdio: 'ignore', ...(kind.asUser ?? {}) }
    )
    const r = await agent(kind, ws, [
      `touch ${stop}; sleep 0.2; echo x >> link-file; echo x > link-dir/inner; chmod 777 link-dir 2>&1; echo tried`,
      `rm -rf src; ln -s "${victims}/dir" src; ln -sfn "${victims}/file" README.md; ln -s / root-link; echo planted`
    ])
    swapper.kill('SIGKILL')
    expect(r.run.code).toBe(0)
    expect(r.finalComment).toContain('sandbox: user')
    expect(r.results[1]).toContain('planted')
    expect(snapshot(victims)).toEqual(before)
    // a symlink leaving the repository is held back: never applied, never written through
    expect(lstatSync(path.join(ws, 'README.md')).isSymbolicLink()).toBe(false)
    expect(readFileSync(path.join(victims, 'file'), 'utf8')).toBe('victim\n')
  }, 300_000)

  test('a cancel during set-up leaves the machine as it was after the post step', async () => {
    const ws = workspace(kind, { files: 30_000 })
    let child: { pid?: number } | undefined
    const script: Reply[] = [
      () => {
        if (child?.pid) process.kill(child.pid, 'SIGINT')
        return { hang: true }
      }
    ]
    const r = await agent(kind, ws, [], { script, onStdout: (_c, c) => (child ??= c) })
    expect(r.run.outputs['exit-reason']).toBe('cancelled')
    const post = await postStep(kind, ws, r.run)
    expect(post.code).toBe(0)
    expect(runDirs()).not.toContain(ownRunDir(r.run))
    const state = JSON.parse(r.run.state.sandbox || '{}') as { ns?: string }
    if (state.ns && isRoot) expect(nsMembers(state.ns)).toEqual([])
  }, 300_000)

  test('a cancel while the copy holds 200,000 new files leaves the machine as it was after the post step', async () => {
    const ws = workspace(kind)
    let child: { pid?: number } | undefined
    const script: Reply[] = [
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_1',
            name: 'bash',
            input: {
              command: 'mkdir many && cd many && for d in $(seq 100); do mkdir $d; (cd $d && seq 2000 | xargs touch); done; echo made'
            }
          }
        ],
        stop_reason: 'tool_use'
      },
      () => {
        // the runner's cancel arrives while the next command runs
        setTimeout(() => child?.pid && process.kill(child.pid, 'SIGINT'), 1000)
        return { content: [{ type: 'tool_use', id: 'toolu_2', name: 'bash', input: { command: 'sleep 60' } }], stop_reason: 'tool_use' }
      },
      { hang: true }
    ]
    const r = await agent(kind, ws, [], { script, onStdout: (_chunk, c) => (child ??= c), commandTimeout: '240' })
    expect(r.results[0]).toBe('made')
    expect(r.run.outputs['exit-reason']).toBe('cancelled')
    const post = await postStep(kind, ws, r.run)
    expect(post.code).toBe(0)
    expect(runDirs()).not.toContain(ownRunDir(r.run))
  }, 300_000)

  test('two runs at once, sharing the sandbox user, both finish with their commands intact; neither can reach the other', async () => {
    const [ws1, ws2] = [workspace(kind), workspace(kind)]
    const [a, b] = await Promise.all([
      agent(kind, ws1, ['sleep 4; echo first-intact']),
      agent(kind, ws2, ['ls /var/lib/bash-agent/runs 2>&1 | head -1; sleep 1; pkill -9 -u "$(id -un)"; kill -9 -1'])
    ])
    expect(a.run.code).toBe(0)
    if (a.results[0] !== 'first-intact') console.log(a.run.stdout, b.run.stdout)
    expect(a.results[0]).toBe('first-intact')
    expect(b.results[0]).toMatch(/Permission denied/)
  }, 300_000)
})

function nsMembers(ns: string): number[] {
  return readdirSync('/proc')
    .filter(n => {
      try {
        return /^\d+$/.test(n) && readlinkSync(`/proc/${n}/ns/pid`) === ns
      } catch {
        return false
      }
    })
    .map(Number)
}
