// What a run starts from: the settings and the event the runner saved.
import * as core from '../actions-core'
import { existsSync, readFileSync } from 'node:fs'
import { readSettings, secretsOf, SettingsError, type Settings } from '../settings'
import { priceOf } from '../agent/cost'
import type { Log } from '../report/log'
import { messageOf } from '../util'
import { loadValidator } from '../structured/load'
import type { JsonSchema } from '../structured/schema'

/** The settings, or undefined after failing the step with one line naming the bad input. */
export function settingsOrFail(out: Log, env: NodeJS.ProcessEnv = process.env): Settings | undefined {
  let settings: Settings
  try {
    settings = readSettings(env)
  } catch (error) {
    core.setOutput('exit-reason', 'error')
    if (error instanceof SettingsError) {
      core.setFailed(out.redact(error.message))
      return undefined
    }
    throw error
  }
  for (const secret of secretsOf(settings)) out.addSecret(secret)
  if (settings.maxCostUsd !== undefined && !priceOf(settings.model)) {
    out.warn(`max-cost-usd cannot be enforced: the prices of model "${settings.model}" are not known, so the run has no cost estimate.`)
  }
  return settings
}

/** Whether output-schema is a valid JSON Schema (compiled here, once); else the step is failed with one line naming the input. */
export async function schemaOrFail(schema: JsonSchema, out: Log): Promise<boolean> {
  try {
    await loadValidator(schema)
    return true
  } catch (error) {
    core.setOutput('exit-reason', 'error')
    core.setFailed(out.redact(`Input output-schema ${messageOf(error)}.`))
    return false
  }
}

/** The event the runner saved, as @actions/github reads it; a broken event file is an error worth a clear line. */
export function readEvent(env: NodeJS.ProcessEnv = process.env): { eventName: string; payload: unknown } {
  const eventName = env.GITHUB_EVENT_NAME ?? ''
  const path = env.GITHUB_EVENT_PATH
  if (!path || !existsSync(path)) return { eventName, payload: {} }
  try {
    return { eventName, payload: JSON.parse(readFileSync(path, 'utf8')) as unknown }
  } catch (error) {
    throw new Error(`the event file ${path} could not be read: ${messageOf(error)}`)
  }
}
