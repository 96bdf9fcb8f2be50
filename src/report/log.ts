// The action's own log: one choke point, so no text reaches it with a secret
// or a workflow command the runner would obey.
import * as core from '../actions-core'
import { Redactor, secretsFromEnv } from './redact'
import { inert } from './inert'

export interface Log {
  redactor: Redactor
  redact(text: string): string
  /** a line of the log: the action's own text (foreign text quoted in it is cleaned and defused) */
  log(text: string): void
  /** text the agent wrote (a command, its notes, the report): also fenced by ::stop-commands::<random> */
  logAgent(text: string): void
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
    log: m => core.info(inert.logLine(redact(m))),
    logAgent: m => core.info(inert.log(redact(m))),
    warn: m => core.warning(inert.logLine(redact(m))),
    addSecret: value => {
      if (!value) return
      redactor.add(value)
      core.setSecret(value)
    }
  }
}
