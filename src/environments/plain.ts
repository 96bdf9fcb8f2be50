// sandbox: none: plain local execution. The commands run as the runner user in
// the workspace itself, with the environment allowlist (and redaction of what
// comes back), and nothing else: no namespace, no root helper, nothing hidden
// (SPEC "Secrets", `sandbox: none`). At the end every process group the
// commands started is killed, and so is every process still carrying the run's
// key in its environment; what left both (setsid and `env -i`) cannot be found
// without a namespace, and the report says so.
import { randomBytes } from 'node:crypto'
import { localExec } from '../changes'
import { pids, readProc, signal } from '../trusted/proc'
import type { NetworkReport } from '../network/launch'
import { sleep } from '../util'
import { LocalEnvironment } from './local'
import type { Sandbox } from './sandboxed'
import type { StopResult } from './types'

/** The one line the report's footer says about a run in this mode. */
export const NOT_CONTAINED = 'none (not contained: the commands ran as the runner user in the workspace and could read all it can)'

export class PlainEnvironment implements Sandbox {
  readonly mode = 'none' as const
  readonly note = NOT_CONTAINED
  readonly env: Record<string, string>
  private readonly local: LocalEnvironment
  private readonly key = `BASH_AGENT_RUN=${randomBytes(16).toString('hex')}`
  private stopped: Promise<StopResult> | undefined

  constructor(
    readonly workdir: string,
    env: Record<string, string>,
    readonly baseSha: string | undefined
  ) {
    this.env = { ...env, BASH_AGENT_RUN: this.key.slice('BASH_AGENT_RUN='.length) }
    this.local = new LocalEnvironment(workdir, this.env)
  }

  readonly run: Sandbox['run'] = (command, opts) => this.local.run(command, opts)

  readonly exec: Sandbox['exec'] = (file, args, opts = {}) =>
    localExec(file, args, {
      cwd: opts.cwd ?? this.workdir,
      input: opts.input,
      env: opts.env ?? { PATH: this.env.PATH ?? '/usr/bin:/bin', LANG: 'C' }
    })

  readonly network = (): NetworkReport => ({ contained: false, why: 'sandbox: none' })

  readonly stopAll = (): Promise<StopResult> => (this.stopped ??= this.stopOnce())

  private async stopOnce(): Promise<StopResult> {
    await this.local.stopAll() // the process groups of every command still running
    // done after three empty looks in a row: a process in the middle of an exec shows no environment for a moment
    for (let round = 0, empty = 0; round < 40 && empty < 3; round++) {
      const found = withEnvEntry(this.key)
      empty = found.length ? 0 : empty + 1
      for (const p of found) signal(p)
      await sleep(10)
    }
    const left = withEnvEntry(this.key).length
    return {
      ok: false,
      detail: left
        ? `${left} processes of the run are still alive`
        : "not contained (sandbox: none): the commands' processes were killed, but one that left both their process groups and their environment could not be verified gone"
    }
  }

  /** Nothing was changed to put back: the commands worked in the workspace itself. */
  readonly release = (): Promise<string[]> => Promise.resolve([])
}

/** The processes whose environment holds `entry` (NAME=value), but us. */
function withEnvEntry(entry: string): number[] {
  const needle = Buffer.from(`\0${entry}\0`)
  return pids().filter(p => {
    if (p === process.pid) return false
    try {
      return Buffer.concat([Buffer.from([0]), readProc(`/proc/${p}/environ`)]).includes(needle)
    } catch {
      return false // gone, or not ours
    }
  })
}
