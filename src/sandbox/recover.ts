// Putting things right as root after a run: what is left of its namespace, its
// folder and what runs as its uid, from the state the main step saved before each change.
import path from 'node:path'
import { spawn } from 'node:child_process'
import { messageOf } from '../util'
import { asRootArgv, trustedFile, type Privilege } from './privilege'
import { isRunDir } from './copy'
import { RUN_UIDS } from '../trusted/protocol'
import { AGENT_CGROUP } from './memory'

/** What the post step needs: saved before each change it guards. */
export interface SavedState {
  v: 1
  priv: 'root' | 'sudo'
  sudo?: string
  node: string
  /** the root bundle (dist/trusted/index.js), which also recovers */
  server: string
  rm: string
  /** the run's own uid, recorded before the server takes it: what still runs as it is killed */
  uid?: number
  /** the run folder, recorded before it is made */
  runDir?: string
  /** the run's cgroup (the agent's and the server's under it), recorded before it is made */
  cgroup?: string
  /** the PID namespace, once known */
  ns?: string
  /** a random word on the namespace's init's command line: a namespace inode reused by another run is never this run's */
  key: string
}

/** Run the recovery helper as root: kill what is left of namespace `ns`, remove `runDir`, kill what runs as the run's uid. Resolves with its problems. */
export function recoverAsRoot(state: SavedState, maxMs: number): Promise<{ done: boolean; problems: string[] }> {
  const priv: Privilege = state.priv === 'sudo' && state.sudo ? { kind: 'sudo', sudo: state.sudo } : { kind: 'root' }
  // checked again: the files run as root are still ones nobody else could have changed
  const node = trustedFile(state.node)
  const server = trustedFile(state.server)
  if (!node || !server)
    return Promise.resolve({
      done: false,
      problems: [`the recovery helper (${state.node} ${state.server}) is not a trusted file; not run as root`]
    })
  const argv = asRootArgv(priv, [
    node,
    server,
    'recover',
    state.ns ?? '',
    isRunDir(state.runDir) ? state.runDir : '',
    state.rm,
    state.key,
    Number.isInteger(state.uid) && (state.uid as number) >= RUN_UIDS.from && (state.uid as number) < RUN_UIDS.to ? String(state.uid) : '',
    AGENT_CGROUP.test(state.cgroup ?? '') ? (state.cgroup as string) : ''
  ])
  return new Promise(resolve => {
    let out = ''
    let timer: NodeJS.Timeout | undefined
    try {
      // its own session: it goes on (and the post step finishes it) if we must stop waiting
      const c = spawn(argv[0], argv.slice(1), {
        cwd: '/',
        stdio: ['ignore', 'pipe', 'ignore'],
        detached: true,
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' }
      })
      timer = setTimeout(() => {
        c.unref()
        c.stdout?.destroy()
        resolve({
          done: false,
          problems: [`removing the run folder takes longer than ${Math.round(maxMs / 1000)} s; it goes on, and the post step finishes it`]
        })
      }, maxMs)
      c.stdout?.on('data', (d: Buffer) => (out += d.toString()))
      c.on('error', e => resolve({ done: false, problems: [`recovery helper: ${e.message}`] }))
      c.on('close', code => {
        clearTimeout(timer)
        try {
          const r = JSON.parse(out) as { killed: boolean; problems: string[] }
          resolve({ done: code === 0 && r.problems.length === 0, problems: r.problems })
        } catch {
          resolve({ done: false, problems: [`recovery helper failed (exit ${code})`] })
        }
      })
    } catch (e) {
      clearTimeout(timer)
      resolve({ done: false, problems: [`recovery helper: ${messageOf(e)}`] })
    }
  })
}

/**
 * For the post step: finish what the main step's release() did not (it was
 * killed, or ran out of time): kill what is left of the run's namespace and
 * remove its folder. `saved` is the state the main step saved; empty when
 * release() finished. Never throws; true when there was something to do.
 */
export async function recoverSandbox(saved: string, log: (message: string) => void, maxMs = 10 * 60_000): Promise<boolean> {
  let state: SavedState
  try {
    state = JSON.parse(saved) as SavedState
  } catch {
    return false
  }
  if (state?.v !== 1 || !path.isAbsolute(state.node ?? '') || !path.isAbsolute(state.server ?? '') || !path.isAbsolute(state.rm ?? ''))
    return false
  if (state.ns !== undefined && !/^pid:\[\d+\]$/.test(state.ns)) return false
  if (!/^[0-9a-f]{32}$/.test(state.key ?? '')) return false
  const r = await recoverAsRoot(state, maxMs)
  log(`Sandbox: the main step ended before putting everything back; ${r.done ? 'done now' : `problems: ${r.problems.join('; ')}`}.`)
  return true
}
