// The agent's memory, through the built action (dist/) in both privilege kinds: its writable memory-backed
// folders are one tmpfs of at most half the machine's memory, its commands run under a memory limit of their
// own (a cgroup), and a command killed for memory is reported as that, by an action that ends normally.
import { afterAll, describe, expect, test } from '@jest/globals'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { bash, text, type Reply } from './helpers/fake-anthropic'
import { cleanupRuns, type RunOptions } from './helpers/run-action'
import { agent, toolResults } from './helpers/agent-run'
import { AGENT_CGROUP, memoryBytes, planCgroup } from '../src/sandbox/memory'
import { isRoot, sandboxKinds, type Kind } from './helpers/kinds'

const KINDS = sandboxKinds()
if (!KINDS.length) test.skip('the user sandbox needs root or passwordless sudo on Linux', () => undefined)

afterAll(() => cleanupRuns())

/** A memory cgroup the action can make here: v2, or v1's memory hierarchy. */
const hasCgroup =
  spawnSync('test', ['-e', '/sys/fs/cgroup/cgroup.controllers']).status === 0 ||
  spawnSync('test', ['-w', '/sys/fs/cgroup/memory/cgroup.procs']).status === 0

const results = toolResults

const run = (kind: Kind, script: Reply[], inputs: Record<string, string> = {}, extra: Partial<RunOptions> = {}) =>
  agent(script, {
    inputs: { sandbox: 'user', 'blocked-commands': '', 'command-timeout': '60', ...inputs },
    extra: { asUser: kind.asUser, ...extra },
    timeoutMs: 240_000
  })

// The mounts the agent can write (the last mount at a place is the one seen there), with their device and
// size as statfs tells: `<target> <fstype> <maj:min> <bytes>`.
const WRITABLE = `findmnt -rn -o TARGET,FSTYPE,OPTIONS,MAJ:MIN | awk '{t[$1]=$2; o[$1]=$3; d[$1]=$4} END {for (m in t) if (o[m] ~ /^rw/ && m !~ /^\\/proc/) print m, t[m], d[m]}' |
  while read -r m t d; do echo "$m $t $d $(stat -f -c '%b %S' "$m" | awk '{printf "%d", $1 * $2}')"; done`

const V2 = existsSync('/sys/fs/cgroup/cgroup.controllers')

/** A cgroup limited to `mib` MiB for the action itself, as a runner service's or a container's. */
function limitedCgroup(mib: number): string {
  const dir = `/sys/fs/cgroup/${V2 ? '' : 'memory/'}bash-agent-test-${process.pid}-${Math.floor(Math.random() * 1e9)}`
  mkdirSync(dir)
  writeFileSync(`${dir}/${V2 ? 'memory.max' : 'memory.limit_in_bytes'}`, String(mib * 1048576))
  return dir
}

/** The processes of a cgroup (and, v2, of its children) the kernel killed for memory. */
const oomKillsIn = (dir: string) =>
  Number(/^oom_kill (\d+)$/m.exec(readFileSync(`${dir}/${V2 ? 'memory.events' : 'memory.oom_control'}`, 'utf8'))?.[1] ?? NaN)

async function removeCgroup(dir: string): Promise<void> {
  for (let i = 0; i < 100 && existsSync(dir); i++)
    try {
      rmdirSync(dir)
    } catch {
      await new Promise(r => setTimeout(r, 100)) // its last processes are still ending
    }
}

describe.each(KINDS)('bounded ($name)', kind => {
  test("the writable memory-backed folders the agent sees are one tmpfs, of at most half the machine's memory", async () => {
    const places = `for p in /tmp /var/tmp /dev/shm /run/lock "$HOME" "$TMPDIR"; do echo "at $(findmnt -n -o TARGET,FSTYPE -T "$p")"; done`
    const copy = `echo "copy $(stat -f -c '%b %S' . | awk '{printf "%d", $1 * $2}')"`
    const r = await run(kind, [bash(`${places}; ${WRITABLE}; ${copy}`), text('Looked.')])
    expect(r.run.code).toBe(0)
    const lines = results(r)[0].split('\n')
    // every temporary folder and the home are folders of the view's root: the run's one tmpfs
    expect(lines.filter(l => l.startsWith('at ')).map(l => l.split(/\s+/).slice(1).join(' '))).toEqual(Array(6).fill('/ tmpfs'))
    const mounts = lines.filter(l => !/^(copy|at) /.test(l)).map(l => l.split(' '))
    // (a device bound from a /dev that is itself a tmpfs, as in a container, is no folder)
    const tmpfs = mounts.filter(m => m[1] === 'tmpfs' && !m[0].startsWith('/dev/'))
    expect(tmpfs.map(m => m[0])).toEqual(['/'])
    const total = Number(tmpfs[0][3])
    expect(total).toBeLessThanOrEqual(os.totalmem() / 2)
    // the copy's upper layer is on it too (overlay), and nothing else writable is memory-backed
    expect(lines.find(l => l.startsWith('copy '))).toBe(`copy ${total}`)
    // (the agent's cgroup, bound where only root can reach it, so the server can put commands in; the devices)
    const other = mounts.filter(m => !['tmpfs', 'overlay', 'cgroup', 'cgroup2', 'devtmpfs', 'devpts'].includes(m[1]) && m[0] !== 'stat:')
    expect(other).toEqual([])
  }, 300_000)

  ;(hasCgroup ? test : test.skip)(
    'a command past the memory limit is killed and reported as that; filling /tmp fails the write; the action ends normally',
    async () => {
      const r = await run(
        kind,
        [
          bash('head -c 400M /dev/zero | tail | wc -c'),
          bash('dd if=/dev/zero of=/tmp/fill bs=1M count=400 2>&1; rm /tmp/fill; echo still-here'),
          text('Done.')
        ],
        { 'memory-limit': '96' }
      )
      expect(r.run.code).toBe(0)
      expect(r.run.outputs['exit-reason']).toBe('end_turn')
      expect(r.run.stdout).toContain('Sandbox: the commands and their temporary files may use 96 MiB together (the files at most 72 MiB')
      const [oom, fill] = results(r)
      expect(oom).toContain('[killed: out of memory (limit 96 MiB)]')
      expect(fill).toMatch(/No space left on device/)
      expect(fill).toContain('still-here')
      expect(fill).not.toContain('killed: out of memory')
      const body = r.comment.updates[r.comment.updates.length - 1]
      expect(body).toContain('killed: out of memory (limit 96 MiB)')
      expect(body).not.toMatch(/Cancelled/)
      // the cgroup was planned (and saved) before it was made, and is gone after the run
      const cgroup = /"cgroup":"([^"]+)"/.exec(readFileSync(r.run.stateFile, 'utf8'))?.[1] ?? ''
      expect(AGENT_CGROUP.test(cgroup)).toBe(true)
      expect(existsSync(cgroup)).toBe(false)
    },
    300_000
  )

  ;(hasCgroup ? test : test.skip)(
    "a command is marked out of memory only when its own processes were killed, not an earlier command's",
    async () => {
      const r = await run(
        kind,
        [
          // a background hog that waits for the next command, then is killed for memory while that one runs
          bash(
            '(while [ ! -e /tmp/go ]; do sleep 0.1; done; head -c 400M /dev/zero | tail; echo "$?" > /tmp/hog) >/dev/null 2>&1 & echo started'
          ),
          bash('touch /tmp/go; while [ ! -e /tmp/hog ]; do sleep 0.1; done; echo "hog ended $(cat /tmp/hog)"'),
          bash('head -c 400M /dev/zero | tail | wc -c'),
          text('Done.')
        ],
        { 'memory-limit': '96' }
      )
      expect(r.run.code).toBe(0)
      const [first, innocent, hog] = results(r)
      expect(first).toContain('started')
      expect(first).not.toContain('out of memory')
      expect(innocent).toContain('hog ended 137') // SIGKILL, by the kernel, while this command ran
      expect(innocent).not.toContain('out of memory')
      expect(hog).toContain('[killed: out of memory (limit 96 MiB)]')
      // command 1's cgroup outlived it (its background process held it): removed with the run's, children first
      const cgroup = /"cgroup":"([^"]+)"/.exec(readFileSync(r.run.stateFile, 'utf8'))?.[1] ?? ''
      expect(AGENT_CGROUP.test(cgroup) && !existsSync(cgroup)).toBe(true)
    },
    300_000
  )

  ;(hasCgroup && isRoot ? test : test.skip)(
    'the action survives a limited parent cgroup: the agent uses more than the action may, the run ends with its report',
    async () => {
      const parent = limitedCgroup(250)
      try {
        const r = await run(
          kind,
          [bash('head -c 450M /dev/zero | tail | wc -c'), text('Done.')],
          { 'memory-limit': '600' },
          { cgroup: parent }
        )
        expect(r.run.code).toBe(0)
        expect(r.run.outputs['exit-reason']).toBe('end_turn')
        // the command succeeds, or is killed alone; nothing of the action is
        expect(results(r)[0]).toMatch(/^471859200$|killed: out of memory \(limit 600 MiB\)/m)
        expect(r.comment.updates[r.comment.updates.length - 1]).toContain('Done.')
        expect(oomKillsIn(parent)).toBe(0)
      } finally {
        await removeCgroup(parent)
      }
    },
    300_000
  )
})

describe("the run's memory and its cgroup, planned", () => {
  test("at most half the machine's memory; a cgroup path of the run's own form only", () => {
    const half = Math.floor(os.totalmem() / 2 / 1048576) * 1048576
    expect(memoryBytes()).toBe(half)
    expect(memoryBytes(64)).toBe(64 * 1048576)
    expect(memoryBytes(10_000_000)).toBe(half)
    const planned = planCgroup()
    // at the top of the hierarchy, never under the action's own cgroup (whose limit the agent would then kill it by)
    if (hasCgroup) expect(planned).toMatch(/^\/sys\/fs\/cgroup\/(bash-agent|memory)\/bash-agent-[0-9a-f]{32}$/)
    if (planned) expect(AGENT_CGROUP.test(planned)).toBe(true)
    // a random name of its own, never the run folder's (the cgroup tree is world-readable)
    expect(planCgroup()).not.toBe(planned)
    for (const bad of [`/sys/fs/cgroup/../../etc/bash-agent-${'a1'.repeat(16)}`, `/sys/fs/cgroup/x/bash-agent-1`, '/etc/passwd', ''])
      expect(AGENT_CGROUP.test(bad)).toBe(false)
  })
})
