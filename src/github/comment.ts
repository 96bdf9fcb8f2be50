// The report comment and the eyes reaction. Every body passes through the
// redactor on its way out.
//
// Progress updates are not retried (the next one carries newer news) and never
// wait out a rate limit, so the final report is never stuck behind one.
import type { Thread } from '../trigger'
import { COMMENT_LIMIT } from '../report/render'
import type { Octokit } from './octokit'
import { replyInReviewThread } from './review-reply'
import { messageOf, statusOf, type Repo } from '../util'

export interface CommentRef {
  kind: 'issue' | 'review'
  id: number
  url: string
}
type Log = (message: string) => void

/**
 * Progress updates are at most this often. GitHub allows about 80
 * content-creating requests a minute and 500 an hour: after
 * FAST_PROGRESS_UPDATES updates (5 minutes at full pace) they slow to one every
 * SLOW_PROGRESS_INTERVAL_MS, which keeps a run of any length under both.
 */
export const PROGRESS_INTERVAL_MS = 3000
export const SLOW_PROGRESS_INTERVAL_MS = 10_000
export const FAST_PROGRESS_UPDATES = 100

/** The least time between two progress updates once `sent` were sent. */
export function progressInterval(sent: number): number {
  return sent < FAST_PROGRESS_UPDATES ? PROGRESS_INTERVAL_MS : SLOW_PROGRESS_INTERVAL_MS
}

/** Per-request marker: a request that must not wait out a rate limit. */
const NO_WAIT = { retries: 0, noRateLimitWait: true }

/** The eyes reaction: nice to have, so one retry at most; the caller logs a failure. */
export async function addEyes(
  octokit: Octokit,
  repo: Repo,
  target: { subject: 'issue_comment' | 'review_comment' | 'issue'; id: number }
): Promise<void> {
  const content = 'eyes' as const
  const request = { retries: 1 }
  if (target.subject === 'issue_comment') {
    await octokit.rest.reactions.createForIssueComment({ ...repo, comment_id: target.id, content, request })
  } else if (target.subject === 'review_comment') {
    await octokit.rest.reactions.createForPullRequestReviewComment({ ...repo, comment_id: target.id, content, request })
  } else {
    await octokit.rest.reactions.createForIssue({ ...repo, issue_number: target.id, content, request })
  }
}

/** Cuts a body to GitHub's limit (a last guard: the renderers already keep within it). */
export function clampBody(body: string, limit = COMMENT_LIMIT): string {
  if (body.length <= limit) return body
  const note = '\n\n*[… cut to fit GitHub’s comment limit]*'
  let cut = limit - note.length
  // never split a surrogate pair
  const code = body.charCodeAt(cut - 1)
  if (code >= 0xd800 && code <= 0xdbff) cut--
  return body.slice(0, cut) + note
}

export interface ReportCommentOptions {
  /** a comment that exists already (the post step): it is only updated */
  existing?: CommentRef
  /** called once the comment exists (also when it is created late) */
  onCreate?: (ref: CommentRef) => void
  /** the least time between progress updates once `sent` were sent (default progressInterval) */
  interval?: (sent: number) => number
}

/**
 * The report comment: one comment per run, created once and then only
 * updated. Progress updates are throttled and go out one at a time, newest
 * body only; finish() waits for the one in flight, so the final body is
 * always the last one written.
 */
export class ReportComment {
  private ref: CommentRef | undefined
  private creating: Promise<CommentRef | undefined> | undefined
  /** the newest body, rendered only when it is sent (events come far more often than updates) */
  private pending: (() => string) | undefined
  private timer: NodeJS.Timeout | undefined
  private inflight: Promise<void> | undefined
  private lastSent = 0
  private sent = 0
  private finished = false
  private readonly onCreate?: (ref: CommentRef) => void
  private readonly interval: (sent: number) => number

  constructor(
    private readonly octokit: Octokit,
    private readonly repo: Repo,
    private readonly thread: Thread | undefined,
    private readonly redact: (text: string) => string,
    private readonly log: Log,
    opts: ReportCommentOptions = {}
  ) {
    this.ref = opts.existing
    this.onCreate = opts.onCreate
    this.interval = opts.interval ?? progressInterval
  }

  get comment(): CommentRef | undefined {
    return this.ref
  }

  /** progress updates written so far (not counting creation and the final body) */
  get updates(): number {
    return this.sent
  }

  /** Creates the comment; failures are logged, and the next progress update or finish() tries again. */
  start(body: string): Promise<CommentRef | undefined> {
    if (this.ref) return Promise.resolve(this.ref)
    if (this.creating) return this.creating
    this.lastSent = Date.now()
    this.creating = this.create(body)
      .then(
        ref => ref as CommentRef | undefined,
        error => {
          this.log(`Could not create the progress comment: ${this.redact(messageOf(error))}`)
          return undefined
        }
      )
      .then(ref => {
        this.creating = undefined
        this.schedule()
        return ref
      })
    return this.creating
  }

  /** Shows progress, at most once every interval; only the newest body is rendered and sent. */
  progress(body: () => string): void {
    if (this.finished) return
    this.pending = body
    this.schedule()
  }

  /** Drops any queued progress update (the final body is coming). */
  stop(): void {
    this.finished = true
    clearTimeout(this.timer)
    this.timer = undefined
    this.pending = undefined
  }

  /** The final body; throws when it could not be written after retries. */
  async finish(body: string): Promise<CommentRef> {
    this.stop()
    await this.inflight
    await this.creating
    if (!this.ref) return this.create(body)
    try {
      await this.update(body, false)
    } catch (error) {
      // Someone deleted the progress comment: post the report as a new one.
      if ((statusOf(error) === 404 || statusOf(error) === 410) && this.thread) {
        this.log('The progress comment is gone; posting the report as a new comment.')
        this.ref = undefined
        return this.create(body)
      }
      throw error
    }
    return this.ref
  }

  /** Sets the timer for the pending body, unless one is set, a request is out, or the comment is being created. */
  private schedule(): void {
    if (this.timer || this.inflight || this.creating || this.finished || this.pending === undefined) return
    const wait = Math.max(0, this.lastSent + this.interval(this.sent) - Date.now())
    this.timer = setTimeout(() => this.flush(), wait)
    this.timer.unref?.()
  }

  private flush(): void {
    this.timer = undefined
    const render = this.pending
    if (render === undefined || this.finished) return
    this.pending = undefined
    const body = render()
    this.inflight = (async () => {
      if (!this.ref) {
        // creation failed earlier: try again, with this body
        if (this.thread) await this.start(body)
        return
      }
      await this.update(body, true)
      this.sent++
    })()
      .catch(error => this.log(`Could not update the progress comment: ${this.redact(messageOf(error))}`))
      .finally(() => {
        this.inflight = undefined
        this.lastSent = Date.now()
        this.schedule()
      })
  }

  private async create(body: string): Promise<CommentRef> {
    if (!this.thread) throw new Error('there is no issue or pull request to comment on')
    const text = clampBody(this.redact(body))
    let ref: CommentRef
    if (this.thread.kind === 'issue') {
      const { data } = await this.octokit.rest.issues.createComment({ ...this.repo, issue_number: this.thread.number, body: text })
      ref = { kind: 'issue', id: data.id, url: data.html_url }
    } else {
      const data = await replyInReviewThread(this.octokit, this.repo, this.thread, text)
      ref = { kind: 'review', id: data.id, url: data.html_url }
    }
    this.ref = ref
    this.lastSent = Date.now()
    try {
      this.onCreate?.(ref)
    } catch {
      // a callback must not undo the comment
    }
    return ref
  }

  private async update(body: string, isProgress: boolean): Promise<void> {
    const ref = this.ref
    if (!ref) return
    const text = clampBody(this.redact(body))
    const request = isProgress ? NO_WAIT : undefined
    if (ref.kind === 'issue') {
      await this.octokit.rest.issues.updateComment({ ...this.repo, comment_id: ref.id, body: text, request })
    } else {
      await this.octokit.rest.pulls.updateReviewComment({ ...this.repo, comment_id: ref.id, body: text, request })
    }
  }
}
