// Commands run here, as the user running the CLI: bash spawned in the folder,
// in a process group of its own, killed with everything it started.
import { spawn } from 'node:child_process'
import { statSync } from 'node:fs'
import path from 'node:path'
import { runBash } from '../tools/bash'
import { killTree } from '../trusted/proc'
import type { CommandOptions, Environment, Started, StopResult } from './types'
import type { CommandRecord } from '../types'

// Runs inside the spawned bash: merge stderr into the one stdout pipe, then
// replace itself with a fresh bash running the command, so the command keeps
// its own semantics ($?, exit, syntax errors reported by bash).
const SELF_SCRIPT = 'exec 2>&1; exec "$BASH" -c "$1" bash'

function findBash(envPath: string | undefined): string {
  const dirs = (envPath ?? '').split(path.delimiter).filter(d => d !== '')
  for (const dir of [...dirs, '/bin', '/usr/bin', '/usr/local/bin']) {
    const p = path.join(dir, 'bash')
    try {
      if (statSync(p).isFile()) return p
    } catch {
      // not here
    }
  }
  return 'bash'
}

/** bash here, in its own process group; throws when `cwd` is no folder. */
export function startLocal(command: string, where: { cwd: string; env: Record<string, string> }): Started {
  try {
    if (!statSync(where.cwd).isDirectory()) throw new Error(`working directory is not a directory: ${where.cwd}`)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`working directory does not exist: ${where.cwd}`)
    throw e
  }
  const c = spawn(findBash(where.env.PATH), ['-c', SELF_SCRIPT, 'bash', command], {
    cwd: where.cwd,
    env: where.env,
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true
  })
  return {
    get pid() {
      return c.pid
    },
    stdout: c.stdout,
    on(event: 'exit' | 'error', listener: ((code: number | null) => void) | ((e: Error) => void)) {
      return c.on(event, listener)
    },
    kill: () => {
      if (c.pid !== undefined) killTree(c.pid)
    }
  }
}

/** The CLI's environment: commands in `cwd` with `env`, as the user running it. */
/** `run` is bound: it is handed on as a function. */
export class LocalEnvironment implements Environment {
  private readonly running = new Set<Started>()
  constructor(
    private readonly cwd: string,
    private readonly env: Record<string, string>
  ) {}

  readonly run = (command: string, opts: CommandOptions): Promise<CommandRecord> =>
    runBash(command, { ...opts, cwd: this.cwd, env: this.env, launch: (c, w) => this.track(startLocal(c, w)) })

  private track(s: Started): Started {
    this.running.add(s)
    s.on('exit', () => this.running.delete(s))
    s.on('error', () => this.running.delete(s))
    return s
  }

  /** What detached from a command's tree cannot be found here: said. */
  stopAll(): Promise<StopResult> {
    for (const s of this.running) s.kill()
    return Promise.resolve({
      ok: false,
      detail: "the commands' process trees were killed; what detached from them could not be verified gone"
    })
  }

  release(): Promise<string[]> {
    return Promise.resolve([])
  }
}
