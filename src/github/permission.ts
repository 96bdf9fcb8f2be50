// The permission check that must come before the first model request, made
// with Node's own fetch. Loading Octokit for it (with the copy of undici that
// @actions/github bundles) costs tens of milliseconds of start-up; Octokit is
// loaded once the first model request has gone out, for the comment and the
// reaction. Same endpoint, headers and answer as
// octokit.rest.repos.getCollaboratorPermissionLevel; 5xx and network errors are
// retried like Octokit's retry plugin does (3 times, after 1, 4 and 9 s).
import type { Repo } from './github'
import { sleep } from '../util'

/** Proxies are honoured by @actions/github's client, not by Node's fetch: with one set, use Octokit. */
export const proxyConfigured = (env: NodeJS.ProcessEnv): boolean =>
  Boolean(env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy)

/** A request to GitHub that does not answer in this time is abandoned (and retried like any network error). */
const FETCH_TIMEOUT_MS = 30_000

/** A GET on GitHub's REST API with Node's fetch, sent as Octokit would send it. */
export function fetchGitHub(url: string, token: string): Promise<Response> {
  return fetch(url, {
    headers: {
      authorization: `token ${token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'bash-agent-action'
    },
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS)
  })
}

const BASE_ROLES = new Set(['admin', 'maintain', 'write', 'triage', 'read'])

/**
 * The role from the permission endpoint's answer. role_name tells maintain and
 * triage apart (the legacy permission folds them into write and read); a custom
 * repository role has its own role_name, and its legacy permission says what it
 * is based on.
 */
export function roleOf(data: { role_name?: string | null; permission?: string | null }): string {
  const role = data.role_name ?? ''
  return BASE_ROLES.has(role) ? role : (data.permission ?? '')
}

/** The login's role on the repository; throws when GitHub does not say (the gate then refuses). */
export async function permissionViaFetch(
  token: string,
  repo: Repo,
  login: string,
  opts: { apiUrl?: string; retries?: number; backoffMs?: number } = {}
): Promise<string> {
  const api = (opts.apiUrl || process.env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '')
  const url = `${api}/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}/collaborators/${encodeURIComponent(login)}/permission`
  const retries = opts.retries ?? 3
  for (let attempt = 0; ; attempt++) {
    let status = 0
    let body: { message?: string; permission?: string; role_name?: string } = {}
    try {
      const res = await fetchGitHub(url, token)
      status = res.status
      body = (await res.json().catch(() => ({}))) as typeof body
    } catch (error) {
      if (attempt >= retries) throw error
    }
    if (status >= 200 && status < 300) {
      const role = roleOf(body)
      if (!role) throw new Error('GitHub answered without a permission')
      return role
    }
    // 5xx and network errors are retried; any other answer is final.
    if (status !== 0 && (status < 500 || attempt >= retries)) throw new Error(`${status} ${body.message ?? 'error'}`)
    await sleep((opts.backoffMs ?? 1000) * (attempt + 1) ** 2)
  }
}
