// Commands run by the run's command server (src/sandbox/): as the sandbox
// user in its own copy (user mode) or as the runner user in the workspace
// (none), in the server's namespaces. Stopping kills the whole namespace and
// verifies it; releasing ends the server, the proxy, and removes the copy.
import { existsSync } from 'node:fs'
import { runBash } from '../tools/bash'
import type { CommandRecord } from '../types'
import type { ServerClient } from '../sandbox/client'
import type { ExecResult } from '../trusted/protocol'
import type { Privilege } from '../sandbox/privilege'
import { nsMembers } from '../trusted/proc'
import { recoverAsRoot, type SavedState } from '../sandbox/recover'
import { outOfMemory } from '../sandbox/memory'
import type { NetworkReport, ProxyProcess } from '../network/launch'
import type { SandboxMode } from '../settings'
import type { CommandOptions, Environment, StopResult } from './types'
import { sleep } from '../util'

/** How long a run's killed processes get to finish exiting before they are reported alive. */
const GONE_GRACE_MS = 2000
const GONE_POLL_MS = 50

export interface Sandbox extends Environment {
  /** in force (user may fall back to none) */
  mode: SandboxMode
  /** what the report footer says about it */
  note: string
  /** where commands run: the copy (user) or the workspace (none) */
  workdir: string
  /** commit checked out in the workspace at start */
  baseSha: string | undefined
  /** the copy's state at start as a git tree (user mode), to compute the agent's changes against */
  startTree?: string
  /** where that tree's objects are: stores the agent cannot write (GIT_ALTERNATE_OBJECT_DIRECTORIES) */
  startObjects?: string
  /** the overlay's upper layer (user mode, an overlay copy): what the agent wrote, listed by `listUpper` */
  upper?: string
  /** the upper layer's entries, listed as root (src/trusted/upper.ts); absent without one */
  listUpper?(): Promise<ExecResult>
  /** the commands' environment */
  env: Record<string, string>
  /** workspace files left out of the copy because they hold a secret the action knows (user mode), with why */
  withheld?: { path: string; why: string }[]
  /** one program as the sandbox user inside the containment (or, `asRoot`, as root there: to read `upper`), no shell */
  exec(
    file: string,
    args: string[],
    opts?: { cwd?: string; input?: Buffer; env?: Record<string, string>; asRoot?: boolean }
  ): Promise<ExecResult>
  /** what the report says about the network (counts so far) */
  network(): NetworkReport
}

export type SandboxedOptions = Pick<
  Sandbox,
  'mode' | 'note' | 'workdir' | 'baseSha' | 'startTree' | 'startObjects' | 'upper' | 'env' | 'withheld'
> & {
  server: ServerClient
  /** what the post step needs to put things right (when there is something) */
  state?: SavedState
  save: (v: string) => void
  namespaced: boolean
  priv: Privilege
  /** puts back what none mode took out of the workspace's git configs */
  restore?: () => Promise<string[]>
  /** the running proxy, or what the report says without one */
  proxy?: ProxyProcess | NetworkReport
}

/** Its methods are bound: callers hand `exec` and `run` on as functions. */
export class SandboxedEnvironment implements Sandbox {
  readonly mode: SandboxMode
  readonly note: string
  readonly workdir: string
  readonly baseSha: string | undefined
  readonly startTree?: string
  readonly startObjects?: string
  readonly upper?: string
  readonly env: Record<string, string>
  readonly withheld?: { path: string; why: string }[]
  private readonly server: ServerClient
  private readonly proxy: ProxyProcess | undefined
  private readonly fixedNetwork: NetworkReport
  private stopped: Promise<StopResult> | undefined
  private released: Promise<string[]> | undefined

  constructor(private readonly o: SandboxedOptions) {
    this.mode = o.mode
    this.note = o.note
    this.workdir = o.workdir
    this.baseSha = o.baseSha
    this.env = o.env
    this.server = o.server
    this.startTree = o.startTree
    this.startObjects = o.startObjects
    this.upper = o.upper
    if (o.upper) this.listUpper = () => this.server.listUpper()
    this.withheld = o.withheld
    this.proxy = o.proxy && 'stop' in o.proxy ? o.proxy : undefined
    this.fixedNetwork = o.proxy && !('stop' in o.proxy) ? o.proxy : { contained: false, why: 'network: open' }
  }

  readonly run = async (command: string, opts: CommandOptions): Promise<CommandRecord> => {
    let launched: ReturnType<ServerClient['start']> | undefined
    const rec = await runBash(command, {
      ...opts,
      cwd: this.workdir,
      env: this.env,
      launch: (c, w) => (launched = this.server.start(c, w.cwd, w.env))
    })
    // the kernel killed one of this command's own processes (its cgroup's) for memory: the record says so
    return outOfMemory(rec, launched?.oom)
  }

  readonly exec = (
    file: string,
    args: string[],
    x: { cwd?: string; input?: Buffer; env?: Record<string, string>; asRoot?: boolean } = {}
  ): Promise<ExecResult> =>
    this.server.exec(file, args, {
      cwd: x.cwd ?? this.workdir,
      input: x.input,
      asRoot: x.asRoot,
      env: x.env ?? { PATH: this.env.PATH ?? '/usr/bin:/bin', LANG: 'C', HOME: this.env.HOME ?? '/' }
    })

  readonly listUpper?: () => Promise<ExecResult>

  readonly network = (): NetworkReport => (this.proxy ? this.proxy.report() : this.fixedNetwork)

  readonly stopAll = (): Promise<StopResult> => (this.stopped ??= this.server.alive ? this.server.stop() : this.verifyGone())

  /** After the server ended: no process of its namespace is alive (checked where we may look). */
  private async verifyGone(): Promise<StopResult> {
    const { o } = this
    if (!o.namespaced || !o.state?.ns) return { ok: false, detail: "the run's processes could not be verified gone (no PID namespace)" }
    if (o.priv.kind !== 'root') return { ok: true } // checked by the recovery helper as root
    let left = nsMembers(o.state.ns)
    // killed a moment ago (by the server's end or the recovery helper), a process may still be exiting
    for (let waited = 0; left.length && waited < GONE_GRACE_MS; waited += GONE_POLL_MS) {
      await sleep(GONE_POLL_MS)
      left = nsMembers(o.state.ns)
    }
    return left.length ? { ok: false, detail: `${left.length} processes of the run are still alive` } : { ok: true }
  }

  /**
   * The recovery helper (a root process of its own) would find nothing to do: this process is root and
   * sees the namespace empty (verifyGone, which trusts the helper under sudo: hence root only), and
   * there is no run folder, uid or cgroup to remove (none mode).
   */
  private async nothingForTheHelper(s: SavedState): Promise<boolean> {
    return (
      this.o.priv.kind === 'root' && !s.runDir && s.uid === undefined && !s.cgroup && existsSync('/proc') && (await this.verifyGone()).ok
    )
  }

  /** End the server and the proxy, put back what was changed, remove the copy; the problems. */
  readonly release = (): Promise<string[]> => (this.released ??= this.releaseOnce())

  private async releaseOnce(): Promise<string[]> {
    const { o } = this
    const problems: string[] = []
    const stop = await this.stopAll()
    if (!stop.ok) problems.push(stop.detail ?? "the run's processes could not be verified gone")
    if (!(await this.server.end(10_000))) problems.push('the command server did not end in time')
    await this.proxy?.stop()
    if (o.restore) problems.push(...(await o.restore()))
    if (o.state && (await this.nothingForTheHelper(o.state))) o.save('')
    else if (o.state) {
      // as root: what is left of the namespace, and the run folder (the copy)
      const r = await recoverAsRoot(o.state, 60_000)
      problems.push(...r.problems)
      if (r.done) o.save('')
    } else if (o.namespaced && existsSync('/proc')) {
      const gone = await this.verifyGone()
      if (!gone.ok && gone.detail) problems.push(gone.detail)
    }
    return problems
  }
}
