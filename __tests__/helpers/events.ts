// Real webhook payloads (from @octokit/webhooks-examples, the examples GitHub's
// own docs are built from) with just the fields a test cares about overridden.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Payload = any
interface Definition {
  name: string
  actions: string[]
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  examples: any[]
}

/** The package's folder, found upward from here or from the working folder. */
function packageDir(): string {
  for (const start of [dirname(fileURLToPath(import.meta.url)), process.cwd()]) {
    for (let dir = start; ; dir = dirname(dir)) {
      const pkgDir = join(dir, 'node_modules', '@octokit', 'webhooks-examples')
      if (existsSync(join(pkgDir, 'package.json'))) return pkgDir
      if (dirname(dir) === dir) break
    }
  }
  throw new Error('events: @octokit/webhooks-examples is not installed (npm install)')
}

/** The package: its folder, version and main file, read once. */
let examples: { dir: string; version: string; main: string } | undefined
function examplesPackage(): { dir: string; version: string; main: string } {
  if (examples) return examples
  const dir = packageDir()
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string; main?: string }
  return (examples = { dir, version: pkg.version, main: pkg.main ?? 'api.github.com/index.json' })
}

/** Every event's definition, from the package's one 4 MB file. */
function loadAll(): Definition[] {
  const { dir, main } = examplesPackage()
  return JSON.parse(readFileSync(join(dir, main), 'utf8')) as Definition[]
}

/**
 * One event's definition. Each test file has its own module registry, so each
 * would parse the whole 4 MB file (~0.1 s of CPU, and its garbage): it is split
 * once into a file per event under node_modules/.cache (written whole, then
 * renamed; a folder per package version), and read from the whole file where
 * that cannot be written. Read once per event in a test file.
 */
const definitions = new Map<string, Definition | undefined>()
function definition(event: string): Definition | undefined {
  if (!definitions.has(event)) definitions.set(event, readDefinition(event))
  return definitions.get(event)
}

function readDefinition(event: string): Definition | undefined {
  const { dir, version } = examplesPackage()
  const cache = join(dir, '..', '..', '.cache', 'webhooks-examples', version)
  try {
    if (!existsSync(join(cache, 'complete'))) {
      mkdirSync(cache, { recursive: true })
      for (const def of loadAll()) writeWhole(join(cache, `${def.name}.json`), JSON.stringify(def))
      writeWhole(join(cache, 'complete'), '')
    }
    const file = join(cache, `${event}.json`)
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Definition) : undefined
  } catch {
    return loadAll().find(d => d.name === event)
  }
}

/** `content` at `file`, never seen half written (another jest worker may read it meanwhile). */
function writeWhole(file: string, content: string): void {
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, content)
  renameSync(tmp, file)
}

/**
 * A deep copy of a real example payload of `event` (optionally with this `action`);
 * `index` picks among several examples (default 0, the first).
 */
export function examplePayload(event: string, action?: string, index = 0): Payload {
  const def = definition(event)
  if (!def) throw new Error(`events: no examples for event "${event}"`)
  const matching = def.examples.filter(e => action === undefined || e.action === action)
  if (matching.length === 0) {
    const actions = [...new Set(def.examples.map(e => e.action))].join(', ')
    throw new Error(`events: no "${event}" example with action "${action}" (examples exist for: ${actions})`)
  }
  if (index < 0 || index >= matching.length)
    throw new Error(`events: "${event}"/${action ?? '*'} has ${matching.length} examples, asked for #${index}`)
  return structuredClone(matching[index])
}

/** owner and repo of the payload's repository */
export function repoOf(payload: Payload): { owner: string; repo: string } {
  const r = payload?.repository
  if (r?.owner?.login && r?.name) return { owner: r.owner.login, repo: r.name }
  if (typeof r?.full_name === 'string' && r.full_name.includes('/')) {
    const [owner, repo] = r.full_name.split('/')
    return { owner, repo }
  }
  return { owner: 'octo-org', repo: 'octo-repo' }
}

/** A user object like the ones in payloads, for `login` (Bots get /apps/ urls). */
export function userObject(login: string, type: 'User' | 'Bot' = 'User'): Record<string, unknown> {
  let h = 0
  for (const ch of login.toLowerCase()) h = (h * 31 + ch.charCodeAt(0)) % 90_000_000
  const id = 10_000_000 + h
  const api = `https://api.github.com/users/${encodeURIComponent(login)}`
  return {
    login,
    id,
    node_id: Buffer.from(`04:${type}${id}`).toString('base64'),
    avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
    gravatar_id: '',
    url: api,
    html_url: type === 'Bot' ? `https://github.com/apps/${login.replace(/\[bot\]$/, '')}` : `https://github.com/${login}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type,
    site_admin: false
  }
}

/** Keep the example's user object when the login is unchanged (it is real), else build one. */
function userFor(example: Payload, login: string | undefined, type: 'User' | 'Bot' | undefined): Payload {
  if ((login === undefined || login === example?.login) && (type === undefined || type === example?.type)) return example
  return userObject(login ?? example?.login ?? 'octocat', type ?? (login?.endsWith('[bot]') ? 'Bot' : 'User'))
}

function association(payload: Payload, login: string, explicit: string | undefined): string {
  if (explicit !== undefined) return explicit
  return login.toLowerCase() === repoOf(payload).owner.toLowerCase() ? 'OWNER' : 'NONE'
}

function setIssueNumber(payload: Payload, issue: Payload, n: number, isPr: boolean): void {
  const { owner, repo } = repoOf(payload)
  const api = `https://api.github.com/repos/${owner}/${repo}`
  issue.number = n
  issue.url = `${api}/issues/${n}`
  issue.labels_url = `${api}/issues/${n}/labels{/name}`
  issue.comments_url = `${api}/issues/${n}/comments`
  issue.events_url = `${api}/issues/${n}/events`
  issue.html_url = `https://github.com/${owner}/${repo}/${isPr ? 'pull' : 'issues'}/${n}`
  if (isPr) {
    issue.pull_request = {
      url: `${api}/pulls/${n}`,
      html_url: `https://github.com/${owner}/${repo}/pull/${n}`,
      diff_url: `https://github.com/${owner}/${repo}/pull/${n}.diff`,
      patch_url: `https://github.com/${owner}/${repo}/pull/${n}.patch`,
      merged_at: null
    }
  } else {
    delete issue.pull_request
  }
}

export interface IssueCommentOptions {
  body: string
  /** commenter (comment.user and sender); default: the example's (Codertocat, the repo owner) */
  login?: string
  userType?: 'User' | 'Bot'
  /** issue is a pull request (issue.pull_request present) */
  onPullRequest?: boolean
  /** default 'created' */
  action?: string
  issueNumber?: number
  commentId?: number
  /** comment.author_association; default 'OWNER' when login is the repo owner, else 'NONE' */
  authorAssociation?: string
}

/** A real issue_comment payload with the fields that matter overridden. */
export function issueCommentEvent(opts: IssueCommentOptions): Payload {
  const p = examplePayload('issue_comment', opts.action ?? 'created')
  const { owner, repo } = repoOf(p)
  const user = userFor(p.comment.user, opts.login, opts.userType)
  p.comment.user = user
  p.sender = structuredClone(user)
  p.comment.body = opts.body
  p.comment.author_association = association(p, user.login, opts.authorAssociation)
  const n = opts.issueNumber ?? p.issue.number
  setIssueNumber(p, p.issue, n, opts.onPullRequest === true)
  const id = opts.commentId ?? p.comment.id
  const api = `https://api.github.com/repos/${owner}/${repo}`
  p.comment.id = id
  p.comment.node_id = Buffer.from(`012:IssueComment${id}`).toString('base64')
  p.comment.url = `${api}/issues/comments/${id}`
  p.comment.issue_url = `${api}/issues/${n}`
  p.comment.html_url = `${p.issue.html_url}#issuecomment-${id}`
  return p
}

export interface IssuesOptions {
  /** 'opened' (default), 'labeled', or any action with an example */
  action?: string
  title?: string
  body?: string | null
  /** issue author; also the sender unless `sender` is given */
  login?: string
  userType?: 'User' | 'Bot'
  /** who performed the action (e.g. who added the label); default: `login` */
  sender?: string
  issueNumber?: number
  /** for 'labeled'/'unlabeled': the label name (default: the example's) */
  label?: string
  /** issue.author_association; default 'OWNER' when login is the repo owner, else 'NONE' */
  authorAssociation?: string
}

/** A real issues payload (opened / labeled / ...) with the fields that matter overridden. */
export function issuesEvent(opts: IssuesOptions = {}): Payload {
  const p = examplePayload('issues', opts.action ?? 'opened')
  const user = userFor(p.issue.user, opts.login, opts.userType)
  p.issue.user = user
  p.sender = opts.sender !== undefined ? userFor(p.sender, opts.sender, undefined) : structuredClone(user)
  if (opts.title !== undefined) p.issue.title = opts.title
  if (opts.body !== undefined) p.issue.body = opts.body
  p.issue.author_association = association(p, user.login, opts.authorAssociation)
  setIssueNumber(p, p.issue, opts.issueNumber ?? p.issue.number, false)
  if (opts.label !== undefined) {
    const { owner, repo } = repoOf(p)
    const label = {
      ...(p.label ?? { id: 1362934389, node_id: 'MDU6TGFiZWwxMzYyOTM0Mzg5', color: 'd73a4a', default: false, description: null })
    }
    label.name = opts.label
    label.url = `https://api.github.com/repos/${owner}/${repo}/labels/${encodeURIComponent(opts.label)}`
    p.label = label
    const labels = Array.isArray(p.issue.labels) ? p.issue.labels.filter((l: { name?: string }) => l.name !== opts.label) : []
    p.issue.labels = [...labels, label]
  }
  return p
}

export interface ReviewCommentOptions {
  body: string
  login?: string
  userType?: 'User' | 'Bot'
  pullNumber?: number
  commentId?: number
  /** default 'created' */
  action?: string
  /** comment.in_reply_to_id (the comment is a reply in an existing thread) */
  inReplyToId?: number
  /** comment.author_association; default 'OWNER' when login is the repo owner, else 'NONE' */
  authorAssociation?: string
}

/** A real pull_request_review_comment payload with the fields that matter overridden. */
export function reviewCommentEvent(opts: ReviewCommentOptions): Payload {
  const p = examplePayload('pull_request_review_comment', opts.action ?? 'created')
  const { owner, repo } = repoOf(p)
  const api = `https://api.github.com/repos/${owner}/${repo}`
  const user = userFor(p.comment.user, opts.login, opts.userType)
  p.comment.user = user
  p.sender = structuredClone(user)
  p.comment.body = opts.body
  p.comment.author_association = association(p, user.login, opts.authorAssociation)
  const n = opts.pullNumber ?? p.pull_request.number
  const id = opts.commentId ?? p.comment.id
  p.pull_request.number = n
  p.pull_request.url = `${api}/pulls/${n}`
  p.pull_request.html_url = `https://github.com/${owner}/${repo}/pull/${n}`
  p.pull_request.issue_url = `${api}/issues/${n}`
  p.pull_request.comments_url = `${api}/issues/${n}/comments`
  p.pull_request.review_comments_url = `${api}/pulls/${n}/comments`
  p.comment.id = id
  p.comment.node_id = Buffer.from(`024:PullRequestReviewComment${id}`).toString('base64')
  p.comment.url = `${api}/pulls/comments/${id}`
  p.comment.html_url = `https://github.com/${owner}/${repo}/pull/${n}#discussion_r${id}`
  p.comment.pull_request_url = `${api}/pulls/${n}`
  if (p.comment._links) {
    p.comment._links = {
      self: { href: p.comment.url },
      html: { href: p.comment.html_url },
      pull_request: { href: `${api}/pulls/${n}` }
    }
  }
  if (opts.inReplyToId !== undefined) p.comment.in_reply_to_id = opts.inReplyToId
  else delete p.comment.in_reply_to_id
  return p
}

/** Alias with the event's own name. */
export const pullRequestReviewCommentEvent = reviewCommentEvent

export interface WorkflowDispatchOptions {
  inputs?: Record<string, string>
  /** sender login; default the example's */
  login?: string
  /** default the example's ref (refs/heads/main) */
  ref?: string
}

/** A real workflow_dispatch payload (repository octo-org/octo-repo). */
export function workflowDispatchEvent(opts: WorkflowDispatchOptions = {}): Payload {
  const p = examplePayload('workflow_dispatch')
  if (opts.inputs !== undefined) p.inputs = { ...opts.inputs }
  if (opts.login !== undefined) p.sender = userFor(p.sender, opts.login, undefined)
  if (opts.ref !== undefined) p.ref = opts.ref
  return p
}
