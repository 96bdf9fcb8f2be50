// A reply in a pull request's review thread. GitHub's "create a reply for a review comment"
// route (POST …/pulls/{n}/comments/{id}/replies) is not enabled for GitHub Apps, so the job's
// GITHUB_TOKEN gets 403 there; "create a review comment" with `in_reply_to` is, and makes the
// same reply. Its published description requires `commit_id` and `path` (GitHub ignores them
// when `in_reply_to` is set): the thread's own, read from its first comment when not known.
import type { Octokit } from './octokit'
import type { Repo } from '../util'

export interface ReviewThread {
  pullNumber: number
  /** the thread's first comment (replies to replies are not supported by the API) */
  commentId: number
  commitId?: string
  path?: string
}

export async function replyInReviewThread(
  octokit: Octokit,
  repo: Repo,
  thread: ReviewThread,
  body: string
): Promise<{ id: number; html_url: string }> {
  let { commitId, path } = thread
  if (!commitId || !path) {
    const { data } = await octokit.rest.pulls.getReviewComment({ ...repo, comment_id: thread.commentId })
    commitId = data.commit_id
    path = data.path
  }
  const { data } = await octokit.rest.pulls.createReviewComment({
    ...repo,
    pull_number: thread.pullNumber,
    in_reply_to: thread.commentId,
    commit_id: commitId,
    path,
    body
  })
  return data
}
