// Event payload -> the task to run and where to answer, or why not to run.
import type { Settings } from './settings'
import { stripHidden } from './untrusted'

/** Hidden in every comment the action writes, so it never answers itself. */
export const MARKER = '<!-- bash-agent-action -->'

export type Thread = { kind: 'issue'; number: number } | { kind: 'review'; pullNumber: number; commentId: number }

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
  const skip = (reason: string): Decision => ({ run: false, reason })
  const action: string | undefined = payload?.action
  const comment = payload?.comment
  const issue = payload?.issue
  const pr = payload?.pull_request
  const people: Person[] = []
  const addPerson = (u: any) => {
    if (u?.login && !people.some(p => p.login === u.login)) people.push({ login: u.login, type: u.type ?? 'User' })
  }

  const isComment = eventName === 'issue_comment' || eventName === 'pull_request_review_comment'
  if (isComment) {
    if (action !== 'created') return skip(`the comment was ${action ?? 'changed'}, not created`)
    if (typeof comment?.body === 'string' && comment.body.includes(MARKER)) {
      return skip("the comment is one of this action's own reports")
    }
    addPerson(comment?.user)
  }
  if (eventName === 'issues') {
    if (action !== 'opened' && action !== 'labeled') return skip(`issue event "${action}" does not start a run`)
    if (action === 'opened') addPerson(issue?.user)
  }
  addPerson(payload?.sender)

  const context: Task['context'] = {}
  const thread = threadOf(eventName, payload, settings)
  let reactTo: Task['reactTo']
  if (eventName === 'issue_comment' && comment?.id) reactTo = { subject: 'issue_comment', id: comment.id }
  else if (eventName === 'pull_request_review_comment' && comment?.id) reactTo = { subject: 'review_comment', id: comment.id }
  else if (eventName === 'issues' && issue?.number) reactTo = { subject: 'issue', id: issue.number }

  const subject = issue ?? pr
  if (subject?.number) {
    context.issueNumber = subject.number
    context.issueTitle = subject.title ?? ''
    context.issueBody = subject.body ?? ''
    context.isPullRequest = Boolean(pr || issue?.pull_request)
  }
  if (eventName === 'pull_request_review_comment') {
    context.reviewPath = comment?.path
    context.reviewDiffHunk = comment?.diff_hunk
  }

  const make = (prompt: string, source: string, mode: TaskMode = 'new'): Decision => ({
    run: true,
    task: { prompt, thread, reactTo, people, context, source, mode }
  })

  if (settings.task) return make(settings.task, 'the task input')

  // The phrase counts only where a reader sees it: not inside an HTML comment
  // (issue templates are full of them) or other hidden text.
  const visible = (text: unknown): string => stripHidden(typeof text === 'string' ? text : '')
  const phrase = settings.triggerPhrase
  if (isComment) {
    const prompt = taskAfterPhrase(visible(comment?.body), phrase)
    if (prompt === undefined) return skip(`the comment does not contain ${phrase}`)
    const source = eventName === 'issue_comment' ? 'an issue comment' : 'a review comment'
    const sub = commentMode(prompt)
    if (sub.mode === 'new' && !sub.prompt) return skip(`"${phrase} new" needs a task after it`)
    return make(sub.prompt, source, sub.mode)
  }
  if (eventName === 'issues') {
    const title = visible(issue?.title)
    const body = visible(issue?.body)
    if (action === 'labeled') {
      const label: string = payload?.label?.name ?? ''
      if (!sameLabel(label, phrase)) return skip(`the label "${label}" is not ${phrase}`)
      // One request, one run: an issue opened with the phrase fires "opened" too,
      // and that event answers it; the label alone asks only when the text does not.
      if (taskAfterPhrase(body, phrase) !== undefined || taskAfterPhrase(title, phrase) !== undefined) {
        return skip(`the issue's text contains ${phrase}, so the "opened" event answers it, not the label`)
      }
      return make(`${title}\n\n${body}`.trim(), 'a labelled issue')
    }
    const fromBody = taskAfterPhrase(body, phrase)
    if (fromBody !== undefined) return make(fromBody, 'an opened issue')
    const fromTitle = taskAfterPhrase(title, phrase)
    if (fromTitle !== undefined) return make(fromTitle === title ? `${title}\n\n${body}`.trim() : fromTitle, 'an opened issue')
    return skip(`the issue does not contain ${phrase}`)
  }
  return skip(`event ${eventName} carries no comment or issue with ${phrase}; set the task input to run on it`)
}

/**
 * `/agent stop` (the word alone) stops; `/agent new <task>` starts afresh;
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
      commentId: payload.comment.in_reply_to_id ?? payload.comment.id
    }
  }
  const number = payload?.issue?.number ?? payload?.pull_request?.number ?? settings.issueNumber
  return number ? { kind: 'issue', number } : undefined
}
