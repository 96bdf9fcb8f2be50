// The action's own log: one choke point, so no text reaches it with a secret
// or a workflow command the runner would obey.
import * as core from '@actions/core'
import { Redactor, secretsFromEnv } from './redact'
import { defuseWorkflowCommands } from '../untrusted'

export interface Log {
  redactor: Redactor
  redact(text: string): string
  /** a line of the log (agent text allowed) */
  log(text: string): void
  /** a warning annotation */
  warn(text: string): void
  /** a secret found later (a setting, a credential): redacted from here on, masked by the runner too */
  addSecret(value: string | undefined): void
}

export function createLog(env: NodeJS.ProcessEnv = process.env): Log {
  const redactor = new Redactor(secretsFromEnv(env))
  const redact = (s: string) => redactor.redact(s)
  return {
    redactor,
    redact,
    log: m => core.info(defuseWorkflowCommands(redact(m))),
    warn: m => core.warning(defuseWorkflowCommands(redact(m))),
    addSecret: value => {
      if (!value) return
      redactor.add(value)
      core.setSecret(value)
    }
  }
}
