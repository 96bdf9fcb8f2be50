// The reads made before the first model request, with Node's fetch: loading
// Octokit for them (with the copy of undici that @actions/github bundles) would
// cost that request tens of milliseconds. Requests are sent as Octokit sends
// them; everything after the first model request goes through ./octokit.ts.
import type { Repo } from '../util'

/** Proxies are honoured by @actions/github's client, not by Node's fetch: with one set, use Octokit. */
export const proxyConfigured = (env: NodeJS.ProcessEnv): boolean =>
  Boolean(env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy)

/** A request to GitHub that does not answer in this time is abandoned (and retried like any network error). */
const FETCH_TIMEOUT_MS = 30_000

/** The REST API's address, without a trailing slash. */
export const apiBase = (apiUrl?: string): string => (apiUrl || process.env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '')

/** The address of the repository's REST resources. */
export const repoPath = (api: string, repo: Repo): string =>
  `${api}/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}`

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
