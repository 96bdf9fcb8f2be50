// PLACEHOLDER until the sandbox user lands: every command runs as the runner user.
import type { Identity } from './bash'
import { killLeftovers } from './bash'
import { scrubEnv, type Redactor } from '../report/redact'

export type SandboxMode = 'user' | 'none'

export interface Sandbox {
  /** the mode in force (user may fall back to none) */
  mode: SandboxMode
  identity: Identity
  /** what the report footer says about it */
  note: string
  /** the environment of every command */
  env: Record<string, string>
  /** puts back what was changed (git credentials, ownership) and kills leftover processes */
  release(): Promise<void>
}

export interface SandboxOptions {
  mode: SandboxMode
  workspace: string
  env: NodeJS.ProcessEnv
  redactor: Redactor
  marker: string
  log: (message: string) => void
}

export async function prepareSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const env = { ...scrubEnv(opts.env, opts.redactor), BASH_AGENT_RUN: opts.marker }
  const identity: Identity = { kind: 'self' }
  return {
    mode: 'none',
    identity,
    note: 'none',
    env,
    release: async () => {
      await killLeftovers(opts.marker, identity)
    }
  }
}
