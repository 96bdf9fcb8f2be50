// The thread as GitHub holds it: the action's own comments in it, the
// artifacts of the runs they name, and cancelling a run. Octokit comes in as a
// parameter (main loads it lazily).
import type { Octokit, Repo } from '../report/github'
import { MARKER, type Thread } from '../trigger'
import { fetchGitHub } from '../report/permission'
import { messageOf, sleep, statusOf } from '../util'

/** Reads for the thread happen before the first model request: one retry, not the three a final report gets. */
const ONE_RETRY = { retries: 1 }

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
 * request tens of milliseconds (see report/permission.ts). Octokit is loaded
 * only when the thread holds a run of the action.
 */
export async function threadCommentsViaFetch(token: string, repo: Repo, thread: Thread, apiUrl?: string): Promise<ThreadComment[]> {
  const api = (apiUrl || process.env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '')
  const base = `${api}/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}`
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

export type Fetched = { ok: true; bytes: Buffer } | { ok: false; why: string }

/** The bytes of the artifact `name` of workflow run `runId` (needs `actions: read`). */
export async function downloadRunArtifact(octokit: Octokit, repo: Repo, runId: number, name: string): Promise<Fetched> {
  const fail = (why: string): Fetched => ({ ok: false, why })
  const refused = (error: unknown, what: string): Fetched => {
    const status = statusOf(error)
    if (status === 401 || status === 403)
      return fail(`the github-token may not read the run's artifacts (the workflow needs \`actions: read\`)`)
    if (status === 410) return fail('it has expired')
    if (status === 404) return fail(`${what} was not found (deleted or expired)`)
    return fail(`GitHub did not give it (${status ? `HTTP ${status}` : messageOf(error)})`)
  }
  let artifact: { id: number; expired?: boolean } | undefined
  try {
    const { data } = await octokit.rest.actions.listWorkflowRunArtifacts({
      ...repo,
      run_id: runId,
      name,
      per_page: 100,
      request: ONE_RETRY
    })
    artifact = data.artifacts.find(a => a.name === name)
  } catch (error) {
    return refused(error, 'the run')
  }
  if (!artifact) return fail('it was not found (deleted or expired)')
  if (artifact.expired) return fail('it has expired')
  let location: string | undefined
  try {
    const res = await octokit.rest.actions.downloadArtifact({
      ...repo,
      artifact_id: artifact.id,
      archive_format: 'zip',
      request: { redirect: 'manual', ...ONE_RETRY }
    })
    location = (res.headers as Record<string, string | undefined>).location
  } catch (error) {
    return refused(error, 'it')
  }
  if (!location) return fail('GitHub gave no download address for it')
  try {
    // A pre-signed storage address: no token goes with it.
    const res = await fetch(location, { signal: AbortSignal.timeout(30_000) })
    if (!res.ok) return fail(`the download failed (HTTP ${res.status})`)
    return { ok: true, bytes: Buffer.from(await res.arrayBuffer()) }
  } catch (error) {
    return fail(`the download failed (${(error as Error).message})`)
  }
}

export type Cancelled = { ok: true } | { ok: false; finished: boolean; why: string }

/** POST /repos/{o}/{r}/actions/runs/{id}/cancel (needs `actions: write`). */
export async function cancelRun(octokit: Octokit, repo: Repo, runId: number): Promise<Cancelled> {
  try {
    await octokit.rest.actions.cancelWorkflowRun({ ...repo, run_id: runId })
    return { ok: true }
  } catch (error) {
    const status = statusOf(error)
    if (status === 409) return { ok: false, finished: true, why: 'it has already finished' }
    if (status === 401 || status === 403)
      return { ok: false, finished: false, why: 'the github-token may not cancel runs (the workflow needs `actions: write`)' }
    if (status === 404) return { ok: false, finished: true, why: 'it was not found' }
    return {
      ok: false,
      finished: false,
      why: `GitHub refused (${status ? `HTTP ${status}` : messageOf(error)})`
    }
  }
}
