// A small, stateful stand-in for the GitHub REST API, served over real HTTP on
// 127.0.0.1 so the real Octokit (from @actions/github, pointed at it with
// GITHUB_API_URL / baseUrl) talks to it as it would to api.github.com.
//
// Implemented routes (responses shaped like the real API):
//   GET   /repos/{o}/{r}/collaborators/{user}/permission
//   POST  /repos/{o}/{r}/issues/{n}/comments                      201
//   GET   /repos/{o}/{r}/issues/comments/{id}
//   PATCH /repos/{o}/{r}/issues/comments/{id}
//   POST  /repos/{o}/{r}/pulls/{n}/comments (in_reply_to)         201 (kind 'review'; the reply apps may make)
//   POST  /repos/{o}/{r}/pulls/{n}/comments/{comment_id}/replies  201 (kind 'review'; 403 for an app token, as on GitHub)
//   GET   /repos/{o}/{r}/pulls/comments/{id}
//   PATCH /repos/{o}/{r}/pulls/comments/{id}
//   POST  /repos/{o}/{r}/issues/comments/{id}/reactions           201 (200 when it already exists)
//   POST  /repos/{o}/{r}/pulls/comments/{id}/reactions            201 (200 when it already exists)
//   POST  /repos/{o}/{r}/issues/{n}/reactions                     201 (200 when it already exists)
// More routes come in through `routes` (fake-git-db.ts: the Git database, refs,
// pulls and compare, kept in a real bare repository).
// Threads and Actions (the thread session, issue 11):
//   GET   /user                                                   403 (an installation token), or 200 with `tokenLogin`
//   GET   /repos/{o}/{r}/issues/{n}/comments                      the issue's comments (paginated)
//   GET   /repos/{o}/{r}/pulls/{n}/comments                       the pull request's review comments (paginated)
//   POST  /repos/{o}/{r}/actions/runs/{id}/cancel                 202 (calls the run's onCancel), 409 when completed, 404 unknown
//   GET   /repos/{o}/{r}/actions/runs/{id}/artifacts              artifacts of the run (`name` filter)
//   GET   /repos/{o}/{r}/actions/artifacts/{id}/zip               302 to the blob (410 when expired)
// The artifact service that @actions/artifact speaks (ACTIONS_RESULTS_URL = this url,
// ACTIONS_RUNTIME_TOKEN = runtimeToken(runId)), no GitHub token needed:
//   POST  /twirp/github.actions.results.api.v1.ArtifactService/CreateArtifact    -> signed_upload_url
//   PUT   /_blob/{key}?comp=block&blockid=…   PUT ?comp=blocklist   (Azure block blob upload)
//   POST  /twirp/github.actions.results.api.v1.ArtifactService/FinalizeArtifact  -> artifact_id
//   GET   /_blob/{key}                                            the uploaded bytes
// Anything else: 404 {message:'Not Found'}, recorded in `requests` and `unexpected`.
// Every request (but the artifact service's) is first checked against GitHub's
// published REST description (helpers/github-rest.ts): a route or method GitHub
// does not have (404), parameters or a JSON body the operation does not accept
// (422), or a write with the job token (ghs_…) to an operation not enabled for
// GitHub Apps (403) is answered as GitHub would, recorded in `nonconforming`,
// and makes close() reject, so the test fails (option `rest`).
// A request without an Authorization header gets 401 'Requires authentication'
// (with `acceptTokens`, any other token gets 401 'Bad credentials').
// Comment bodies must be non-empty and at most 65536 characters (Unicode code
// points), else 422 'Validation Failed', like GitHub.
// Reactions may target any id (the triggering comment from the payload does
// not need to exist in `comments`).
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { STATUS_CODES } from 'node:http'
import { createHash, randomUUID } from 'node:crypto'
import { refusal } from './github-rest'

export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none'

export interface RecordedGitHubRequest {
  method: string
  /** path as sent, including any query string */
  path: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  headers: Record<string, any>
  /** when it arrived: Date.now()'s clock, to the microsecond (as fake-anthropic's) */
  at: number
  /** the status the fake answered */
  status: number
  /** why GitHub's REST description refuses this request, when it does */
  nonconforming?: string
  /** name of the route that handled it (e.g. 'createComment'); undefined when nothing matched (404) */
  route?: string
  /** true when an injected fault answered */
  faulted?: boolean
}

export interface FakeComment {
  id: number
  body: string
  issue_number?: number
  pull_number?: number
  in_reply_to_id?: number
  kind: 'issue' | 'review'
  /** every body the comment ever had, in order (the first is the body it was created with) */
  updates: string[]
  /** 'owner/repo' it was created in */
  repo: string
  /** author; default the token's account (the bot) */
  user?: { login: string; type: 'User' | 'Bot' }
}

export interface FakeRun {
  id: number
  repo: string
  status: 'in_progress' | 'completed'
  /** called when the run is cancelled through the API (the test sends the runner's SIGINT) */
  onCancel?: () => void
}

export interface FakeArtifact {
  id: number
  name: string
  repo: string
  runId: number
  bytes: Buffer
  expired: boolean
  contentType: string
}

export interface FakeReaction {
  subject: 'issue_comment' | 'review_comment' | 'issue'
  id: number
  content: string
  repo: string
}

export interface FakeGitHub {
  url: string
  requests: RecordedGitHubRequest[]
  /** requests no route matched (answered 404) */
  unexpected: RecordedGitHubRequest[]
  /** requests GitHub's REST description refuses (answered as GitHub would; close() then rejects unless `rest: 'answer'`) */
  nonconforming: RecordedGitHubRequest[]
  comments: Map<number, FakeComment>
  reactions: FakeReaction[]
  /** workflow runs the Actions API knows (cancel) */
  runs: Map<number, FakeRun>
  /** finalized artifacts (uploaded through the artifact service, or added by a test) */
  artifacts: FakeArtifact[]
  /** a comment written by someone (default: a User), as a webhook would have announced it; returns it */
  addComment(c: {
    repo: string
    body: string
    issueNumber?: number
    pullNumber?: number
    inReplyToId?: number
    login?: string
    type?: 'User' | 'Bot'
  }): FakeComment
  /** inject a fault: the next `times` (default 1) requests matching method ('*' = any) + path regexp (tested against the path without query string) answer `status` */
  fail(method: string, path: RegExp, status: number, times?: number, extra?: { body?: unknown; headers?: Record<string, string> }): void
  /** every second matching request (the 2nd, 4th, ...) answers `status` */
  failEveryOther(method: string, path: RegExp, status: number): void
  close(): Promise<void>
}

export interface FakeGitHubOptions {
  /** collaborator role by login (case-insensitive); unknown logins get 404 from the permission endpoint */
  permissions?: Record<string, Permission>
  /** login of the account the token belongs to (author of created comments and reactions); default 'github-actions[bot]' */
  botLogin?: string
  /** when set, only these tokens are accepted (others: 401 Bad credentials) */
  acceptTokens?: string[]
  /** GET /user answers this login (a personal token); default: 403 like an installation token */
  tokenLogin?: string
  /** repository of artifacts uploaded by a run not in `runs`; default 'Codertocat/Hello-World' (the example payloads') */
  artifactRepo?: string
  /** more routes (e.g. the Git database of fake-git-db.ts); a handler may answer with a promise */
  routes?: ExtraRoute[]
  /**
   * Requests GitHub's REST description refuses: 'strict' (default) answers them as GitHub would and
   * makes close() reject naming them; 'answer' only answers them so (a test that sends them on purpose).
   */
  rest?: 'strict' | 'answer'
}

export interface ExtraRoute {
  name: string
  method: string
  re: RegExp
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  handle: (m: string[], body: any) => RouteResult | Promise<RouteResult>
}

/** An ACTIONS_RUNTIME_TOKEN (a JWT, unsigned) whose Actions.Results scope names run `runId`, as the fake's artifact service reads it. */
export function runtimeToken(runId: number, jobId = 1): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')
  return `${b64({ typ: 'JWT', alg: 'none' })}.${b64({ scp: `Actions.GenericRead Actions.Results:run-${runId}:job-${jobId}`, exp: 4102444800 })}.c2ln`
}

const REACTIONS = new Set(['+1', '-1', 'laugh', 'confused', 'heart', 'hooray', 'rocket', 'eyes'])
const DOCS = 'https://docs.github.com/rest'
const MAX_BODY = 65536

/** Legacy `permission` for a role, as GitHub reports it (maintain -> write, triage -> read). */
export function legacyPermission(role: Permission): 'admin' | 'write' | 'read' | 'none' {
  switch (role) {
    case 'admin':
      return 'admin'
    case 'maintain':
    case 'write':
      return 'write'
    case 'triage':
    case 'read':
      return 'read'
    default:
      return 'none'
  }
}

const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
const nodeId = (prefix: string, id: number): string => Buffer.from(`${prefix}${id}`).toString('base64').replace(/=+$/, '')

function userJson(login: string, type: 'User' | 'Bot', id: number): Record<string, unknown> {
  return {
    login,
    id,
    node_id: nodeId(type === 'Bot' ? 'BOT_' : 'U_', id),
    avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
    gravatar_id: '',
    url: `https://api.github.com/users/${encodeURIComponent(login)}`,
    html_url: type === 'Bot' ? `https://github.com/apps/${login.replace(/\[bot\]$/, '')}` : `https://github.com/${login}`,
    type,
    site_admin: false
  }
}

function idForLogin(login: string): number {
  let h = 0
  for (const ch of login.toLowerCase()) h = (h * 31 + ch.charCodeAt(0)) % 90_000_000
  return 10_000_000 + h
}

interface Fault {
  method: string
  path: RegExp
  status: number
  remaining: number
  everyOther: boolean
  seen: number
  extra?: { body?: unknown; headers?: Record<string, string> }
}

export interface RouteResult {
  status: number
  body: unknown
  headers?: Record<string, string>
}

export async function startFakeGitHub(opts: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  const botLogin = opts.botLogin ?? 'github-actions[bot]'
  const bot = userJson(botLogin, 'Bot', 41898282)
  const permissions = new Map(Object.entries(opts.permissions ?? {}).map(([k, v]) => [k.toLowerCase(), { login: k, role: v }]))
  const requests: RecordedGitHubRequest[] = []
  const unexpected: RecordedGitHubRequest[] = []
  const nonconforming: RecordedGitHubRequest[] = []
  const comments = new Map<number, FakeComment>()
  const reactions: FakeReaction[] = []
  const reactionIds = new Map<string, number>()
  const createdAt = new Map<number, string>()
  const faults: Fault[] = []
  const sockets = new Set<Socket>()
  let nextCommentId = 1_900_000_001
  let nextReactionId = 250_000_001

  const validationFailed = (resource: string, message: string): RouteResult => ({
    status: 422,
    body: {
      message: 'Validation Failed',
      errors: [{ resource, code: 'custom', field: 'body', message }],
      documentation_url: DOCS
    }
  })
  const notFound = (): RouteResult => ({ status: 404, body: { message: 'Not Found', documentation_url: DOCS, status: '404' } })

  const checkBody = (body: unknown, resource: string): RouteResult | undefined => {
    if (typeof body !== 'string' || body.length === 0) return validationFailed(resource, 'body cannot be blank')
    let points = 0
    for (const _ of body) {
      void _
      if (++points > MAX_BODY) return validationFailed(resource, `body is too long (maximum is ${MAX_BODY} characters)`)
    }
    return undefined
  }

  const commentJson = (owner: string, repo: string, c: FakeComment): Record<string, unknown> => {
    const api = `https://api.github.com/repos/${owner}/${repo}`
    const base = {
      id: c.id,
      node_id: nodeId(c.kind === 'issue' ? 'IC_' : 'PRRC_', c.id),
      body: c.body,
      user: c.user ? userJson(c.user.login, c.user.type, idForLogin(c.user.login)) : bot,
      created_at: createdAt.get(c.id),
      updated_at: now(),
      author_association: 'NONE',
      reactions: { url: `${api}/${c.kind === 'issue' ? 'issues' : 'pulls'}/comments/${c.id}/reactions`, total_count: 0 }
    }
    if (c.kind === 'issue') {
      return {
        ...base,
        url: `${api}/issues/comments/${c.id}`,
        html_url: `https://github.com/${owner}/${repo}/issues/${c.issue_number}#issuecomment-${c.id}`,
        issue_url: `${api}/issues/${c.issue_number}`,
        performed_via_github_app: null
      }
    }
    return {
      ...base,
      url: `${api}/pulls/comments/${c.id}`,
      html_url: `https://github.com/${owner}/${repo}/pull/${c.pull_number}#discussion_r${c.id}`,
      pull_request_url: `${api}/pulls/${c.pull_number}`,
      pull_request_review_id: c.id + 1,
      in_reply_to_id: c.in_reply_to_id,
      diff_hunk: '',
      path: '',
      commit_id: '0000000000000000000000000000000000000000',
      original_commit_id: '0000000000000000000000000000000000000000'
    }
  }

  const react = (owner: string, repo: string, subject: FakeReaction['subject'], id: number, content: unknown): RouteResult => {
    if (typeof content !== 'string' || !REACTIONS.has(content)) {
      return {
        status: 422,
        body: {
          message: 'Validation Failed',
          errors: [{ resource: 'Reaction', code: 'custom', field: 'content', message: `content is not included in the list` }],
          documentation_url: DOCS
        }
      }
    }
    const key = `${owner}/${repo}:${subject}:${id}:${content}`
    const existing = reactionIds.get(key)
    const reactionId = existing ?? nextReactionId++
    if (existing === undefined) {
      reactionIds.set(key, reactionId)
      reactions.push({ subject, id, content, repo: `${owner}/${repo}` })
    }
    return {
      status: existing === undefined ? 201 : 200,
      body: { id: reactionId, node_id: nodeId('REA_', reactionId), user: bot, content, created_at: now() }
    }
  }

  type Handler = (m: string[], body: Record<string, unknown>, query: URLSearchParams) => RouteResult | Promise<RouteResult>
  const runs = new Map<number, FakeRun>()
  const artifacts: FakeArtifact[] = []
  let nextArtifactId = 7_000_001
  const baseUrl = (): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  /** page/per_page like the REST API (no Link header: a short page ends octokit.paginate) */
  const page = (q: URLSearchParams, all: unknown[]): RouteResult => {
    const per = Math.min(100, Number(q.get('per_page') ?? 30) || 30)
    const n = Math.max(1, Number(q.get('page') ?? 1) || 1)
    return { status: 200, body: all.slice((n - 1) * per, n * per) }
  }
  const artifactJson = (a: FakeArtifact): Record<string, unknown> => ({
    id: a.id,
    node_id: nodeId('MDg6QXJ0aWZhY3Q', a.id),
    name: a.name,
    size_in_bytes: a.bytes.length,
    url: `https://api.github.com/repos/${a.repo}/actions/artifacts/${a.id}`,
    archive_download_url: `https://api.github.com/repos/${a.repo}/actions/artifacts/${a.id}/zip`,
    expired: a.expired,
    digest: `sha256:${createHash('sha256').update(a.bytes).digest('hex')}`,
    created_at: now(),
    expires_at: now(),
    updated_at: now(),
    workflow_run: { id: a.runId, repository_id: 1, head_repository_id: 1, head_branch: 'main', head_sha: '0'.repeat(40) }
  })
  /** uploads in progress: blob key -> blocks by id, and the artifact it becomes */
  const uploads = new Map<
    string,
    { repo: string; runId: number; name: string; contentType: string; blocks: Map<string, Buffer>; bytes?: Buffer }
  >()
  const routes: Array<{ name: string; method: string; re: RegExp; handle: Handler }> = [
    ...(opts.routes ?? []),
    {
      name: 'getCollaboratorPermissionLevel',
      method: 'GET',
      re: /^\/repos\/([^/]+)\/([^/]+)\/collaborators\/([^/]+)\/permission$/,
      handle: m => {
        const entry = permissions.get(decodeURIComponent(m[3]).toLowerCase())
        if (!entry) return notFound()
        const role = entry.role
        const permission = legacyPermission(role)
        const user = {
          ...userJson(entry.login, 'User', idForLogin(entry.login)),
          permissions: {
            admin: role === 'admin',
            maintain: role === 'admin' || role === 'maintain',
            push: ['admin', 'maintain', 'write'].includes(role),
            triage: ['admin', 'maintain', 'write', 'triage'].includes(role),
            pull: role !== 'none'
          },
          role_name: role
        }
        return { status: 200, body: { permission, role_name: role, user } }
      }
    },
    {
      name: 'createComment',
      method: 'POST',
      re: /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/,
      handle: (m, body) => {
        const bad = checkBody(body.body, 'IssueComment')
        if (bad) return bad
        const id = nextCommentId++
        const c: FakeComment = {
          id,
          body: body.body as string,
          issue_number: Number(m[3]),
          kind: 'issue',
          updates: [body.body as string],
          repo: `${m[1]}/${m[2]}`
        }
        comments.set(id, c)
        createdAt.set(id, now())
        return {
          status: 201,
          body: commentJson(m[1], m[2], c),
          headers: { location: `https://api.github.com/repos/${m[1]}/${m[2]}/issues/comments/${id}` }
        }
      }
    },
    {
      name: 'getComment',
      method: 'GET',
      re: /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)$/,
      handle: m => {
        const c = comments.get(Number(m[3]))
        if (!c || c.kind !== 'issue') return notFound()
        return { status: 200, body: commentJson(m[1], m[2], c) }
      }
    },
    {
      name: 'updateComment',
      method: 'PATCH',
      re: /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)$/,
      handle: (m, body) => {
        const c = comments.get(Number(m[3]))
        if (!c || c.kind !== 'issue') return notFound()
        const bad = checkBody(body.body, 'IssueComment')
        if (bad) return bad
        c.body = body.body as string
        c.updates.push(c.body)
        return { status: 200, body: commentJson(m[1], m[2], c) }
      }
    },
    {
      name: 'createReplyForReviewComment',
      method: 'POST',
      re: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)\/comments\/(\d+)\/replies$/,
      handle: (m, body) => {
        const bad = checkBody(body.body, 'PullRequestReviewComment')
        if (bad) return bad
        const id = nextCommentId++
        const c: FakeComment = {
          id,
          body: body.body as string,
          pull_number: Number(m[3]),
          in_reply_to_id: Number(m[4]),
          kind: 'review',
          updates: [body.body as string],
          repo: `${m[1]}/${m[2]}`
        }
        comments.set(id, c)
        createdAt.set(id, now())
        return { status: 201, body: commentJson(m[1], m[2], c) }
      }
    },
    {
      // a reply in a review thread; a new review comment on a line (no in_reply_to) is not needed by the action
      name: 'createReviewComment',
      method: 'POST',
      re: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)\/comments$/,
      handle: (m, body) => {
        const bad = checkBody(body.body, 'PullRequestReviewComment')
        if (bad) return bad
        if (typeof body.in_reply_to !== 'number')
          return validationFailed('PullRequestReviewComment', 'fake-github: only replies (in_reply_to)')
        const parent = comments.get(body.in_reply_to)
        if (parent && (parent.kind !== 'review' || parent.pull_number !== Number(m[3]))) return notFound()
        const id = nextCommentId++
        const c: FakeComment = {
          id,
          body: body.body as string,
          pull_number: Number(m[3]),
          in_reply_to_id: body.in_reply_to,
          kind: 'review',
          updates: [body.body as string],
          repo: `${m[1]}/${m[2]}`
        }
        comments.set(id, c)
        createdAt.set(id, now())
        return { status: 201, body: commentJson(m[1], m[2], c) }
      }
    },
    {
      name: 'getReviewComment',
      method: 'GET',
      re: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/comments\/(\d+)$/,
      handle: m => {
        const c = comments.get(Number(m[3]))
        if (!c || c.kind !== 'review') return notFound()
        return { status: 200, body: commentJson(m[1], m[2], c) }
      }
    },
    {
      name: 'updateReviewComment',
      method: 'PATCH',
      re: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/comments\/(\d+)$/,
      handle: (m, body) => {
        const c = comments.get(Number(m[3]))
        if (!c || c.kind !== 'review') return notFound()
        const bad = checkBody(body.body, 'PullRequestReviewComment')
        if (bad) return bad
        c.body = body.body as string
        c.updates.push(c.body)
        return { status: 200, body: commentJson(m[1], m[2], c) }
      }
    },
    {
      name: 'getAuthenticatedUser',
      method: 'GET',
      re: /^\/user$/,
      handle: () =>
        opts.tokenLogin
          ? { status: 200, body: userJson(opts.tokenLogin, 'User', idForLogin(opts.tokenLogin)) }
          : { status: 403, body: { message: 'Resource not accessible by integration', documentation_url: DOCS, status: '403' } }
    },
    {
      name: 'listComments',
      method: 'GET',
      re: /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/,
      handle: (m, _b, q) =>
        page(
          q,
          [...comments.values()]
            .filter(c => c.kind === 'issue' && c.repo === `${m[1]}/${m[2]}` && c.issue_number === Number(m[3]))
            .map(c => commentJson(m[1], m[2], c))
        )
    },
    {
      name: 'listReviewComments',
      method: 'GET',
      re: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)\/comments$/,
      handle: (m, _b, q) =>
        page(
          q,
          [...comments.values()]
            .filter(c => c.kind === 'review' && c.repo === `${m[1]}/${m[2]}` && c.pull_number === Number(m[3]))
            .map(c => commentJson(m[1], m[2], c))
        )
    },
    {
      name: 'cancelWorkflowRun',
      method: 'POST',
      re: /^\/repos\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)\/cancel$/,
      handle: m => {
        const run = runs.get(Number(m[3]))
        if (!run || run.repo !== `${m[1]}/${m[2]}`) return notFound()
        if (run.status === 'completed')
          return {
            status: 409,
            body: { message: 'Cannot cancel a workflow run that is completed.', documentation_url: DOCS, status: '409' }
          }
        run.status = 'completed'
        setImmediate(() => run.onCancel?.())
        return { status: 202, body: {} }
      }
    },
    {
      name: 'listWorkflowRunArtifacts',
      method: 'GET',
      re: /^\/repos\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)\/artifacts$/,
      handle: (m, _b, q) => {
        const list = artifacts.filter(
          a => a.repo === `${m[1]}/${m[2]}` && a.runId === Number(m[3]) && (!q.get('name') || a.name === q.get('name'))
        )
        return { status: 200, body: { total_count: list.length, artifacts: list.map(a => artifactJson(a)) } }
      }
    },
    {
      name: 'downloadArtifact',
      method: 'GET',
      re: /^\/repos\/([^/]+)\/([^/]+)\/actions\/artifacts\/(\d+)\/zip$/,
      handle: m => {
        const a = artifacts.find(x => x.id === Number(m[3]) && x.repo === `${m[1]}/${m[2]}`)
        if (!a) return notFound()
        if (a.expired) return { status: 410, body: { message: 'Artifact has expired', documentation_url: DOCS, status: '410' } }
        return { status: 302, body: '', headers: { location: `${baseUrl()}/_blob/artifact-${a.id}?sig=fakesignature` } }
      }
    },
    {
      name: 'createReactionForIssueComment',
      method: 'POST',
      re: /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)\/reactions$/,
      handle: (m, body) => react(m[1], m[2], 'issue_comment', Number(m[3]), body.content)
    },
    {
      name: 'createReactionForPullRequestReviewComment',
      method: 'POST',
      re: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/comments\/(\d+)\/reactions$/,
      handle: (m, body) => react(m[1], m[2], 'review_comment', Number(m[3]), body.content)
    },
    {
      name: 'createReactionForIssue',
      method: 'POST',
      re: /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/reactions$/,
      handle: (m, body) => react(m[1], m[2], 'issue', Number(m[3]), body.content)
    }
  ]

  const baseHeaders = (): Record<string, string> => ({
    'content-type': 'application/json; charset=utf-8',
    'x-github-media-type': 'github.v3; format=json',
    'x-github-api-version-selected': '2022-11-28',
    'x-github-request-id': `FAKE:${Math.floor(Math.random() * 1e9)
      .toString(16)
      .toUpperCase()}`,
    'x-ratelimit-limit': '5000',
    'x-ratelimit-remaining': '4999',
    'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
    'x-ratelimit-used': '1',
    'x-ratelimit-resource': 'core'
  })

  const takeFault = (method: string, pathname: string): Fault | undefined => {
    for (const f of faults) {
      if (f.method !== '*' && f.method !== method) continue
      f.path.lastIndex = 0
      if (!f.path.test(pathname)) continue
      if (f.everyOther) {
        f.seen++
        if (f.seen % 2 === 0) return f
        continue
      }
      if (f.remaining > 0) {
        f.remaining--
        return f
      }
    }
    return undefined
  }

  /** The artifact service of the runner (twirp JSON) and the blob storage it signs URLs for. */
  const artifactService = (
    method: string,
    pathname: string,
    q: URLSearchParams,
    raw: Buffer,
    headers: http.IncomingHttpHeaders,
    rec: RecordedGitHubRequest
  ): { status: number; body: string | Buffer; headers?: Record<string, string> } => {
    const json = (status: number, body: unknown) => ({
      status,
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' }
    })
    const azure = (status: number) => ({
      status,
      body: '',
      headers: {
        'x-ms-request-id': randomUUID(),
        'x-ms-version': '2025-01-05',
        etag: '"0x1"',
        'last-modified': new Date().toUTCString(),
        'x-ms-request-server-encrypted': 'true'
      }
    })
    if (pathname.startsWith('/twirp/')) {
      const auth = String(headers.authorization ?? '').replace(/^bearer\s+/i, '')
      let runId = NaN
      try {
        const claims = JSON.parse(Buffer.from(auth.split('.')[1] ?? '', 'base64url').toString('utf8')) as { scp?: string }
        runId = Number(/Actions\.Results:run-(\d+):/.exec(claims.scp ?? '')?.[1])
      } catch {
        // below
      }
      if (!Number.isSafeInteger(runId)) return json(401, { code: 'unauthenticated', msg: 'invalid runtime token' })
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      let body: any
      try {
        body = JSON.parse(raw.toString('utf8'))
      } catch {
        return json(400, { code: 'malformed', msg: 'bad json' })
      }
      rec.body = body
      const method = pathname.split('/').pop()
      const repo = runs.get(runId)?.repo ?? opts.artifactRepo ?? 'Codertocat/Hello-World'
      if (method === 'CreateArtifact') {
        if (artifacts.some(a => a.runId === runId && a.name === body.name && a.repo === repo))
          return json(409, { code: 'already_exists', msg: 'an artifact with this name already exists on the workflow run' })
        const key = `upload-${randomUUID()}`
        uploads.set(key, {
          repo,
          runId,
          name: String(body.name),
          contentType: body.mime_type ?? 'application/octet-stream',
          blocks: new Map()
        })
        return json(200, {
          ok: true,
          signed_upload_url: `${baseUrl()}/_blob/devstoreaccount1/actions-results/${key}?sig=fakesignature&se=2099-01-01`
        })
      }
      if (method === 'FinalizeArtifact') {
        const entry = [...uploads.entries()].find(([, u]) => u.runId === runId && u.name === body.name && u.bytes)
        if (!entry) return json(404, { code: 'not_found', msg: 'no upload for this artifact' })
        const [key, u] = entry
        uploads.delete(key)
        const a: FakeArtifact = {
          id: nextArtifactId++,
          name: u.name,
          repo: u.repo,
          runId: u.runId,
          bytes: u.bytes!,
          expired: false,
          contentType: u.contentType
        }
        artifacts.push(a)
        return json(200, { ok: true, artifact_id: String(a.id) })
      }
      return json(404, { code: 'bad_route', msg: `no handler for ${pathname}` })
    }
    const key = pathname.split('/').pop() ?? ''
    if (method === 'GET') {
      const a = artifacts.find(x => `artifact-${x.id}` === key)
      if (!a || q.get('sig') !== 'fakesignature') return { status: 404, body: 'BlobNotFound' }
      // the bytes as stored now (a test may change them)
      return { status: 200, body: a.bytes, headers: { 'content-type': a.contentType, 'content-length': String(a.bytes.length) } }
    }
    const u = uploads.get(key)
    if (method !== 'PUT' || !u || q.get('sig') !== 'fakesignature') return { status: 404, body: 'BlobNotFound' }
    if (q.get('comp') === 'block') {
      u.blocks.set(q.get('blockid') ?? '', raw)
      return azure(201)
    }
    if (q.get('comp') === 'blocklist') {
      const ids = [...raw.toString('utf8').matchAll(/<(?:Latest|Uncommitted|Committed)>([^<]*)<\//g)].map(m => m[1])
      u.bytes = Buffer.concat(ids.map(id => u.blocks.get(id) ?? Buffer.alloc(0)))
      return azure(201)
    }
    u.bytes = raw // a single-shot upload
    return azure(201)
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const method = (req.method ?? 'GET').toUpperCase()
      const path = req.url ?? '/'
      const pathname =
        path
          .split('?')[0]
          .replace(/^\/api\/v3(?=\/)/, '')
          .replace(/\/+$/, '') || '/'
      if (pathname.startsWith('/_blob/') || pathname.startsWith('/twirp/')) {
        const rec: RecordedGitHubRequest = {
          method,
          path,
          body: undefined,
          headers: { ...req.headers },
          at: performance.timeOrigin + performance.now(),
          status: 0
        }
        requests.push(rec)
        const out = artifactService(
          method,
          pathname,
          new URLSearchParams(path.split('?')[1] ?? ''),
          Buffer.concat(chunks),
          req.headers,
          rec
        )
        rec.status = out.status
        res.writeHead(out.status, out.headers ?? {})
        res.end(out.body)
        return
      }
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      let body: any = raw.length > 0 ? raw : undefined
      let parseError = false
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw)
        } catch {
          parseError = true
        }
      }
      const rec: RecordedGitHubRequest = {
        method,
        path,
        body,
        headers: { ...req.headers },
        at: performance.timeOrigin + performance.now(),
        status: 0
      }
      requests.push(rec)
      const send = (r: RouteResult): void => {
        rec.status = r.status
        const payload = r.status === 204 || r.status === 304 ? '' : JSON.stringify(r.body)
        res.writeHead(r.status, { ...baseHeaders(), ...(r.headers ?? {}) })
        res.end(payload)
      }

      const token = String(req.headers.authorization ?? '')
        .replace(/^(token|bearer)\s+/i, '')
        .trim()
      const refused = parseError ? undefined : refusal(method, pathname, new URLSearchParams(path.split('?')[1] ?? ''), body, token)
      if (refused) {
        rec.nonconforming = refused.message
        nonconforming.push(rec)
      }
      const fault = takeFault(method, pathname)
      if (fault) {
        rec.faulted = true
        send({
          status: fault.status,
          body: fault.extra?.body ?? {
            message: STATUS_CODES[fault.status] ?? 'Error',
            documentation_url: DOCS,
            status: String(fault.status)
          },
          headers: fault.extra?.headers
        })
        return
      }

      if (!token) {
        send({ status: 401, body: { message: 'Requires authentication', documentation_url: DOCS, status: '401' } })
        return
      }
      if (opts.acceptTokens && !opts.acceptTokens.includes(token)) {
        send({ status: 401, body: { message: 'Bad credentials', documentation_url: DOCS, status: '401' } })
        return
      }
      if (parseError) {
        send({ status: 400, body: { message: 'Problems parsing JSON', documentation_url: DOCS, status: '400' } })
        return
      }
      if (refused) {
        if (refused.status === 404) unexpected.push(rec)
        const message =
          refused.status === 403 ? 'Resource not accessible by integration' : refused.status === 404 ? 'Not Found' : 'Invalid request.'
        send({
          status: refused.status,
          body: { message, documentation_url: DOCS, status: String(refused.status), fake_github: refused.message }
        })
        return
      }

      for (const route of routes) {
        if (route.method !== method) continue
        const m = route.re.exec(pathname)
        if (!m) continue
        rec.route = route.name
        Promise.resolve()
          .then(() =>
            route.handle(
              m.map(s => s ?? ''),
              body !== null && typeof body === 'object' ? body : {},
              new URLSearchParams(path.split('?')[1] ?? '')
            )
          )
          .then(send, err => send({ status: 500, body: { message: `fake-github: ${(err as Error)?.stack ?? String(err)}` } }))
        return
      }
      unexpected.push(rec)
      send(notFound())
    })
  })
  server.on('connection', socket => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  let closed: Promise<void> | undefined

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    unexpected,
    nonconforming,
    comments,
    reactions,
    runs,
    artifacts,
    addComment(c) {
      const id = nextCommentId++
      const kind = c.pullNumber !== undefined ? 'review' : 'issue'
      const comment: FakeComment = {
        id,
        body: c.body,
        kind,
        ...(kind === 'issue' ? { issue_number: c.issueNumber ?? 1 } : { pull_number: c.pullNumber, in_reply_to_id: c.inReplyToId }),
        updates: [c.body],
        repo: c.repo,
        user: { login: c.login ?? 'octocat', type: c.type ?? 'User' }
      }
      comments.set(id, comment)
      createdAt.set(id, now())
      return comment
    },
    fail(method, path, status, times = 1, extra) {
      faults.push({ method: method.toUpperCase(), path, status, remaining: times, everyOther: false, seen: 0, extra })
    },
    failEveryOther(method, path, status) {
      faults.push({ method: method.toUpperCase(), path, status, remaining: Infinity, everyOther: true, seen: 0 })
    },
    close: () => {
      closed ??= new Promise<void>(resolve => {
        server.close(() => resolve())
        server.closeAllConnections()
        for (const s of sockets) s.destroy()
      }).then(() => {
        if (opts.rest !== 'answer' && nonconforming.length)
          throw new Error(
            `fake-github: ${nonconforming.length} request(s) GitHub's REST description refuses:\n${nonconforming.map(r => `  ${r.nonconforming}`).join('\n')}`
          )
      })
      return closed
    }
  }
}
