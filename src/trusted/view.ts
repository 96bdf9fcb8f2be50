// The agent's view: a new root built from what the commands need (SPEC "Sandbox"), then pivot_root into it, so
// nothing else of the host exists for them (nor for the server's later work). Root, in the server's mount
// namespace (private propagation: unshare's default). Fails closed. The order (viewPlan, one pure function):
//  1. the run's one tmpfs (newRoot), nosuid, nodev, 3/4 of the run's memory: all the agent writes is there
//  2. /usr /bin /sbin /lib* /etc (the run's passwd and group laid over it) and the tool cache: bound with what is
//     mounted below them, every one of those mounts read-only, nosuid, nodev; a symlink (merged /usr) as a symlink
//  3. /sys (that mount alone: no cgroup tree) read-only; a fresh /proc of the run's PID namespace
//  4. /dev: null zero full random urandom tty, a devpts of its own; /dev/shm /tmp /var/tmp /run (no host socket)
//     /run/lock as folders of the tmpfs
//  5. bound before, under root-only folders of <runDir>: the workspace, its objects, the proxy's folder, the cgroup
//  6. pivot_root, the old root detached
import fs from 'node:fs'
import pathM from 'node:path'
import netM from 'node:net'
import type { ServerConfig } from './protocol'
import { firstLine, must, run } from './exec'

const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc']
const DEVICES = ['null', 'zero', 'full', 'random', 'urandom', 'tty']
/** The view's own folders and their modes; its links in /dev and their targets (pairs of words). */
const FOLDERS = '/proc 555 /sys 555 /dev 755 /dev/pts 755 /dev/shm 1777 /tmp 1777 /var 755 /var/tmp 1777 /run 755 /run/lock 1777'
const LINKS = 'pts/ptmx /dev/ptmx /proc/self/fd /dev/fd /proc/self/fd/0 /dev/stdin /proc/self/fd/1 /dev/stdout /proc/self/fd/2 /dev/stderr'
const pairs = (words: string): Array<[string, string]> => words.split(' ').flatMap((w, i, all) => (i % 2 ? [] : [[w, all[i + 1]]]))

/** What the plan is made from: the host's facts, read once (hostFacts). */
export interface HostFacts {
  /** each system place and tool folder that exists: a symlink's target, or 'dir' */
  places: Array<[string, string]>
  /** every mount point of the host (mountinfo order) */
  mounts: string[]
  /** the mount points that are noexec */
  noexec: string[]
  /** the devices of DEVICES the host has */
  devices: string[]
}

/** A step: make a folder (mode), a symlink (target), an empty file, or run mount/pivot_root/umount (argv). */
export type Step = { dir: string; mode: number } | { link: string; to: string } | { file: string } | { argv: string[] }

/** The view's steps, in order, for the new root `root` (paths below are the view's). */
export function viewPlan(root: string, facts: HostFacts, bins: Record<string, string>, etc?: string): Step[] {
  const at = (p: string) => pathM.join(root, p)
  const under = (p: string, d: string) => p === d || p.startsWith(d + '/')
  const ro = (m: string) => ['-o', `remount,bind,ro,nosuid,nodev${facts.noexec.includes(m) ? ',noexec' : ''}`, at(m)]
  const steps: Step[] = []
  const mount = (...args: string[]) => steps.push({ argv: [bins.mount, ...args] })
  for (const [p, kind] of facts.places) {
    if (kind !== 'dir') {
      steps.push({ link: kind, to: at(p) })
      continue
    }
    steps.push({ dir: at(p), mode: 0o755 })
    const below = facts.mounts.filter(m => m !== p && under(m, p))
    if (p === '/etc' && etc) {
      // the run's passwd and group over the host's /etc (an overlay reads no mount below it: those are bound one by one)
      mount('-t', 'overlay', '-o', `ro,nosuid,nodev,lowerdir=${etc}:/etc`, 'overlay', at(p))
      for (const m of below) mount('--bind', m, at(m))
    } else mount('--rbind', p, at(p))
    for (const m of [p, ...below]) mount(...ro(m))
  }
  for (const [d, mode] of pairs(FOLDERS)) steps.push({ dir: at(d), mode: parseInt(mode, 8) })
  mount('--bind', '/sys', at('/sys'))
  mount('-o', 'remount,bind,ro,nosuid,nodev,noexec', at('/sys'))
  mount('-t', 'proc', '-o', 'nosuid,nodev,noexec', 'proc', at('/proc'))
  for (const d of facts.devices) {
    steps.push({ file: at(`/dev/${d}`) })
    mount('--bind', `/dev/${d}`, at(`/dev/${d}`))
  }
  mount('-t', 'devpts', '-o', 'newinstance,ptmxmode=0666,mode=0620,nosuid,noexec', 'devpts', at('/dev/pts'))
  for (const [l, to] of pairs(LINKS)) steps.push({ link: l, to: at(to) })
  steps.push({ dir: at('/.old'), mode: 0o700 })
  steps.push({ argv: [bins.pivot_root, root, at('/.old')] }, { argv: [bins.umount, '-l', '/.old'] })
  return steps
}

/** The host's facts for the plan: which system places and `tools` exist (and how), the mount points. */
export function hostFacts(tools: string[]): HostFacts {
  const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)))
  const info = fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .trim()
    .split('\n')
    .map(l => l.split(' '))
  const places: Array<[string, string]> = []
  // a tool folder under a place the view makes empty (a temp folder) is not shown: those start empty
  const empty = (t: string) => ['/tmp', '/var/tmp', '/dev', '/run', '/proc', '/sys'].some(d => t === d || t.startsWith(d + '/'))
  const shown = tools.filter(t => pathM.isAbsolute(t) && fs.existsSync(t)).map(t => fs.realpathSync(t))
  for (const p of [...SYSTEM, ...shown.filter(t => !empty(t))]) {
    const st = fs.lstatSync(p, { throwIfNoEntry: false })
    if (st?.isSymbolicLink()) places.push([p, fs.readlinkSync(p)])
    else if (st?.isDirectory() && !places.some(([q]) => q === p)) places.push([p, 'dir'])
  }
  return {
    places,
    mounts: [...new Set(info.map(f => unescape(f[4])))],
    noexec: info.filter(f => f[5].split(',').includes('noexec')).map(f => unescape(f[4])),
    devices: DEVICES.filter(d => fs.existsSync(`/dev/${d}`))
  }
}

/**
 * The run's one tmpfs, root's alone, at <runDir>/root of the host (the folder, 0711, and its `net` for the
 * proxy's socket stay on the host; nothing else of the run is written there): the new root.
 */
export async function newRoot(cfg: ServerConfig): Promise<string> {
  const runDir = cfg.runDir as string
  fs.mkdirSync(pathM.dirname(runDir), { recursive: true, mode: 0o711 })
  const parent = fs.lstatSync(pathM.dirname(runDir))
  if (!parent.isDirectory() || parent.uid !== 0 || (parent.mode & 0o022) !== 0)
    throw new Error(`${pathM.dirname(runDir)} is not a folder only root can write`)
  fs.mkdirSync(runDir, { mode: 0o711 }) // fails if it exists: never reuse a folder
  const root = pathM.join(runDir, 'root')
  fs.mkdirSync(root, { mode: 0o700 })
  // three quarters of the run's memory: a full tmpfs leaves the commands room to run, and to remove files
  const size = cfg.memory ? `,size=${Math.max(1024, Math.floor((cfg.memory * 3) / 4 / 1024))}k` : ''
  await must("the run's memory", cfg.bins.mount, ['-t', 'tmpfs', '-o', `mode=0755,nosuid,nodev${size}`, 'tmpfs', root])
  // the run's folder in the view: root's, 0711 (the agent enters its copy, home and temp, lists nothing)
  fs.mkdirSync(root + runDir, { recursive: true, mode: 0o711 })
  return root
}

/** The plan carried out in order (the mounts in one bash process: a runner has dozens); the first failure throws. */
export async function enterView(cfg: ServerConfig, root: string, etc?: string): Promise<void> {
  const steps = viewPlan(root, hostFacts(cfg.tools ?? []), cfg.bins, etc)
  const argvs: string[] = []
  for (const s of steps) {
    if ('dir' in s) {
      fs.mkdirSync(s.dir, { recursive: true })
      fs.chmodSync(s.dir, s.mode) // mkdir's mode passes through the umask
    } else if ('link' in s) {
      fs.mkdirSync(pathM.dirname(s.to), { recursive: true })
      fs.symlinkSync(s.link, s.to)
    } else if ('file' in s) fs.writeFileSync(s.file, '', { mode: 0o644 })
    else argvs.push(String(s.argv.length), ...s.argv)
  }
  const script = 'while [ $# -gt 0 ]; do n=$1; shift; e=$("${@:1:n}" 2>&1) || { echo "${*:1:n}: ${e:-failed}"; exit 1; }; shift "$n"; done'
  const r = await run(cfg.bins.bash, ['--norc', '--noprofile', '-c', script, 'bash', ...argvs])
  if (r.code !== 0) throw new Error(`the view could not be made: ${r.stdout.toString().trim().split('\n')[0] || r.stderr.trim()}`)
  fs.rmdirSync('/.old')
  process.chdir('/')
}

/**
 * In the run's network namespace: loopback up, and a byte-for-byte bridge from 127.0.0.1:<port> and [::1]:<port> to
 * the socket of the proxy, which runs outside as the run's uid (never root) in the host's `<runDir>/net` (that uid's,
 * 0700; bound read-only under a root-only folder of the view). Without `ip` the namespace has no network at all: closed, and said.
 */
export async function netBridge(
  cfg: ServerConfig,
  root: string,
  account: { uid: number; gid: number }
): Promise<{ proxyPort?: number; proxySocket?: string; netProblem?: string }> {
  const dir = pathM.join(cfg.runDir as string, 'net')
  if (!cfg.proxyBundle) throw new Error("no proxy bundle: the proxy's files are not known")
  fs.mkdirSync(dir, { mode: 0o700 })
  fs.chownSync(dir, account.uid, account.gid)
  // in the view under a root-only folder: only the bridge connects (a peer's pidfd gives its same-uid descriptors away)
  const seen = pathM.join(cfg.runDir as string, 'proxy', 'net')
  fs.mkdirSync(root + seen, { recursive: true, mode: 0o700 })
  await must('the proxy folder', cfg.bins.mount, ['--bind', dir, root + seen])
  await must('the proxy folder', cfg.bins.mount, ['-o', 'remount,bind,ro,nosuid,nodev,noexec', root + seen])
  // the proxy's node and bundle where the run's uid can reach them (a runner's home may be closed to others):
  // root's folder <runDir>/bin, each file linked (same file system) or copied, never writable by that uid
  const bin = pathM.join(cfg.runDir as string, 'bin')
  fs.mkdirSync(bin, { mode: 0o755 })
  for (const [from, name] of [
    [process.execPath, 'node'],
    [cfg.proxyBundle as string, 'proxy.js']
  ]) {
    try {
      fs.linkSync(from, pathM.join(bin, name))
    } catch {
      fs.copyFileSync(from, pathM.join(bin, name))
    }
  }
  const socket = pathM.join(seen, 'proxy.sock')
  if (!cfg.bins.ip) return { netProblem: 'ip (iproute2) was not found, so the commands had no network at all' }
  const up = await run(cfg.bins.ip, ['link', 'set', 'lo', 'up'])
  if (up.code !== 0) return { netProblem: `loopback could not be brought up (${firstLine(up)}): the commands had no network at all` }
  const bridge = (c: import('node:net').Socket): void => {
    const p = netM.connect(socket)
    const end = () => [c, p].forEach(s => s.destroy())
    for (const s of [c, p]) s.on('error', end).on('close', end)
    c.pipe(p).pipe(c)
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
  return { proxyPort: port, proxySocket: pathM.join(dir, 'proxy.sock') }
}
