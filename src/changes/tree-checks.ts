// The hand-back judged as what later steps will run (SPEC "Checked"): each
// change is checked against the tree it will live in, the workspace at start
// plus the patch, all of its links together, resolved as the kernel resolves
// them. A change is held back when
//   - it is a symlink that resolves outside the repository, alone or through
//     other links of that tree (`d/up -> ..` then `x -> d/up/d/up/../../etc`),
//     or loops; a missing component is taken as a folder a later step may make
//     (resolution goes on lexically), so no link waits for one to escape;
//   - its path differs only in case from any path of that tree (unchanged
//     workspace files included): on a case-insensitive checkout one overwrites
//     the other;
//   - it lands in (or replaces) a workspace folder on the job's PATH, as later
//     steps see it: this process's PATH and what the file named by GITHUB_PATH
//     adds, each folder resolved over that tree (a later step would run it by
//     name, `git` included);
//   - it is a file the agent was never given (it held a secret the action
//     knows): whatever the agent wrote there never comes back.
// The tree is read from the workspace's files (lstat, readlink, readdir; never
// followed out of it) under the patch's own entries.
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs'
import path from 'node:path'
import type { FileChange } from './files'
import type { Hold } from './checks'

/** The kernel's bound on links followed in one lookup (MAXSYMLINKS). */
export const MAX_LINKS = 40

type Node = 'dir' | 'file' | 'missing' | { link: string }

export interface TreeCheckOptions {
  /** the workspace the patch lands in: the tree at start (where the agent worked in it, already with the patch) */
  workspace: string
  /** absolute folders on the job's PATH as later steps will see it (jobPathDirs) */
  pathDirs: string[]
  /** workspace files (relative) the agent never got */
  withheld?: ReadonlySet<string>
}

/** The folders on the job's PATH for later steps: this process's PATH, then the lines of the GITHUB_PATH file (as the runner reads it). */
export function jobPathDirs(env: NodeJS.ProcessEnv, workspace: string): string[] {
  const dirs = (env.PATH ?? '').split(path.delimiter)
  if (env.GITHUB_PATH) {
    try {
      for (const line of readFileSync(env.GITHUB_PATH, 'utf8').split(/\r?\n/)) if (line.trim()) dirs.push(line.trim())
    } catch {
      // no file: nothing added
    }
  }
  // an empty or relative entry is looked up from the step's folder, the workspace by default
  return [...new Set(dirs.map(d => path.resolve(workspace, d || '.')))]
}

const parentOf = (rel: string) => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '')
const ancestorsOf = (rel: string) => rel.split('/').map((_, i, parts) => parts.slice(0, i).join('/'))

/** The tree after the patch: the patch's entries over the workspace's files. */
export class FinalTree {
  readonly #entries = new Map<string, Node | 'deleted'>()
  readonly #dirs = new Set<string>()
  readonly #children = new Map<string, Set<string>>()
  readonly #names = new Map<string, string[]>()

  constructor(
    readonly root: string,
    files: FileChange[],
    blobs: Map<string, Buffer>
  ) {
    for (const f of files) {
      if (f.oldPath !== undefined && f.oldPath !== f.path) this.#entries.set(f.oldPath, 'deleted')
      if (f.status === 'deleted') {
        this.#entries.set(f.path, 'deleted')
        continue
      }
      const target = f.newMode === '120000' ? (f.newSha ? blobs.get(f.newSha)?.toString('utf8') : undefined) : undefined
      this.#entries.set(f.path, f.newMode === '120000' ? { link: target ?? '' } : f.newMode === '160000' ? 'dir' : 'file')
      const parts = f.path.split('/')
      for (let i = 1; i <= parts.length; i++) {
        const dir = parts.slice(0, i - 1).join('/')
        if (i < parts.length) this.#dirs.add(parts.slice(0, i).join('/'))
        const names = this.#children.get(dir) ?? new Set<string>()
        names.add(parts[i - 1])
        this.#children.set(dir, names)
      }
    }
  }

  /** A path whose folders are resolved already (no link among them): what it is in the tree. */
  lookup(rel: string): Node {
    const own = this.#entries.get(rel)
    if (own !== undefined && own !== 'deleted') return own
    if (this.#dirs.has(rel)) return 'dir'
    if (own === 'deleted' || this.#goneBelow(rel)) return 'missing'
    const full = path.join(this.root, rel)
    const st = lstatSync(full, { throwIfNoEntry: false })
    if (!st) return 'missing'
    if (st.isSymbolicLink()) return { link: readlinkSync(full, 'utf8') }
    return st.isDirectory() ? 'dir' : 'file'
  }

  /** Whether `rel` is a symlink the patch brings. */
  isPatchLink(rel: string): boolean {
    const own = this.#entries.get(rel)
    return typeof own === 'object'
  }

  /** Whether the patch names `rel` (changed, added or deleted). */
  inPatch(rel: string): boolean {
    return this.#entries.has(rel)
  }

  /** Whether the workspace's own files have `rel` (whatever the patch does). */
  inWorkspace(rel: string): boolean {
    return lstatSync(path.join(this.root, rel), { throwIfNoEntry: false }) !== undefined
  }

  /** A folder of the workspace replaced by the patch (a deleted file made way for a folder): nothing of the workspace's below it. */
  #goneBelow(rel: string): boolean {
    return ancestorsOf(rel).some(a => a !== '' && this.#entries.get(a) === 'deleted')
  }

  /** The names in a (resolved) folder of the tree. */
  names(dir: string): string[] {
    const known = this.#names.get(dir)
    if (known) return known
    const out = new Set<string>()
    if (!this.#goneBelow(dir) && this.#entries.get(dir) !== 'deleted') {
      try {
        for (const n of readdirSync(path.join(this.root, dir))) out.add(n)
      } catch {
        // not a folder of the workspace
      }
    }
    for (const n of this.#children.get(dir) ?? []) out.add(n)
    const names = [...out].filter(n => this.#entries.get(dir ? `${dir}/${n}` : n) !== 'deleted')
    this.#names.set(dir, names)
    return names
  }

  /**
   * Follows `target` from the folder `from` (resolved, relative) as the kernel
   * would: each component looked up, a link's target followed relative to its
   * folder (`..` after following). A missing component counts as a folder.
   */
  resolve(from: string, target: string, trace?: Set<string>): { inside: true; real: string } | { inside: false; why: string } {
    const stack = from ? from.split('/') : []
    let queue = target.split('/')
    if (target.startsWith('/')) return { inside: false, why: 'an absolute path' }
    let links = 0
    while (queue.length) {
      const c = queue.shift() as string
      if (c === '' || c === '.') continue
      if (c === '..') {
        if (stack.length === 0) return { inside: false, why: 'outside the repository' }
        stack.pop()
        continue
      }
      const at = [...stack, c].join('/')
      const node = this.lookup(at)
      if (typeof node === 'object') {
        if (this.isPatchLink(at)) trace?.add(at)
        if (++links > MAX_LINKS) return { inside: false, why: 'a loop (too many levels of links)' }
        if (node.link.startsWith('/')) return { inside: false, why: 'an absolute path' }
        queue = [...node.link.split('/'), ...queue]
        continue
      }
      stack.push(c)
    }
    return { inside: true, real: stack.join('/') }
  }
}

/** The checks, for the patch's files and their new blobs (symlink targets). */
export function treeChecks(o: TreeCheckOptions): (files: FileChange[], blobs: Map<string, Buffer>) => Hold[] {
  return (files, blobs) => {
    const tree = new FinalTree(o.workspace, files, blobs)
    const pathDirs = pathDirsIn(o.workspace, o.pathDirs)
    const onPath = new Set(pathDirs.flatMap(rel => resolvedDir(tree, rel)))
    const held: Hold[] = []
    for (const file of files) {
      const why = judge(file, tree, o, pathDirs, onPath)
      if (why) held.push({ file, why })
    }
    // the workspace's own links resolve through the patch's: one that now leaves holds back the links it went through
    if (files.some(f => f.newMode === '120000' && f.status !== 'deleted')) {
      const culprits = escapesThrough(tree)
      for (const file of files) {
        const via = culprits.get(file.path)
        if (via && !held.some(h => h.file === file))
          held.push({ file, why: `through this symlink, the workspace's link ${JSON.stringify(via)} would resolve outside the repository` })
      }
    }
    return held
  }
}

/**
 * The patch's links that a link the workspace has already (tracked, untracked
 * or ignored; not one the patch changes) goes through on its way out of the
 * repository, with that link. The workspace is walked for links only when the
 * patch brings one.
 */
function escapesThrough(tree: FinalTree): Map<string, string> {
  const out = new Map<string, string>()
  for (const link of workspaceLinks(tree.root)) {
    if (tree.inPatch(link)) continue
    const node = tree.lookup(link)
    if (typeof node !== 'object') continue
    const trace = new Set<string>()
    const r = tree.resolve(parentOf(link), node.link, trace)
    if (!r.inside) for (const via of trace) if (!out.has(via)) out.set(via, link)
  }
  return out
}

/** The workspace's symlinks (relative), folders walked without following links, `.git` left out. */
function workspaceLinks(root: string): string[] {
  const out: string[] = []
  const stack = ['']
  while (stack.length) {
    const dir = stack.pop() as string
    let entries
    try {
      entries = readdirSync(path.join(root, dir), { withFileTypes: true })
    } catch {
      continue
    }
    for (const e of entries) {
      const rel = dir ? `${dir}/${e.name}` : e.name
      if (e.isSymbolicLink()) out.push(rel)
      else if (e.isDirectory() && e.name !== '.git') stack.push(rel)
    }
  }
  return out
}

function judge(file: FileChange, tree: FinalTree, o: TreeCheckOptions, pathDirs: string[], onPath: Set<string>): string | undefined {
  if (o.withheld?.has(file.path) || (file.oldPath !== undefined && o.withheld?.has(file.oldPath)))
    return 'it was not given to the agent (it held a secret value the action knows); nothing of the agent comes back in its place'
  if (file.status === 'deleted') return undefined
  const dir = parentOf(file.path)
  if (file.newMode === '120000') {
    const link = tree.lookup(file.path)
    const r = tree.resolve(dir, typeof link === 'object' ? link.link : '')
    if (!r.inside) return `a symlink that resolves to ${r.why} through other links of the tree, as the kernel would follow them`
  }
  const collision = caseCollision(tree, file.path)
  if (collision) return `its path differs only in case from ${JSON.stringify(collision)}, another path of the tree`
  const parent = tree.resolve('', dir)
  if (parent.inside && onPath.has(parent.real))
    return `it lands in ${JSON.stringify(parent.real || '.')}, a workspace folder on the job's PATH (a later step would run it by name)`
  if (pathDirs.some(p => p === file.path || p.startsWith(`${file.path}/`)))
    return "it replaces a workspace folder on the job's PATH (or a folder above one)"
  return undefined
}

/**
 * The first path of the tree (other than its own) that differs from `rel` only
 * in case, folder by folder. A folder the workspace has already does not
 * collide with a name only the patch brings (that name is the one held back).
 */
function caseCollision(tree: FinalTree, rel: string): string | undefined {
  const parts = rel.split('/')
  for (let i = 0; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/')
    const r = tree.resolve('', dir)
    if (!r.inside) return undefined
    const want = parts[i]
    const at = (name: string) => (r.real ? `${r.real}/${name}` : name)
    const mine = tree.inWorkspace(at(want))
    const other = tree.names(r.real).find(n => n !== want && n.toLowerCase() === want.toLowerCase() && !(mine && !tree.inWorkspace(at(n))))
    if (other !== undefined) return [...parts.slice(0, i), other].join('/')
  }
  return undefined
}

/** The PATH folders inside the workspace, relative to it (by the workspace's path as given and as real path). */
function pathDirsIn(workspace: string, dirs: string[]): string[] {
  const roots = [...new Set([path.resolve(workspace), realOr(workspace)])]
  const out = new Set<string>()
  for (const d of dirs) {
    for (const candidate of [path.resolve(d), realOr(d)]) {
      for (const root of roots) {
        const rel = path.relative(root, candidate)
        if (!rel.startsWith('..') && !path.isAbsolute(rel)) out.add(rel.split(path.sep).join('/'))
      }
    }
  }
  return [...out]
}

function resolvedDir(tree: FinalTree, rel: string): string[] {
  const r = tree.resolve('', rel)
  return r.inside ? [r.real] : []
}

/** The real path as far as it exists, the rest as given (a PATH folder a later step, or the agent, would make). */
function realOr(p: string): string {
  const abs = path.resolve(p)
  const parts = abs.split(path.sep)
  for (let i = parts.length; i > 0; i--) {
    try {
      const head = parts.slice(0, i).join(path.sep) || path.sep
      return path.join(realpathSync(head), ...parts.slice(i))
    } catch {
      // not there: one folder up
    }
  }
  return abs
}
