// Hand the work back: compute -> check -> apply -> commit (when asked), and
// the record of it that the report and the outputs show.
import * as core from '../actions-core'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Exec } from './exec'
import { computePatch, type ComputedPatch, type HeldBack, type Patch, type ScratchFs } from './patch'
import { computeChangedPatch, type UpperEntry } from './changed'
import { applyPatch, revertInPlace, type Applied } from './apply'
import { commitPatch, type CommitOptions, type Handback } from './commit'
import { messageOf } from '../util'
import { SAFE_GIT_CONFIG, safeGitEnv } from './git'
import { jobPathDirs, treeChecks } from './tree-checks'

import type { ChangesMode } from './modes'
export { CHANGES_MODES, type ChangesMode } from './modes'

/** Where the run started: the commit checked out in the workspace and the store that holds it. */
export interface Base {
  sha: string
  objects: string
}

export type ChangesReport =
  | { kind: 'no-repository'; withheld?: HeldBack[] } // the workspace is no git checkout: nothing to compare with
  /** `inPlace`: the agent worked in the workspace, where its changes are, unchecked */
  | { kind: 'failed'; why: string; inPlace?: boolean; withheld?: HeldBack[] }
  | {
      kind: 'computed'
      mode: ChangesMode
      patch: Patch
      patchFile?: string
      applied?: Applied
      handback?: Handback
      /** why no commit was tried although the mode asked for one */
      notCommitted?: string
      /** why the checked patch was not applied to the workspace although the mode asked for it */
      notApplied?: string
      /** workspace files left out of the agent's copy because they hold a secret (named, never shown) */
      withheld?: HeldBack[]
    }

/**
 * A hand-back the caller may stop (its budget spent): `report` is what it has
 * reached so far; once `stopped` is set nothing more is applied or committed.
 */
export interface HandBackProgress {
  stopped?: string
  report?: ChangesReport
}

/** The workspace's HEAD and object store, read at start (before the agent runs); undefined when it is no git checkout. */
export async function readBase(workspace: string, exec: Exec, pathEnv = process.env.PATH ?? '/usr/bin:/bin'): Promise<Base | undefined> {
  const env = { ...safeGitEnv(pathEnv), GIT_CEILING_DIRECTORIES: workspace.replace(/\/[^/]*$/, '') || '/' }
  const r = await exec('git', [...SAFE_GIT_CONFIG, 'rev-parse', '--path-format=absolute', '--git-path', 'objects', 'HEAD^{commit}'], {
    cwd: workspace,
    env
  })
  if (r.code !== 0) return undefined
  const [objects, sha] = r.stdout.toString('utf8').trim().split('\n')
  return /^[0-9a-f]{40}$/.test(sha ?? '') && objects ? { sha, objects } : undefined
}

export interface HandBackOptions {
  mode: ChangesMode
  base: Base | undefined
  workspace: string
  /**
   * Where the agent worked and how git runs there: its copy in the sandbox
   * (the patch computed inside it, against the copy's start) or, with
   * `sandbox: none`, the workspace itself (`inPlace`).
   */
  source: {
    workdir: string
    exec: Exec
    inPlace: boolean
    /** the copy's state at start, and stores holding its objects (colon-separated) */
    start?: { tree: string; objects: string }
    scratch?: ScratchFs
    tmpDir?: string
    /** PATH to find git with there */
    path?: string
    /** the thread branch's carried patch (its bytes), applied to the copy after `start` (ComputedPatch.carried) */
    carried?: Buffer
    /**
     * The copy is an overlay on the workspace: what the agent wrote is its upper layer, listed here;
     * only those paths are compared (changed.ts), the workspace's versions read by the action with `localExec`
     */
    upper?: { list: () => Promise<UpperEntry[]>; localExec: Exec }
    /** workspace files the agent was never given (they hold a secret): nothing comes back in their place */
    withheld?: HeldBack[]
  }
  /** the folders on the job's PATH for later steps (default: jobPathDirs of this process's environment) */
  pathDirs?: string[]
  containsSecret: (text: string) => boolean
  /** folder for the patch file (RUNNER_TEMP) */
  patchDir: string
  patchName: string
  /** what a commit needs from GitHub; undefined when there is no token or repository */
  commit?: () => Promise<Omit<CommitOptions, 'patch' | 'blobs' | 'mode'>>
  /** why no commit may be made now (the run was cancelled), if so */
  noCommit?: string
  log: (message: string) => void
  /** for what went wrong (a warning on the runner) */
  warn?: (message: string) => void
  progress?: HandBackProgress
}

/** Where the run answers, as a commit target: an issue, or a pull request (also for review threads). */
export function targetOf(task: {
  thread?: { kind: 'issue'; number: number } | { kind: 'review'; pullNumber: number }
  context: { issueNumber?: number; isPullRequest?: boolean }
}): CommitOptions['target'] {
  if (task.thread?.kind === 'review') return { pullNumber: task.thread.pullNumber }
  const n = task.thread?.kind === 'issue' ? task.thread.number : task.context.issueNumber
  if (n === undefined) return {}
  return task.context.isPullRequest ? { pullNumber: n } : { issueNumber: n }
}

/** The branch a new pull request targets: the branch the workflow ran on, else the repository's default branch. */
export function baseBranchOf(env: NodeJS.ProcessEnv, payload: unknown): string {
  if (env.GITHUB_REF?.startsWith('refs/heads/')) return env.GITHUB_REF.slice('refs/heads/'.length)
  const def = (payload as { repository?: { default_branch?: unknown } } | undefined)?.repository?.default_branch
  return typeof def === 'string' && def ? def : 'main'
}

export async function handBack(o: HandBackOptions): Promise<ChangesReport> {
  const warn = o.warn ?? o.log
  // the copy's state at start is a baseline of its own (user mode), also where the workspace has no commit
  if (!o.base && !o.source.start?.tree && !o.source.upper) {
    o.log("Changes: the workspace is not a git checkout, so there is nothing to compare the agent's work with.")
    return { kind: 'no-repository' }
  }
  let computed
  try {
    computed = await computeFor(o)
  } catch (e) {
    warn(`Changes: could not compute the agent's changes: ${messageOf(e)}`)
    return { kind: 'failed', why: messageOf(e) }
  }
  const { patch, blobs } = computed
  if ('compared' in computed)
    o.log(
      `Changes: compared ${computed.compared} path${computed.compared === 1 ? '' : 's'} the agent wrote; the rest of the workspace was not read.`
    )
  if (o.source.inPlace) {
    for (const f of revertInPlace(computed.secrets, o.workspace))
      warn(`Changes: could not put back ${JSON.stringify(f.path)}, which was held back: ${f.why}`)
  }
  patch.heldBack.push(...(computed.carried?.heldBack ?? []))
  const report: ChangesReport = { kind: 'computed', mode: o.mode, patch }
  o.log(
    `Changes: ${patch.files.length} file${patch.files.length === 1 ? '' : 's'} changed${patch.heldBack.length ? `, ${patch.heldBack.length} held back` : ''}.`
  )
  for (const h of patch.heldBack) o.log(`Changes: held back ${JSON.stringify(h.path)}: ${h.why}`)
  if (o.progress) o.progress.report = report
  if (patch.files.length === 0 && !computed.carried?.files.length) return report

  const patchFile = patch.diff && !o.containsSecret(patch.diff) ? writePatchFile(o, patch.diffBytes, warn) : undefined
  if (patchFile) report.patchFile = patchFile
  if (o.source.inPlace) report.applied = { kind: 'in-place' }
  else if (o.mode !== 'none' && o.progress?.stopped) report.notApplied = o.progress.stopped
  else if (o.mode !== 'none') {
    report.applied = applyToWorkspace(o.workspace, computed)
    for (const f of report.applied.kind === 'applied' ? report.applied.failed : [])
      warn(`Changes: could not apply ${JSON.stringify(f.path)}: ${f.why}`)
  }
  if (patch.files.length === 0) return report
  if ((o.mode === 'branch' || o.mode === 'pull-request') && !o.base)
    warn('Changes: not committed: the workspace had no commit checked out to commit onto.')
  else if (o.mode === 'branch' || o.mode === 'pull-request') Object.assign(report, await commitChanges(o, o.mode, patch, blobs, warn))
  return report
}

/** The checks against the tree the patch lands in: the workspace, the job's PATH, the files the agent never got. */
function checksOfTree(o: HandBackOptions) {
  const withheld = new Set((o.source.withheld ?? []).map(f => f.path))
  return treeChecks({ workspace: o.workspace, pathDirs: o.pathDirs ?? jobPathDirs(process.env, o.workspace), withheld })
}

/** The carried patch first (the workspace has the start's files), then the run's own changes on top of it. */
function applyToWorkspace(workspace: string, computed: ComputedPatch): Applied {
  const carried = computed.carried
  const first = carried?.files.length
    ? applyPatch({ ...computed.patch, files: carried.files }, carried.blobs, workspace)
    : { kind: 'applied' as const, files: 0, failed: [] }
  const own = applyPatch(computed.patch, computed.blobs, workspace)
  if (first.kind !== 'applied' || own.kind !== 'applied') return own
  return { kind: 'applied', files: first.files + own.files, failed: [...first.failed, ...own.failed] }
}

/** The patch file for the `patch` output; undefined (and a warning) when it cannot be written. */
function writePatchFile(o: HandBackOptions, diff: Buffer, warn: (message: string) => void): string | undefined {
  const file = join(o.patchDir, o.patchName)
  try {
    writeFileSync(file, diff)
    return file
  } catch (e) {
    warn(`Changes: could not write the patch file: ${messageOf(e)}`)
    return undefined
  }
}

/** The commit the mode asks for, or why none was tried; either way told in the log. */
async function commitChanges(
  o: HandBackOptions,
  mode: CommitOptions['mode'],
  patch: Patch,
  blobs: Map<string, Buffer>,
  warn: (message: string) => void
): Promise<{ notCommitted: string } | { handback: Handback }> {
  if (o.noCommit) return { notCommitted: o.noCommit }
  if (o.progress?.stopped) return { notCommitted: o.progress.stopped }
  if (!o.commit) return { notCommitted: 'there is no github-token or repository to commit with' }
  let h: Handback
  try {
    h = await commitPatch({ ...(await o.commit()), patch, blobs, mode })
  } catch (e) {
    h = { kind: 'not-committed', why: messageOf(e), notes: [] }
  }
  if (h.kind === 'committed')
    o.log(`Changes: committed ${h.sha} to ${h.branch}${h.pullRequest ? `; pull request ${h.pullRequest.url}` : ''}.`)
  else warn(`Changes: not committed: ${h.why}`)
  if (h.kind === 'committed' && h.pullRequestError) warn(`Changes: no pull request: ${h.pullRequestError}`)
  return { handback: h }
}

/** The outputs changed-files, patch, branch, commit-sha, pull-request-url. */
export function setChangesOutputs(r: ChangesReport | undefined, redact: (s: string) => string): void {
  const computed = r?.kind === 'computed' ? r : undefined
  const h = computed?.handback?.kind === 'committed' ? computed.handback : undefined
  // unknown (not '0') when the hand-back failed: there may well have been changes
  core.setOutput('changed-files', r?.kind === 'failed' ? '' : String(computed?.patch.files.length ?? 0))
  core.setOutput('patch', computed?.patchFile ?? '')
  core.setOutput('branch', redact(h?.branch ?? ''))
  core.setOutput('commit-sha', h?.sha ?? '')
  core.setOutput('pull-request-url', h?.pullRequest?.url ?? '')
}

export { localExec, type Exec } from './exec'
export { execScratch, type ScratchFs } from './patch'
export { parseUpper, type UpperEntry } from './changed'

/** The agent's changes: from the overlay's upper layer when there is one (changed.ts), else the whole tree (patch.ts). */
async function computeFor(o: HandBackOptions): Promise<ComputedPatch & { compared?: number }> {
  const src = o.source
  return src.upper
    ? await computeChangedPatch({
        workspace: o.workspace,
        localExec: src.upper.localExec,
        workdir: src.workdir,
        exec: src.exec,
        scratch: src.scratch,
        tmpDir: src.tmpDir ?? o.patchDir,
        localTmpDir: o.patchDir,
        path: src.path,
        baseSha: o.base?.sha ?? '',
        baseObjects: o.base?.objects ?? '',
        upper: await src.upper.list(),
        carried: src.carried,
        containsSecret: o.containsSecret,
        treeChecks: checksOfTree(o)
      })
    : computePatch({
        workdir: src.workdir,
        baseSha: o.base?.sha ?? '',
        baseObjects: src.start?.objects ?? o.base?.objects ?? '',
        diffBase: src.start?.tree,
        exec: src.exec,
        containsSecret: o.containsSecret,
        tmpDir: src.tmpDir ?? o.patchDir,
        scratch: src.scratch,
        path: src.path,
        // the carried patch counts only where the copy's start is the baseline; in place, the base commit holds it
        carried: src.start?.tree ? src.carried : undefined,
        treeChecks: checksOfTree(o)
      })
}
