// The few @actions/core functions the run uses before its first model request, on Node's
// built-ins: @actions/core itself loads @actions/http-client and its bundled undici (for OIDC),
// about a megabyte of code compiled and evaluated at start. Same formats as @actions/core 3.
import { appendFileSync, constants, existsSync } from 'node:fs'
import { access, writeFile } from 'node:fs/promises'
import { randomUUID } from 'node:crypto'
import { EOL } from 'node:os'

function commandValue(input: unknown): string {
  if (input === null || input === undefined) return ''
  if (typeof input === 'string' || input instanceof String) return String(input)
  return JSON.stringify(input)
}
const escapeData = (s: unknown): string => commandValue(s).replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
const escapeProperty = (s: unknown): string => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C')

/**
 * The step's log is this process's stdout, a pipe the runner reads. Once that pipe is gone (EPIPE,
 * the runner went away), nothing more can be said there: a failed write is not a crash of the run,
 * and later lines are dropped (each warning of the failure would fail again, in a loop), while the
 * run goes on to its report on GitHub.
 */
let logGone = false
process.stdout.on('error', () => (logGone = true))
process.stderr.on('error', () => undefined) // Node's own warnings: not the runner's log, never a crash
function writeLog(text: string): void {
  if (logGone) return
  try {
    process.stdout.write(text)
  } catch {
    logGone = true // a file rather than a pipe (a full disk) fails here, not in an event
  }
}

function issueCommand(command: string, properties: Record<string, string>, message: unknown): void {
  const props = Object.entries(properties)
    .filter(([, v]) => v)
    .map(([k, v]) => `${k}=${escapeProperty(v)}`)
  writeLog(`::${command}${props.length ? ` ${props.join(',')}` : ''}::${escapeData(message)}${EOL}`)
}

function fileCommand(command: 'OUTPUT' | 'STATE', key: string, value: unknown): void {
  const filePath = process.env[`GITHUB_${command}`] as string
  if (!existsSync(filePath)) throw new Error(`Missing file at path: ${filePath}`)
  const delimiter = `ghadelimiter_${randomUUID()}`
  const v = commandValue(value)
  if (key.includes(delimiter)) throw new Error(`Unexpected input: name should not contain the delimiter "${delimiter}"`)
  if (v.includes(delimiter)) throw new Error(`Unexpected input: value should not contain the delimiter "${delimiter}"`)
  appendFileSync(filePath, `${key}<<${delimiter}${EOL}${v}${EOL}${delimiter}${EOL}`, { encoding: 'utf8' })
}

export function getInput(name: string, options?: { required?: boolean; trimWhitespace?: boolean }): string {
  const val = process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] || ''
  if (options?.required && !val) throw new Error(`Input required and not supplied: ${name}`)
  return options?.trimWhitespace === false ? val : val.trim()
}

export function setOutput(name: string, value: unknown): void {
  if (process.env.GITHUB_OUTPUT) return fileCommand('OUTPUT', name, value)
  writeLog(EOL)
  issueCommand('set-output', { name }, commandValue(value))
}

export function saveState(name: string, value: unknown): void {
  if (process.env.GITHUB_STATE) return fileCommand('STATE', name, value)
  issueCommand('save-state', { name }, commandValue(value))
}

export function getState(name: string): string {
  return process.env[`STATE_${name}`] || ''
}

export function setSecret(secret: string): void {
  issueCommand('add-mask', {}, secret)
}

export function info(message: string): void {
  writeLog(message + EOL)
}

export function error(message: string | Error): void {
  issueCommand('error', {}, message instanceof Error ? message.toString() : message)
}

export function warning(message: string | Error): void {
  issueCommand('warning', {}, message instanceof Error ? message.toString() : message)
}

export function setFailed(message: string | Error): void {
  process.exitCode = 1
  error(message)
}

export function startGroup(name: string): void {
  issueCommand('group', {}, name)
}

export function endGroup(): void {
  issueCommand('endgroup', {}, '')
}

/**
 * `core.summary.addRaw(text, true).write({ overwrite: true })`: the step's job summary replaced by
 * `text`. Here rather than from @actions/core, which would load its HTTP client (~1 MB) for it.
 */
export async function overwriteSummary(text: string): Promise<void> {
  const file = process.env.GITHUB_STEP_SUMMARY
  if (!file)
    throw new Error(
      'Unable to find environment variable for $GITHUB_STEP_SUMMARY. Check if your runtime environment supports job summaries.'
    )
  try {
    await access(file, constants.R_OK | constants.W_OK)
  } catch {
    throw new Error(`Unable to access summary file: '${file}'. Check if the file has correct read/write permissions.`)
  }
  await writeFile(file, text + EOL, { encoding: 'utf8' })
}
