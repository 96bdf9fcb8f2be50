// Every input read and validated once. A bad value fails the step with one
// line naming the input, before any network call.
import { EFFORTS, type Effort } from './agent/request'
import { CHANGES_MODES, type ChangesMode } from './changes/modes'
import { PASS_ENV_ENTRY } from './sandbox/env'
import { entryText, parseAllowedDomains } from './trusted/allowlist'

export const DEFAULT_BLOCKED = ['rm -rf /', 'sudo', 'shutdown', 'reboot', '> /dev/']
export const DEFAULT_MODEL = 'claude-sonnet-5-5'
/** Thinking counts as output on today's models; requests stream, so any value the model allows works. */
export const DEFAULT_MAX_TOKENS = 32000

export type SandboxMode = 'user' | 'none'
export type NetworkMode = 'allowlist' | 'open'

export interface Settings {
  task: string
  triggerPhrase: string
  apiKey: string
  /** when set, the key is sent as x-api-key to this endpoint (ANTHROPIC_AUTH_TOKEN is ignored, as in the original harness) */
  baseUrl: string | undefined
  /** used only when no API key is given and no base URL is set: sent as a bearer token */
  authToken: string | undefined
  model: string
  /** output_config.effort; undefined leaves the model's default */
  effort?: Effort
  githubToken: string
  issueNumber: number | undefined
  maxTurns: number
  maxTokens: number
  commandTimeoutMs: number
  maxOutputChars: number
  blocked: string[]
  allowedUsers: string[]
  appendSystemPrompt: string
  sandbox: SandboxMode
  timeoutMinutes: number
  maxCostUsd: number | undefined
  /** least time between two writes to the GitHub API (the throttling plugin's write spacing) */
  githubWriteIntervalMs: number
  /** what becomes of the agent's changes (src/changes) */
  changes: ChangesMode
  /** extra environment variables the commands may see: names, or prefixes ending in `*` */
  passEnv: string[]
  /** `allowlist`: the commands reach only `allowedDomains`, through the run's proxy; `open`: the runner's network */
  network: NetworkMode
  /** the allowed-domains entries, normalised (host names, `*.` wildcards, IP addresses) */
  allowedDomains: string[]
  /** MiB the commands and their temporary files may use (sandbox: user); undefined: half the machine's memory */
  memoryLimitMiB?: number
}

export class SettingsError extends Error {}

/** The settings' secrets, each to be masked and redacted wherever output goes. */
export const secretsOf = (s: Settings): Array<string | undefined> => [s.apiKey, s.authToken, s.githubToken]

/** The variable the runner passes an input in (hyphens kept, as @actions/core reads it). */
export const inputVariable = (name: string): string => `INPUT_${name.replace(/ /g, '_').toUpperCase()}`

/** The model endpoint and its credential: the inputs, else the environment. */
function modelEndpoint(
  baseInput: string,
  keyInput: string,
  env: NodeJS.ProcessEnv
): { baseUrl: string | undefined; apiKey: string; authToken: string | undefined } {
  const baseUrl = baseInput || env.ANTHROPIC_BASE_URL || undefined
  const apiKey = keyInput || env.ANTHROPIC_API_KEY || ''
  const authToken = baseUrl ? undefined : env.ANTHROPIC_AUTH_TOKEN || undefined
  if (!apiKey && !authToken) {
    throw new SettingsError(
      'Input anthropic-api-key is required: set it (for example `anthropic-api-key: ${{ secrets.ANTHROPIC_API_KEY }}`) or provide ANTHROPIC_API_KEY in the environment.'
    )
  }
  if (baseUrl !== undefined) {
    try {
      new URL(baseUrl)
    } catch {
      throw new SettingsError(`Input anthropic-base-url must be a URL, got "${baseUrl}".`)
    }
  }
  return { baseUrl, apiKey, authToken }
}

/** `network` and `allowed-domains`, each checked with one line naming the input. */
function networkSettings(mode: string, domains: string): { network: 'allowlist' | 'open'; allowedDomains: string[] } {
  const network = (mode || 'allowlist').trim().toLowerCase()
  if (network !== 'allowlist' && network !== 'open') {
    throw new SettingsError(`Input network must be "allowlist" or "open", got "${network}".`)
  }
  let allowedDomains: string[]
  try {
    allowedDomains = parseAllowedDomains(domains).map(entryText)
  } catch (e) {
    throw new SettingsError(
      `Input allowed-domains must list host names (example.com), wildcards (*.example.com) or IP addresses, one a line or comma-separated: ${(e as Error).message}.`
    )
  }

  return { network, allowedDomains }
}

/** Reads the inputs (INPUT_*, as the runner passes them) and their fallbacks from one environment. */
export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const input = (name: string): string => (env[inputVariable(name)] ?? '').trim()
  const explicit = (name: string): boolean => env[inputVariable(name)] !== undefined

  const { baseUrl, apiKey, authToken } = modelEndpoint(input('anthropic-base-url'), input('anthropic-api-key'), env)

  // An explicitly empty list allows every command; an absent input means the defaults.
  const blocked = explicit('blocked-commands') ? lines(input('blocked-commands')) : [...DEFAULT_BLOCKED]
  const sandbox = (input('sandbox') || 'user').trim().toLowerCase()
  if (sandbox !== 'user' && sandbox !== 'none') {
    throw new SettingsError(`Input sandbox must be "user" or "none", got "${sandbox}".`)
  }
  const issue = input('issue-number')
  const changes = (input('changes') || 'apply').trim().toLowerCase() as ChangesMode
  if (!CHANGES_MODES.includes(changes)) {
    throw new SettingsError(`Input changes must be one of ${CHANGES_MODES.map(m => `"${m}"`).join(', ')}, got "${changes}".`)
  }
  const passEnv = lines(input('pass-env'))
  for (const name of passEnv) {
    if (!PASS_ENV_ENTRY.test(name)) {
      throw new SettingsError(`Input pass-env must list variable names (one a line, a trailing * allowed), got "${name}".`)
    }
  }

  const { network, allowedDomains } = networkSettings(input('network'), input('allowed-domains'))

  return {
    task: input('task').trim(),
    triggerPhrase: input('trigger-phrase').trim() || '/agent',
    apiKey,
    baseUrl,
    authToken,
    model: input('model').trim() || env.MODEL_ID || DEFAULT_MODEL,
    effort: effortOf('effort', input('effort')),
    githubToken: input('github-token') || env.GITHUB_TOKEN || '',
    issueNumber: issue ? positiveInt('issue-number', issue) : undefined,
    maxTurns: positiveInt('max-turns', input('max-turns'), 50),
    maxTokens: positiveInt('max-tokens', input('max-tokens'), DEFAULT_MAX_TOKENS),
    commandTimeoutMs: positiveInt('command-timeout', input('command-timeout'), 120) * 1000,
    maxOutputChars: positiveInt('max-output-chars', input('max-output-chars'), 50000),
    blocked,
    allowedUsers: lines(input('allowed-users')).map(u => u.replace(/^@/, '')),
    appendSystemPrompt: input('append-system-prompt').trim(),
    sandbox,
    timeoutMinutes: positiveMinutes('timeout-minutes', input('timeout-minutes'), 30),
    maxCostUsd: positiveNumber('max-cost-usd', input('max-cost-usd')),
    githubWriteIntervalMs: wholeNumber('github-write-interval-ms', input('github-write-interval-ms'), 1000),
    changes,
    passEnv,
    network,
    allowedDomains,
    memoryLimitMiB: input('memory-limit').trim() ? positiveInt('memory-limit', input('memory-limit')) : undefined
  }
}

function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map(l => l.trim())
    .filter(l => l !== '')
}

/** An effort level, or undefined when empty. `name` is the input (or variable) named in the error. */
export function effortOf(name: string, raw: string | undefined): Effort | undefined {
  const text = (raw ?? '').trim().toLowerCase()
  if (text === '') return undefined
  if (!(EFFORTS as readonly string[]).includes(text)) {
    throw new SettingsError(
      `Input ${name} must be one of ${EFFORTS.join(', ')} (or empty for the model's default), got "${(raw ?? '').trim()}".`
    )
  }
  return text as Effort
}

function positiveInt(name: string, raw: string, fallback?: number): number {
  const text = raw.trim()
  if (text === '' && fallback !== undefined) return fallback
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
    throw new SettingsError(`Input ${name} must be a positive whole number, got "${raw}".`)
  }
  return Number(text)
}

/** Like positiveInt, but 0 is allowed. */
function wholeNumber(name: string, raw: string, fallback: number): number {
  return raw.trim() === '0' ? 0 : positiveInt(name, raw.trim() === '' ? '' : raw, fallback)
}

/** Minutes, whole or not (like a workflow's timeout-minutes): 0.5 is half a minute. */
function positiveMinutes(name: string, raw: string, fallback: number): number {
  const text = raw.trim()
  if (text === '') return fallback
  const n = Number(text)
  if (!/^\d*\.?\d+$/.test(text) || !(n > 0) || !Number.isFinite(n)) {
    throw new SettingsError(`Input ${name} must be a positive number of minutes (e.g. 30, or 0.5 for half a minute), got "${raw}".`)
  }
  return n
}

function positiveNumber(name: string, raw: string): number | undefined {
  const text = raw.trim().replace(/^\$/, '')
  if (text === '') return undefined
  const n = Number(text)
  if (!/^\d*\.?\d+$/.test(text) || !(n > 0) || !Number.isFinite(n)) {
    throw new SettingsError(`Input ${name} must be a positive number of dollars (e.g. 2.50), got "${raw}".`)
  }
  return n
}
