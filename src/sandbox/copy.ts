// The agent's own copy (user mode): where it lives, and what the action reads
// of the workspace's git to make it, without running git in the workspace
// (its config could hold anything: fsmonitor, hooks, filters).
import { randomBytes } from 'node:crypto'
import { lstatSync, readFileSync } from 'node:fs'
import path from 'node:path'

/** Root-owned (0711) folder of the runs' folders; each run's name is 128 random bits, so runs cannot find each other's. */
export const RUNS_DIR = '/var/lib/bash-agent/runs'

/** A new run folder's path (not made yet). */
export function newRunDir(): string {
  return path.join(RUNS_DIR, randomBytes(16).toString('hex'))
}

/** Whether `dir` is a run folder this module would have made (the post step trusts nothing else for rm -rf as root). */
export function isRunDir(dir: unknown): dir is string {
  return typeof dir === 'string' && new RegExp(`^${RUNS_DIR}/[0-9a-f]{32}$`).test(dir)
}

export interface WorkspaceGit {
  /** the git directory (`.git`, or where a `.git` file points) */
  gitDir: string
  /** the object store */
  objects: string
  /** the commit checked out, when there is one */
  baseSha?: string
  /** remote.<name>.url entries, without any user:password@ part */
  remotes: Array<[string, string]>
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/

/** What the copy needs of the workspace's repository, read as files; undefined when it is not one. */
export function readWorkspaceGit(workspace: string): WorkspaceGit | undefined {
  const dotGit = path.join(workspace, '.git')
  let gitDir: string
  try {
    const st = lstatSync(dotGit)
    if (st.isDirectory()) gitDir = dotGit
    else if (st.isFile()) {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))
      if (!m) return undefined
      gitDir = path.resolve(workspace, m[1])
    } else return undefined
  } catch {
    return undefined
  }
  let common = gitDir
  try {
    common = path.resolve(gitDir, readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim())
  } catch {
    // not a linked worktree
  }
  return { gitDir, objects: path.join(common, 'objects'), baseSha: headOf(gitDir, common), remotes: remotesOf(path.join(common, 'config')) }
}

/** HEAD resolved through loose refs and packed-refs (a few levels of symbolic refs). */
function headOf(gitDir: string, common: string): string | undefined {
  let ref = 'HEAD'
  for (let depth = 0; depth < 5; depth++) {
    let value: string | undefined
    for (const dir of ref === 'HEAD' ? [gitDir] : [gitDir, common]) {
      try {
        value = readFileSync(path.join(dir, ref), 'utf8').trim()
        break
      } catch {
        // not here
      }
    }
    if (value === undefined) value = packedRef(common, ref)
    if (value === undefined) return undefined
    if (SHA.test(value)) return value
    const m = /^ref:\s*(refs\/\S+)$/.exec(value)
    if (!m || m[1].split('/').includes('..')) return undefined
    ref = m[1]
  }
  return undefined
}

function packedRef(common: string, ref: string): string | undefined {
  try {
    for (const line of readFileSync(path.join(common, 'packed-refs'), 'utf8').split('\n')) {
      const [sha, name] = line.split(' ')
      if (name === ref && SHA.test(sha)) return sha
    }
  } catch {
    // none
  }
  return undefined
}

/** `[remote "x"] url = ...` entries of a config file, read as text (no includes followed), credentials dropped. */
function remotesOf(configFile: string): Array<[string, string]> {
  const out: Array<[string, string]> = []
  let text: string
  try {
    text = readFileSync(configFile, 'utf8')
  } catch {
    return out
  }
  let remote: string | undefined
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    const section = /^\[remote\s+"([A-Za-z0-9._-]+)"\]$/.exec(line)
    if (section) {
      remote = section[1]
      continue
    }
    if (line.startsWith('[')) {
      remote = undefined
      continue
    }
    const url = /^url\s*=\s*(\S+)$/i.exec(line)
    if (remote && url) out.push([`remote.${remote}.url`, url[1].replace(/^(\w+:\/\/)[^/@]*@/, '$1')])
  }
  return out
}
