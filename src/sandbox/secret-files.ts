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
import { accessSync, constants, lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
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

const HOLDS = 'it holds a secret value the action knows (a token, a key or a credential)'
const UNREADABLE = 'the action could not read it to check it for secrets'

/**
 * The workspace files (relative paths) the agent must not get: those holding
 * any of `secrets` (or a form the Redactor treats as the same secret: JSON- or
 * percent-escaped, base64), and those the action cannot read to check.
 */
export async function secretFiles(workspace: string, secrets: string[]): Promise<SecretFile[]> {
  const patterns = [...new Set(secrets.flatMap(fixedForms))]
  if (patterns.length === 0) return []
  const root = realpathOr(workspace)
  const listed = await candidates(root)
  const out: SecretFile[] = []
  const readable: string[] = []
  for (const rel of listed) {
    const st = lstatSync(path.join(root, rel), { throwIfNoEntry: false })
    // only regular files: a symlink is not followed (the copy holds the link), a FIFO would never end
    if (!st?.isFile()) continue
    try {
      accessSync(path.join(root, rel), constants.R_OK)
      readable.push(rel)
    } catch {
      out.push({ path: rel, why: UNREADABLE })
    }
  }
  for (const rel of await grepFiles(root, readable, patterns)) out.push({ path: rel, why: HOLDS })
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/**
 * What is not unmodified committed content: git status's untracked, ignored
 * and changed paths, one by one (`--untracked-files=all`); a folder it names
 * whole (a nested repository, a submodule with changes) is walked. Where git
 * cannot tell (no repository), every file of the workspace.
 */
export async function candidates(root: string): Promise<string[]> {
  const exec = withTrustedGit(localExec, trustedGit(root))
  const env = { ...safeGitEnv('/usr/bin:/bin'), GIT_OPTIONAL_LOCKS: '0', GIT_CEILING_DIRECTORIES: path.dirname(root) }
  const args = [
    ...SAFE_GIT_CONFIG,
    ...['-c', 'core.untrackedCache=false', '-c', 'status.showUntrackedFiles=all', '-c', 'diff.ignoreSubmodules=none'],
    ...['status', '--porcelain', '-z', '--untracked-files=all', '--ignored', '--no-renames', '--ignore-submodules=none']
  ]
  const r = await exec('git', args, { cwd: root, env })
  if (r.code !== 0) return walk(root, '')
  const out: string[] = []
  const parts = r.stdout.toString('utf8').split('\0')
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i]
    if (entry.length < 4) continue
    const xy = entry.slice(0, 2)
    const rel = entry.slice(3)
    if (xy[0] === 'R' || xy[0] === 'C') i++ // the original path follows
    if (rel.endsWith('/')) out.push(...walk(root, rel.slice(0, -1)))
    else if (lstatSync(path.join(root, rel), { throwIfNoEntry: false })?.isDirectory()) out.push(...walk(root, rel))
    else out.push(rel)
  }
  return out
}

/** Every file under `rel` (relative to `root`), symlinks not followed, `.git` folders left out (never copied). */
function walk(root: string, rel: string): string[] {
  const out: string[] = []
  const stack = [rel]
  while (stack.length) {
    const dir = stack.pop() as string
    let entries
    try {
      entries = readdirSync(path.join(root, dir), { withFileTypes: true })
    } catch {
      continue
    }
    for (const e of entries) {
      const p = dir ? `${dir}/${e.name}` : e.name
      if (e.isDirectory()) {
        if (e.name !== '.git') stack.push(p)
      } else out.push(p)
    }
  }
  return out
}

/** The files of `files` (relative to `root`) that hold one of `patterns`, by grep -F over them in batches. */
async function grepFiles(root: string, files: string[], patterns: string[]): Promise<string[]> {
  if (files.length === 0) return []
  const grep = findProgram('grep', process.env.PATH, root)
  if (!grep)
    throw new Error(
      'grep was not found in a folder only root or the runner user can change: the workspace could not be checked for secrets'
    )
  const dir = mkdtempSync(path.join(tmpdir(), 'bash-agent-secrets-'))
  try {
    const list = path.join(dir, 'patterns')
    writeFileSync(list, `${patterns.join('\n')}\n`, { mode: 0o600, flag: 'wx' })
    const found: string[] = []
    for (let at = 0; at < files.length;) {
      const batch: string[] = []
      for (let bytes = 0; at < files.length && (batch.length === 0 || bytes < GREP_BATCH_BYTES); at++) {
        batch.push(files[at])
        bytes += Buffer.byteLength(files[at]) + 1
      }
      found.push(...(await grepBatch(grep, root, list, batch)))
    }
    return found
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** One grep run: the names (NUL-separated) of the files that match; throws when grep could not read one. */
function grepBatch(grep: string, root: string, list: string, files: string[]): Promise<string[]> {
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
      if (code !== 0 && code !== 1 && problems.length) return reject(new Error(`grep: ${problems[0]}`))
      const names = Buffer.concat(out).toString('utf8').split('\0').filter(Boolean)
      resolve(names.map(n => n.replace(/^\.\//, '')))
    })
  })
}
