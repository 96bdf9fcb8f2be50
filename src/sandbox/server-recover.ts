// The recovery helper, run as root (dist/server/index.js recover ...) by the
// main step's release and by the post step when the main step could not finish.
import fs from 'node:fs'
import cp from 'node:child_process'

/**
 * Recovery, for the post step (also run as root): kill every process of the
 * PID namespace `ns` (found by /proc/PID/ns/pid), until none is left, then
 * remove the run folder `dir`, then the run's own `user` (and what still runs
 * as it) with `userdel`. Says what it did as one JSON line on stdout.
 */
export function recoverRun(args: string[]): void {
  const [ns, dir, rm, key, user, userdel] = args
  const problems: string[] = []
  const inNs = (): number[] =>
    fs
      .readdirSync('/proc')
      .filter(n => {
        if (!/^\d+$/.test(n) || !ns) return false
        try {
          return fs.readlinkSync(`/proc/${n}/ns/pid`) === ns
        } catch {
          return false
        }
      })
      .map(Number)
  // namespace inodes are reused: only a namespace whose init carries this run's key is this run's
  const ours = (pids: number[]): boolean =>
    !!key &&
    pids.some(p => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'latin1').split('\0').includes(key)
      } catch {
        return false
      }
    })
  const members = (): number[] => {
    const pids = inNs()
    return ours(pids) ? pids : []
  }
  let left = members()
  for (let round = 0; round < 100 && left.length; round++) {
    for (const p of left) {
      try {
        process.kill(p, 'SIGKILL')
      } catch {
        // gone
      }
    }
    const until = Date.now() + 20
    while (Date.now() < until) {
      // a short busy wait: this helper has nothing else to do
    }
    left = members()
  }
  if (left.length) problems.push(`${left.length} processes of the run are still alive`)
  if (dir) {
    const r = cp.spawnSync(rm, ['-rf', '--one-file-system', '--', dir], { stdio: ['ignore', 'ignore', 'pipe'] })
    if (r.status !== 0) problems.push(`could not remove ${dir}: ${String(r.stderr).split('\n')[0]}`)
  }
  if (user && userdel && !left.length) {
    const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
    let uid = -1
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':')
      if (f[0] === user && f.length >= 7) uid = Number(f[2])
    }
    // the user is this run's alone: whatever still runs as it (the proxy, when the main step died) is this run's
    const asUser = (): number[] =>
      fs
        .readdirSync('/proc')
        .filter(n => {
          if (!/^\d+$/.test(n)) return false
          try {
            const m = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(fs.readFileSync(`/proc/${n}/status`, 'latin1'))
            return !!m && m.slice(1).some(u => Number(u) === uid)
          } catch {
            return false
          }
        })
        .map(Number)
    let mine = uid > 0 ? asUser() : []
    for (let round = 0; round < 100 && mine.length; round++) {
      for (const p of mine) {
        try {
          process.kill(p, 'SIGKILL')
        } catch {
          // gone
        }
      }
      sleep(20)
      mine = asUser()
    }
    if (mine.length) problems.push(`${mine.length} processes of the user ${user} are still alive; it is not removed`)
    else if (uid > 0) {
      // its group goes with it (useradd --user-group made it); another run may hold the passwd lock: retried
      let r = cp.spawnSync(userdel, ['--', user], { stdio: ['ignore', 'ignore', 'pipe'] })
      for (let i = 0; i < 10 && r.status !== 0 && r.status !== 6; i++) {
        sleep(100 + i * 100)
        r = cp.spawnSync(userdel, ['--', user], { stdio: ['ignore', 'ignore', 'pipe'] })
      }
      if (r.status !== 0 && r.status !== 6)
        problems.push(`could not remove the user ${user}: ${String(r.stderr).split('\n')[0] || `exit ${r.status}`}`)
    }
  }
  process.stdout.write(JSON.stringify({ killed: left.length === 0, problems }))
}
