// One command of the model's, as the loop asks for it: run (by whatever runs
// commands here: the sandbox in the action, runBash in a terminal), then turned
// into the tool result. The action and the CLI share it.
import type { CommandOutcome } from '../agent/loop'
import type { Settings } from '../settings'
import type { Environment } from '../environments/types'
import { toolResult } from './bash'

export function commandRunner(
  environment: Pick<Environment, 'run'>,
  settings: Pick<Settings, 'commandTimeoutMs' | 'maxOutputChars' | 'blocked'>,
  redaction: { redact: (text: string) => string; margin: number }
): (command: string, signal: AbortSignal) => Promise<CommandOutcome> {
  return async (command, signal) => {
    const record = await environment.run(command, {
      timeoutMs: settings.commandTimeoutMs,
      maxOutputChars: settings.maxOutputChars,
      blocked: settings.blocked,
      redact: redaction.redact,
      redactMargin: redaction.margin,
      signal
    })
    return { record, ...toolResult(record, settings.commandTimeoutMs) }
  }
}
