// The agent's changes as a patch: the work tree of its copy against the commit
// the workspace had checked out at start, computed with git in a throwaway
// repository of our own, so nothing the agent could plant runs or counts:
//   - GIT_DIR is a fresh bare repository (no hooks, no config but ours); its
//     objects/info/alternates borrow the workspace's object store read-only;
//   - system and global config are off (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL,
//     an empty HOME), hooks, fsmonitor and autocrlf are switched off on the
//     command line, diffs run with --no-ext-diff --no-textconv;
//   - $GIT_DIR/info/attributes (the highest precedence) unsets `filter`,
//     `text`, `ident`, `working-tree-encoding` and leaves `diff`/`eol`
//     unspecified for every path, so a planted `.gitattributes` can name
//     drivers that exist nowhere and convert nothing: blobs hold the bytes of
//     the files;
//   - the copy's .git is never read (git skips every `.git` in a work tree),
//     so agent commits are simply folded in and its refs, config and hooks
//     stay behind; nested repositories are excluded and named.
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Exec } from './exec'
import { checkLimits, checkSecrets, checkShapes, type Hold } from './checks'
import { localScratch, newScratchRepository, PatchError, safeGit, type ScratchFs } from './git'
import type { FileChange, FileStatus } from './files'

export { sectionsOf, type FileChange, type FileStatus } from './files'

export interface HeldBack {
  path: string
  why: string
}

export interface Patch {
  baseSha: string
  /** what is handed back (held-back files are not among them) */
  files: FileChange[]
  /** changed files left out of everything (patch, workspace, commit), with the reason */
  heldBack: HeldBack[]
  /** the whole patch (`git apply`-able, binary-safe) as text, for its sections and the report; '' when nothing changed */
  diff: string
  /** `diff` as git wrote it: what is written or applied is these bytes (a text file in Latin-1 is not UTF-8) */
  diffBytes: Buffer
}

export interface ComputedPatch {
  patch: Patch
  /** the new content of every file in `patch.files` that has one, by blob sha */
  blobs: Map<string, Buffer>
  /** files held back, with their content at the start: where the agent worked in the workspace, they are put back */
  secrets: { file: FileChange; old?: Buffer }[]
  /** the carried patch (PatchOptions.carried) as changes to the start, for the workspace */
  carried?: CarriedPart
}

export interface CarriedPart {
  files: FileChange[]
  blobs: Map<string, Buffer>
  heldBack: HeldBack[]
}

export interface PatchOptions {
  /** the agent's working copy */
  workdir: string
  /** the commit checked out in the workspace at start */
  baseSha: string
  /** the object store holding baseSha (the workspace's .git/objects), only read */
  baseObjects: string
  exec: Exec
  /** true when a text (or file name) holds a known secret in any form */
  containsSecret: (text: string) => boolean
  /** the tree the work tree is compared with, when not baseSha's (the copy's state at start) */
  diffBase?: string
  /**
   * The thread branch's carried patch, already applied to the copy after its
   * start: the run's own changes are computed against the start plus it, and
   * it comes back on its own (ComputedPatch.carried) for the workspace. Its bytes, as git wrote them.
   */
  carried?: Buffer
  /** where the throwaway repository goes (default: the OS temp dir) */
  tmpDir?: string
  /** how files are made there: here, or as the user git runs as (the sandbox's) */
  scratch?: ScratchFs
  /** PATH to find git with */
  path?: string
  /** checks against the tree the patch lands in (tree-checks.ts), after the shapes' */
  treeChecks?: (files: FileChange[], blobs: Map<string, Buffer>) => Hold[]
}

const ZERO_SHA = '0'.repeat(40)

export { execScratch, localScratch, PatchError, safeGit, type ScratchFs } from './git'

interface RawEntry {
  status: string
  oldMode: string
  newMode: string
  oldSha: string
  newSha: string
  path: string
  oldPath?: string
}

/** `git diff --raw -z --no-abbrev` output. */
export function parseRaw(out: Buffer): RawEntry[] {
  const parts = out.toString('utf8').split('\0')
  const entries: RawEntry[] = []
  for (let i = 0; i < parts.length; i++) {
    const head = parts[i]
    if (!head.startsWith(':')) continue
    const [oldMode, newMode, oldSha, newSha, status] = head.slice(1).split(' ')
    if (status.startsWith('R') || status.startsWith('C')) {
      entries.push({ status: status[0], oldMode, newMode, oldSha, newSha, oldPath: parts[i + 1], path: parts[i + 2] })
      i += 2
    } else {
      entries.push({ status, oldMode, newMode, oldSha, newSha, path: parts[i + 1] })
      i += 1
    }
  }
  return entries
}

/** `git diff --numstat -z` output: by new path, additions and deletions (null for binary). */
export function parseNumstat(out: Buffer): Map<string, { additions: number; deletions: number; binary: boolean }> {
  const parts = out.toString('utf8').split('\0')
  const stats = new Map<string, { additions: number; deletions: number; binary: boolean }>()
  for (let i = 0; i < parts.length; i++) {
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(parts[i])
    if (!m) continue
    let path = m[3]
    if (path === '') {
      path = parts[i + 2] // rename: "a\td\t\0old\0new"
      i += 2
    }
    const binary = m[1] === '-'
    stats.set(path, { additions: binary ? 0 : Number(m[1]), deletions: binary ? 0 : Number(m[2]), binary })
  }
  return stats
}

/** Splits a whole diff into one text per file, in order. */
export function splitDiff(diff: string): string[] {
  if (!diff) return []
  const starts: number[] = []
  const re = /^diff --git /gm
  for (let m = re.exec(diff); m; m = re.exec(diff)) starts.push(m.index)
  return starts.map((s, i) => diff.slice(s, i + 1 < starts.length ? starts[i + 1] : diff.length))
}

const isWorkflow = (path: string) => /^\.github\/workflows\//i.test(path)
/** Under .github/ but no workflow (composite actions, CODEOWNERS, dependabot.yml): committed, and flagged for review. */
export const changesCiConfig = (f: FileChange): boolean =>
  !f.workflow && [f.path, f.oldPath].some(p => p !== undefined && /^\.github\//i.test(p))

function toChange(e: RawEntry, stats: ReturnType<typeof parseNumstat>): FileChange {
  const st = stats.get(e.path) ?? { additions: 0, deletions: 0, binary: false }
  const status: FileStatus = e.status === 'A' ? 'added' : e.status === 'D' ? 'deleted' : e.status === 'R' ? 'renamed' : 'modified'
  return {
    path: e.path,
    ...(e.oldPath !== undefined ? { oldPath: e.oldPath } : {}),
    status,
    ...(status !== 'added' ? { oldMode: e.oldMode, oldSha: e.oldSha } : {}),
    ...(status !== 'deleted' ? { newMode: e.newMode, newSha: e.newSha } : {}),
    binary: st.binary,
    additions: st.additions,
    deletions: st.deletions,
    workflow: isWorkflow(e.path) || (e.oldPath !== undefined && isWorkflow(e.oldPath))
  }
}

/** Reads blobs from the store by sha with one `cat-file --batch`. */
async function readBlobs(git: (args: string[], input?: Buffer) => Promise<Buffer>, shas: string[]): Promise<Map<string, Buffer>> {
  const blobs = new Map<string, Buffer>()
  const wanted = [...new Set(shas)]
  if (wanted.length === 0) return blobs
  const out = await git(['cat-file', '--batch'], Buffer.from(wanted.map(s => `${s}\n`).join('')))
  let at = 0
  for (const sha of wanted) {
    const nl = out.indexOf(0x0a, at)
    const header = out.subarray(at, nl).toString('utf8')
    const m = /^([0-9a-f]{40}) (\w+) (\d+)$/.exec(header)
    if (!m || m[1] !== sha) throw new PatchError(`git cat-file: unexpected answer for ${sha}: ${header.slice(0, 100)}`)
    const size = Number(m[3])
    blobs.set(sha, out.subarray(nl + 1, nl + 1 + size))
    at = nl + 1 + size + 1
  }
  return blobs
}

/** The NUL-separated entries of `out` (git's -z output), as bytes. */
export function splitNul(out: Buffer): Buffer[] {
  const parts: Buffer[] = []
  for (let at = 0; at < out.length;) {
    const end = out.indexOf(0, at)
    parts.push(out.subarray(at, end < 0 ? out.length : end))
    at = end < 0 ? out.length : end + 1
  }
  return parts
}

/** Blob sizes by sha with one `cat-file --batch-check`. */
async function blobSizes(git: (args: string[], input?: Buffer) => Promise<Buffer>, shas: string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>()
  if (shas.length === 0) return sizes
  const out = await git(['cat-file', '--batch-check'], Buffer.from([...new Set(shas)].map(s => `${s}\n`).join('')))
  for (const line of out.toString('utf8').split('\n')) {
    const m = /^([0-9a-f]{40}) \w+ (\d+)$/.exec(line)
    if (m) sizes.set(m[1], Number(m[2]))
  }
  return sizes
}

/** A git run in the scratch repository, and what it diffs against. */
type ScratchGit = (args: string[], input?: Buffer) => Promise<Buffer>
const DIFF_ARGS = ['diff', '--cached', '-M', '--no-ext-diff', '--no-textconv', '--no-color']

/**
 * The agent's changes, checked. Throws PatchError when git cannot compute them
 * (the caller reports it); never runs anything of the work tree's.
 */
export async function computePatch(opts: PatchOptions): Promise<ComputedPatch> {
  const fs = opts.scratch ?? localScratch
  const { root, repo: scratch } = await newScratchRepository(
    fs,
    join(opts.tmpDir ?? tmpdir(), 'bash-agent-patch-'),
    opts.baseObjects.split(':')
  )
  try {
    const git = safeGit(opts.exec, scratch, opts.workdir, opts.path ?? process.env.PATH ?? '/usr/bin:/bin')
    const start = opts.diffBase ?? opts.baseSha
    await git(['read-tree', start])
    const against = opts.carried ? await carriedTree(git, opts.carried) : start

    // Nested repositories (an `ls-files -o` entry ending in '/') are never walked into: each is left out by a
    // literal pathspec, given NUL-separated on stdin as git printed it (a name may hold a newline, a glob, any byte)
    const nested = splitNul(await git(['ls-files', '-z', '--others', '--exclude-standard'])).filter(p => p.at(-1) === 0x2f)
    const specs = [Buffer.from('.'), ...nested.map(p => Buffer.concat([Buffer.from(':(exclude,literal)'), p.subarray(0, -1)]))]
    await git(['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], Buffer.concat(specs.flatMap(p => [p, Buffer.from([0])])))
    const heldBack = nested.map(p => ({
      path: p.subarray(0, -1).toString('utf8'),
      why: 'a nested git repository (its files are not handed back)'
    }))
    const computed = await checkedRounds(git, against, heldBack, opts)
    if (opts.carried) computed.carried = await carriedPart(git, start, against, opts.containsSecret, opts.treeChecks)
    return computed
  } finally {
    await fs.rm(root).catch(() => undefined)
  }
}

/** The start's tree with the thread branch's carried patch applied (in the scratch index, which then holds it). */
export async function carriedTree(git: ScratchGit, carried: Buffer): Promise<string> {
  await git(['apply', '--cached', '--binary', '--whitespace=nowarn', '-'], carried)
  return (await git(['write-tree'])).toString('utf8').trim()
}

/** What a diff (`args` then `revs`) changes, with its stats. */
async function changesOf(git: ScratchGit, args: string[], revs: string[]): Promise<FileChange[]> {
  const raw = parseRaw(await git([...args, '--raw', '-z', '--no-abbrev', ...revs]))
  const stats = parseNumstat(await git([...args, '--numstat', '-z', ...revs]))
  return raw.map(e => toChange(e, stats))
}

/**
 * The carried patch as file changes (start -> the branch's tree), for the
 * workspace, which has the start's files: checked like the run's own, what
 * fails a check is held back.
 */
export async function carriedPart(
  git: ScratchGit,
  start: string,
  tree: string,
  containsSecret: (text: string) => boolean,
  treeChecks: PatchOptions['treeChecks']
): Promise<CarriedPart> {
  const args = ['diff-tree', '-r', '-M', '--no-ext-diff', '--no-textconv', '--no-color']
  const files = await changesOf(git, args, [start, tree])
  const blobs = await readBlobs(
    git,
    files.flatMap(f => (f.newSha && f.newMode !== '160000' ? [f.newSha] : []))
  )
  const diff = (await git([...args, '--binary', '--full-index', '-p', start, tree])).toString('utf8')
  const sizes = new Map([...blobs].map(([sha, b]) => [sha, b.length]))
  const holds = [
    ...checkLimits(files, sizes),
    ...shapesAndTree(files, blobs, treeChecks),
    ...checkSecrets(files, splitDiff(diff), blobs, containsSecret)
  ]
  const held = new Set(holds.map(h => h.file))
  return {
    files: files.filter(f => !held.has(f)),
    blobs,
    heldBack: [...new Map(holds.map(h => [h.file.path, { path: h.file.path, why: `carried from the thread's branch: ${h.why}` }])).values()]
  }
}

/** The shapes' checks, then the tree's (one reason a file: the first found). */
function shapesAndTree(files: FileChange[], blobs: Map<string, Buffer>, treeChecks: PatchOptions['treeChecks']): Hold[] {
  const shapes = checkShapes(files, blobs)
  const tree = treeChecks?.(files, blobs) ?? []
  return [...shapes, ...tree.filter(h => !shapes.some(x => x.file === h.file))]
}

/** Checks, and the diff made again without what they held back, until nothing more is held back. */
export async function checkedRounds(
  git: ScratchGit,
  against: string,
  heldBack: HeldBack[],
  opts: Pick<PatchOptions, 'baseSha' | 'containsSecret' | 'treeChecks'>
): Promise<ComputedPatch> {
  const secretFiles: FileChange[] = []
  for (let round = 0; ; round++) {
    // the line counts (numstat) only once nothing is held back for a limit: they read every blob
    const raw = parseRaw(await git([...DIFF_ARGS, '--raw', '-z', '--no-abbrev', against]))
    let files = raw.map(e => toChange(e, new Map()))
    const sizes = await blobSizes(
      git,
      files.flatMap(f => (f.newSha && f.newMode !== '160000' ? [f.newSha] : []))
    )
    let holds = checkLimits(files, sizes)
    let blobs = new Map<string, Buffer>()
    let diffBytes: Buffer = Buffer.alloc(0)
    let diff = ''
    // nothing changed: no line counts, blobs or diff to read (git would answer with nothing)
    if (holds.length === 0 && files.length > 0) {
      const stats = parseNumstat(await git([...DIFF_ARGS, '--numstat', '-z', against]))
      files = raw.map(e => toChange(e, stats))
      blobs = await readBlobs(
        git,
        files.flatMap(f => (f.newSha ? [f.newSha] : []))
      )
      diffBytes = await git([...DIFF_ARGS, '--binary', '--full-index', against])
      diff = diffBytes.toString('utf8')
      const shapes = shapesAndTree(files, blobs, opts.treeChecks)
      holds = [
        ...shapes,
        ...checkSecrets(files, splitDiff(diff), blobs, opts.containsSecret).filter(h => !shapes.some(x => x.file === h.file))
      ]
    }
    if (holds.length === 0) {
      const old = await readBlobs(
        git,
        secretFiles.flatMap(f => (f.oldSha && f.oldMode !== '160000' ? [f.oldSha] : []))
      )
      const secrets = secretFiles.map(file => ({ file, old: file.oldSha ? old.get(file.oldSha) : undefined }))
      return { patch: { baseSha: opts.baseSha, files, heldBack, diff, diffBytes }, blobs, secrets }
    }
    secretFiles.push(...holds.map(h => h.file).filter(f => f.oldMode !== '160000' && f.newMode !== '160000'))
    if (round >= 3) throw new PatchError('the changes could not be checked: held-back files kept coming back')
    // Held-back files go back to their base state in the index, and the diff is made again without them.
    heldBack.push(...holds.map(h => ({ path: h.file.path, why: h.why })))
    const lines: string[] = []
    for (const { file } of holds) {
      if (file.oldMode && file.oldSha) lines.push(`${file.oldMode} ${file.oldSha}\t${file.oldPath ?? file.path}`)
      if (file.status === 'added' || file.status === 'renamed') lines.push(`0 ${ZERO_SHA}\t${file.path}`)
    }
    await git(['update-index', '-z', '--index-info'], Buffer.from(lines.map(l => `${l}\0`).join('')))
  }
}
