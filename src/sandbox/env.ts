// The environment of the agent's commands, by allowlist: a variable reaches a
// command only when it is on the built-in list of harmless names below, or
// named in the `pass-env` input. Everything else (custom secrets under any
// name: DEPLOY_KEY, COOKIE, SENTRY_DSN...) is withheld. The README's
// "Environment of the commands" section documents this list: keep them equal.
import { credentialsIn, isSecretName, MIN_SECRET_LENGTH, Redactor } from '../report/redact'

/** Harmless names passed as they are (when their value holds no known secret). */
export const BUILTIN_NAMES: readonly string[] = [
  // the shell and the locale
  'PATH',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'SHELL',
  'HOSTNAME',
  'CI',
  'DEBIAN_FRONTEND',
  // the run's context, as GitHub documents it (none of them is a secret or a path the runner writes)
  'GITHUB_ACTIONS',
  'GITHUB_ACTOR',
  'GITHUB_ACTOR_ID',
  'GITHUB_TRIGGERING_ACTOR',
  'GITHUB_API_URL',
  'GITHUB_GRAPHQL_URL',
  'GITHUB_SERVER_URL',
  'GITHUB_BASE_REF',
  'GITHUB_HEAD_REF',
  'GITHUB_EVENT_NAME',
  'GITHUB_JOB',
  'GITHUB_REF',
  'GITHUB_REF_NAME',
  'GITHUB_REF_PROTECTED',
  'GITHUB_REF_TYPE',
  'GITHUB_REPOSITORY',
  'GITHUB_REPOSITORY_ID',
  'GITHUB_REPOSITORY_OWNER',
  'GITHUB_REPOSITORY_OWNER_ID',
  'GITHUB_RETENTION_DAYS',
  'GITHUB_RUN_ATTEMPT',
  'GITHUB_RUN_ID',
  'GITHUB_RUN_NUMBER',
  'GITHUB_SHA',
  'GITHUB_WORKFLOW',
  'GITHUB_WORKFLOW_REF',
  'GITHUB_WORKFLOW_SHA',
  'GITHUB_WORKSPACE',
  'RUNNER_OS',
  'RUNNER_ARCH',
  'RUNNER_NAME',
  'RUNNER_ENVIRONMENT',
  'RUNNER_DEBUG',
  'ImageOS',
  'ImageVersion'
]

/** Prefixes of harmless names. */
export const BUILTIN_PREFIXES: readonly string[] = ['LC_']

/**
 * Toolchain locations: names ending in _HOME, _ROOT or _ROOT_DIR (JAVA_HOME,
 * ANDROID_SDK_ROOT, DOTNET_ROOT, Python3_ROOT_DIR...), JAVA_HOME_<version>_<arch>,
 * and these. Passed only when the value is an absolute path that does not look
 * like a credential.
 */
export const LOCATION_NAMES: readonly string[] = [
  'GOROOT',
  'GOPATH',
  'GOBIN',
  'CONDA',
  'NVM_DIR',
  'PIPX_BIN_DIR',
  'AGENT_TOOLSDIRECTORY',
  'RUNNER_TOOL_CACHE',
  'HOMEBREW_PREFIX',
  'HOMEBREW_CELLAR',
  'HOMEBREW_REPOSITORY',
  'pythonLocation',
  'PKG_CONFIG_PATH',
  'CHROMEWEBDRIVER',
  'EDGEWEBDRIVER',
  'GECKOWEBDRIVER',
  'SELENIUM_JAR_PATH'
]
const LOCATION_NAME = /(?:_HOME|_ROOT|_ROOT_DIR)$|^JAVA_HOME_\w+$/

/**
 * Never passed, not even through pass-env: the action's inputs (the API key,
 * the GitHub token), the runner's runtime and OIDC tokens, the job token, the
 * file-command files (a command writing them would change later steps), the
 * runner's temp folder and the action's own files. Compared ignoring case
 * and `-`/`_`. HOME, USER, LOGNAME and TMPDIR are the sandbox user's.
 */
const NEVER_PREFIXES = ['INPUT_', 'ACTIONS_', 'ANTHROPIC_', 'STATE_']
const FROM_SANDBOX_USER = ['HOME', 'USER', 'LOGNAME', 'TMPDIR']
const NEVER_NAMES = new Set([
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'GITHUB_ENV',
  'GITHUB_PATH',
  'GITHUB_OUTPUT',
  'GITHUB_STATE',
  'GITHUB_STEP_SUMMARY',
  'GITHUB_EVENT_PATH',
  'GITHUB_ACTION_PATH',
  'RUNNER_TEMP',
  'BASH_AGENT_RUN',
  // access without a secret of their own: an SSH agent, programs git or ssh ask for passwords
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  'GPG_AGENT_INFO',
  // the model providers' credentials, as their platforms' GitHub actions leave them (docs/providers.md):
  // never a command's, whatever pass-env says (the agent would reach the model account with them)
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_BEARER_TOKEN_BEDROCK',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE',
  'GOOGLE_GHA_CREDS_PATH',
  'AZURE_CLIENT_SECRET',
  'AZURE_FEDERATED_TOKEN_FILE',
  // set below from the sandbox user
  ...FROM_SANDBOX_USER
])

const normal = (name: string) => name.replace(/-/g, '_').toUpperCase()

/** Whether a variable may never reach a command, whatever pass-env says. */
export function isNeverPassed(name: string): boolean {
  const n = normal(name)
  return NEVER_NAMES.has(n) || NEVER_PREFIXES.some(p => n.startsWith(p))
}

/** Strings that are credentials by their shape, whatever their name. */
const CREDENTIAL_SHAPES = [
  /gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}/, // GitHub
  /sk-ant-[\w-]{10,}|\bsk_(?:live|test)_\w{10,}/, // Anthropic, Stripe
  /\bxox[abposr]-[\w-]{10,}/, // Slack tokens
  /hooks\.slack\.com\/services\//, // Slack webhooks
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/, // AWS access key ids
  /\bglpat-[\w-]{20,}/, // GitLab
  /\bnpm_[A-Za-z0-9]{36}\b/, // npm
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/, // PEM keys
  /\beyJ[\w-]{10,}\.eyJ[\w-]{10,}\.[\w-]{10,}/ // JWTs
]

/** Random-looking runs: 24+ letters and digits mixing upper case, lower case and digits. */
function mixedRuns(value: string): string[] {
  return (value.match(/[A-Za-z0-9]{24,}/g) ?? []).filter(run => /[a-z]/.test(run) && /[A-Z]/.test(run) && /[0-9]/.test(run))
}
/** 32+ hex digits standing alone. */
const HEX_RUN = /(?<![A-Za-z0-9])[0-9a-fA-F]{32,}(?![A-Za-z0-9])/

/**
 * Whether a value looks like a credential: a known token shape, an
 * `Authorization:` header or a URL with a password (see credentialsIn), a URL
 * whose user name is a key (Sentry DSNs), or a random-looking run: 24+ letters
 * and digits mixing upper case, lower case and digits, or 32+ hex digits.
 */
export function looksLikeCredential(value: string): boolean {
  if (typeof value !== 'string' || value.trim().length < MIN_SECRET_LENGTH) return false
  if (CREDENTIAL_SHAPES.some(re => re.test(value))) return true
  if (credentialsIn(value).length > 0) return true
  if (/[a-z][a-z0-9+.-]*:\/\/[^\s/@:]{16,}@/i.test(value)) return true
  return mixedRuns(value).length > 0 || HEX_RUN.test(value)
}

/**
 * The parts of a value that make it look like a credential, to teach a
 * redactor: token shapes, credentials of headers and URLs, random-looking runs.
 */
export function credentialParts(value: string): string[] {
  if (typeof value !== 'string') return []
  const out = new Set<string>()
  for (const re of CREDENTIAL_SHAPES) {
    for (const m of value.matchAll(new RegExp(re.source, 'g'))) if (!m[0].includes('hooks.slack.com')) out.add(m[0])
  }
  for (const c of credentialsIn(value)) out.add(c)
  for (const run of mixedRuns(value)) out.add(run)
  for (const run of value.match(new RegExp(HEX_RUN.source, 'g')) ?? []) out.add(run)
  return [...out].filter(p => p.trim().length >= MIN_SECRET_LENGTH)
}

/** An absolute path (POSIX, or a Windows drive path) that is nothing else: no URL, no user, no line break. */
function isLocation(value: string): boolean {
  return (
    /^(?:\/|[A-Za-z]:[\\/])/.test(value) &&
    value.length <= 4096 &&
    !/[\r\n\0]/.test(value) &&
    !value.includes('://') &&
    !value.includes('@') &&
    !looksLikeCredential(value)
  )
}

/** A pass-env line: a variable name, or a name prefix ending in `*`. */
export const PASS_ENV_ENTRY = /^[A-Za-z_][A-Za-z0-9_]*\*?$/

function matchesPassEnv(name: string, passEnv: readonly string[]): boolean {
  return passEnv.some(p => (p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : name === p))
}

export interface CommandEnvOptions {
  /** names from the pass-env input (one a line, `*` suffix allowed) */
  passEnv: string[]
  /** the sandbox user's home, name and temp folder */
  home: string
  user: string
  tmpdir: string
  /** learns the values of passed variables that look like credentials */
  redactor: Redactor
}

/**
 * The environment of every command the agent runs. A variable is passed when
 * - its name is on the built-in list (BUILTIN_NAMES, LC_*) and its value holds
 *   no known secret, token or credential;
 * - or it is a toolchain location (LOCATION_NAMES, *_HOME, *_ROOT...) whose
 *   name does not look secret and whose value is an absolute path that does
 *   not look like a credential;
 * - or it is named in pass-env. Such a value is passed even when it looks
 *   secret (the user asked for it), but is then taught to the redactor, so it
 *   is still redacted everywhere.
 * Never: isNeverPassed names (inputs, ACTIONS_*, ANTHROPIC_*, the job token,
 * the file-command files...), nor any variable whose value holds the value of
 * one of those (`FOO=$GITHUB_TOKEN` passed by name). HOME, USER, LOGNAME and
 * TMPDIR come from `o`.
 */
export function commandEnv(env: Record<string, string | undefined>, o: CommandEnvOptions): Record<string, string> {
  // values that must not reach a command under another name
  const forbidden = new Redactor()
  const forbiddenValues: string[] = []
  for (const [name, value] of Object.entries(env)) {
    if (typeof value === 'string' && isNeverPassed(name) && !FROM_SANDBOX_USER.includes(normal(name))) {
      if ((isSecretName(name) || looksLikeCredential(value)) && value.trim().length >= MIN_SECRET_LENGTH) {
        forbidden.add(value)
        forbiddenValues.push(value.trim())
      }
    }
  }
  // as is, or in any form the redactor knows (a token shape alone is not a forbidden value:
  // compare with what no value at all would redact)
  const shapesOnly = new Redactor()
  const holdsForbidden = (value: string) =>
    forbiddenValues.some(v => value.includes(v)) || (forbidden.size > 0 && forbidden.redact(value) !== shapesOnly.redact(value))

  const passEnv = o.passEnv.map(p => p.trim()).filter(p => PASS_ENV_ENTRY.test(p))
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== 'string' || isNeverPassed(name)) continue
    if (matchesPassEnv(name, passEnv)) {
      if (holdsForbidden(value)) continue
      if (isSecretName(name) || looksLikeCredential(value)) {
        o.redactor.add(value)
        for (const c of credentialParts(value)) o.redactor.add(c)
      }
      out[name] = value
      continue
    }
    const builtin = BUILTIN_NAMES.includes(name) || (BUILTIN_PREFIXES.some(p => name.startsWith(p)) && !isSecretName(name))
    if (builtin) {
      if (!o.redactor.contains(value) && !holdsForbidden(value) && credentialsIn(value).length === 0) out[name] = value
      continue
    }
    // XDG_*_HOME are the runner user's session folders, not toolchains
    if (
      (LOCATION_NAMES.includes(name) || LOCATION_NAME.test(name)) &&
      !name.startsWith('XDG_') &&
      !isSecretName(name) &&
      isLocation(value)
    ) {
      if (!o.redactor.contains(value) && !holdsForbidden(value)) out[name] = value
    }
  }
  out.HOME = o.home
  out.USER = o.user
  out.LOGNAME = o.user
  out.TMPDIR = o.tmpdir
  return out
}

/** The run's proxy for the commands (set by the action, never passed from the job); the namespace's own `localhost` stays local, while a loopback address written as a number goes through the proxy (an allowed loopback stand-in). */
export function proxyEnv(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`
  const local = 'localhost'
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: local, no_proxy: local }
}
