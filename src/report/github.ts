// GitHub at the edge: the eyes reaction, the one report comment (created at
// start, updated while the agent works, finished at the end) and permission
// look-ups. Every body passes through the redactor on its way out.
import * as github from '@actions/github'
import { retry } from '@octokit/plugin-retry'
import { throttling } from '@octokit/plugin-throttling'
import type { Thread } from '../trigger'

export type Octokit = ReturnType<typeof github.getOctokit>
export interface Repo {
  owner: string
  repo: string
}
export interface CommentRef {
  kind: 'issue' | 'review'
  id: number
  url: string
}
type Log = (message: string) => void

/** Progress updates are at most this often; GitHub limits content-creating requests. */
export const PROGRESS_INTERVAL_MS = 3000

export function createOctokit(token: string, log: Log): Octokit {
  const options = {
    log: { debug: () => {}, info: () => {}, warn: log, error: log },
    throttle: {
      onRateLimit: (after: number, _o: unknown, _k: unknown, count: number) => {
        log(`GitHub rate limit hit; retrying in ${after} s`)
        return count < 2
      },
      onSecondaryRateLimit: (after: number, _o: unknown, _k: unknown, count: number) => {
        log(`GitHub secondary rate limit hit; retrying in ${after} s`)
        return count < 2
      }
    },
    retry: { retries: 3 }
  }
  return github.getOctokit(token, options as Parameters<typeof github.getOctokit>[1], retry, throttling)
}

export async function permissionOf(octokit: Octokit, repo: Repo, login: string): Promise<string> {
  const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: login })
  // role_name tells maintain and triage apart; the legacy permission folds them into write and read.
  return (data as { role_name?: string }).role_name || data.permission
}

export async function addEyes(
  octokit: Octokit,
  repo: Repo,
  target: { subject: 'issue_comment' | 'review_comment' | 'issue'; id: number }
): Promise<void> {
  const content = 'eyes' as const
  if (target.subject === 'issue_comment') {
    await octokit.rest.reactions.createForIssueComment({ ...repo, comment_id: target.id, content })
  } else if (target.subject === 'review_comment') {
    await octokit.rest.reactions.createForPullRequestReviewComment({ ...repo, comment_id: target.id, content })
  } else {
    await octokit.rest.reactions.createForIssue({ ...repo, issue_number: target.id, content })
  }
}

/** The report comment: one comment per run, created once and then only updated. */
export class ReportComment {
  private ref: CommentRef | undefined
  private creating: Promise<CommentRef | undefined> | undefined
  private pending: string | undefined
  private timer: NodeJS.Timeout | undefined
  private inflight: Promise<void> | undefined
  private lastSent = 0
  private finished = false

  constructor(
    private readonly octokit: Octokit,
    private readonly repo: Repo,
    private readonly thread: Thread,
    private readonly redact: (text: string) => string,
    private readonly log: Log,
    existing?: CommentRef
  ) {
    this.ref = existing
  }

  get comment(): CommentRef | undefined {
    return this.ref
  }

  /** Creates the comment; failures are logged, and finish() tries again. */
  start(body: string): Promise<CommentRef | undefined> {
    this.creating ??= this.create(body).catch(error => {
      this.log(`Could not create the progress comment: ${(error as Error).message}`)
      this.creating = undefined
      return undefined
    })
    return this.creating
  }

  /** Shows progress, at most once every PROGRESS_INTERVAL_MS; only the newest body is sent. */
  progress(body: string): void {
    if (this.finished) return
    this.pending = body
    if (this.timer || this.inflight) return
    const wait = Math.max(0, this.lastSent + PROGRESS_INTERVAL_MS - Date.now())
    this.timer = setTimeout(() => this.flush(), wait)
  }

  /** The final body; throws when it could not be written after retries. */
  async finish(body: string): Promise<CommentRef> {
    this.finished = true
    clearTimeout(this.timer)
    this.timer = undefined
    this.pending = undefined
    await this.inflight
    await this.creating
    if (!this.ref) return this.create(body)
    await this.update(body)
    return this.ref
  }

  private flush(): void {
    this.timer = undefined
    const body = this.pending
    if (body === undefined || this.finished) return
    this.pending = undefined
    this.inflight = (async () => {
      const ref = this.ref ?? (await this.creating)
      if (!ref || this.finished) return
      await this.update(body)
    })()
      .catch(error => this.log(`Could not update the progress comment: ${(error as Error).message}`))
      .finally(() => {
        this.inflight = undefined
        this.lastSent = Date.now()
        if (this.pending !== undefined && !this.finished) this.progress(this.pending)
      })
  }

  private async create(body: string): Promise<CommentRef> {
    const text = this.redact(body)
    if (this.thread.kind === 'issue') {
      const { data } = await this.octokit.rest.issues.createComment({ ...this.repo, issue_number: this.thread.number, body: text })
      this.ref = { kind: 'issue', id: data.id, url: data.html_url }
    } else {
      const { data } = await this.octokit.rest.pulls.createReplyForReviewComment({
        ...this.repo,
        pull_number: this.thread.pullNumber,
        comment_id: this.thread.commentId,
        body: text
      })
      this.ref = { kind: 'review', id: data.id, url: data.html_url }
    }
    this.lastSent = Date.now()
    return this.ref
  }

  private async update(body: string): Promise<void> {
    const ref = this.ref
    if (!ref) return
    const text = this.redact(body)
    if (ref.kind === 'issue') {
      await this.octokit.rest.issues.updateComment({ ...this.repo, comment_id: ref.id, body: text })
    } else {
      await this.octokit.rest.pulls.updateReviewComment({ ...this.repo, comment_id: ref.id, body: text })
    }
  }
}
