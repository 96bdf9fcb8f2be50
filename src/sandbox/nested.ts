// What the agent's copy gets of the nested repositories (issue 37), decided here by the action, not by the code
// that runs as root: every repository config below the top (submodules', worktrees', bare repositories', separate
// git dirs', from the credential scan's one walk) and every file found holding credentials, as keptConfig makes
// it (the command server writes each over the copy's); the credential stores, left out of the copy.
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { MAX_WALK_DEPTH, MAX_WALK_ENTRIES } from './credentials-walk'
import type { Scan } from './credentials-scan'
import { keptConfig } from './gitconfig-keep'
import { realpathOr } from './privilege'
import type { SecretFile } from './secret-files'

/** Configs larger than this are not read: the copy's is empty (git writes small ones). */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024
const STORE = 'a git credential store: it holds the credentials of the repositories whose helper uses it'

export interface NestedPlan {
  /** workspace-relative files of the copy and what each holds there (ServerConfig.replace) */
  replace: Array<{ path: string; content: string }>
  /** the credential stores in the workspace: never given to the agent */
  withhold: SecretFile[]
}

export function nestedPlan(workspace: string, s: Scan): NestedPlan {
  // a repository the walk did not reach would come into the copy with its credentials: no copy then (fail closed)
  if (s.truncated)
    throw new Error(
      `the workspace is larger than ${MAX_WALK_ENTRIES} entries or ${MAX_WALK_DEPTH} folders deep, so its nested repositories' configs could not all be cleaned`
    )
  const root = realpathOr(workspace)
  // relative to the workspace through real folders (a gitfile may name its git dir through a link); the
  // workspace's own .git is not in the copy
  const inCopy = (file: string): string | undefined => {
    const rel = path.relative(root, path.join(realpathOr(path.dirname(file)), path.basename(file)))
    return !rel || rel.startsWith('..') || path.isAbsolute(rel) || rel.split(path.sep)[0] === '.git' ? undefined : rel
  }
  const withhold = new Map<string, SecretFile>()
  for (const store of s.stores) {
    const rel = inCopy(store)
    if (rel) withhold.set(rel, { path: rel, why: STORE })
  }
  const replace = new Map<string, string>()
  for (const f of s.files) {
    const rel = inCopy(f.path)
    if (rel && !withhold.has(rel)) replace.set(rel, keptConfig(f.original))
  }
  for (const config of s.configs) {
    const rel = inCopy(config)
    if (rel && !withhold.has(rel) && !replace.has(rel)) replace.set(rel, keptConfig(readSmall(config)))
  }
  return { replace: [...replace].map(([p, content]) => ({ path: p, content })), withhold: [...withhold.values()] }
}

/** A config's bytes (through a symlink, as git reads it), or none: gone, unreadable, too large, no file (never a FIFO read). */
function readSmall(file: string): Buffer | undefined {
  let fd: number | undefined
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
    const st = fstatSync(fd)
    return st.isFile() && st.size <= MAX_CONFIG_BYTES ? readFileSync(fd) : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}
