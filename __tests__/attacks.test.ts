// Attacks on the machine the agent shares, through the built action (dist/, sandbox: user) in both privilege
// kinds: programs planted in world-writable folders (on PATH, off PATH, beside the node that runs the action)
// never run outside the sandbox and the folders stay as they were after the main and the post step; a fork
// bomb in one run leaves another run at the same time to finish normally.
import { afterAll, describe, expect, test } from '@jest/globals'
import { copyFileSync, existsSync, readdirSync, readFileSync, chmodSync, mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import path from 'node:path'
import { bash, text, type Reply } from './helpers/fake-anthropic'
import { cleanupRuns, runAction, type ActionRun } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { agent, KEY, ISSUE, toolResults } from './helpers/agent-run'
import { isRoot, sandboxKinds, type Kind } from './helpers/kinds'
import { git } from './helpers/git'

const KINDS = sandboxKinds()
if (!KINDS.length) test.skip('the user sandbox needs root or passwordless sudo on Linux', () => undefined)

const asRoot = (argv: string[]) => execFileSync(isRoot ? argv[0] : 'sudo', isRoot ? argv.slice(1) : ['-n', ...argv])
const made: string[] = []
afterAll(() => {
  cleanupRuns()
  for (const d of made) asRoot(['rm', '-rf', '--', d])
})

/** A folder on the root file system (each run has its own /tmp) with `mode`, made by root. */
function hostDir(mode: number): string {
  const d = `/var/lib/bash-agent-test/${randomBytes(8).toString('hex')}`
  asRoot(['install', '-d', '-m', mode.toString(8), d])
  made.push(d)
  return d
}

/** Names, modes and content hashes of a folder's files. */
const snapshot = (d: string) =>
  readdirSync(d)
    .sort()
    .map(
      n =>
        `${n} ${createHash('sha256')
          .update(readFileSync(path.join(d, n)))
          .digest('hex')}`
    )

const results = toolResults

/** The programs the action runs with privileges, and those it might run by name. */
const PROGRAMS = [
  'git',
  'node',
  'tar',
  'sh',
  'bash',
  'cp',
  'chown',
  'mount',
  'umount',
  'prlimit',
  'rm',
  'true',
  'unshare',
  'mknod',
  'ip',
  'sudo',
  'mktemp',
  'mkdir'
]

/** The post step with the state the main step saved. */
const post = (kind: Kind, main: ActionRun, node?: string) =>
  runAction({
    eventName: 'issue_comment',
    payload: issueCommentEvent({ body: '/agent do the thing', issueNumber: ISSUE }),
    workspace: main.workspace,
    inputs: { 'anthropic-api-key': KEY, sandbox: 'user' },
    env: { GITHUB_API_URL: 'http://127.0.0.1:9', PATH: main.env.PATH },
    post: true,
    state: main.state,
    asUser: kind.asUser,
    node,
    timeoutMs: 240_000
  })

describe.each(KINDS)('planted programs ($name)', kind => {
  test('0777 folders on and off PATH: what was planted there never runs outside the sandbox; what the agent plants never lands', async () => {
    const onPath = hostDir(0o777)
    const offPath = hostDir(0o777)
    const marks = hostDir(0o1777)
    // planted before the run (an earlier step, another run): each records who ran it, then does the real thing
    for (const p of PROGRAMS) {
      const f = path.join(onPath, p)
      asRoot([
        'sh',
        '-c',
        `printf '#!/bin/sh\\necho "$(id -u) $0" >> ${marks}/ran 2>/dev/null\\nPATH=/usr/bin:/bin exec ${p} "$@"\\n' > ${f}; chmod 755 ${f}`
      ])
    }
    asRoot(['cp', '-a', path.join(onPath, 'node'), path.join(offPath, 'node')])
    const before = [snapshot(onPath), snapshot(offPath)]
    const env = { PATH: `${onPath}:${process.env.PATH}` }
    const plant = `for d in ${onPath} ${offPath}; do for f in git node tar sh file; do (printf '#!/bin/sh\\necho planted\\n' > $d/$f) 2>&1; done; done; git --version; echo tried`
    const r = await agent([bash(plant), text('Planted.')], {
      inputs: { sandbox: 'user', 'blocked-commands': '' },
      env,
      extra: { asUser: kind.asUser },
      timeoutMs: 240_000
    })
    expect(r.run.code).toBe(0)
    expect(r.comment.updates[r.comment.updates.length - 1]).toContain('sandbox: user')
    const [out] = results(r)
    for (const d of [onPath, offPath])
      for (const f of ['git', 'node', 'tar', 'sh', 'file']) expect(out).toContain(`${d}/${f}: No such file or directory`)
    expect(out).toMatch(/git version/) // the host's folders are not in the view: the system's git
    await post(kind, r.run)
    expect([snapshot(onPath), snapshot(offPath)]).toEqual(before)
    // nothing planted ran outside the sandbox (inside, its record could not be written: all is read-only there)
    expect(readdirSync(marks)).toEqual([])
  }, 400_000)

  test("a workspace folder an earlier step put on PATH: the agent's bin/git is held back and never run", async () => {
    const marks = hostDir(0o1777)
    const ws = mkdtempSync(path.join(os.tmpdir(), 'attacks-ws-'))
    made.push(ws)
    const g = (...args: string[]) => git(ws, args)
    g('init', '-q', '-b', 'main')
    writeFileSync(path.join(ws, 'README.md'), '# repo\n')
    g('add', '-A')
    g('commit', '-qm', 'base')
    if (kind.asUser) asRoot(['chown', '-R', `${kind.asUser.uid}:${kind.asUser.gid}`, ws])
    // `echo "$PWD/bin" >> $GITHUB_PATH` in an earlier step: the workspace's bin/ is first on PATH
    const env = { PATH: `${ws}/bin:${process.env.PATH}` }
    const plant = `mkdir -p bin && printf '#!/bin/sh\\necho "$(id -u) $0" >> ${marks}/ran\\nexec /usr/bin/git "$@"\\n' > bin/git && chmod 755 bin/git && echo planted`
    const r = await agent([bash(plant), text('Planted.')], {
      inputs: { sandbox: 'user', 'blocked-commands': '' },
      env,
      extra: { asUser: kind.asUser, workspace: ws },
      timeoutMs: 240_000
    })
    expect(r.run.code).toBe(0)
    expect(results(r)[0]).toBe('planted')
    // held back: a file landing in a workspace folder on the job's PATH never reaches the workspace (SPEC "Checked")
    expect(existsSync(path.join(ws, 'bin', 'git'))).toBe(false)
    await post(kind, r.run)
    expect(readdirSync(marks)).toEqual([])
  }, 400_000)

  test('the node that runs the action in a folder others can write: it is never run as root; the action stops before any command', async () => {
    const open = hostDir(0o777)
    const node = path.join(open, 'node')
    copyFileSync(process.execPath, node)
    chmodSync(node, 0o755)
    const r = await agent([bash('echo ran-$(id -u)'), text('Done.')], {
      inputs: { sandbox: 'user', 'blocked-commands': '' },
      extra: { asUser: kind.asUser, node },
      timeoutMs: 240_000
    })
    expect(r.run.stdout).toContain(`the node running the action (${node}) is in a folder others can change; it is not run as root`)
    expect(results(r).join('\n')).not.toMatch(/ran-/)
    await post(kind, r.run, node)
  }, 400_000)
})

describe.each(KINDS)('a fork bomb in one run ($name)', kind => {
  test('another run at the same time finishes normally: the process limit is per run', async () => {
    const tag = `600.${randomBytes(3).readUIntBE(0, 3)}`
    const sleepers = () => {
      let n = 0
      for (const p of readdirSync('/proc')) {
        if (!/^\d+$/.test(p)) continue
        try {
          if (readFileSync(`/proc/${p}/cmdline`, 'latin1').includes(tag)) n++
        } catch {
          // gone
        }
      }
      return n
    }
    // B asks for its command only once A's bomb has filled A's process limit
    const full = new Promise<void>(resolve => {
      const poll = setInterval(() => {
        if (sleepers() >= 250) {
          clearInterval(poll)
          resolve()
        }
      }, 200)
    })
    // both at a process limit of 300 (forks are slow on a loaded machine; the run's own 4096 works the same way):
    // were the limit shared by the runs, B could not fork once A's bomb holds 300 processes
    // A holds its bomb until B is done: the test ends A's `hold` sleep then (no fixed wait)
    const hold = `900.${randomBytes(3).readUIntBE(0, 3)}`
    // the bomb is a POSIX sh loop: dash gives up at the first fork the limit refuses, its sleeps keep the
    // processes held; bash would retry each refused fork for 15 s (1 + 2 + 4 + 8) before giving up
    const a = agent(
      [
        bash(`ulimit -u 300; sleep ${hold} & hold=$!; sh -c 'while :; do sleep ${tag} & done' 2>/dev/null; wait $hold; echo held`),
        text('Bombed.')
      ],
      {
        inputs: { sandbox: 'user', 'blocked-commands': '', 'command-timeout': '240' },
        extra: { asUser: kind.asUser },
        timeoutMs: 300_000
      }
    )
    const b = agent(
      [
        async () => {
          await full
          return bash('ulimit -u 300; for i in $(seq 50); do /bin/true || echo failed; done; echo "fine $(id -un)"')
        },
        text('Fine.')
      ] as Reply[],
      { inputs: { sandbox: 'user', 'blocked-commands': '' }, extra: { asUser: kind.asUser }, timeoutMs: 300_000 }
    )
    const rb = await b
    spawnSync(isRoot ? 'pkill' : 'sudo', [...(isRoot ? [] : ['-n', 'pkill']), '-f', `^sleep ${hold}$`])
    const ra = await a
    expect(rb.run.code).toBe(0)
    expect(results(rb)[0]).toMatch(/^fine bash-agent-[0-9a-f]{8}$/)
    expect(ra.run.code).toBe(0)
    // A's bomb held its processes until B's command had run
    expect(results(ra)[0]).toBe('held')
    expect(sleepers()).toBe(0)
  }, 400_000)
})
