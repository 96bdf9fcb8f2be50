// The checked patch committed by the action itself through the REST API's Git
// database (blobs, a tree on the base commit's tree, a commit whose parent is
// the starting commit, a ref), so the token never meets a git process in a
// folder the agent touched, and GitHub signs the commit. Every failure is soft:
// the result says what is missing, the diff stays in the report.
import { GitDatabase, type TreeEntry } from '../github/git-database'
import type { Octokit } from '../github/octokit'
import type { Repo } from '../util'
import type { FileChange, Patch } from './patch'
import { ciConfigNote, inlineCode } from './markdown'
import { messageOf, statusOf } from '../util'

export interface CommitTarget {
  /** the issue the run answers (not a pull request) */
  issueNumber?: number
  /** the pull request the run answers */
  pullNumber?: number
  /** the branch the thread's last run committed to, when the run's copy started from it (src/thread/resume.ts): the commit goes onto it */
  onto?: { branch: string; sha: string; pullNumber?: number }
}

export interface CommitOptions {
  octokit: Octokit
  repo: Repo
  patch: Patch
  blobs: Map<string, Buffer>
  mode: 'branch' | 'pull-request'
  target: CommitTarget
  runId: string
  runAttempt?: string
  runUrl?: string
  serverUrl?: string
  /** the task, for the commit message and the pull request title */
  task: string
  /** the branch a new pull request targets (when the run answers no pull request) */
  baseBranch: string
  log: (message: string) => void
  /** no request is started after this time (ms since the epoch): the report must not wait, nor be overtaken by a late commit */
  deadline?: number
}

export type Handback =
  | {
      kind: 'committed'
      branch: string
      sha: string
      branchUrl: string
      compareUrl: string
      /** the commit went onto the head branch of the pull request the run answers */
      onHead: boolean
      /** what the user should know (moved-on head, workflow files left out...) */
      notes: string[]
      pullRequest?: { number: number; url: string; created: boolean }
      /** why the pull request could not be opened */
      pullRequestError?: string
    }
  | { kind: 'not-committed'; why: string; notes: string[] }

/** The branch a run commits to when it does not commit onto a pull request's head. */
export function branchName(target: CommitTarget, runId: string, runAttempt?: string): string {
  const n = target.issueNumber ?? target.pullNumber
  const attempt = runAttempt && runAttempt !== '1' ? `-${runAttempt}` : ''
  return n !== undefined ? `agent/issue-${n}-${runId}${attempt}` : `agent/run-${runId}${attempt}`
}

/** The permission or setting a failed request points at, in words. */
export function explain(e: unknown, doing: 'contents' | 'pulls'): string {
  const status = statusOf(e)
  const text = messageOf(e)
  if (/not permitted to create or approve pull requests/i.test(text)) {
    return 'the repository does not allow GitHub Actions to create pull requests (Settings → Actions → General → Workflow permissions: "Allow GitHub Actions to create and approve pull requests")'
  }
  if (status === 403 || status === 404) {
    return doing === 'contents'
      ? `the github-token may not write to the repository (HTTP ${status}): give the job \`permissions: contents: write\``
      : `the github-token may not open pull requests (HTTP ${status}): give the job \`permissions: pull-requests: write\``
  }
  return status ? `GitHub answered HTTP ${status}: ${text}` : text
}

/** Text that is valid UTF-8 can travel inline in the tree; anything else goes as a base64 blob. */
function asUtf8(content: Buffer): string | undefined {
  const text = content.toString('utf8')
  return Buffer.from(text, 'utf8').equals(content) ? text : undefined
}

const db = (o: CommitOptions) => new GitDatabase(o.octokit, o.repo)

const modeOf = (m: string | undefined): TreeEntry['mode'] => (m === '100755' || m === '120000' ? m : '100644')

function firstLine(task: string, max: number): string {
  const line =
    task
      .split('\n')
      .map(l => l.trim())
      .find(l => l !== '') ?? 'changes'
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/**
 * Commits the patch's files (workflow files excepted); never throws. Onto the
 * thread's branch (target.onto), the parent is the branch's commit: the copy's
 * tree was that commit's (src/thread/resume.ts).
 */
export async function commitPatch(o: CommitOptions): Promise<Handback> {
  if (o.target.onto && o.patch.baseSha !== o.target.onto.sha)
    return commitPatch({ ...o, patch: { ...o.patch, baseSha: o.target.onto.sha } })
  const notes = workflowNotes(o.patch)
  const notCommitted = (why: string): Handback => ({ kind: 'not-committed', why, notes })
  const files = o.patch.files.filter(f => !f.workflow)
  if (files.length === 0) return notCommitted('nothing to commit besides workflow changes')

  const { onto } = o.target
  const plan: PullPlan = onto
    ? { kind: 'onto-head', head: { ref: onto.branch, sha: onto.sha, number: onto.pullNumber } }
    : o.target.pullNumber !== undefined
      ? await planOnPull(o, o.target.pullNumber, notes)
      : { kind: 'new-branch' }
  if (plan.kind === 'not-committed') return plan
  const made = await makeCommit(o, files)
  if (made.kind === 'failed') return notCommitted(made.why)
  const done = (branch: string, onHead: boolean) => committed(o, made.sha, branch, onHead, notes)

  let prHeadRef = plan.kind === 'new-branch' ? plan.prHeadRef : undefined
  if (plan.kind === 'onto-head') {
    const { head } = plan
    const moved = await moveHead(o, head, made.sha)
    if (moved.kind === 'moved') {
      if (head.number === undefined) return done(head.ref, false)
      return { ...done(head.ref, true), pullRequest: { number: head.number, url: `${repoUrlOf(o)}/pull/${head.number}`, created: false } }
    }
    if (moved.kind === 'failed') return notCommitted(moved.why)
    prHeadRef = head.ref
    notes.push(moved.note)
  }

  const branch = branchName(o.target, o.runId, o.runAttempt)
  try {
    inTime(o)
    await db(o).createBranch(branch, made.sha)
  } catch (e) {
    return notCommitted(explain(e, 'contents'))
  }
  const result = done(branch, false)
  if (o.mode !== 'pull-request') return result
  return openDraft(o, branch, prHeadRef ?? o.baseBranch, result)
}

function workflowNotes(patch: Patch): string[] {
  const n = patch.files.filter(f => f.workflow).length
  if (n === 0) return []
  return [
    `${n} change${n === 1 ? '' : 's'} under .github/workflows/ ${n === 1 ? 'was' : 'were'} applied but not committed (the token may not change workflows)`
  ]
}

/** No request is started once the deadline has passed. */
function inTime(o: CommitOptions): void {
  if (o.deadline !== undefined && Date.now() > o.deadline) throw new Error('no time was left to finish the commit before the report')
}

const repoUrlOf = (o: CommitOptions): string => `${o.serverUrl ?? 'https://github.com'}/${o.repo.owner}/${o.repo.repo}`

/** a branch to commit onto: a pull request's head, or the thread's branch (its pull request, when it has one) */
type PullHead = { ref: string; sha: string; number?: number }
type NotCommitted = Extract<Handback, { kind: 'not-committed' }>
/** Where the commit goes on a pull request: onto its head branch, or a new branch (whose draft PR may go into `prHeadRef`). */
type PullPlan = { kind: 'onto-head'; head: PullHead } | { kind: 'new-branch'; prHeadRef?: string } | NotCommitted

/** On a pull request: its head branch, when it lives here and is where the run started. */
async function planOnPull(o: CommitOptions, pullNumber: number, notes: string[]): Promise<PullPlan> {
  const { repo } = o
  try {
    const pr = await db(o).pull(pullNumber)
    const headRepo = pr.head.repo
    if (!headRepo || headRepo.toLowerCase() !== `${repo.owner}/${repo.repo}`.toLowerCase()) {
      return {
        kind: 'not-committed',
        why: `the pull request's branch lives in ${headRepo ? `the fork ${headRepo}` : 'a fork that is gone'}, where the action cannot push; the diff below (and the patch output) can be applied by hand`,
        notes
      }
    }
    if (pr.head.sha === o.patch.baseSha) return { kind: 'onto-head', head: { ref: pr.head.ref, sha: pr.head.sha, number: pr.number } }
    let moved = false
    try {
      moved = await db(o).isAhead(o.patch.baseSha, pr.head.sha)
    } catch {
      // the new branch below says enough
    }
    notes.push(
      moved
        ? `the pull request's branch ${inlineCode(pr.head.ref)} moved on since the run started, so the changes went to a new branch`
        : `the run did not start from the head of the pull request's branch ${inlineCode(pr.head.ref)}, so the changes went to a new branch`
    )
    // A draft PR goes into the head branch only when the starting commit is on it; else into the base branch, so it shows just the agent's changes.
    return { kind: 'new-branch', prHeadRef: moved ? pr.head.ref : undefined }
  } catch (e) {
    return { kind: 'not-committed', why: `the pull request could not be read: ${explain(e, 'contents')}`, notes }
  }
}

/** The commit object (blobs, tree, commit on the starting commit), on no branch yet. */
async function makeCommit(o: CommitOptions, files: FileChange[]): Promise<{ kind: 'made'; sha: string } | { kind: 'failed'; why: string }> {
  try {
    let baseTree
    try {
      baseTree = await db(o).treeOf(o.patch.baseSha)
    } catch (e) {
      const status = statusOf(e)
      if (status === 404 || status === 422) {
        return {
          kind: 'failed',
          why: `the starting commit ${o.patch.baseSha.slice(0, 12)} is not on GitHub (was it made by an earlier step and not pushed?)`
        }
      }
      throw e
    }
    const tree: TreeEntry[] = []
    for (const f of files) {
      if (f.status === 'renamed' && f.oldPath !== undefined)
        tree.push({ path: f.oldPath, mode: modeOf(f.oldMode), type: 'blob', sha: null })
      if (f.status === 'deleted') {
        tree.push({ path: f.path, mode: modeOf(f.oldMode), type: 'blob', sha: null })
        continue
      }
      tree.push(await entryFor(o, f))
    }
    inTime(o)
    const newTree = await db(o).createTree(baseTree, tree)
    const issue = o.target.issueNumber ?? o.target.pullNumber
    const message = [
      `Agent: ${firstLine(o.task, 60)}`,
      '',
      `Changes made by the bash agent${issue !== undefined ? ` for #${issue}` : ''}${o.runUrl ? ` in ${o.runUrl}` : ''}.`
    ].join('\n')
    inTime(o)
    return { kind: 'made', sha: await db(o).createCommit(message, newTree, o.patch.baseSha) }
  } catch (e) {
    return { kind: 'failed', why: explain(e, 'contents') }
  }
}

function committed(o: CommitOptions, sha: string, branch: string, onHead: boolean, notes: string[]) {
  const repoUrl = repoUrlOf(o)
  const path = branch.split('/').map(encodeURIComponent).join('/')
  return {
    kind: 'committed' as const,
    branch,
    sha,
    branchUrl: `${repoUrl}/tree/${path}`,
    compareUrl: `${repoUrl}/compare/${o.patch.baseSha}...${path}`,
    onHead,
    notes
  }
}

/** Fast-forwards the pull request's head branch to the commit; `elsewhere` when it moved on or refused (the commit then goes to a new branch). */
async function moveHead(
  o: CommitOptions,
  head: PullHead,
  sha: string
): Promise<{ kind: 'moved' } | { kind: 'elsewhere'; note: string } | { kind: 'failed'; why: string }> {
  try {
    // No force: when the branch moved on meanwhile this fails and the commit goes to a new branch.
    await db(o).fastForward(head.ref, sha)
    return { kind: 'moved' }
  } catch (e) {
    if (statusOf(e) !== 422) return { kind: 'failed', why: explain(e, 'contents') }
    return {
      kind: 'elsewhere',
      note: /fast.forward/i.test(messageOf(e))
        ? `the pull request's branch ${inlineCode(head.ref)} moved on while the changes were committed, so they went to a new branch`
        : `the pull request's branch ${inlineCode(head.ref)} could not be updated (${messageOf(e)}), so the changes went to a new branch`
    }
  }
}

/** Opens a draft pull request from `branch` into `into`; a failure is told in the result, the commit stands. */
async function openDraft(o: CommitOptions, branch: string, into: string, result: Handback & { kind: 'committed' }): Promise<Handback> {
  try {
    const body = [
      o.target.issueNumber !== undefined
        ? `Closes #${o.target.issueNumber}`
        : o.target.pullNumber !== undefined
          ? `For #${o.target.pullNumber}`
          : '',
      `Changes made by the bash agent${o.runUrl ? ` in [this run](${o.runUrl})` : ''}. Review them before merging.`,
      ciConfigNote(o.patch.files)
    ]
      .filter(Boolean)
      .join('\n\n')
    inTime(o)
    const pr = await db(o).openDraft({ title: firstLine(o.task, 100), head: branch, base: into, body })
    return { ...result, pullRequest: { ...pr, created: true } }
  } catch (e) {
    return { ...result, pullRequestError: explain(e, 'pulls') }
  }
}

async function entryFor(o: CommitOptions, f: FileChange): Promise<TreeEntry> {
  const content = f.newSha ? o.blobs.get(f.newSha) : undefined
  if (!content) throw new Error(`the content of ${f.path} is missing`)
  const mode = modeOf(f.newMode)
  const text = asUtf8(content)
  if (text !== undefined) return { path: f.path, mode, type: 'blob', content: text }
  inTime(o)
  return { path: f.path, mode, type: 'blob', sha: await db(o).createBlob(content) }
}
