// Finds the config files of every git repository under a folder: any depth, submodules and worktrees, no symlink followed, bounded.
import { lstatSync, readdirSync, readFileSync, type Dirent } from 'node:fs'
import { lstat, readdir } from 'node:fs/promises'
import path from 'node:path'
import { isInside } from './privilege'

/** The walk over the workspace stops after this many directory entries (and says so). */
export const MAX_WALK_ENTRIES = 500_000
/** ...or this deep. */
export const MAX_WALK_DEPTH = 64
/** Folders inside a git directory where no config lives. */
const GIT_INTERNALS = new Set(['objects', 'refs', 'logs', 'hooks', 'info', 'lfs', 'rr-cache'])

export interface FoundConfigs {
  /** config files of every repository found (main, worktree and submodule configs) */
  files: string[]
  /** credential stores (`.git-credentials`) seen on the way */
  stores: string[]
  /** true when the walk hit MAX_WALK_ENTRIES or MAX_WALK_DEPTH */
  truncated: boolean
}

/** The git directory a `.git` entry stands for: the folder itself, or where a gitfile (`gitdir: ...`) points. */
function gitDirOf(dotGit: string, entry: Dirent): string | undefined {
  if (entry.isDirectory()) return dotGit
  if (!entry.isFile()) return undefined
  try {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8').slice(0, 4096))
    return m ? path.resolve(path.dirname(dotGit), m[1]) : undefined
  } catch {
    return undefined
  }
}

/** The config files of one git directory: its (common) config, worktree configs, and its submodules' configs. */
function configsOfGitDir(gitDir: string, out: Set<string>, root: string): void {
  let common = gitDir
  try {
    common = path.resolve(gitDir, readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim())
  } catch {
    // not a linked worktree
  }
  // a config may be a symlink, which git follows: found too (the copy gets a file in its place)
  const isFile = (p: string, orLink = false) => {
    try {
      const st = lstatSync(p)
      return st.isFile() || (orLink && st.isSymbolicLink())
    } catch {
      return false
    }
  }
  // outside the workspace only folders that are git directories (a HEAD beside the config): a gitfile may point anywhere
  const gitDirectory = (dir: string) => isFile(path.join(dir, 'HEAD')) || isInside(dir, root)
  for (const dir of [gitDir, common]) {
    if (!gitDirectory(dir)) continue
    for (const f of [path.join(dir, 'config'), path.join(dir, 'config.worktree')]) if (isFile(f, true)) out.add(f)
  }
  // submodules (<common>/modules/**) and linked worktrees (<common>/worktrees/*)
  const stack: Array<[string, number]> = [
    [path.join(common, 'modules'), 0],
    [path.join(common, 'worktrees'), 0]
  ]
  while (stack.length > 0) {
    const [dir, depth] = stack.pop() as [string, number]
    let entries: Dirent[]
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      continue
    }
    for (const e of entries) {
      const p = path.join(dir, e.name)
      if ((e.isFile() || e.isSymbolicLink()) && (e.name === 'config' || e.name === 'config.worktree') && gitDirectory(dir)) out.add(p)
      else if (e.isDirectory() && depth < 16 && !GIT_INTERNALS.has(e.name)) stack.push([p, depth + 1])
    }
  }
}

/** A folder that is a git directory itself (a bare repository): HEAD, config and objects. */
function isBareRepository(entries: Dirent[]): boolean {
  const names = new Set(entries.map(e => e.name))
  return names.has('HEAD') && names.has('config') && names.has('objects')
}

/**
 * Every git repository under `root`, at any depth: `.git` folders, gitfiles
 * (submodules, worktrees) and bare repositories, never following symlinks
 * nor crossing into another file system, bounded by MAX_WALK_ENTRIES and
 * MAX_WALK_DEPTH. Asynchronous, so a large workspace does not hold up the
 * first model request.
 */
export async function findGitConfigs(root: string, limits = { entries: MAX_WALK_ENTRIES, depth: MAX_WALK_DEPTH }): Promise<FoundConfigs> {
  const out = new Set<string>()
  const stores: string[] = []
  let seen = 0
  let truncated = false
  let top: number
  try {
    const st = lstatSync(root)
    if (!st.isDirectory()) return { files: [], stores, truncated }
    top = st.dev
  } catch {
    return { files: [], stores, truncated }
  }
  const stack: Array<[string, number]> = [[root, 0]]
  while (stack.length > 0) {
    const [dir, depth] = stack.pop() as [string, number]
    let entries: Dirent[]
    try {
      entries = await readdir(dir, { withFileTypes: true })
    } catch {
      continue
    }
    if (dir !== root && isBareRepository(entries)) {
      configsOfGitDir(dir, out, root)
      continue
    }
    for (const e of entries) {
      if (++seen > limits.entries) {
        truncated = true
        stack.length = 0
        break
      }
      const p = path.join(dir, e.name)
      if (e.name === '.git') {
        const gitDir = gitDirOf(p, e)
        if (gitDir) configsOfGitDir(gitDir, out, root)
        continue // a git directory is not searched for work trees
      }
      if (e.name === '.git-credentials' && (e.isFile() || e.isSymbolicLink())) stores.push(p)
      if (!e.isDirectory()) continue // symlinks included: never followed
      if (depth + 1 > limits.depth) {
        truncated = true
        continue
      }
      try {
        if ((await lstat(p)).dev !== top) continue
      } catch {
        continue
      }
      stack.push([p, depth + 1])
    }
  }
  return { files: [...out].sort(), stores, truncated }
}
