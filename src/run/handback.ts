// The agent's work handed back (src/changes): computed, checked, applied and,
// when asked for, committed, within its budget (said when it runs out); never throws.
import { tmpdir } from 'node:os'
import { dirname } from 'node:path'
import {
  handBack,
  readBase,
  localExec,
  targetOf,
  baseBranchOf,
  execScratch,
  parseUpper,
  type UpperEntry,
  type ChangesReport,
  type HandBackOptions,
  type HandBackProgress
} from '../changes'
import type { Sandbox } from '../sandbox'
import type { Log } from '../report/log'
import type { ThreadSession } from '../thread'
import type { Settings } from '../settings'
import type { Task } from '../trigger'
import { messageOf, within } from '../util'
import type { RunControl } from './control'
import type { GitHubSide } from '../github/side'
import { withTrustedGit, type TrustedGit } from '../sandbox/trusted-git'

export type Base = Awaited<ReturnType<typeof readBase>>

/** The starting commit, read before any command runs. */
export function readStart(workspace: string, git: TrustedGit): Promise<Base | undefined> {
  return readBase(workspace, withTrustedGit(localExec, git)).catch(() => undefined)
}

/** Where the agent worked in a user sandbox's copy: git runs there as the sandbox user, against the copy's start. */
export function copySource(
  sb: Pick<Sandbox, 'exec' | 'workdir' | 'startTree' | 'startObjects' | 'env' | 'listUpper' | 'withheld'>,
  git: TrustedGit
): HandBackOptions['source'] {
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C', HOME: '/nonexistent' }
  return {
    workdir: sb.workdir,
    exec: withTrustedGit(sb.exec, git),
    inPlace: false,
    start: sb.startTree && sb.startObjects ? { tree: sb.startTree, objects: sb.startObjects } : undefined,
    upper: sb.listUpper ? { list: upperOf(sb.listUpper), localExec: withTrustedGit(localExec, git) } : undefined,
    scratch: execScratch(sb.exec, env),
    tmpDir: sb.env.TMPDIR ?? dirname(sb.workdir),
    path: env.PATH,
    withheld: sb.withheld
  }
}

/** The upper layer's entries, or why they could not be listed (the hand-back then fails, and says so). */
const upperOf = (list: NonNullable<Sandbox['listUpper']>) => async (): Promise<UpperEntry[]> => {
  const r = await list()
  if (r.code !== 0) throw new Error(`the copy's upper layer could not be listed: ${r.stderr.trim().split('\n')[0] || `exit ${r.code}`}`)
  return parseUpper(r.stdout)
}

export interface HandBackContext {
  settings: Settings
  task: Task
  payload: unknown
  workspace: string
  /** where the agent worked, and how git runs there (the sandbox's copy, or the workspace) */
  source: HandBackOptions['source']
  base: Promise<Base | undefined>
  /** where the copy started when the thread's last run committed to a branch (src/thread/resume.ts) */
  thread?: Pick<ThreadSession, 'branch'>
  control: RunControl
  github: GitHubSide
  out: Log
  runUrl: string | undefined
  startedAt: number
}

/**
 * How long the hand-back may take: a fixed 120 s, also when the time limit is
 * nearly spent (the work is the run's result; README asks for a job timeout
 * with minutes to spare). A 100 MiB patch took under 40 s on 2 cores even with
 * the machine busy (npm run bench -- --only=handback); after a cancel the
 * runner kills within seconds.
 */
export const HANDBACK_BUDGET_MS = 120_000
const CANCELLED_BUDGET_MS = 2000

export async function handBackChanges(c: HandBackContext): Promise<ChangesReport> {
  const { control, github, out } = c
  const budget = control.signalAt !== undefined ? CANCELLED_BUDGET_MS : HANDBACK_BUDGET_MS
  const progress: HandBackProgress = {}
  const runId = process.env.GITHUB_RUN_ID ?? 'local'
  const deadline = Date.now() + budget - 1000 // no commit request after this: the report is never overtaken
  const repo = github.repo
  // a copy that started from the thread's branch is diffed against its tree and committed onto it
  const { base, onto, carried } = c.thread?.branch.forHandBack(c.base) ?? { base: c.base }
  const work = handBack({
    mode: c.settings.changes,
    base: await within(base, budget, undefined),
    workspace: c.workspace,
    source: { ...c.source, carried },
    containsSecret: text => out.redactor.contains(text),
    patchDir: process.env.RUNNER_TEMP || tmpdir(),
    patchName: `bash-agent-${runId}-${c.startedAt}.patch`,
    commit:
      github.canCommit && repo
        ? async () => ({
            octokit: await github.getOctokit(),
            repo,
            target: { ...targetOf(c.task), ...(onto ? { onto } : {}) },
            runId,
            runAttempt: process.env.GITHUB_RUN_ATTEMPT,
            runUrl: c.runUrl,
            serverUrl: process.env.GITHUB_SERVER_URL,
            task: c.task.prompt,
            baseBranch: baseBranchOf(process.env, c.payload),
            log: out.log,
            deadline
          })
        : undefined,
    noCommit: control.signalAt !== undefined ? 'the run was cancelled' : undefined,
    log: out.log,
    warn: out.warn,
    progress
  }).catch((e: unknown): ChangesReport => ({ kind: 'failed', why: messageOf(e) }))
  const late = Symbol('late')
  const done = await within(work, budget, late)
  // the files the agent never got are named in the report whatever became of its work
  const withheld = c.source.withheld?.length ? { withheld: c.source.withheld } : {}
  if (done !== late) return { ...done, ...withheld }
  const stopped = `the hand-back ran out of its ${Math.round(budget / 1000)} s`
  progress.stopped = stopped
  out.warn(`Changes: ${stopped}; the report says how far it got.`)
  return { ...stoppedReport(progress, stopped, c.source.inPlace), ...withheld }
}

/**
 * What a hand-back stopped by its budget did: the checked patch and whatever
 * of it was applied, or, before the checks ended, that nothing was handed back.
 */
export function stoppedReport(progress: HandBackProgress, stopped: string, inPlace: boolean): ChangesReport {
  const r = progress.report
  if (r?.kind !== 'computed') return { kind: 'failed', why: `${stopped} before the changes were checked`, inPlace }
  const reached = { ...r }
  if (!reached.applied && reached.mode !== 'none') reached.notApplied = stopped
  if (!reached.handback && (reached.mode === 'branch' || reached.mode === 'pull-request'))
    reached.notCommitted ??= `${stopped} before a commit was confirmed`
  return reached
}
