// Files the agent never gets (SPEC "Not given"): the workspace files that hold
// a secret value the action knows (the job's tokens, the key, provider
// credentials, credential-looking pass-env values: what the Redactor knows), as
// google-github-actions/auth's gha-creds-*.json holds the job's OIDC request
// token. They are left out of the copy (the server's `withhold`) and named in
// the report, never shown.
//
// Only what can hold one is read: files that are not unmodified committed
// content (untracked, ignored and modified files, as `git status` finds them
// against the index), with one fixed-string search (grep -F) over that list,
// so the cost follows what earlier steps wrote, not the repository's size.
// Git runs with no system or global config and the repository's programs
// switched off (hooks, fsmonitor, attributes); it takes no optional lock, so
// the workspace's .git is not written. The secrets are written to a 0600 file
// in a private folder (removed at once) and never to an argument, a log or an
// error message.
import { spawn } from 'node:child_process'
import {
  accessSync,
  closeSync,
  constants,
  type Dirent,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fixedForms } from '../report/redact'
import { SAFE_GIT_CONFIG, safeGitEnv } from '../changes/git'
import { localExec } from '../changes/exec'
import { trustedGit, withTrustedGit } from './trusted-git'
import { findProgram, realpathOr } from './privilege'

export interface SecretFile {
  /** relative to the workspace */
  path: string
  why: string
}

/** Paths grep is given at once (well under ARG_MAX for any name length git prints). */
const GREP_BATCH_BYTES = 96 * 1024
/** greps run at once (the runners have 2 or 4 CPUs) */
const GREP_PARALLEL = 2

const HOLDS = 'it holds a secret value the action knows (a token, a key or a credential)'
const UNREADABLE = 'the action could not read it to check it for secrets'

/**
 * The workspace files (relative paths) the agent must not get: those holding
 * any of `secrets` (or a form the Redactor treats as the same secret: JSON- or
 * percent-escaped, base64), and those the action cannot read to check.
 */
export function secretFiles(workspace: string, secrets: string[]): Promise<SecretFile[]> {
  return secretCheck(workspace)(secrets)
}

/**
 * secretFiles in two parts: the list of files to read (git status, which needs no secret) starts at
 * once, beside the rest of the set-up (the credential scan that teaches the redactor more secrets, the
 * host's probes); the returned function searches it once the secrets are all known.
 */
export function secretCheck(workspace: string): (secrets: string[]) => Promise<SecretFile[]> {
  const root = realpathOr(workspace)
  const raw: Buffer[] = []
  const listed = candidates(root, raw).then(files => regularFiles(root, files))
  listed.catch(() => {}) // awaited below, or the set-up stopped before it
  return async secrets => {
    const patterns = [...new Set(secrets.flatMap(fixedForms))]
    if (patterns.length === 0) return []
    const { found, unreadable } = await grepFiles(root, await listed, patterns, raw)
    const out = [...found.map(p => ({ path: p, why: HOLDS })), ...unreadable.map(p => ({ path: p, why: UNREADABLE }))]
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  }
}

/**
 * The regular files of `files` (relative to `root`): a symlink is not followed
 * (the copy holds the link, not what it names), a FIFO or device never read.
 * Told by each folder's listing (one readdir a folder, not one lstat a file).
 */
function regularFiles(root: string, files: string[]): string[] {
  const byDir = new Map<string, string[]>()
  for (const f of files) {
    const at = f.lastIndexOf('/')
    const dir = at < 0 ? '' : f.slice(0, at)
    const names = byDir.get(dir) ?? []
    names.push(f.slice(at + 1))
    byDir.set(dir, names)
  }
  const out: string[] = []
  for (const [dir, names] of byDir) {
    const kinds = new Map<string, Dirent>()
    try {
      for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) kinds.set(e.name, e)
    } catch {
      continue // gone meanwhile
    }
    for (const name of names) {
      const e = kinds.get(name)
      const rel = dir ? `${dir}/${name}` : name
      // a file system that gives no type in its listings: asked one by one
      const file =
        e &&
        (e.isFile() ||
          (!e.isSymbolicLink() &&
            !e.isDirectory() &&
            !e.isFIFO() &&
            !e.isSocket() &&
            !e.isBlockDevice() &&
            !e.isCharacterDevice() &&
            lstatSync(path.join(root, rel), { throwIfNoEntry: false })?.isFile()))
      if (file) out.push(rel)
    }
  }
  return out
}

/**
 * What is not unmodified committed content: git status's untracked, ignored
 * and changed paths, one by one (`--untracked-files=all`); a folder it names
 * whole (a nested repository, a submodule with changes) is walked. Where git
 * cannot tell (no repository), every file of the workspace. Names that are
 * not UTF-8 (which no list of names can carry) come back as bytes, in `raw`.
 */
export async function candidates(root: string, raw: Buffer[] = []): Promise<string[]> {
  const exec = withTrustedGit(localExec, trustedGit(root))
  const env = { ...safeGitEnv('/usr/bin:/bin'), GIT_OPTIONAL_LOCKS: '0', GIT_CEILING_DIRECTORIES: path.dirname(root) }
  const args = [
    ...SAFE_GIT_CONFIG,
    ...['-c', 'core.untrackedCache=false', '-c', 'status.showUntrackedFiles=all', '-c', 'diff.ignoreSubmodules=none'],
    ...['status', '--porcelain', '-z', '--untracked-files=all', '--ignored', '--no-renames', '--ignore-submodules=none']
  ]
  const r = await exec('git', args, { cwd: root, env })
  const out: string[] = []
  if (r.code !== 0) {
    walk(root, Buffer.alloc(0), out, raw)
    return out
  }
  // one latin1 string (a byte a character), cut at the NULs: a Buffer a name cost ~20 us each, 20,000 names ~0.4 s
  const parts = r.stdout.toString('latin1').split('\0')
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i]
    if (entry.length < 4) continue
    const xy = entry.slice(0, 2)
    let rel = entry.slice(3)
    if (xy[0] === 'R' || xy[0] === 'C') i++ // the original path follows
    // a folder: named whole with a '/' (a nested repository), or a submodule with changes (a tracked path)
    const folder = rel.endsWith('/')
    if (folder) rel = rel.slice(0, -1)
    const tracked = xy !== '??' && xy !== '!!'
    const bytes = () => Buffer.from(rel, 'latin1')
    if (folder || (tracked && lstatSync(Buffer.concat([Buffer.from(`${root}/`), bytes()]), { throwIfNoEntry: false })?.isDirectory()))
      walk(root, bytes(), out, raw)
    else if (ASCII.test(rel)) out.push(rel)
    else add(bytes(), out, raw)
  }
  return out
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/

const add = (rel: Buffer, out: string[], raw: Buffer[]) => {
  const name = rel.toString('utf8')
  if (Buffer.from(name, 'utf8').equals(rel)) out.push(name)
  else raw.push(rel)
}

/** Every file under `rel` (relative to `root`, as bytes), symlinks not followed, `.git` folders left out (never copied). */
function walk(root: string, rel: Buffer, out: string[], raw: Buffer[]): void {
  const stack = [rel]
  while (stack.length) {
    const dir = stack.pop() as Buffer
    let entries
    try {
      entries = readdirSync(Buffer.concat([Buffer.from(`${root}/`), dir]), { withFileTypes: true, encoding: 'buffer' })
    } catch {
      continue
    }
    for (const e of entries) {
      const p = dir.length ? Buffer.concat([dir, Buffer.from('/'), e.name]) : e.name
      if (e.isDirectory()) {
        if (!e.name.equals(Buffer.from('.git'))) stack.push(p)
      } else add(p, out, raw)
    }
  }
}

/**
 * A file whose name is not UTF-8 cannot be named to the server, so it cannot
 * be left out: it is read here (grep -q on its bytes), and one holding a
 * secret stops the set-up.
 */
async function checkUnnamable(grep: string, root: string, list: string, raw: Buffer[]): Promise<void> {
  for (const rel of raw) {
    const full = Buffer.concat([Buffer.from(`${root}/`), rel])
    if (!lstatSync(full, { throwIfNoEntry: false })?.isFile()) continue
    const fd = openSync(full, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    try {
      const code = await new Promise<number | null>((resolve, reject) => {
        const child = spawn(grep, ['-F', '-q', '-a', '-f', list], { env: { LC_ALL: 'C' }, stdio: [fd, 'ignore', 'ignore'] })
        child.on('error', reject)
        child.on('close', resolve)
      })
      if (code === 0)
        throw new Error(
          `${JSON.stringify(rel.toString('utf8'))} (a name that is not UTF-8) holds a secret value the action knows, and cannot be left out of the copy`
        )
      if (code !== 1) throw new Error(`${JSON.stringify(rel.toString('utf8'))} (a name that is not UTF-8) could not be read to check it`)
    } finally {
      closeSync(fd)
    }
  }
}

/** The files of `files` (relative to `root`) that hold one of `patterns`, by grep -F over them in batches. */
async function grepFiles(
  root: string,
  files: string[],
  patterns: string[],
  raw: Buffer[]
): Promise<{ found: string[]; unreadable: string[] }> {
  const unreadable: string[] = []
  if (files.length === 0 && raw.length === 0) return { found: [], unreadable }
  const grep = findProgram('grep', process.env.PATH, root)
  if (!grep)
    throw new Error(
      'grep was not found in a folder only root or the runner user can change: the workspace could not be checked for secrets'
    )
  const dir = mkdtempSync(path.join(tmpdir(), 'bash-agent-secrets-'))
  try {
    const list = path.join(dir, 'patterns')
    writeFileSync(list, `${patterns.join('\n')}\n`, { mode: 0o600, flag: 'wx' })
    await checkUnnamable(grep, root, list, raw)
    const found: string[] = []
    const batches = batchesOf(files)
    // GREP_PARALLEL greps at a time: reading many small files waits on the file system more than on a CPU
    const worker = async () => {
      for (let batch = batches.shift(); batch; batch = batches.shift()) {
        const r = await grepBatch(grep, root, list, batch)
        found.push(...r.found)
        if (r.problem) {
          // which could not be read is asked only here (the rare case): they are withheld, never given unchecked
          const cannot = batch.filter(f => !canRead(path.join(root, f)))
          if (!cannot.length) throw new Error(`grep: ${r.problem}`)
          unreadable.push(...cannot)
        }
      }
    }
    await Promise.all(Array.from({ length: GREP_PARALLEL }, worker))
    return { found, unreadable }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** `files` cut into lists of at most GREP_BATCH_BYTES of names, at least GREP_PARALLEL of them when there are that many files. */
function batchesOf(files: string[]): string[][] {
  let total = 0
  for (const f of files) total += Buffer.byteLength(f) + 1
  const limit = Math.min(GREP_BATCH_BYTES, Math.ceil(total / GREP_PARALLEL))
  const out: string[][] = []
  for (let at = 0; at < files.length;) {
    const batch: string[] = []
    for (let bytes = 0; at < files.length && (batch.length === 0 || bytes < limit); at++) {
      batch.push(files[at])
      bytes += Buffer.byteLength(files[at]) + 1
    }
    out.push(batch)
  }
  return out
}

const canRead = (file: string): boolean => {
  try {
    accessSync(file, constants.R_OK)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' // gone meanwhile: nothing to hide
  }
}

/** One grep run: the names (NUL-separated) of the files that match, and what it could not read, if anything. */
function grepBatch(grep: string, root: string, list: string, files: string[]): Promise<{ found: string[]; problem?: string }> {
  return new Promise((resolve, reject) => {
    // -a: a binary file is searched as text; -D/-d skip: never a device or folder; LC_ALL=C: bytes, no locale
    const args = ['-F', '-l', '-Z', '-a', '-D', 'skip', '-d', 'skip', '-f', list, '--', ...files.map(f => `./${f}`)]
    const child = spawn(grep, args, { cwd: root, env: { LC_ALL: 'C', PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    let err = ''
    child.stdout.on('data', (c: Buffer) => out.push(c))
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8').slice(0, 4000)))
    child.on('error', reject)
    child.on('close', code => {
      // 2: some file could not be read; one that went away meanwhile has nothing to hide
      const problems = err.split('\n').filter(l => l.trim() && !/No such file or directory$/.test(l))
      const names = Buffer.concat(out).toString('utf8').split('\0').filter(Boolean)
      const found = names.map(n => n.replace(/^\.\//, ''))
      resolve(code !== 0 && code !== 1 && problems.length ? { found, problem: problems[0] } : { found })
    })
  })
}
