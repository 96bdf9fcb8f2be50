// Recovery, as root (dist/trusted/index.js recover ...): the main step's release, or the post step's.
import fs from 'node:fs'
import cp from 'node:child_process'
import { cmdlineHas, nsMembers, signal, withUid } from './proc'
import { RUN_UIDS } from './protocol'

/** A short wait: this helper has nothing else to do. */
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** SIGKILL what `find` lists until it lists nobody (at most 100 rounds); what is left. */
function killUntilGone(find: () => number[]): number[] {
  let left = find()
  for (let round = 0; round < 100 && left.length; round++) {
    for (const p of left) signal(p)
    sleep(20)
    left = find()
  }
  return left
}

/**
 * Kill every process of the PID namespace `ns` until none is left, remove the run folder `dir` and the `cgroup`,
 * kill what still runs as the run's `uid` (the proxy, when the main step died). Says what it did as one JSON line.
 */
export function recoverRun(args: string[]): void {
  const [ns, dir, rm, key, uid, cgroup] = args
  const problems: string[] = []
  // namespace inodes are reused: only a namespace whose init carries this run's key is this run's
  const members = (): number[] => {
    const pids = ns ? nsMembers(ns) : []
    return key && pids.some(p => cmdlineHas(p, key)) ? pids : []
  }
  const left = killUntilGone(members)
  if (left.length) problems.push(`${left.length} processes of the run are still alive`)
  if (dir) {
    const r = cp.spawnSync(rm, ['-rf', '--one-file-system', '--', dir], { stdio: ['ignore', 'ignore', 'pipe'] })
    if (r.status !== 0) problems.push(`could not remove ${dir}: ${String(r.stderr).split('\n')[0]}`)
  }
  if (cgroup && !left.length) problems.push(...removeCgroup(cgroup))
  // only a uid runs pick (never root's, nor a user's)
  const mine = /^\d+$/.test(uid ?? '') && Number(uid) >= RUN_UIDS.from ? killUntilGone(() => withUid(Number(uid))) : []
  if (mine.length) problems.push(`${mine.length} processes of uid ${uid} are still alive`)
  process.stdout.write(JSON.stringify({ killed: left.length === 0, problems }))
}

/** The run's cgroup, children first: empty once the namespace is gone (a process still dying makes one busy a moment). */
function removeCgroup(cgroup: string): string[] {
  for (const e of fs.existsSync(cgroup) ? fs.readdirSync(cgroup, { withFileTypes: true }) : [])
    if (e.isDirectory()) removeCgroup(`${cgroup}/${e.name}`)
  for (let i = 0; i < 50 && fs.existsSync(cgroup); i++) {
    try {
      fs.rmdirSync(cgroup)
    } catch {
      sleep(40)
    }
  }
  return fs.existsSync(cgroup) ? [`could not remove the cgroup ${cgroup}`] : []
}
