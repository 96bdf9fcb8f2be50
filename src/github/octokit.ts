// The one GitHub client: Octokit with its retry plugin (5xx and network
// errors: 3 retries after 1, 4 and 9 s) and throttling plugin (writes at least
// 1 s apart, what notifies people, comments and pull requests, 3 s apart, rate
// limits waited out twice; the spacings and the retries' waits all follow
// github-write-interval-ms: those figures are its default, 1000). It is
// imported lazily, once the first model request is on its way; the reads
// before it go through ./rest.ts.
//
// Without a proxy it is the Octokit @actions/github builds (the same core and
// plugins, its token and user agent) on Node's fetch: @actions/github always
// loads the copy of undici it bundles for proxies (~1 MB of code and a second
// WebAssembly HTTP parser, ~60 ms of CPU per run), which only a proxy needs.
// With one set, @actions/github's own client honours it.
import { Octokit as OctokitCore } from '@octokit/core'
import { paginateRest } from '@octokit/plugin-paginate-rest'
import { restEndpointMethods } from '@octokit/plugin-rest-endpoint-methods'
import { retry } from '@octokit/plugin-retry'
import { throttling } from '@octokit/plugin-throttling'
import Bottleneck from 'bottleneck/light.js'
import { apiBase, proxyConfigured } from './rest'

/** What @actions/github's client is: the REST methods and pagination (the retry and throttling plugins add no methods we call). */
const GitHub = OctokitCore.plugin(restEndpointMethods, paginateRest)
export type Octokit = InstanceType<typeof GitHub>
type Log = (message: string) => void

/** What a read before the first model request needs: Node's fetch with the token (./rest.ts), or Octokit when a proxy is set (only it honours one). */
export interface EarlyAccess {
  token: string
  getOctokit: () => Promise<Octokit>
  env?: NodeJS.ProcessEnv
}

/** Retries of a request that matters (the final report); progress updates get none. */
export const GITHUB_RETRIES = 3

interface LimitOptions {
  request?: { noRateLimitWait?: boolean }
  method?: string
  url?: string
}

/** GitHub's advice against secondary rate limits: at least a second between writes (the throttling plugin's default). */
export const DEFAULT_WRITE_SPACING_MS = 1000

/**
 * The retries wait 1, 4 and 9 times this: the retry plugin's own 1 s at the default spacing. A GitHub
 * without write spacing (0) still gets a moment between the attempts, not three at once.
 */
const MIN_RETRY_BASE_MS = 100

/** Writes that notify people (a comment, a pull request): the plugin's 3 s, three times the write spacing. */
const NOTIFICATION_SPACING_PER_WRITE_SPACING = 3

/** Our own groups, so the spacing is a setting; one group per kind and spacing for the process, as the plugin's own. */
const groups = new Map<string, Bottleneck.Group>()
function group(kind: 'write' | 'notifications', minTime: number): Bottleneck.Group {
  const id = `bash-agent-${kind}-${minTime}`
  let g = groups.get(id)
  if (!g) groups.set(id, (g = new Bottleneck.Group({ id, maxConcurrent: 1, minTime })))
  return g
}

export async function createOctokit(token: string, log: Log, opts: { baseUrl?: string; writeSpacingMs?: number } = {}): Promise<Octokit> {
  const onLimit = (kind: string) => (after: number, o: LimitOptions, _k: unknown, count: number) => {
    const what = `${o.method ?? ''} ${o.url ?? ''}`.trim()
    if (o.request?.noRateLimitWait) {
      log(`GitHub ${kind} hit (${what}); skipping this progress update`)
      return false
    }
    log(`GitHub ${kind} hit (${what}); retrying in ${after} s`)
    return count < 2
  }
  const spacingMs = opts.writeSpacingMs ?? DEFAULT_WRITE_SPACING_MS
  const options = {
    ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
    log: { debug: () => {}, info: () => {}, warn: log, error: log },
    throttle: {
      onRateLimit: onLimit('rate limit'),
      onSecondaryRateLimit: onLimit('secondary rate limit'),
      write: group('write', spacingMs),
      notifications: group('notifications', spacingMs * NOTIFICATION_SPACING_PER_WRITE_SPACING)
    },
    retry: { retries: GITHUB_RETRIES, retryAfterBaseValue: Math.max(spacingMs, MIN_RETRY_BASE_MS) }
  }
  if (proxyConfigured(process.env)) {
    const github = await import('@actions/github')
    return github.getOctokit(token, options as Parameters<typeof github.getOctokit>[1], retry, throttling) as unknown as Octokit
  }
  const WithPlugins = GitHub.plugin(retry, throttling)
  const direct = { ...options, auth: `token ${token}`, baseUrl: opts.baseUrl ?? apiBase(), userAgent: userAgent() }
  return new WithPlugins(direct as ConstructorParameters<typeof WithPlugins>[0])
}

/** @actions/github's user agent: Octokit's own, tagged with the job's orchestration id when the runner gives one. */
function userAgent(): string | undefined {
  const id = process.env.ACTIONS_ORCHESTRATION_ID?.trim()
  return id ? `actions_orchestration_id/${id.replace(/[^a-z0-9_.-]/gi, '_')}` : undefined
}
