// The agent's changes where the copy is an overlay on the workspace: what it
// wrote is exactly the upper layer's entries, so only those paths are compared
// (the untouched repository is never hashed again). For each such path the
// start version is the workspace's (the untouched lower layer, read here by the
// action) and the end version the copy's (read in the sandbox, as its user):
//   - A, a scratch repository of the action's (patch.ts's protections: no hooks,
//     config, filters or attributes of anyone's), borrowing the workspace's
//     objects: its index is the base commit's tree (read-tree: no file read),
//     then the start versions of the changed paths -> the start tree;
//   - B, a scratch repository in the sandbox with a store of its own: the end
//     versions of the same paths hashed there; the blobs A lacks come back as
//     a pack (index-pack checks every object's hash);
//   - A's index gets the end entries and is diffed against the start (plus the
//     thread branch's carried patch) as before: checks, renames, git's bytes.
// On both sides a path counts as git's `add -A` would count it: tracked ones
// always, untracked ones unless ignored (by that side's .gitignore files); a
// path under a symlink or a non-folder is gone; one inside a nested repository
// is never read (the repository is held back). Paths are kept as byte strings
// (latin1), so any file name survives.
import { lstatSync, readdirSync, type Stats } from 'node:fs'
import { join } from 'node:path'
import type { Exec } from './exec'
import { localScratch, newScratchRepository, PatchError, safeGit, type ScratchFs } from './git'
import { carriedPart, carriedTree, checkedRounds, splitNul, type ComputedPatch, type HeldBack, type PatchOptions } from './patch'

/** One entry of the upper layer: find's %y type, its path (relative, bytes), and whether the agent wrote it. */
export interface UpperEntry {
  type: string
  path: string
  fresh: boolean
}

export interface ChangedOptions {
  /** the untouched workspace (the overlay's lower layer), read by the action */
  workspace: string
  /** git here, as the action */
  localExec: Exec
  /** the agent's copy, and git there as the sandbox user */
  workdir: string
  exec: Exec
  scratch?: ScratchFs
  /** where B's scratch repository goes (in the sandbox), and A's (here) */
  tmpDir: string
  localTmpDir: string
  path?: string
  baseSha: string
  /** the workspace's object store */
  baseObjects: string
  upper: UpperEntry[]
  carried?: Buffer
  containsSecret: (text: string) => boolean
  /** the checks against the final tree (tree-checks.ts) */
  treeChecks?: PatchOptions['treeChecks']
}

/** The upper layer's listing (`<fresh> <type> <path>\0` records, src/trusted/upper.ts). */
export function parseUpper(out: Buffer): UpperEntry[] {
  const entries: UpperEntry[] = []
  for (const rec of splitNul(out)) {
    const s = rec.indexOf(0x20, 2)
    if (rec.length < 4 || s < 0) continue
    entries.push({ fresh: rec[0] === 0x31, type: rec.subarray(2, s).toString('latin1'), path: rec.subarray(s + 1).toString('latin1') })
  }
  return entries
}

const nul = (paths: Iterable<string>): Buffer => Buffer.from([...paths].map(p => `${p}\0`).join(''), 'latin1')
const isGit = (p: string) => p.split('/').includes('.git')
const parentOf = (p: string) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '')
const childOf = (dir: string, name: string) => (dir ? `${dir}/${name}` : name)
const ancestors = (p: string): string[] => {
  const out: string[] = []
  for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) out.push(p.slice(0, i))
  return out
}

/** What one side (the workspace, or the copy) holds at a path: find's %y, absent when missing. */
type Types = Map<string, string>

/** What git makes of a path on a side, given the types of it, its folders and their `.git`. */
type State = { kind: 'file' } | { kind: 'dir' } | { kind: 'absent' } | { kind: 'nested'; repo: string }

function stateOf(p: string, types: Types): State {
  for (const a of ancestors(p)) {
    const t = types.get(a)
    if (t !== 'd') return { kind: 'absent' } // missing, or a symlink or file where a folder was
    if (types.has(`${a}/.git`)) return { kind: 'nested', repo: a }
  }
  const t = types.get(p)
  if (t === 'f' || t === 'l') return { kind: 'file' }
  if (t === 'd') return types.has(`${p}/.git`) ? { kind: 'nested', repo: p } : { kind: 'dir' }
  return { kind: 'absent' }
}

/** The paths whose types decide `stateOf` for `paths`. */
function queryFor(paths: Iterable<string>, known: Types | Set<string>): string[] {
  const q = new Set<string>()
  const add = (x: string) => {
    if (!known.has(x)) q.add(x)
  }
  for (const p of paths) {
    for (const a of ancestors(p)) {
      add(a)
      add(`${a}/.git`)
    }
    add(p)
    add(`${p}/.git`)
  }
  return [...q]
}

/** lstat, undefined where nothing is (ENOENT, or ENOTDIR: a file where a folder would be). */
function lstatOr(root: string, p: string): Stats | undefined {
  try {
    return lstatSync(Buffer.from(join(root, p), 'latin1'))
  } catch {
    return undefined
  }
}

/** Types here, by lstat (no symlink followed). */
function localTypes(root: string, paths: string[], into: Types): void {
  for (const p of paths) {
    const s = lstatOr(root, p)
    if (!s) continue
    into.set(p, s.isFile() ? 'f' : s.isSymbolicLink() ? 'l' : s.isDirectory() ? 'd' : 'x')
  }
}

/**
 * Types in the sandbox, by find as its user (no symlink followed; paths given as `./p`, never read as
 * options, split by xargs under the argument limit); `deep`: also everything below (no `.git` entered).
 */
const FIND_TYPES = [
  'if [ "$1" = deep ]; then',
  `  exec xargs -0 -r sh -c 'exec find -P "$@" \\( -name .git -printf "%y %p\\0" -prune \\) -o -printf "%y %p\\0"' find`,
  'fi',
  `exec xargs -0 -r sh -c 'exec find -P "$@" -maxdepth 0 -printf "%y %p\\0"' find`
].join('\n')

async function remoteTypes(o: ChangedOptions, paths: string[], deep: boolean, into: Types, env: Record<string, string>): Promise<void> {
  if (!paths.length) return
  const r = await o.exec('sh', ['-c', FIND_TYPES, 'sh', deep ? 'deep' : 'one'], {
    cwd: o.workdir,
    env,
    input: nul(paths.map(p => `./${p}`))
  })
  // 123: some find said a path is missing (that is an answer)
  if (r.code !== 0 && r.code !== 123) throw new PatchError(`find failed (exit ${r.code ?? 'none'}): ${r.stderr.trim().split('\n')[0]}`)
  for (const rec of splitNul(r.stdout)) {
    const s = rec.indexOf(0x20)
    if (s < 0) continue
    const path = rec
      .subarray(s + 1)
      .toString('latin1')
      .replace(/^\.\//, '')
    const t = rec.subarray(0, s).toString('latin1')
    into.set(path, t === 'f' || t === 'l' || t === 'd' ? t : 'x')
  }
}

/** The files below a folder of the workspace (none of a `.git`), as paths. */
function filesBelow(root: string, dir: string, out: Set<string>): void {
  let names: Buffer[]
  try {
    names = readdirSync(Buffer.from(join(root, dir), 'latin1'), { encoding: 'buffer' })
  } catch {
    return
  }
  for (const n of names) {
    const name = n.toString('latin1')
    if (name === '.git') continue
    const p = childOf(dir, name)
    const s = lstatOr(root, p)
    if (s?.isDirectory()) filesBelow(root, p, out)
    else if (s) out.add(p)
  }
}

/**
 * The paths the agent may have changed, from the upper layer: its files, symlinks and whiteouts, what a
 * fresh folder hides of the workspace (an opaque folder has no whiteouts), the workspace's files below
 * what replaced a folder, and everything in a folder the workspace does not have (a renamed folder
 * may be a redirect, its files not in the layer). Candidates that did not change cost a hash, nothing more.
 */
async function candidates(o: ChangedOptions, end: Types, env: Record<string, string>): Promise<Set<string>> {
  const lower = (p: string) => lstatOr(o.workspace, p)
  const inUpper = new Map<string, Set<string>>()
  for (const e of o.upper) {
    if (!e.path || isGit(e.path)) continue
    const d = parentOf(e.path)
    if (!inUpper.has(d)) inUpper.set(d, new Set())
    inUpper.get(d)?.add(e.path.slice(d ? d.length + 1 : 0))
  }
  const out = new Set<string>()
  const maybeHidden: string[] = []
  const newDirs: string[] = []
  const replacedDirs: string[] = []
  for (const e of o.upper) {
    if (!e.fresh || isGit(e.path)) continue
    if (e.type !== 'd') {
      if (e.path) out.add(e.path)
      if (e.path && lower(e.path)?.isDirectory()) replacedDirs.push(e.path)
      continue
    }
    if (e.path && !lower(e.path)?.isDirectory()) {
      newDirs.push(e.path)
      continue
    }
    let names: Buffer[] = []
    try {
      names = readdirSync(Buffer.from(join(o.workspace, e.path), 'latin1'), { encoding: 'buffer' })
    } catch {
      // gone from the workspace meanwhile: nothing of it to hide
    }
    const up = inUpper.get(e.path)
    for (const n of names) {
      const name = n.toString('latin1')
      if (name !== '.git' && !up?.has(name)) maybeHidden.push(childOf(e.path, name))
    }
  }
  await remoteTypes(o, queryFor([...out, ...maybeHidden], end), false, end, env)
  await remoteTypes(o, newDirs, true, end, env)
  const fresh = new Set(newDirs)
  for (const [p, t] of end) if (t !== 'd' && !isGit(p) && ancestors(p).some(d => fresh.has(d))) out.add(p)
  for (const p of maybeHidden) {
    if (stateOf(p, end).kind !== 'absent') continue // still there in the copy, as the workspace has it
    out.add(p)
    if (lower(p)?.isDirectory()) replacedDirs.push(p)
  }
  for (const d of replacedDirs) filesBelow(o.workspace, d, out)
  return out
}

/** Up to this many paths are looked up one by one in a listing; more, and the whole listing is parsed. */
const LOOKUPS = 256
const STAGE_PREFIX = /^[0-7]{6} [0-9a-f]+ [0-3]$/

/**
 * `ls-files -s -z`: path -> `mode sha`; with `wanted`, only those paths, each found by a search in the
 * listing when they are few, so the cost follows the change rather than the index (30,000 entries
 * parsed one by one took most of a one-line fix's hand-back).
 */
function parseStage(out: Buffer, wanted?: Set<string>): Map<string, { mode: string; sha: string }> {
  const text = out.toString('latin1')
  const m = new Map<string, { mode: string; sha: string }>()
  if (wanted && wanted.size <= LOOKUPS) {
    for (const p of wanted) {
      // a record is `mode sha stage<TAB>path<NUL>`: a match whose prefix is not one is inside another path
      for (let at = text.indexOf(`\t${p}\0`); at >= 0; at = text.indexOf(`\t${p}\0`, at + 1)) {
        const head = text.slice(text.lastIndexOf('\0', at) + 1, at)
        if (!STAGE_PREFIX.test(head)) continue
        const [mode, sha] = head.split(' ')
        m.set(p, { mode, sha })
        break
      }
    }
    return m
  }
  for (const rec of text.split('\0')) {
    const tab = rec.indexOf('\t')
    if (tab < 0) continue
    const [mode, sha] = rec.slice(0, tab).split(' ')
    if (!wanted || wanted.has(rec.slice(tab + 1))) m.set(rec.slice(tab + 1), { mode, sha })
  }
  return m
}

/** What `add -A` would do on a side for these paths, with `tracked` the index before it. */
function sidePlan(paths: Iterable<string>, types: Types, tracked: Map<string, { mode: string }>) {
  const files: string[] = []
  const untracked: string[] = []
  const remove: string[] = []
  const nested = new Set<string>()
  for (const p of paths) {
    const s = stateOf(p, types)
    const t = tracked.get(p)
    if (s.kind === 'nested') {
      // a submodule (a gitlink in the index) keeps its entry; any other repository's files are held back
      if (tracked.get(s.repo)?.mode !== '160000') nested.add(s.repo)
    } else if (s.kind === 'file') (t ? files : untracked).push(p)
    else if (t && t.mode !== '160000') remove.push(p)
  }
  return { files, untracked, remove, nested }
}

/** git check-ignore: which of `paths` the side's .gitignore files ignore (index-free: tracked ones are sorted out before). */
async function ignoredOf(exec: Exec, env: Record<string, string>, config: string[], cwd: string, paths: string[]): Promise<Set<string>> {
  if (!paths.length) return new Set()
  const r = await exec('git', [...config, 'check-ignore', '--no-index', '-z', '--stdin'], { cwd, env, input: nul(paths) })
  if (r.code !== 0 && r.code !== 1)
    throw new PatchError(`git check-ignore failed (exit ${r.code ?? 'none'}): ${r.stderr.trim().split('\n')[0]}`)
  return new Set(splitNul(r.stdout).map(b => b.toString('latin1')))
}

type ScratchRepo = Awaited<ReturnType<typeof newScratchRepository>>['repo']

/** What check-ignore needs of safeGit's environment, on either side. */
function checkIgnoreEnv(pathEnv: string, repo: ScratchRepo, workTree: string): Record<string, string> {
  return {
    PATH: pathEnv,
    HOME: repo.home,
    XDG_CONFIG_HOME: repo.home,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_DIR: repo.gitDir,
    GIT_WORK_TREE: workTree,
    GIT_INDEX_FILE: repo.index
  }
}

const IGNORE_CONFIG = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'core.excludesFile=/dev/null']

/** The changes as patch.ts computes them, comparing only the upper layer's paths. */
export async function computeChangedPatch(o: ChangedOptions): Promise<ComputedPatch & { compared: number }> {
  const pathEnv = o.path ?? process.env.PATH ?? '/usr/bin:/bin'
  const a = await newScratchRepository(localScratch, join(o.localTmpDir, 'bash-agent-start-'), o.baseObjects ? [o.baseObjects] : [])
  const bfs = o.scratch ?? localScratch
  let b: Awaited<ReturnType<typeof newScratchRepository>> | undefined
  try {
    const gitA = safeGit(o.localExec, a.repo, o.workspace, pathEnv)
    b = await newScratchRepository(bfs, join(o.tmpDir, 'bash-agent-patch-'), [])
    const gitB = safeGit(o.exec, b.repo, o.workdir, pathEnv)
    const envOf = (repo: ScratchRepo, workTree: string) => checkIgnoreEnv(pathEnv, repo, workTree)
    const ignoreConfig = IGNORE_CONFIG
    const envB = envOf(b.repo, o.workdir)

    const end: Types = new Map()
    const paths = await candidates(o, end, envB)
    await remoteTypes(o, queryFor(paths, end), false, end, envB)

    // start: the base tree, then the workspace's versions of the paths
    await gitA(o.baseSha ? ['read-tree', o.baseSha] : ['read-tree', '--empty'])
    const start: Types = new Map()
    localTypes(o.workspace, queryFor(paths, start), start)
    const asked = new Set([...paths].flatMap(p => [p, ...ancestors(p)])) // what sidePlan asks of the index
    const s = sidePlan(paths, start, parseStage(await gitA(['ls-files', '-s', '-z']), asked))
    const ignoredStart = await ignoredOf(o.localExec, envOf(a.repo, o.workspace), ignoreConfig, o.workspace, s.untracked)
    const added = [...s.files, ...s.untracked.filter(p => !ignoredStart.has(p))]
    if (s.remove.length) await gitA(['update-index', '--force-remove', '-z', '--stdin'], nul(s.remove))
    if (added.length) await gitA(['update-index', '--add', '--replace', '-z', '--stdin'], nul(added))
    const startTree = (await gitA(['write-tree'])).toString('utf8').trim()
    const against = o.carried ? await carriedTree(gitA, o.carried) : startTree

    // end: the copy's versions of the same paths, hashed in the sandbox
    const e = sidePlan(paths, end, parseStage(await gitA(['ls-files', '-s', '-z']), asked))
    // a nested repository in an ignored folder (a dependency cloned into node_modules) is not named either
    const ignoredEnd = await ignoredOf(o.exec, envB, ignoreConfig, o.workdir, [...e.untracked, ...e.nested])
    const hashed = [...e.files, ...e.untracked.filter(p => !ignoredEnd.has(p))]
    let entries = new Map<string, { mode: string; sha: string }>()
    if (hashed.length) {
      await gitB(['update-index', '--add', '-z', '--stdin'], nul(hashed))
      entries = parseStage(await gitB(['ls-files', '-s', '-z']))
    }
    await fetchBlobs(gitA, gitB, entries)
    const lines = [
      ...e.remove.map(p => `0 ${'0'.repeat(40)}\t${p}\0`),
      ...[...entries].filter(([, x]) => x.mode !== '160000').map(([p, x]) => `${x.mode} ${x.sha}\t${p}\0`)
    ]
    if (lines.length) await gitA(['update-index', '--add', '--replace', '-z', '--index-info'], Buffer.from(lines.join(''), 'latin1'))

    const why = 'a nested git repository (its files are not handed back)'
    const heldBack: HeldBack[] = [...e.nested]
      .filter(p => !ignoredEnd.has(p))
      .map(p => ({ path: Buffer.from(p, 'latin1').toString('utf8'), why }))
    const { baseSha, containsSecret, treeChecks } = o
    const computed = await checkedRounds(gitA, against, heldBack, { baseSha, containsSecret, treeChecks })
    if (o.carried) computed.carried = await carriedPart(gitA, startTree, against, o.containsSecret, o.treeChecks)
    return { ...computed, compared: paths.size }
  } finally {
    await localScratch.rm(a.root).catch(() => undefined)
    if (b) await bfs.rm(b.root).catch(() => undefined)
  }
}

/** The end's blobs A does not have, packed in the sandbox and indexed here (which checks every object). */
async function fetchBlobs(
  gitA: (args: string[], input?: Buffer) => Promise<Buffer>,
  gitB: (args: string[], input?: Buffer) => Promise<Buffer>,
  entries: Map<string, { mode: string; sha: string }>
): Promise<void> {
  const shas = [...new Set([...entries.values()].filter(x => x.mode !== '160000').map(x => x.sha))]
  if (!shas.length) return
  const have = await gitA(['cat-file', '--batch-check'], Buffer.from(shas.map(x => `${x}\n`).join('')))
  const missing = have
    .toString('utf8')
    .split('\n')
    .filter(l => / missing$/.test(l))
    .map(l => l.split(' ')[0])
  if (!missing.length) return
  const pack = await gitB(['pack-objects', '--stdout', '-q'], Buffer.from(missing.map(x => `${x}\n`).join('')))
  await gitA(['index-pack', '--stdin'], pack)
}
