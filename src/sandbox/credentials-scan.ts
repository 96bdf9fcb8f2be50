// Scans a workspace (and a home folder) for the files holding git credentials, with each file's original and cut bytes.
//
// Searched: every repository under the workspace (any depth, no symlinks
// followed, bounded), the files their configs include, and, when asked, the
// home folder's git configs and credential stores. A file outside the
// workspace is changed only when it is a git directory's config, checkout's
// credentials file or one of those home files: an include or a gitfile may
// point at any file of the system, which is then only read.
import { lstatSync, readFileSync, realpathSync, type Stats } from 'node:fs'
import path from 'node:path'
import { applyCuts, CHECKOUT_CREDENTIALS_FILE, findInBrokenFile, findInConfig } from './credentials-find'
import { findGitConfigs, MAX_WALK_DEPTH, MAX_WALK_ENTRIES } from './credentials-walk'
import { isInside, realpathOr } from './privilege'

/** Config files larger than this are not read (git writes small ones). */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024

export interface HiddenFile {
  path: string
  /** real path of its folder when we changed it: never written through another */
  dirReal: string
  original: Buffer
  stripped: Buffer
  uid: number
  gid: number
  mode: number
  /** hard-linked: rewritten in place, so no other name keeps the old bytes */
  inPlace?: boolean
}

export interface Scan {
  files: HiddenFile[]
  secrets: string[]
  /** lines for the log */
  notes: string[]
  /** every repository config found (FoundConfigs.files), credentials or not */
  configs: string[]
  /** the credential stores found (real paths): `.git-credentials` files, and those helpers name */
  stores: string[]
  /** the walk stopped early (FoundConfigs.truncated) */
  truncated: boolean
}

function readSmallFile(p: string): { bytes: Buffer; st: Stats } | undefined {
  try {
    const st = lstatSync(p)
    if (!st.isFile() || st.size > MAX_CONFIG_BYTES) return undefined
    return { bytes: readFileSync(p), st }
  } catch {
    return undefined
  }
}

/** The user-wide git configs and credential stores of a home folder (what `git config --global` and the `store` helper use). */
function homeFiles(home: string | undefined): { configs: string[]; stores: string[] } {
  if (!home) return { configs: [], stores: [] }
  return {
    configs: [path.join(home, '.gitconfig'), path.join(home, '.config', 'git', 'config')],
    stores: [path.join(home, '.git-credentials'), path.join(home, '.config', 'git', 'credentials')]
  }
}

export interface ScanOptions {
  /** also the user-wide configs and credential stores of this home folder (the runner user's, in sandbox: none) */
  home?: string
}

/** A file to change (`real`, read as `found`): its bytes as found and as cut, its owner and mode. */
function hiddenFile(real: string, found: { bytes: Buffer; st: Stats }, stripped: Buffer): HiddenFile {
  const { bytes, st } = found
  return {
    path: real,
    dirReal: path.dirname(real),
    original: bytes,
    stripped,
    uid: Number(st.uid),
    gid: Number(st.gid),
    mode: Number(st.mode) & 0o7777,
    inPlace: Number(st.nlink) > 1
  }
}

function realOrNone(p: string): string | undefined {
  try {
    return realpathSync(p)
  } catch {
    return undefined // none
  }
}

/** Every file holding credentials under `workspace` (and the credential files its configs include), with the cut version of each. */
export async function scan(workspace: string, o: ScanOptions = {}): Promise<Scan> {
  const found = await findGitConfigs(workspace)
  const out: Scan = { files: [], secrets: [], notes: [], configs: found.files, stores: [], truncated: found.truncated }
  if (found.truncated) {
    out.notes.push(
      `the workspace is larger than ${MAX_WALK_ENTRIES} entries or ${MAX_WALK_DEPTH} folders deep; repositories beyond were not searched`
    )
  }
  const home = homeFiles(o.home)
  const stores = new Set([...home.stores, ...found.stores].map(realOrNone).filter((s): s is string => !!s))
  const queue = [...found.files, ...home.configs, ...stores]
  const workspaceReal = realpathOr(workspace)
  const inWorkspace = (p: string) => isInside(p, workspaceReal)
  // what may be changed: files in the workspace, repository configs, checkout's credential files, the home's
  // git files; any other file an include points at is only read (its values taught), never written
  const known = new Set([...found.files, ...home.configs].map(realpathOr))
  const mayChange = (real: string) => inWorkspace(real) || known.has(real) || stores.has(real) || CHECKOUT_CREDENTIALS_FILE.test(real)
  const done = new Set<string>()
  const memo = new Map<string, boolean>()
  const hasCredentials = (target: string): boolean => {
    if (memo.has(target)) return memo.get(target) as boolean
    memo.set(target, false) // include loops
    const r = readSmallFile(target)
    const yes = r !== undefined && findInConfig(r.bytes, target, hasCredentials, inWorkspace(realpathOr(target))).cuts.length > 0
    memo.set(target, yes)
    return yes
  }
  while (queue.length > 0) {
    const file = queue.shift() as string
    // an include of a file that is not there (checkout's container path /github/runner_temp/...) is skipped
    const real = realOrNone(file)
    if (real === undefined || done.has(real)) continue
    done.add(real)
    const r = readSmallFile(real)
    if (!r) continue
    const f = stores.has(real)
      ? findInBrokenFile(r.bytes, 'a credential store')
      : findInConfig(r.bytes, real, hasCredentials, inWorkspace(real))
    queue.push(...f.includes)
    for (const store of f.stores.map(realOrNone)) {
      if (!store || stores.has(store)) continue
      stores.add(store)
      queue.push(store)
    }
    out.secrets.push(...f.secrets)
    if (f.cuts.length === 0) continue
    if (!mayChange(real)) {
      out.notes.push(`${real} (included by a repository's config) holds credentials; its values are redacted, the file is left as it is`)
      continue
    }
    out.files.push(hiddenFile(real, r, applyCuts(r.bytes, f.cuts)))
    out.notes.push(`${real}: ${f.what.join(', ')}`)
  }
  out.stores = [...stores]
  return out
}
