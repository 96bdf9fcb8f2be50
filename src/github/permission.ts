// Who may start a run: the sender's role on the repository. The check comes
// before the first model request, so it goes through ./rest.ts (Node's fetch)
// unless a proxy is set, which only Octokit honours. Same endpoint, headers and
// answer as octokit.rest.repos.getCollaboratorPermissionLevel; 5xx and network
// errors are retried like Octokit's retry plugin does (3 times, after 1, 4 and
// 9 s).
import type { EarlyAccess, Octokit } from './octokit'
import { apiBase, fetchGitHub, proxyConfigured, repoPath } from './rest'
import { sleep, type Repo } from '../util'

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
  const url = `${repoPath(apiBase(opts.apiUrl), repo)}/collaborators/${encodeURIComponent(login)}/permission`
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

/** The same read through Octokit (when a proxy is set). */
export async function permissionOf(octokit: Octokit, repo: Repo, login: string): Promise<string> {
  const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: login })
  return roleOf(data as { role_name?: string; permission?: string })
}

/** The login's role, through whichever transport serves (see ./rest.ts). */
export async function readPermission(access: EarlyAccess, repo: Repo, login: string): Promise<string> {
  const env = access.env ?? process.env
  if (proxyConfigured(env)) return permissionOf(await access.getOctokit(), repo, login)
  return permissionViaFetch(access.token, repo, login, { apiUrl: env.GITHUB_API_URL })
}
