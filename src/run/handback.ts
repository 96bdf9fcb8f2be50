// The agent's work handed back (src/changes): computed, checked, applied and,
// when asked for, committed, within the time the run has left; never throws.
import { tmpdir } from 'node:os'
import { handBack, readBase, localExec, targetOf, baseBranchOf, type ChangesReport, type HandBackOptions } from '../changes'
import type { Log } from '../report/log'
import type { ThreadSession } from '../thread'
import type { Settings } from '../settings'
import type { Task } from '../trigger'
import { messageOf, within } from '../util'
import type { RunControl } from './control'
import type { GitHubSide } from './github-side'
import { trustedGit, withTrustedGit } from '../sandbox/trusted-git'

export type Base = Awaited<ReturnType<typeof readBase>>

/** The starting commit, read before any command runs. */
export function readStart(workspace: string): Promise<Base | undefined> {
  return readBase(workspace, withTrustedGit(localExec, trustedGit(workspace))).catch(() => undefined)
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

export async function handBackChanges(c: HandBackContext): Promise<ChangesReport> {
  const { control, github, out } = c
  const budget = control.signalAt !== undefined ? 2000 : Math.min(120_000, Math.max(5000, (control.hardEnd - Date.now()) / 2))
  const runId = process.env.GITHUB_RUN_ID ?? 'local'
  const deadline = Date.now() + budget - 1000 // no commit request after this: the report is never overtaken
  const repo = github.repo
  // a copy that started from the thread's branch is diffed against its tree and committed onto it
  const { base, onto } = c.thread?.branch.forHandBack(c.base) ?? { base: c.base }
  const work = handBack({
    mode: c.settings.changes,
    base: await within(base, budget, undefined),
    workspace: c.workspace,
    source: c.source,
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
    warn: out.warn
  }).catch((e: unknown): ChangesReport => ({ kind: 'failed', why: messageOf(e) }))
  return within(work, budget, {
    kind: 'failed',
    why: `no time was left to hand the changes back (${Math.round(budget / 1000)} s)`
  } as ChangesReport)
}
