// The thread's branch as data: what a run that committed leaves for the next
// one (the patch from the checked-out commit to the branch's tree) and what
// the next run does with it. Pure; the git work is in resume.ts.
import { sectionsOf, splitDiff, type Patch } from '../changes/patch'
import { inlineCode } from '../changes/render'
import { contentHoldsSecret } from '../changes/checks'

/**
 * Most bytes of a carried patch. The history it travels in is refused past
 * 64 MiB unpacked (history.ts) and also holds the conversation, so this stays
 * well under it; a larger patch is not carried and the next run starts from
 * the checkout (said in its report).
 */
export const MAX_CARRIED_PATCH_BYTES = 16 * 1024 * 1024

/**
 * The patch that turns the checked-out commit `base` into the branch's tree (`git apply`-able, binary), as the
 * history keeps it: `diff` holds its bytes one character each (`encoding: 'latin1'`), so a text file that is not
 * UTF-8 keeps its bytes through the JSON. A history written before holds UTF-8 text and no `encoding`.
 */
export interface CarriedPatch {
  base: string
  diff: string
  encoding?: 'latin1'
}

/** The carried patch's bytes. */
export const carriedBytes = (p: CarriedPatch): Buffer => Buffer.from(p.diff, p.encoding === 'latin1' ? 'latin1' : 'utf8')

/** The branch the thread's last run committed to, its commit, and the pull request it is the head of, if one is known. */
export interface ThreadBranchRef {
  branch: string
  sha: string
  pullNumber?: number
}

/** What the history says about the thread's branch (history.ts LoadedHistory). */
export interface BranchRecord {
  branch?: string
  commitSha?: string
  pullNumber?: number
  patch?: CarriedPatch
}

export type ResumePlan =
  /** the last run committed nothing: the copy is the checkout, as for any run */
  | { kind: 'none' }
  /** the checkout is the branch's commit itself: nothing to apply */
  | { kind: 'at-branch'; onto: ThreadBranchRef }
  /** the checkout is the commit the branch was made from: the carried patch makes the copy the branch's tree */
  | { kind: 'apply'; onto: ThreadBranchRef; patch: CarriedPatch }
  /** the copy stays the checkout, and the report says why */
  | { kind: 'from-checkout'; branch: string; why: string }

const SHA = /^[0-9a-f]{40}$/
const short = (sha: string) => sha.slice(0, 7)

/**
 * Where the copy starts. Only from the commit the branch was made from (or the
 * branch's commit): on any other checkout the copy would not be the branch's
 * tree, and a commit onto the branch would carry the checkout's other
 * differences into the files it touches.
 */
export function planResume(h: BranchRecord | undefined, head: string | undefined): ResumePlan {
  if (!h?.branch || typeof h.commitSha !== 'string' || !SHA.test(h.commitSha)) return { kind: 'none' }
  const onto: ThreadBranchRef = { branch: h.branch, sha: h.commitSha, ...(h.pullNumber ? { pullNumber: h.pullNumber } : {}) }
  const fromCheckout = (why: string): ResumePlan => ({ kind: 'from-checkout', branch: h.branch as string, why })
  if (!head) return fromCheckout('the workspace is not a git checkout')
  if (head === onto.sha) return { kind: 'at-branch', onto }
  const p = h.patch
  const readable = p?.encoding === undefined || (p.encoding === 'latin1' && typeof p.diff === 'string' && !/[\u0100-\uffff]/.test(p.diff))
  if (!p || typeof p.base !== 'string' || !SHA.test(p.base) || typeof p.diff !== 'string' || !p.diff || !readable) {
    return fromCheckout(
      `its changes were not saved with the conversation (over ${MAX_CARRIED_PATCH_BYTES / (1024 * 1024)} MiB, or not safe to carry)`
    )
  }
  if (p.base !== head)
    return fromCheckout(`the checked-out commit ${short(head)} is not ${short(p.base)}, the one that branch was made from`)
  return { kind: 'apply', onto, patch: p }
}

/** The report's line about where the copy started, when the thread has a branch. */
export function resumeLine(plan: ResumePlan, applied?: { why: string }): string | undefined {
  if (plan.kind === 'none') return undefined
  if (plan.kind === 'from-checkout' || applied) {
    const why = applied?.why ?? (plan.kind === 'from-checkout' ? plan.why : '')
    const branch = plan.kind === 'from-checkout' ? plan.branch : plan.onto.branch
    return `ℹ️ The working copy starts from the checked-out commit, not from branch ${inlineCode(branch)} where the last run committed: ${why}.`
  }
  return `🌿 The working copy starts from branch ${inlineCode(plan.onto.branch)} (commit ${short(plan.onto.sha)}), where the last run committed; changes are committed onto it.`
}

/** The part of a checked patch that was committed (its bytes): every file's sections but the workflow files' (the token may not commit those). */
export function committedDiff(patch: Pick<Patch, 'files' | 'diffBytes'>): Buffer {
  // one character a byte: the sections are cut where git's bytes are, whatever the files' encodings
  const sections = splitDiff(patch.diffBytes.toString('latin1'))
  const kept: string[] = []
  let at = 0
  for (const f of patch.files) {
    const n = sectionsOf(f)
    if (!f.workflow) kept.push(...sections.slice(at, at + n))
    at += n
  }
  // the sections and the files must line up; when they do not, nothing is carried rather than something wrong
  return at === sections.length ? Buffer.from(kept.join(''), 'latin1') : Buffer.alloc(0)
}

/** The patch to carry, when it may travel: within the size limit and holding no secret (read as UTF-8, and as Latin-1). */
export function carried(base: string, diff: Buffer, containsSecret: (text: string) => boolean): CarriedPatch | undefined {
  if (diff.length === 0 || diff.length > MAX_CARRIED_PATCH_BYTES || contentHoldsSecret(diff, containsSecret)) return undefined
  return { base, diff: diff.toString('latin1'), encoding: 'latin1' }
}
