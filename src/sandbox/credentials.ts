// Git credentials in `sandbox: none` (the agent works in the workspace itself):
// the http.*.extraheader entries actions/checkout persisted, and includes of
// its credentials files, are taken out of the workspace's git configs for the
// run and put back afterwards (bytes, or the same entries in the same order).
// Moved as it was from the old tools/sandbox.ts; the envcreds work replaces it
// (credentials at any depth, never on a command line).
import { spawn } from 'node:child_process'
import { existsSync, lchownSync, lstatSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { credentialsIn, type Redactor } from '../report/redact'
import { findProgram, realpathOr } from './privilege'

const CREDENTIAL_KEYS = '^(http\\..*\\.extraheader|include(if\\..*)?\\.path)$'

const CHECKOUT_CREDENTIALS_FILE = /(?:^|[\\/])git-credentials-[0-9a-f-]+\.config$/i

interface ExecResult {
  code: number | null
  stdout: string
  stderr: string
  /** spawn failure or timeout */
  error?: string
}

interface ExecOptions {
  input?: string
  timeoutMs?: number
  env?: NodeJS.ProcessEnv
}

/** Run a program, never throwing. */
function exec(file: string, args: string[], o: ExecOptions = {}): Promise<ExecResult> {
  return new Promise(resolve => {
    let stdout = ''
    let stderr = ''
    let settled = false
    const settle = (r: ExecResult): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(r)
    }
    let child: ReturnType<typeof spawn>
    const stdio: Array<'ignore' | 'pipe' | number> = [o.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe']
    try {
      child = spawn(file, args, {
        cwd: '/', // never inside the workspace: no repository discovery, no relative lookups
        stdio,
        env: o.env ?? { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C', LC_ALL: 'C' },
      })
    } catch (e) {
      resolve({ code: null, stdout: '', stderr: '', error: (e as Error).message })
      return
    }
    const timer = setTimeout(() => {
      try {
        child.kill('SIGKILL')
      } catch {
        // gone
      }
      settle({ code: null, stdout, stderr, error: `${path.basename(file)} did not finish in time` })
    }, o.timeoutMs ?? 60_000)
    child.stdout?.setEncoding('utf8')
    child.stderr?.setEncoding('utf8')
    child.stdout?.on('data', (d: string) => {
      stdout += d
    })
    child.stderr?.on('data', (d: string) => {
      if (stderr.length < 100_000) stderr += d
    })
    child.on('error', e => settle({ code: null, stdout, stderr, error: e.message }))
    child.on('close', code => settle({ code, stdout, stderr }))
    if (o.input !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined)
      child.stdin.end(o.input)
    }
  })
}

function firstLine(r: ExecResult): string {
  const text = (r.error ?? (r.stderr.trim() || r.stdout.trim())) || `exit code ${r.code}`
  return text.split('\n')[0].slice(0, 200)
}

export interface HiddenConfig {
  /** the config file */
  file: string
  /** its real path when the credentials were taken out */
  real: string
  original: Buffer
  stripped: Buffer
  /** the entries taken out, in file order */
  entries: Array<[string, string]>
  /** owner of the file */
  uid: number
  gid: number
}

function gitEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: os.tmpdir(),
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null'
  }
}

async function git(gitBin: string, args: string[]): Promise<ExecResult> {
  return exec(gitBin, args, { env: gitEnv(), timeoutMs: 30_000 })
}

/** Entries of one config file whose key matches `re`, in file order. */
async function configEntries(gitBin: string, file: string, re: string): Promise<Array<[string, string]>> {
  const r = await git(gitBin, ['config', '--file', file, '-z', '--get-regexp', re])
  if (r.code !== 0) return []
  return r.stdout
    .split('\0')
    .filter(rec => rec !== '')
    .map(rec => {
      const nl = rec.indexOf('\n')
      return nl < 0 ? [rec, ''] : [rec.slice(0, nl), rec.slice(nl + 1)]
    })
}

/** A POSIX extended regular expression matching exactly `value`. */
function exactValuePattern(value: string): string {
  return `^${value.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')}$`
}

function gitDirOf(dir: string): string | undefined {
  const dotGit = path.join(dir, '.git')
  try {
    const st = lstatSync(dotGit)
    if (st.isDirectory()) return dotGit
    if (st.isFile()) {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))
      if (m) return path.resolve(dir, m[1])
    }
  } catch {
    // not a repository
  }
  return undefined
}

/** The config files of the repositories in the workspace (and its direct subfolders): main, worktree and submodule configs. */
function repositoryConfigs(workspace: string): string[] {
  const dirs = [workspace]
  try {
    for (const e of readdirSync(workspace, { withFileTypes: true })) {
      if (e.isDirectory() && e.name !== '.git' && e.name !== 'node_modules') dirs.push(path.join(workspace, e.name))
    }
  } catch {
    // unreadable
  }
  const files: string[] = []
  for (const dir of dirs) {
    const gitDir = gitDirOf(dir)
    if (!gitDir) continue
    let common = gitDir
    try {
      common = path.resolve(gitDir, readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim())
    } catch {
      // not a worktree
    }
    for (const f of [path.join(common, 'config'), path.join(gitDir, 'config.worktree')]) if (existsSync(f)) files.push(f)
    // submodules: <common>/modules/**/config
    const stack: Array<[string, number]> = [[path.join(common, 'modules'), 0]]
    while (stack.length > 0) {
      const [d, depth] = stack.pop() as [string, number]
      let entries: import('node:fs').Dirent[]
      try {
        entries = readdirSync(d, { withFileTypes: true })
      } catch {
        continue
      }
      for (const e of entries) {
        if (e.isFile() && e.name === 'config') files.push(path.join(d, e.name))
        else if (e.isDirectory() && depth < 8 && !['objects', 'refs', 'logs', 'hooks', 'info'].includes(e.name)) stack.push([path.join(d, e.name), depth + 1])
      }
    }
  }
  return [...new Set(files)]
}

/** Where an include.path value points, relative to the config file that holds it. */
function includeTarget(value: string, configFile: string): string {
  if (value.startsWith('~/')) return path.join(os.homedir(), value.slice(2))
  return path.resolve(path.dirname(configFile), value)
}

async function hasExtraheader(gitBin: string, file: string): Promise<boolean> {
  return (await configEntries(gitBin, file, '^http\\..*\\.extraheader$')).length > 0
}

/**
 * Take the credentials out of the workspace's git configs: every
 * http.*.extraheader entry, and every include/includeIf entry pointing at a
 * credentials file (checkout's git-credentials-<uuid>.config, or any file
 * holding an extraheader), whose own extraheader entries are taken out too.
 */
export async function hideGitCredentials(
  workspace: string,
  envPath: string | undefined,
  redactor: Redactor,
  log: (m: string) => void
): Promise<{ hidden: HiddenConfig[]; gitBin?: string; restore: () => Promise<string[]> }> {
  const hidden: HiddenConfig[] = []
  // found now, before the agent runs, and never in a folder it could write
  const gitBin = findProgram('git', envPath, realpathOr(workspace))
  const restore = () => restoreGitConfigs(hidden, gitBin, log)

  const queue = repositoryConfigs(workspace)
  if (queue.length === 0) return { hidden, gitBin, restore }
  if (!gitBin) {
    log('Git credentials: git is not installed, so the workspace git config was not checked for persisted credentials.')
    return { hidden, gitBin, restore }
  }
  const seen = new Set<string>()
  while (queue.length > 0) {
    const file = queue.shift() as string
    let real: string
    try {
      real = realpathSync(file)
      if (!lstatSync(real).isFile()) continue
    } catch {
      continue
    }
    if (seen.has(real)) continue
    seen.add(real)
    // both kinds in one listing, so the removed entries keep their file order
    const listed = await configEntries(gitBin, file, CREDENTIAL_KEYS)
    const entries: Array<[string, string]> = []
    const headers: Array<[string, string]> = []
    const includes: Array<[string, string]> = []
    for (const [key, value] of listed) {
      if (key.endsWith('.extraheader')) {
        headers.push([key, value])
        entries.push([key, value])
        continue
      }
      const target = includeTarget(value, file)
      let exists = false
      try {
        exists = statSync(target).isFile()
      } catch {
        // not there (e.g. the container path /github/runner_temp/...)
      }
      if (CHECKOUT_CREDENTIALS_FILE.test(value) || (exists && (await hasExtraheader(gitBin, target)))) {
        includes.push([key, value])
        entries.push([key, value])
        if (exists) queue.push(target)
      }
    }
    if (entries.length === 0) continue
    const before = lstatSync(real)
    const original = readFileSync(file)
    for (const [, value] of headers) {
      redactor.add(value)
      for (const c of credentialsIn(value)) redactor.add(c)
    }
    // remove: all values of each extraheader key, and exactly the include values found
    const problems: string[] = []
    for (const key of [...new Set(headers.map(([k]) => k))]) {
      const r = await git(gitBin, ['config', '--file', file, '--unset-all', key])
      if (r.code !== 0) problems.push(firstLine(r))
    }
    for (const [key, value] of includes) {
      const r = await git(gitBin, ['config', '--file', file, '--unset-all', key, exactValuePattern(value)])
      if (r.code !== 0 && r.code !== 5) problems.push(firstLine(r))
    }
    // git rewrote the file (lock and rename), so it is ours now: give it back to its owner
    try {
      const after = lstatSync(real)
      if (after.uid !== before.uid || after.gid !== before.gid) lchownSync(real, before.uid, before.gid)
    } catch (e) {
      problems.push(`owner not kept: ${(e as Error).message}`)
    }
    const stripped = readFileSync(file)
    hidden.push({ file, real, original, stripped, entries, uid: before.uid, gid: before.gid })
    const what = [
      headers.length ? `${headers.length} http extraheader entr${headers.length === 1 ? 'y' : 'ies'}` : '',
      includes.length ? `${includes.length} include entr${includes.length === 1 ? 'y' : 'ies'} of a credentials file` : ''
    ]
      .filter(Boolean)
      .join(' and ')
    log(`Git credentials: took ${what} out of ${file} for the run${problems.length ? ` (problems: ${problems.join('; ')})` : ''}.`)
  }
  return { hidden, gitBin, restore }
}

/**
 * Put every git config back: its exact bytes when it is as we left it, else
 * the same entries again in the same order (then its owner too, as git
 * rewrote it). A file already back (an earlier, interrupted release) is left alone.
 */
export async function restoreGitConfigs(
  hidden: HiddenConfig[],
  gitBin: string | undefined,
  log: (m: string) => void
): Promise<string[]> {
  const problems: string[] = []
  if (hidden.length === 0) return problems
  for (const h of hidden) {
    const r = putBack(h)
    if (r.startsWith('error')) {
      problems.push(`git credentials not put back in ${h.file}: ${r}`)
    } else if (r === 'replaced' || r === 'missing') {
      problems.push(`git credentials not put back: ${h.file} was ${r === 'missing' ? 'removed' : 'replaced'} during the run`)
    } else if (r === 'changed') {
      // the agent changed the file: add the same entries again, in the same order
      if (!gitBin) {
        problems.push(`git credentials not put back in ${h.file}: git not found`)
        continue
      }
      // already there (an earlier, interrupted release put them back)?
      const present = (await configEntries(gitBin, h.file, CREDENTIAL_KEYS)).map(([k, v]) => `${k}\n${v}`)
      const missing = h.entries.filter(([k, v]) => {
        const i = present.indexOf(`${k}\n${v}`)
        if (i < 0) return true
        present.splice(i, 1)
        return false
      })
      if (missing.length === 0) continue
      for (const [key, value] of missing) {
        const a = await git(gitBin, ['config', '--file', h.file, '--add', key, value])
        if (a.code !== 0) problems.push(`could not put back ${key} in ${h.file}: ${firstLine(a)}`)
      }
      try {
        if (!lstatSync(h.file).isSymbolicLink()) lchownSync(h.file, h.uid, h.gid)
      } catch {
        // not ours to give
      }
    }
  }
  if (problems.length === 0) log(`Git credentials put back in ${hidden.map(h => h.file).join(', ')}.`)
  return problems
}

// ---------------------------------------------------------------------------
/** A git config gets its bytes back if nobody changed it meanwhile; never through a symlink. */
function putBack(h: HiddenConfig): string {
  try {
    const st = lstatSync(h.file)
    if (!st.isFile() || realpathSync(h.file) !== h.real) return 'replaced'
    const now = readFileSync(h.file)
    if (now.equals(h.original)) return 'already'
    if (!now.equals(h.stripped)) return 'changed'
    writeFileSync(h.file, h.original)
    return 'written'
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : `error: ${(e as Error).message}`
  }
}
