// Event payload -> the task to run and where to answer, or why not to run.
import type { Settings } from './settings'
import { stripHidden } from './untrusted'

/** Hidden in every comment the action writes, so it never answers itself. */
export const MARKER = '<!-- bash-agent-action -->'

/** `commitId` and `path`: the review comment's, for a reply (src/github/review-reply.ts) */
export type Thread =
  { kind: 'issue'; number: number } | { kind: 'review'; pullNumber: number; commentId: number; commitId?: string; path?: string }

export interface Person {
  login: string
  type: string
}

export interface Task {
  prompt: string
  /** where the report goes; none for a dispatch without issue-number (job summary only) */
  thread?: Thread
  /** what gets the eyes reaction */
  reactTo?: { subject: 'issue_comment' | 'review_comment' | 'issue'; id: number }
  /** everyone whose permission decides whether the run may start (author and sender) */
  people: Person[]
  /** information from the thread, for the system prompt (untrusted text) */
  context: {
    issueNumber?: number
    issueTitle?: string
    issueBody?: string
    isPullRequest?: boolean
    reviewPath?: string
    reviewDiffHunk?: string
  }
  source: string
  /**
   * continue: a comment in a thread goes on from the last run there (the thread is the session);
   * new: starts afresh (`/agent new <task>`, an issue, the task input);
   * stop: `/agent stop` cancels the run going on in the thread.
   */
  mode: TaskMode
}

export type TaskMode = 'continue' | 'new' | 'stop'

export type Decision = { run: true; task: Task } | { run: false; reason: string }

/* eslint-disable @typescript-eslint/no-explicit-any */
export function decide(eventName: string, payload: any, settings: Settings): Decision {
  const ignored = ignoredEvent(eventName, payload)
  if (ignored) return { run: false, reason: ignored }
  const asked: Asked = settings.task
    ? { kind: 'asked', prompt: settings.task, source: 'the task input', mode: 'new' }
    : askedIn(eventName, payload, settings.triggerPhrase)
  if (asked.kind === 'not-asked') return { run: false, reason: asked.reason }
  const { prompt, source, mode } = asked
  const thread = threadOf(eventName, payload, settings)
  const reactTo = reactToOf(eventName, payload)
  return {
    run: true,
    task: { prompt, thread, reactTo, people: peopleOf(eventName, payload), context: contextOf(eventName, payload), source, mode }
  }
}

const isCommentEvent = (eventName: string): boolean => eventName === 'issue_comment' || eventName === 'pull_request_review_comment'

/** Why this event starts nothing whatever it says, if so: an edited comment, the action's own report, an issue closed... */
function ignoredEvent(eventName: string, payload: any): string | undefined {
  const action: string | undefined = payload?.action
  if (isCommentEvent(eventName)) {
    if (action !== 'created') return `the comment was ${action ?? 'changed'}, not created`
    const body = payload?.comment?.body
    if (typeof body === 'string' && body.includes(MARKER)) return "the comment is one of this action's own reports"
  }
  if (eventName === 'issues' && action !== 'opened' && action !== 'labeled') return `issue event "${action}" does not start a run`
  return undefined
}

/** Everyone whose permission decides whether the run may start: the comment's or new issue's author, and the sender. */
function peopleOf(eventName: string, payload: any): Person[] {
  const people: Person[] = []
  const addPerson = (u: any) => {
    if (u?.login && !people.some(p => p.login === u.login)) people.push({ login: u.login, type: u.type ?? 'User' })
  }
  if (isCommentEvent(eventName)) addPerson(payload?.comment?.user)
  if (eventName === 'issues' && payload?.action === 'opened') addPerson(payload?.issue?.user)
  addPerson(payload?.sender)
  return people
}

function reactToOf(eventName: string, payload: any): Task['reactTo'] {
  const { comment, issue } = payload ?? {}
  if (eventName === 'issue_comment' && comment?.id) return { subject: 'issue_comment', id: comment.id }
  if (eventName === 'pull_request_review_comment' && comment?.id) return { subject: 'review_comment', id: comment.id }
  if (eventName === 'issues' && issue?.number) return { subject: 'issue', id: issue.number }
  return undefined
}

function contextOf(eventName: string, payload: any): Task['context'] {
  const context: Task['context'] = {}
  const issue = payload?.issue
  const pr = payload?.pull_request
  const subject = issue ?? pr
  if (subject?.number) {
    context.issueNumber = subject.number
    context.issueTitle = subject.title ?? ''
    context.issueBody = subject.body ?? ''
    context.isPullRequest = Boolean(pr || issue?.pull_request)
  }
  if (eventName === 'pull_request_review_comment') {
    context.reviewPath = payload?.comment?.path
    context.reviewDiffHunk = payload?.comment?.diff_hunk
  }
  return context
}

/** What the event asks the agent to do, or why it asks nothing. */
type Asked = { kind: 'asked'; prompt: string; source: string; mode: TaskMode } | { kind: 'not-asked'; reason: string }

// The phrase counts only where a reader sees it: not inside an HTML comment
// (issue templates are full of them) or other hidden text.
const visible = (text: unknown): string => stripHidden(typeof text === 'string' ? text : '')

function askedIn(eventName: string, payload: any, phrase: string): Asked {
  const notAsked = (reason: string): Asked => ({ kind: 'not-asked', reason })
  if (isCommentEvent(eventName)) {
    const source = eventName === 'issue_comment' ? 'an issue comment' : 'a review comment'
    const raw: unknown = payload?.comment?.body
    if (typeof raw === 'string' && isStopComment(raw, phrase)) return { kind: 'asked', prompt: '', source, mode: 'stop' }
    const prompt = taskAfterPhrase(visible(raw), phrase)
    if (prompt === undefined) return notAsked(`the comment does not contain ${phrase}`)
    const sub = commentMode(prompt)
    // The workflow's concurrency group tells a stop by the exact rule alone; a
    // near miss would wait behind the run it means to stop, and "stop" is no task.
    if (sub.mode === 'stop') return notAsked(`to stop the run going on, the comment's first line must be "${phrase} stop" and nothing else`)
    if (sub.mode === 'new' && !sub.prompt) return notAsked(`"${phrase} new" needs a task after it`)
    return { kind: 'asked', prompt: sub.prompt, source, mode: sub.mode }
  }
  if (eventName === 'issues') return askedInIssue(payload, phrase)
  return notAsked(`event ${eventName} carries no comment or issue with ${phrase}; set the task input to run on it`)
}

function askedInIssue(payload: any, phrase: string): Asked {
  const notAsked = (reason: string): Asked => ({ kind: 'not-asked', reason })
  const asked = (prompt: string, source: string): Asked => ({ kind: 'asked', prompt, source, mode: 'new' })
  const title = visible(payload?.issue?.title)
  const body = visible(payload?.issue?.body)
  if (payload?.action === 'labeled') {
    const label: string = payload?.label?.name ?? ''
    if (!sameLabel(label, phrase)) return notAsked(`the label "${label}" is not ${phrase}`)
    // One request, one run: an issue opened with the phrase fires "opened" too,
    // and that event answers it; the label alone asks only when the text does not.
    if (taskAfterPhrase(body, phrase) !== undefined || taskAfterPhrase(title, phrase) !== undefined) {
      return notAsked(`the issue's text contains ${phrase}, so the "opened" event answers it, not the label`)
    }
    return asked(`${title}\n\n${body}`.trim(), 'a labelled issue')
  }
  const fromBody = taskAfterPhrase(body, phrase)
  if (fromBody !== undefined) return asked(fromBody, 'an opened issue')
  const fromTitle = taskAfterPhrase(title, phrase)
  if (fromTitle !== undefined) return asked(fromTitle === title ? `${title}\n\n${body}`.trim() : fromTitle, 'an opened issue')
  return notAsked(`the issue does not contain ${phrase}`)
}

/**
 * The stop rule, the same in the shipped workflows' concurrency group: the
 * comment's first line is the phrase, one space and `stop`, and nothing else
 * (any case; the line ends at \n or \r\n). Whitespace is not trimmed, because
 * GitHub's expressions cannot trim.
 */
export function isStopComment(body: string, phrase: string): boolean {
  const first = /^[^\r\n]*/.exec(body)?.[0] ?? ''
  const rest = body.slice(first.length)
  return first.toLowerCase() === `${phrase} stop`.toLowerCase() && (rest === '' || rest.startsWith('\n') || rest.startsWith('\r\n'))
}

/**
 * What follows the phrase: `stop` (the word alone) is stop-like (only
 * isStopComment's exact form stops); `/agent new <task>` starts afresh;
 * anything else continues the thread's conversation.
 */
export function commentMode(prompt: string): { mode: TaskMode; prompt: string } {
  const text = prompt.trim()
  if (/^stop[.!]?$/i.test(text)) return { mode: 'stop', prompt: '' }
  const fresh = /^new(?:[\s:,.!]+|$)/i.exec(text)
  if (fresh) return { mode: 'new', prompt: text.slice(fresh[0].length).trim() }
  return { mode: 'continue', prompt: text }
}

/** The text after the phrase; the whole text when nothing follows; undefined when the phrase is absent. */
export function taskAfterPhrase(text: string, phrase: string): string | undefined {
  const escaped = phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  // The phrase must stand alone: "/agent" does not match "/agents" or "x/agent".
  // Quoted lines and code are not requests: a reply quoting an earlier "/agent ..." starts nothing.
  const match = new RegExp(`(^|[\\s(])${escaped}(?=$|[\\s:,.!?)])`, 'i').exec(maskQuotesAndCode(text))
  if (!match) return undefined
  // Punctuation right after the phrase ("/agent: fix", "(/agent) fix", "/agent.") is not part of the task.
  const after = text
    .slice(match.index + match[0].length)
    .replace(/^[:,.!?)]+/, '')
    .trim()
  return after || text.trim()
}

/** The text with blockquote lines, fenced blocks and inline code blanked out, keeping every index. */
function maskQuotesAndCode(text: string): string {
  const blank = (m: string) => m.replace(/[^\n]/g, ' ')
  return text
    .replace(/^( {0,3})(```+|~~~+)[^\n]*\n[\s\S]*?(?:^ {0,3}\2[^\n]*$|(?![\s\S]))/gm, blank)
    .replace(/^ {0,3}>.*$/gm, blank)
    .replace(/(`+)[^`\n]+?\1/g, blank)
}

function sameLabel(label: string, phrase: string): boolean {
  const norm = (s: string) => s.trim().toLowerCase().replace(/^\//, '')
  return label !== '' && norm(label) === norm(phrase)
}

function threadOf(eventName: string, payload: any, settings: Settings): Thread | undefined {
  if (eventName === 'pull_request_review_comment' && payload?.comment?.id && payload?.pull_request?.number) {
    // Replies to replies are not supported by the API: answer the thread's first comment.
    return {
      kind: 'review',
      pullNumber: payload.pull_request.number,
      commentId: payload.comment.in_reply_to_id ?? payload.comment.id,
      ...(typeof payload.comment.commit_id === 'string' ? { commitId: payload.comment.commit_id } : {}),
      ...(typeof payload.comment.path === 'string' ? { path: payload.comment.path } : {})
    }
  }
  const number = payload?.issue?.number ?? payload?.pull_request?.number ?? settings.issueNumber
  return number ? { kind: 'issue', number } : undefined
}
