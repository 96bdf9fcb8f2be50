// The thread as GitHub holds it: who the action writes as, and the comments in
// it. Octokit comes in as a parameter (main loads it lazily).
import { MARKER, type Thread } from '../trigger'
import type { EarlyAccess, Octokit } from './octokit'
import { apiBase, fetchGitHub, proxyConfigured, repoPath } from './rest'
import { sleep, statusOf, type Repo } from '../util'

/** Reads for the thread happen before the first model request: one retry, not the three a final report gets. */
export const ONE_RETRY = { retries: 1 }

export interface ThreadComment {
  id: number
  body: string
  login: string
  type: string
  createdAt: string
}

/** Who the action writes comments as. */
export type Identity = { login: string }

/** The workflow's GITHUB_TOKEN writes as this bot. */
export const ACTIONS_BOT = 'github-actions[bot]'

/**
 * GET /user answers for a personal token. An installation token gets 403 and
 * cannot learn its own login: it is taken to be the workflow's GITHUB_TOKEN,
 * `github-actions[bot]`. Any other bot can be made to write a marker (an app
 * the repository trusts, a bot named in allowed-users), so none other counts.
 */
export async function identityOf(octokit: Octokit): Promise<Identity> {
  try {
    const { data } = await octokit.rest.users.getAuthenticated({ request: { retries: 1 } })
    return { login: data?.login || ACTIONS_BOT }
  } catch (error) {
    const status = statusOf(error)
    if (status === 401 || status === 403 || status === 404) return { login: ACTIONS_BOT }
    throw error
  }
}

export const isOurs = (c: ThreadComment, me: Identity): boolean =>
  c.body.includes(MARKER) && c.login.toLowerCase() === me.login.toLowerCase()

interface RawComment {
  id: number
  body?: string | null
  user?: { login?: string; type?: string } | null
  created_at?: string
  in_reply_to_id?: number
}

const toComment = (c: RawComment): ThreadComment => ({
  id: c.id,
  body: c.body ?? '',
  login: c.user?.login ?? '',
  type: c.user?.type ?? '',
  createdAt: c.created_at ?? ''
})

/** Every comment of the thread, oldest first: the issue's comments, or the review thread's (its first comment and the replies to it). */
export async function threadComments(octokit: Octokit, repo: Repo, thread: Thread): Promise<ThreadComment[]> {
  if (thread.kind === 'issue') {
    const all = (await octokit.paginate(octokit.rest.issues.listComments, {
      ...repo,
      issue_number: thread.number,
      per_page: 100,
      request: ONE_RETRY
    })) as RawComment[]
    return all.map(toComment)
  }
  const all = (await octokit.paginate(octokit.rest.pulls.listReviewComments, {
    ...repo,
    pull_number: thread.pullNumber,
    per_page: 100,
    request: ONE_RETRY
  })) as RawComment[]
  return all.filter(c => c.id === thread.commentId || c.in_reply_to_id === thread.commentId).map(toComment)
}

/**
 * threadComments with Node's fetch: a comment-triggered run reads its thread
 * before the first model request, and loading Octokit for it would cost that
 * request tens of milliseconds (see ./rest.ts). Octokit is loaded
 * only when the thread holds a run of the action.
 */
export async function threadCommentsViaFetch(token: string, repo: Repo, thread: Thread, apiUrl?: string): Promise<ThreadComment[]> {
  const base = repoPath(apiBase(apiUrl), repo)
  let url: string | undefined =
    thread.kind === 'issue'
      ? `${base}/issues/${thread.number}/comments?per_page=100`
      : `${base}/pulls/${thread.pullNumber}/comments?per_page=100`
  const all: RawComment[] = []
  for (let pages = 0; url && pages < 50; pages++) {
    let res: Response | undefined
    for (let attempt = 0; ; attempt++) {
      try {
        res = await fetchGitHub(url, token)
        if (res.status < 500 || attempt >= 1) break
      } catch (error) {
        if (attempt >= 1) throw error
      }
      await sleep(1000)
    }
    if (!res?.ok) throw Object.assign(new Error(`HTTP ${res?.status ?? 0}`), { status: res?.status })
    all.push(...((await res.json()) as RawComment[]))
    url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1]
  }
  const mine = thread.kind === 'issue' ? all : all.filter(c => c.id === thread.commentId || c.in_reply_to_id === thread.commentId)
  return mine.map(toComment)
}

/** The thread's comments, through whichever transport serves (see ./rest.ts). */
export async function readThreadComments(access: EarlyAccess, repo: Repo, thread: Thread): Promise<ThreadComment[]> {
  const env = access.env ?? process.env
  if (proxyConfigured(env)) return threadComments(await access.getOctokit(), repo, thread)
  return threadCommentsViaFetch(access.token, repo, thread, env.GITHUB_API_URL)
}
