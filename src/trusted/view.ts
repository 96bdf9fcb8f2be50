// The agent's view of the machine (made last, after the copy) and the network namespace's bridge to the
// run's proxy. Runs as root inside the server's namespaces.
import fs from 'node:fs'
import pathM from 'node:path'
import netM from 'node:net'
import type { ServerConfig } from './protocol'
import { firstLine, run } from './exec'

/** Folders never hidden, whatever the runner's places are. */
const SYSTEM = [
  '/',
  '/usr',
  '/etc',
  '/bin',
  '/sbin',
  '/lib',
  '/lib64',
  '/var',
  '/opt',
  '/home',
  '/tmp',
  '/proc',
  '/sys',
  '/dev',
  '/run',
  '/mnt'
]

/** This mount namespace's mount points and their options, from /proc/self/mountinfo. */
function mountPoints(): Array<{ at: string; opts: string[] }> {
  const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)))
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(l => {
      const f = l.split(' ')
      return { at: unescape(f[4]), opts: f[5].split(',') }
    })
}

/**
 * The agent's view of the machine, made last: every mount read-only (keeping its nosuid/nodev/noexec), but
 * for `keep` (the copy, the run's home and temp, the private /tmp...); then the runner's private places
 * under an empty read-only tmpfs, the tool cache brought back when it was among them. Returns what failed.
 */
export async function readOnlyView(cfg: ServerConfig, keep: string[]): Promise<string[]> {
  const b = cfg.bins
  const problems: string[] = []
  const under = (p: string, d: string) => p === d || p.startsWith(d === '/' ? '/' : d + '/')
  const mounts = mountPoints()
  const runs = pathM.dirname(cfg.runDir as string)
  const hide = [...new Set((cfg.hide ?? []).filter(p => pathM.isAbsolute(p)).map(p => pathM.resolve(p)))]
    .filter(p => !SYSTEM.includes(p) && !under(runs, p) && fs.existsSync(p))
    .filter((p, _, all) => !all.some(q => q !== p && under(p, q)))
  const tools = (cfg.reexpose ?? []).filter(p => pathM.isAbsolute(p) && hide.some(h => under(p, h)) && fs.existsSync(p))
  const held: Array<[string, string]> = []
  for (const [i, p] of tools.entries()) {
    const hold = pathM.join(cfg.runDir as string, `hold-${i}`)
    fs.mkdirSync(hold, { mode: 0o700 })
    if ((await run(b.mount, ['--rbind', p, hold])).code === 0) held.push([p, hold])
  }
  const done = new Set<string>()
  const remounts: Array<[string, string]> = []
  for (const m of mounts) {
    if (done.has(m.at) || under(m.at, '/proc') || keep.some(k => m.at === k)) continue
    done.add(m.at)
    // a bind remount replaces the per-mount flags: say them again
    const flags = m.opts.filter(o => ['nosuid', 'nodev', 'noexec', 'noatime', 'nodiratime', 'relatime', 'strictatime'].includes(o))
    remounts.push([['remount', 'bind', 'ro', ...flags].join(','), m.at])
  }
  for (const [at, why] of await mountEach(b, remounts)) if (fs.existsSync(at)) problems.push(`${at} stays writable (${why})`)
  for (const h of hide) {
    const r = await run(b.mount, ['-t', 'tmpfs', '-o', 'mode=0755,size=1m,nosuid,nodev,noexec', 'tmpfs', h])
    if (r.code !== 0) {
      problems.push(`${h} could not be hidden (${(r.stderr.trim() || `exit ${r.code}`).split('\n')[0]})`)
      continue
    }
    for (const [p, hold] of held) {
      if (!under(p, h)) continue
      fs.mkdirSync(p, { recursive: true, mode: 0o755 })
      await run(b.mount, ['--rbind', hold, p])
      await run(b.mount, ['-o', 'remount,bind,ro', p])
    }
    await run(b.mount, ['-o', 'remount,ro,nosuid,nodev,noexec', h])
  }
  for (const [, hold] of held) await run(b.umount, ['-l', hold])
  return problems
}

/**
 * `mount -o <options> <at>` for each pair, in one bash process rather than one spawn from here per mount (a
 * runner has dozens of mounts; each spawn cost the set-up ~10 ms). The pairs are arguments, never code.
 * Returns where it failed, with the first line of why.
 */
export async function mountEach(b: ServerConfig['bins'], pairs: Array<[string, string]>): Promise<Array<[string, string]>> {
  if (!pairs.length) return []
  const script =
    'm=$1; shift; while [ $# -gt 1 ]; do e=$("$m" -o "$1" "$2" 2>&1) || printf \'%s\\0%s\\0\' "$2" "${e:-exit $?}"; shift 2; done'
  const r = await run(b.bash, ['--norc', '--noprofile', '-c', script, 'bash', b.mount, ...pairs.flat()])
  if (r.code !== 0) return pairs.map(([, at]) => [at, firstLine(r)])
  const out = r.stdout.toString().split('\0')
  const failed: Array<[string, string]> = []
  for (let i = 0; i + 1 < out.length; i += 2) failed.push([out[i], out[i + 1].trim().split('\n')[0] || 'failed'])
  return failed
}

/**
 * In the run's own network namespace (nothing but loopback, and that down): loopback up, and a byte-for-byte
 * bridge from 127.0.0.1:<port> and [::1]:<port> to the proxy's UNIX socket (no parsing here). The proxy runs
 * outside the namespace as the run's uid, never root, so its folder `<runDir>/net` is that uid's, 0700: no other
 * uid can enter it. The agent (same uid) gains nothing there: the socket is the proxy its bridge reaches anyway,
 * and it cannot see the proxy's process (PID namespace). Without `ip` the namespace stays without any network:
 * closed, and said.
 */
export async function netBridge(
  cfg: ServerConfig,
  account: { uid: number; gid: number }
): Promise<{ proxyPort?: number; proxySocket?: string; netProblem?: string }> {
  const dir = pathM.join(cfg.runDir as string, 'net')
  fs.mkdirSync(dir, { mode: 0o700 })
  fs.chownSync(dir, account.uid, account.gid)
  const socket = pathM.join(dir, 'proxy.sock')
  if (!cfg.bins.ip) return { netProblem: 'ip (iproute2) was not found, so the commands had no network at all' }
  const up = await run(cfg.bins.ip, ['link', 'set', 'lo', 'up'])
  if (up.code !== 0)
    return {
      netProblem: `loopback could not be brought up (${(up.stderr.trim() || `exit ${up.code}`).split('\n')[0]}): the commands had no network at all`
    }
  const bridge = (c: import('node:net').Socket): void => {
    const p = netM.connect(socket)
    const end = () => {
      c.destroy()
      p.destroy()
    }
    c.on('error', end)
    p.on('error', end)
    c.on('close', end)
    p.on('close', end)
    c.pipe(p)
    p.pipe(c)
  }
  const listen = (host: string, port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = netM.createServer(bridge)
      s.maxConnections = 1024
      s.once('error', reject)
      s.listen(port, host, () => resolve((s.address() as import('node:net').AddressInfo).port))
    })
  const port = await listen('127.0.0.1', 0)
  await listen('::1', port).catch(() => undefined) // no IPv6 on loopback: 127.0.0.1 only
  return { proxyPort: port, proxySocket: socket }
}
