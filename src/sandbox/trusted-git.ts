// The git the action runs after the agent (the hand-back) and before it (the
// starting commit): resolved once, before the agent starts, to an absolute
// path that nobody but root or the runner user can change, outside the
// workspace (privilege.ts), and run with a PATH of such folders only. A `git`
// the agent planted in a folder on PATH, or in the workspace, never runs.
import path from 'node:path'
import type { Exec } from '../changes'
import { findProgram, realpathOr, trustedDir } from './privilege'

export interface TrustedGit {
  /** absolute path; undefined when there is none (then no git runs) */
  git?: string
  /** its folder and /usr/bin, /bin where they are trusted */
  path: string
}

export function trustedGit(workspace: string, envPath = process.env.PATH): TrustedGit {
  const git = findProgram('git', envPath, realpathOr(workspace))
  const dirs = [...new Set([...(git ? [path.dirname(git)] : []), '/usr/bin', '/bin'])].filter(d => trustedDir(d))
  return { git, path: dirs.join(':') }
}

/** `exec`, with `git` always the trusted one and its PATH of trusted folders only. */
export function withTrustedGit(exec: Exec, t: TrustedGit): Exec {
  return (file, args, o = {}) => {
    if (file !== 'git') return exec(file, args, o)
    if (!t.git)
      return Promise.resolve({
        code: null,
        stdout: Buffer.alloc(0),
        stderr: 'no git that only root or the runner user can change was found'
      })
    return exec(t.git, args, { ...o, env: { ...o.env, PATH: t.path } })
  }
}
