// `/agent stop`: cancel the run going on in the thread, and let that run say
// who stopped it.
//
// How the stopped run learns who: the stop run first posts its reply (with a
// hidden marker naming the run and the sender, whose right to start runs the
// gate has already checked), and only then asks GitHub to cancel. The
// cancelled run gets SIGINT, reads the thread's comments once, and believes a
// stop marker only in a comment of the action's own identity (anyone can type
// one). Writing into the running run's progress comment instead would race
// with that run's own updates of it.
import type { Octokit } from '../github/octokit'
import type { Repo } from '../util'
import { MARKER, type Thread } from '../trigger'
import { neutraliseMentions } from '../untrusted'
import { cancelRun } from '../github/runs'
import { replyInReviewThread } from '../github/review-reply'
import { identityOf, isOurs, threadComments, type Identity } from '../github/thread'
import { isLogin, parseRunMarker, parseStopMarker, stopMarker } from './marker'

export type StopOutcome =
  | { kind: 'stopping'; runId: number; replyUrl?: string }
  | { kind: 'nothing-running'; replyUrl?: string }
  | { kind: 'failed'; runId: number; why: string; replyUrl?: string }

export interface StopOptions {
  octokit: Octokit
  repo: Repo
  thread: Thread
  /** who asked (already allowed by the gate) */
  by: string
  /** this run: never cancels itself */
  ownRunId: number
  serverUrl?: string
  identity?: Identity
}

const runLink = (o: StopOptions, runId: number): string =>
  `[run ${runId}](${o.serverUrl ?? 'https://github.com'}/${o.repo.owner}/${o.repo.repo}/actions/runs/${runId})`

/** The mention of a login, shown without pinging. */
export const quietMention = (login: string): string => neutraliseMentions(`@${login}`)

/** `marker` goes right after MARKER: the only place a marker is believed (marker.ts). */
async function reply(o: StopOptions, body: string, marker?: string): Promise<{ id: number; url: string }> {
  const text = marker ? `${MARKER}\n${marker}\n${body}` : `${MARKER}\n${body}`
  if (o.thread.kind === 'issue') {
    const { data } = await o.octokit.rest.issues.createComment({ ...o.repo, issue_number: o.thread.number, body: text })
    return { id: data.id, url: data.html_url }
  }
  const data = await replyInReviewThread(o.octokit, o.repo, o.thread, text)
  return { id: data.id, url: data.html_url }
}

async function edit(o: StopOptions, id: number, body: string): Promise<void> {
  const text = `${MARKER}\n${body}`
  if (o.thread.kind === 'issue') await o.octokit.rest.issues.updateComment({ ...o.repo, comment_id: id, body: text })
  else await o.octokit.rest.pulls.updateReviewComment({ ...o.repo, comment_id: id, body: text })
}

/** The run of the action still working in the thread: the newest progress comment of ours whose marker says running. */
export async function runningRun(
  o: Pick<StopOptions, 'octokit' | 'repo' | 'thread' | 'identity'>,
  me?: Identity
): Promise<number | undefined> {
  const identity = me ?? o.identity ?? (await identityOf(o.octokit))
  let found: number | undefined
  for (const c of await threadComments(o.octokit, o.repo, o.thread)) {
    if (!isOurs(c, identity)) continue
    const m = parseRunMarker(c.body)
    if (m?.state === 'running') found = m.runId
  }
  return found
}

/** Handles `/agent stop`: replies in the thread, and cancels the run going on there. Throws only when GitHub cannot be read or written. */
export async function requestStop(o: StopOptions): Promise<StopOutcome> {
  const who = isLogin(o.by) ? o.by : 'unknown'
  const runId = await runningRun(o)
  if (runId === undefined || runId === o.ownRunId) {
    const r = await reply(o, `Nothing to stop: no run of the agent is going on in this thread (asked by ${quietMention(who)}).`)
    return { kind: 'nothing-running', replyUrl: r.url }
  }
  // The marker goes out before the cancel, so the stopped run finds it when its SIGINT comes.
  const r = await reply(o, `🛑 Stopping ${runLink(o, runId)}, as ${quietMention(who)} asked.`, stopMarker({ runId, by: who }))
  const cancelled = await cancelRun(o.octokit, o.repo, runId)
  if (cancelled.ok) return { kind: 'stopping', runId, replyUrl: r.url }
  // No stop marker may stay behind for a run that was not stopped.
  const text = cancelled.finished
    ? `Nothing to stop: ${runLink(o, runId)} has already finished (asked by ${quietMention(who)}).`
    : `Could not stop ${runLink(o, runId)}: ${cancelled.why}.`
  await edit(o, r.id, text)
  return cancelled.finished ? { kind: 'nothing-running', replyUrl: r.url } : { kind: 'failed', runId, why: cancelled.why, replyUrl: r.url }
}

/** Who stopped run `runId`, from the newest stop marker in a comment of ours; undefined when nobody did (a plain cancel) or it cannot be read. */
export async function whoStopped(
  o: Pick<StopOptions, 'octokit' | 'repo' | 'thread' | 'identity'>,
  runId: number
): Promise<string | undefined> {
  try {
    const identity = o.identity ?? (await identityOf(o.octokit))
    let by: string | undefined
    for (const c of await threadComments(o.octokit, o.repo, o.thread)) {
      if (!isOurs(c, identity)) continue
      const m = parseStopMarker(c.body)
      if (m?.runId === runId) by = m.by
    }
    return by
  } catch {
    return undefined
  }
}
