// The thread is the session, for files: where the thread's last run
// committed to a branch, the next run's working copy starts from that branch
// and its commit goes onto it.
//
// Decision: the branch's changes travel with the history as a patch, not by a
// fetch. The runner's workspace is checked out at the event's commit, and the
// branch's commit C (made through the REST API) is not in its object store;
// fetching it would put the token into a git process. So a run that commits
// also saves the patch from its checked-out commit B to C's tree (checked for
// secrets when committed and again here; sealed with the conversation; at most
// MAX_CARRIED_PATCH_BYTES). The next run, before its first command:
//   - checkout is C: nothing to do;
//   - checkout is B: applies the patch to the copy (user mode: `git apply` as
//     the sandbox user; none mode: in the workspace), so the copy's tree is
//     C's tree, and makes here a local commit S (B plus the patch, in a scratch
//     object store borrowing the workspace's) that the hand-back diffs
//     against, so the run's patch holds its own changes only;
//   - else (or the patch no longer applies): starts from the checkout and the
//     report says why in one line.
// The commit then goes onto the branch with C as parent (CommitTarget.onto),
// without force; a branch that moved on gets the usual new branch. In user
// mode the copy's start does not hold the carried patch: the hand-back gets
// its bytes, computes the run's own changes against the start plus it, and
// applies both to the workspace, which then holds the branch's state.
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { readBase, type Base, type ChangesReport, type Exec } from '../changes'
import { safeGit, SAFE_GIT_CONFIG, safeGitEnv, scratchRepositoryIn } from '../changes/git'
import { inlineCode } from '../changes/render'
import type { Sandbox } from '../sandbox'
import { messageOf } from '../util'
import type { LoadedHistory } from './history'
import { carried, carriedBytes, committedDiff, planResume, resumeLine, type BranchRecord, type ThreadBranchRef } from './carry'

type Outcome =
  | { kind: 'none' }
  | { kind: 'at-branch'; onto: ThreadBranchRef }
  | { kind: 'applied'; onto: ThreadBranchRef; base: Base; diff: Buffer }
  | { kind: 'from-checkout' }

export interface PrepareOptions {
  workspace: string
  /** the runner's temp folder (RUNNER_TEMP): the scratch repositories go there */
  tmpDir: string
  /** adds a line to the report */
  note: (line: string) => void
  /** runs git on the runner's side: the trusted git only (sandbox/trusted-git.ts) */
  exec: Exec
}

/** What the next run's history records about the thread's branch. */
export type BranchWork = BranchRecord

/** git's last line of complaint (the one that says what failed), short. */
const lastLine = (text: string) => (text.trim().split('\n').pop() ?? '').slice(0, 200)

export class ThreadBranch {
  /** settled once the copy is ready (prepare) */
  private outcome: Outcome | undefined
  private scratch: string | undefined
  /** the runner's git, given by prepare (forHistory's git work follows a prepare that applied the branch) */
  private exec: Exec = () => Promise.reject(new Error('the thread branch was not prepared'))

  constructor(private readonly history: () => LoadedHistory | undefined) {}

  /**
   * The sandbox, once its copy starts from the thread's branch when it should
   * (or from the checkout, said through `note`). Rejects only as `ready` does.
   */
  prepare(ready: Promise<Sandbox>, o: PrepareOptions): Promise<Sandbox> {
    const h = this.history()
    if (!h?.branch || !h.commitSha) return ready
    return ready.then(async sb => {
      this.exec = o.exec
      const head = await readBase(o.workspace, o.exec).catch(() => undefined)
      const plan = planResume(h, head?.sha)
      let failed: { why: string } | undefined
      if (plan.kind === 'apply' && head) {
        const diff = carriedBytes(plan.patch)
        const done = await this.apply(sb, head, diff, o.tmpDir).catch(e => ({ ok: false as const, why: messageOf(e) }))
        if (done.ok) this.outcome = { kind: 'applied', onto: plan.onto, base: done.base, diff }
        else failed = { why: `its changes no longer apply to the working copy (git: ${inlineCode(done.why)})` }
      } else if (plan.kind === 'at-branch') this.outcome = plan
      this.outcome ??= plan.kind === 'none' ? plan : { kind: 'from-checkout' }
      const line = resumeLine(plan, failed)
      if (line) o.note(line)
      return sb
    })
  }

  /** The base commit S first (the patch must apply to the checkout's tree), then the copy. */
  private async apply(
    sb: Sandbox,
    head: Base,
    diff: Buffer,
    tmpDir: string
  ): Promise<{ ok: true; base: Base } | { ok: false; why: string }> {
    this.scratch = mkdtempSync(join(tmpDir, 'bash-agent-thread-'))
    const base = await baseCommit(this.exec, this.scratch, head, diff)
    if (!base.ok) return base
    const copy = await applyToCopy(this.exec, sb, diff, this.scratch)
    return copy.ok ? base : copy
  }

  /**
   * For the hand-back: what to diff against, the branch to commit onto, when
   * the copy started from it, and the carried patch applied to the copy (the
   * same bytes), which a copy's start does not hold.
   */
  forHandBack(base: Promise<Base | undefined>): { base: Promise<Base | undefined>; onto?: ThreadBranchRef; carried?: Buffer } {
    const out = this.outcome
    if (out?.kind === 'applied') return { base: Promise.resolve(out.base), onto: out.onto, carried: out.diff }
    if (out?.kind === 'at-branch') return { base, onto: out.onto }
    return { base }
  }

  /**
   * For the history: where the thread's work now is. A run that committed
   * leaves its branch and the patch from its checkout to it; one that did not
   * leaves the branch the last run left. Never throws.
   */
  async forHistory(
    changes: ChangesReport,
    start: Promise<Base | undefined>,
    containsSecret: (text: string) => boolean
  ): Promise<BranchWork> {
    try {
      const h = changes.kind === 'computed' && changes.handback?.kind === 'committed' ? changes.handback : undefined
      if (!h) {
        const last = this.history()
        if (!last?.branch || !last.commitSha) return {}
        const { branch, commitSha, pullNumber, patch } = last
        return { branch, commitSha, ...(pullNumber ? { pullNumber } : {}), ...(patch ? { patch } : {}) }
      }
      const work: BranchWork = { branch: h.branch, commitSha: h.sha, ...(h.pullRequest ? { pullNumber: h.pullRequest.number } : {}) }
      const real = await start
      if (!real || changes.kind !== 'computed') return work
      const committed = committedDiff(changes.patch)
      // resumed: the run's patch is against S, so the carried one is recomputed from the checkout
      const diff =
        this.outcome?.kind === 'applied' && this.scratch
          ? await diffToBranch(this.exec, real, this.outcome.base, committed, this.scratch)
          : committed
      const patch = carried(real.sha, diff, containsSecret)
      return patch ? { ...work, patch } : work
    } catch {
      return changes.kind === 'computed' && changes.handback?.kind === 'committed'
        ? { branch: changes.handback.branch, commitSha: changes.handback.sha }
        : {}
    } finally {
      if (this.scratch) rmSync(this.scratch, { recursive: true, force: true })
    }
  }
}

/** The copy may belong to the sandbox user: git is told to trust it (its config is not read: GIT_DIR is ours). */
const SAFE_C = [...SAFE_GIT_CONFIG, '-c', 'safe.directory=*']

/** A scratch repository whose store borrows `objects`, with an empty work tree. */
async function scratchRepo(exec: Exec, dir: string, objects: string) {
  const scratch = scratchRepositoryIn(dir, [objects])
  mkdirSync(join(dir, 'wt'))
  return {
    git: safeGit(exec, scratch, join(dir, 'wt'), process.env.PATH ?? '/usr/bin:/bin'),
    objects: join(scratch.gitDir, 'objects')
  }
}

/** S: the checkout plus the patch, as a commit in a scratch store (the workspace's objects are only read). */
async function baseCommit(
  exec: Exec,
  dir: string,
  head: Base,
  diff: Buffer
): Promise<{ ok: true; base: Base } | { ok: false; why: string }> {
  const { git, objects } = await scratchRepo(exec, join(dir, 'base'), head.objects)
  try {
    await git(['read-tree', head.sha])
    await git(['apply', '--cached', '--binary', '--whitespace=nowarn', '-'], diff)
    const tree = (await git(['write-tree'])).toString().trim()
    const who = ['-c', 'user.name=bash-agent', '-c', 'user.email=bash-agent@localhost']
    const sha = (await git([...who, 'commit-tree', tree, '-p', head.sha, '-m', 'the thread branch'])).toString().trim()
    return { ok: true, base: { sha, objects } }
  } catch (e) {
    return { ok: false, why: lastLine(messageOf(e)) }
  }
}

/**
 * `git apply` in the copy: as the sandbox user inside the containment (user
 * mode) or in the workspace (none), with a git directory of our own, so none
 * of the copy's config or hooks is read. All or nothing: git checks every hunk
 * before it writes.
 */
async function applyToCopy(hostExec: Exec, sb: Sandbox, diff: Buffer, scratch: string): Promise<{ ok: true } | { ok: false; why: string }> {
  const user = sb.mode === 'user'
  const exec: Exec = user ? (file, args, opts) => sb.exec(file, args, opts) : hostExec
  const gitDir = user ? join(sb.env.TMPDIR ?? dirname(sb.workdir), `thread-${randomBytes(12).toString('hex')}`) : join(scratch, 'apply')
  const env = { ...safeGitEnv(user ? '/usr/local/bin:/usr/bin:/bin' : (process.env.PATH ?? '/usr/bin:/bin')), LANG: 'C' }
  const made = await exec('git', [...SAFE_C, 'init', '-q', '--bare', '--template=', gitDir], { env })
  if (made.code !== 0) return { ok: false, why: lastLine(made.stderr) }
  const applied = await exec('git', [...SAFE_C, 'apply', '--binary', '--whitespace=nowarn', '-'], {
    cwd: sb.workdir,
    env: { ...env, GIT_DIR: gitDir, GIT_WORK_TREE: sb.workdir, GIT_INDEX_FILE: join(gitDir, 'index') },
    input: diff
  })
  await exec('rm', ['-rf', gitDir], { env })
  return applied.code === 0 ? { ok: true } : { ok: false, why: lastLine(applied.stderr) || `git apply ended with ${applied.code}` }
}

/** The patch from the checkout `real` to the branch's new tree: `from`'s tree plus what was committed. */
async function diffToBranch(exec: Exec, real: Base, from: Base, committed: Buffer, dir: string): Promise<Buffer> {
  if (committed.length === 0) return committed
  const { git } = await scratchRepo(exec, join(dir, 'carry'), from.objects)
  await git(['read-tree', from.sha])
  await git(['apply', '--cached', '--binary', '--whitespace=nowarn', '-'], committed)
  const tree = (await git(['write-tree'])).toString().trim()
  return git(['diff', '--binary', '--full-index', '--no-ext-diff', '--no-textconv', '--no-color', real.sha, tree])
}
