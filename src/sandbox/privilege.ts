// How the action may act as root (it is root, or has passwordless sudo), and
// the programs it runs with privileges: found before the agent runs, never in
// a folder the agent could write.
import { spawn } from 'node:child_process'
import { realpathSync, statSync, type Stats } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { currentUid } from '../util'

export type Privilege = { kind: 'root' } | { kind: 'sudo'; sudo: string } | { kind: 'none'; why: string }

const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']

export function realpathOr(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return path.resolve(p)
  }
}

export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child)
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))
}

/**
 * A program we may run with privileges: found on `envPath` or in the system
 * folders, outside `avoid` (the workspace), and neither it nor its folder
 * writable by anyone but root or us. A `git` planted in a folder on PATH the
 * agent can write is never picked.
 */
export function findProgram(name: string, envPath: string | undefined, avoid?: string): string | undefined {
  for (const dir of [...(envPath ?? '').split(path.delimiter), ...SYSTEM_DIRS]) {
    if (!dir || !path.isAbsolute(dir)) continue
    const real = trustedFile(path.join(dir, name), avoid)
    if (real) return real
  }
  return undefined
}

/**
 * `file`'s real path when neither it nor any folder above it can be changed by anyone but root or us
 * (owned by one of them, not group- or world-writable), and it is not inside `avoid`. A folder of
 * root's with the sticky bit (/tmp) counts as safe above the file: others may add names there, but
 * not remove or rename ours.
 */
export function trustedFile(file: string, avoid?: string): string | undefined {
  const me = currentUid()
  const safe = (st: Stats) => (st.uid === 0 || st.uid === me) && (st.mode & 0o022) === 0
  const sticky = (st: Stats) => st.uid === 0 && (st.mode & 0o1000) !== 0
  try {
    const real = realpathSync(file)
    if (avoid && isInside(real, avoid)) return undefined
    const st = statSync(real)
    if (!st.isFile() || !safe(st)) return undefined
    for (let d = path.dirname(real); ; d = path.dirname(d)) {
      const dir = statSync(d)
      if (!safe(dir) && !(d !== path.dirname(real) && sticky(dir))) return undefined
      if (d === path.dirname(d)) return real
    }
  } catch {
    return undefined
  }
}

/** Whether folder `dir` and every folder above it can be changed by nobody but root or us. */
export function trustedDir(dir: string): boolean {
  const me = currentUid()
  try {
    for (let d = realpathSync(dir); ; d = path.dirname(d)) {
      const st = statSync(d)
      if (!st.isDirectory() || !((st.uid === 0 || st.uid === me) && (st.mode & 0o022) === 0)) return false
      if (d === path.dirname(d)) return true
    }
  } catch {
    return false
  }
}

/**
 * The one bundle that runs as root (src/trusted/: the command server, recovery) beside the
 * running action: dist/trusted/index.js next to dist/index.js (from src/, as in the tests, the built one of
 * this checkout).
 */
export function serverBundle(): string {
  const here = fileURLToPath(import.meta.url)
  const dist = here.endsWith('.ts') ? path.join(path.dirname(here), '..', '..', 'dist') : path.dirname(here)
  return path.join(dist, 'trusted', 'index.js')
}

/** Exit code of a quiet program (null when it could not run or took too long). */
export function status(argv: string[], timeoutMs = 15_000): Promise<number | null> {
  return new Promise(resolve => {
    try {
      const c = spawn(argv[0], argv.slice(1), { stdio: 'ignore', cwd: '/', timeout: timeoutMs })
      c.on('error', () => resolve(null))
      c.on('close', code => resolve(code))
    } catch {
      resolve(null)
    }
  })
}

/** Root, passwordless sudo, or neither (and why). `want` forces a kind (tests, fallback checks). */
export async function findPrivilege(
  envPath: string | undefined,
  workspace: string,
  want: 'auto' | 'sudo' | 'unavailable' = 'auto'
): Promise<Privilege> {
  const none: Privilege = { kind: 'none', why: 'not root and no passwordless sudo' }
  if (want === 'unavailable') return none
  if (process.platform !== 'linux') return { kind: 'none', why: `not Linux (${process.platform}): no PID namespaces` }
  if (want !== 'sudo' && currentUid() === 0) return { kind: 'root' }
  const sudo = findProgram('sudo', envPath, realpathOr(workspace))
  if (!sudo) return none
  return (await status([sudo, '-n', 'true'])) === 0 ? { kind: 'sudo', sudo } : none
}

/** Prefix that runs argv as root. */
export function asRootArgv(priv: Privilege, argv: string[]): string[] {
  return priv.kind === 'sudo' ? [priv.sudo, '-n', '--', ...argv] : argv
}

/** The launcher of a new PID and mount namespace with a private /proc. */
// --ipc: SysV shared memory, queues and semaphores of the run end with it
// --net (network: allowlist): loopback only; the proxy's bridge is the one way out
export const unshareArgs = (unshare: string, net = false): string[] => [
  unshare,
  '--pid',
  '--ipc',
  ...(net ? ['--net'] : []),
  '--fork',
  '--kill-child',
  '--mount' // the server checks the run's uid against the host's /proc, then mounts its own (setup.ts claimIds)
]

/** Whether PID namespaces can be made here (a cheap probe, as root). */
export async function canUnshare(priv: Privilege, unshare: string | undefined, trueBin: string, net = false): Promise<boolean> {
  if (!unshare || priv.kind === 'none') return false
  return (await status(asRootArgv(priv, [...unshareArgs(unshare, net), trueBin]))) === 0
}

/**
 * The bash that starts the command server reads no startup file: with a socket
 * on stdin bash sources ~/.bashrc even when not interactive, and one that
 * prints or fails would break the server's start. --posix: a non-interactive
 * POSIX shell reads no BASH_ENV either (startServer passes none, but still).
 */
export const serverShell = (bash: string): string[] => [
  bash,
  '--norc',
  '--noprofile',
  '--posix',
  '-c',
  CLOSE_INHERITED + '"$@"; exit $?',
  'bash'
]

/**
 * Descriptors beyond stdio that the action inherited without close-on-exec (from the runner, a wrapper; sudo closes
 * them, root does not) would pass to the server and every command: an open folder is a way out of the view
 * (/proc/self/fd/<n>). The server's shell closes them first (the listing's own descriptor is gone by then).
 */
const CLOSE_INHERITED = 'for f in /proc/self/fd/*; do f=${f##*/}; case $f in 0|1|2) ;; *) eval "exec $f>&-" 2>/dev/null;; esac; done; '
