// Git credentials in the workspace, at any depth: found, taught to the
// redactor, taken out of the files for the run (sandbox: none) and put back
// byte for byte afterwards. Everything is done on the files' bytes in this
// process: no credential is ever on a command line or in a child process.
//
// What counts as a credential (the entry is taken out, its secret values
// taught to the redactor):
//   - every http.*.extraheader (actions/checkout's `AUTHORIZATION: basic ...`);
//   - include.path / includeIf.*.path pointing at a credentials file (checkout
//     v6's git-credentials-<uuid>.config, or any file that itself holds
//     credentials), which is taken care of the same way;
//   - credential.helper entries (a helper would hand stored credentials to
//     the agent's git without it reading them);
//   - a section whose name holds a URL with a user or password
//     (`[url "https://TOKEN@github.com/"]`, `[http "https://u:p@host/"]`):
//     the whole section;
//   - a value holding a URL with a user or password (remote.*.url set to
//     `https://x-access-token:TOKEN@github.com/o/r`): the value stays, the
//     `user:password@` goes;
//   - any other value that looks like a credential (looksLikeCredential);
//   - in a credential store (~/.git-credentials), every line holding one.
// Searched: every repository under the workspace (any depth, no symlinks
// followed, bounded), the files their configs include, and, when asked, the
// home folder's git configs and credential stores. A file outside the
// workspace is changed only when it is a git directory's config, checkout's
// credentials file or one of those home files: an include or a gitfile may
// point at any file of the system, which is then only read.
//
// State before change: the original bytes of every file are written,
// encrypted (AES-256-GCM, key kept in the action's state, not beside the
// file), to a file only we can read BEFORE any file changes. A cancel or kill
// at any moment is then put right by restore() or, in the post step, by
// restoreFromState().
//
// Putting back: each file gets its exact original bytes, owner and mode
// again. Edits the agent made to such a file meanwhile are discarded (and
// logged): they are edits to git config files, which later steps would run
// (core.fsmonitor, hooks paths, filters).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  unlinkSync,
  writeSync,
  type Dirent
} from 'node:fs'
import { lstat, readdir } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { credentialsIn, type Redactor } from '../report/redact'
import { credentialParts, looksLikeCredential } from './env'
import { ConfigSyntaxError, parseConfig, quoteValue, type ConfigEntry } from './gitconfig'

/** The walk over the workspace stops after this many directory entries (and says so). */
export const MAX_WALK_ENTRIES = 500_000
/** ...or this deep. */
export const MAX_WALK_DEPTH = 64
/** Config files larger than this are not read (git writes small ones). */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024
/** Folders inside a git directory where no config lives. */
const GIT_INTERNALS = new Set(['objects', 'refs', 'logs', 'hooks', 'info', 'lfs', 'rr-cache'])

const CHECKOUT_CREDENTIALS_FILE = /(?:^|[\\/])git-credentials-[^\\/]*\.config$/i
const PLACEHOLDER_PASSWORD = /^(?:password|passw0rd|changeme|example|postgres|secret)$/i
/** `scheme://user[:password]@`: a URL carrying credentials. */
const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)([^\s/@]+)@/gi

type Log = (message: string) => void

// ---------------------------------------------------------------------------
// Finding the repositories
// ---------------------------------------------------------------------------

export interface FoundConfigs {
  /** config files of every repository found (main, worktree and submodule configs) */
  files: string[]
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
  const isFile = (p: string) => {
    try {
      return lstatSync(p).isFile()
    } catch {
      return false
    }
  }
  // outside the workspace only folders that are git directories (a HEAD beside the config): a gitfile may point anywhere
  const gitDirectory = (dir: string) => isFile(path.join(dir, 'HEAD')) || isInside(dir, root)
  for (const dir of [gitDir, common]) {
    if (!gitDirectory(dir)) continue
    for (const f of [path.join(dir, 'config'), path.join(dir, 'config.worktree')]) if (isFile(f)) out.add(f)
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
      if (e.isFile() && (e.name === 'config' || e.name === 'config.worktree') && gitDirectory(dir)) out.add(p)
      else if (e.isDirectory() && depth < 16 && !GIT_INTERNALS.has(e.name)) stack.push([p, depth + 1])
    }
  }
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child)
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))
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
  let seen = 0
  let truncated = false
  let top: number
  try {
    const st = lstatSync(root)
    if (!st.isDirectory()) return { files: [], truncated }
    top = st.dev
  } catch {
    return { files: [], truncated }
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
  return { files: [...out].sort(), truncated }
}

// ---------------------------------------------------------------------------
// Finding the credentials in one file
// ---------------------------------------------------------------------------

interface Cut {
  start: number
  end: number
  /** text put in place of [start, end) */
  put: string
}

interface FileFindings {
  /** secret values found, for the redactor */
  secrets: string[]
  /** what to change in the file */
  cuts: Cut[]
  /** included files to look at (credential files), resolved */
  includes: string[]
  /** what was found, for the log */
  what: string[]
}

/** Teachable parts of a URL's `user[:password]`: the password, and the user when it looks like a key. */
function userinfoSecrets(userinfo: string): string[] {
  const out: string[] = []
  const colon = userinfo.indexOf(':')
  const user = colon < 0 ? userinfo : userinfo.slice(0, colon)
  const password = colon < 0 ? undefined : userinfo.slice(colon + 1)
  const add = (s: string) => {
    out.push(s)
    try {
      const d = decodeURIComponent(s)
      if (d !== s) out.push(d)
    } catch {
      // not percent-encoded
    }
  }
  // placeholder passwords of local services (`postgres://postgres:postgres@localhost`) are no secret: redacting them would wreck output
  const real = password !== undefined && password.length > 0 && password !== user && !PLACEHOLDER_PASSWORD.test(password)
  if (real) add(password)
  // a user name that is a token (`https://ghp_...@github.com`, a Sentry key), but not `git` or `octocat`
  if (password === undefined ? user.length >= 16 || looksLikeCredential(user) : looksLikeCredential(user)) add(user)
  if (real) add(userinfo)
  return out
}

/** (Not through URL_USERINFO.test: that moves its lastIndex, where matchAll would then start.) */
const HAS_USERINFO = new RegExp(URL_USERINFO.source, 'i')
function hasUserinfo(text: string): boolean {
  return HAS_USERINFO.test(text)
}

/** Where an include path points, as git resolves it (relative to the including file; `~/` is the home folder). */
function includeTarget(value: string, configFile: string): string {
  if (value.startsWith('~/')) return path.join(os.homedir(), value.slice(2))
  return path.resolve(path.dirname(configFile), value)
}

function secretsOfValue(e: ConfigEntry): string[] {
  const out: string[] = []
  const value = e.value ?? ''
  out.push(value)
  if (e.raw && e.raw.trim() !== value) out.push(Buffer.from(e.raw.trim(), 'latin1').toString('utf8'))
  out.push(...credentialsIn(value), ...credentialParts(value))
  // `Header: credential` of any other scheme
  const colon = value.indexOf(':')
  if (colon > 0) out.push(value.slice(colon + 1).trim())
  for (const m of value.matchAll(URL_USERINFO)) out.push(...userinfoSecrets(m[2]))
  return out
}

/**
 * The cuts and secrets of one config file's bytes. `hasCredentials(file)` says
 * whether an included file holds some. A file git cannot read is searched line
 * by line only when `lineByLine` (a file in the workspace): an include or
 * gitfile may point at any file of the system, which is then left alone.
 */
function findInConfig(bytes: Buffer, file: string, hasCredentials: (target: string) => boolean, lineByLine: boolean): FileFindings {
  const f: FileFindings = { secrets: [], cuts: [], includes: [], what: [] }
  let parsed
  try {
    parsed = parseConfig(bytes)
  } catch (e) {
    if (!(e instanceof ConfigSyntaxError)) throw e
    return lineByLine ? findInBrokenFile(bytes, `not a valid git config (${e.message})`) : f
  }
  const { entries, sections } = parsed
  const text = bytes.toString('latin1')
  /** the whole lines of an entry, or from its key when it shares a line with its header */
  const entrySpan = (e: ConfigEntry): [number, number] => {
    const before = text.slice(e.lineStart, e.start)
    return [/^[ \t]*$/.test(before) ? e.lineStart : e.start, e.end]
  }

  // sections named by a URL with credentials go whole: header, entries and comments up to the next header
  const dropSection = new Set<number>()
  sections.forEach((s, index) => {
    if (s.subsection === undefined) return
    if (!hasUserinfo(s.subsection) && !looksLikeCredential(s.subsection)) return
    dropSection.add(index)
    for (const m of s.subsection.matchAll(URL_USERINFO)) f.secrets.push(...userinfoSecrets(m[2]))
    if (!hasUserinfo(s.subsection)) f.secrets.push(s.subsection)
    const nextHeader = sections[index + 1]
    f.cuts.push({ start: s.lineStart, end: nextHeader ? nextHeader.lineStart : text.length, put: '' })
    f.what.push(`the section [${s.section} "…"]`)
  })

  for (const e of entries) {
    if (dropSection.has(e.sectionIndex)) {
      f.secrets.push(...secretsOfValue(e).filter(s => looksLikeCredential(s) || credentialsIn(s).length > 0 || e.name === 'extraheader'))
      continue
    }
    const value = e.value ?? ''
    const [start, end] = entrySpan(e)
    if (e.section === 'http' && e.name === 'extraheader') {
      f.secrets.push(...secretsOfValue(e))
      f.cuts.push({ start, end, put: '' })
      f.what.push(e.key)
    } else if ((e.section === 'include' || e.section === 'includeif') && e.name === 'path' && value) {
      const target = includeTarget(value, file)
      if (CHECKOUT_CREDENTIALS_FILE.test(value) || hasCredentials(target)) {
        f.cuts.push({ start, end, put: '' })
        f.includes.push(target)
        f.what.push(`${e.key} (a credentials file)`)
      }
    } else if (e.section === 'credential' && e.name === 'helper') {
      f.secrets.push(...secretsOfValue(e).filter(s => looksLikeCredential(s)))
      f.cuts.push({ start, end, put: '' })
      f.what.push(e.key)
    } else if (hasUserinfo(value)) {
      for (const m of value.matchAll(URL_USERINFO)) f.secrets.push(...userinfoSecrets(m[2]))
      const clean = value.replace(URL_USERINFO, '$1')
      const indent = start === e.lineStart ? (/^[ \t]*/.exec(text.slice(e.lineStart))?.[0] ?? '\t') : ''
      const newline = text.slice(start, end).endsWith('\n') ? '\n' : ''
      f.cuts.push({ start, end, put: `${indent}${e.name} = ${quoteValue(clean)}${newline}` })
      f.what.push(`the user and password in ${e.key}`)
    } else if (looksLikeCredential(value) || credentialsIn(value).length > 0) {
      f.secrets.push(...secretsOfValue(e))
      f.cuts.push({ start, end, put: '' })
      f.what.push(e.key)
    }
  }
  return f
}

/** A file git cannot read (or a credential store): every line holding a credential goes. */
function findInBrokenFile(bytes: Buffer, why: string): FileFindings {
  const f: FileFindings = { secrets: [], cuts: [], includes: [], what: [] }
  const text = bytes.toString('latin1')
  let at = 0
  for (const line of text.split(/(?<=\n)/)) {
    const value = Buffer.from(line, 'latin1').toString('utf8')
    if (/extraheader|authorization:/i.test(value) || hasUserinfo(value) || looksLikeCredential(value)) {
      f.cuts.push({ start: at, end: at + line.length, put: '' })
      f.secrets.push(value.trim(), ...credentialsIn(value))
      for (const m of value.matchAll(URL_USERINFO)) f.secrets.push(...userinfoSecrets(m[2]))
      const eq = value.indexOf('=')
      if (eq > 0) f.secrets.push(value.slice(eq + 1).trim())
    }
    at += line.length
  }
  if (f.cuts.length > 0) f.what.push(`${f.cuts.length} line${f.cuts.length === 1 ? '' : 's'} holding credentials (${why})`)
  return f
}

function applyCuts(bytes: Buffer, cuts: Cut[]): Buffer {
  const text = bytes.toString('latin1')
  const sorted = [...cuts].sort((a, b) => a.start - b.start)
  let out = ''
  let at = 0
  for (const c of sorted) {
    if (c.start < at) continue // inside a section already cut
    out += text.slice(at, c.start) + c.put
    at = c.end
  }
  out += text.slice(at)
  return Buffer.from(out, 'latin1')
}

// ---------------------------------------------------------------------------
// The files, as found and as changed
// ---------------------------------------------------------------------------

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

interface Scan {
  files: HiddenFile[]
  secrets: string[]
  /** lines for the log */
  notes: string[]
}

function readSmallFile(p: string): { bytes: Buffer; st: import('node:fs').Stats } | undefined {
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

/** Every file holding credentials under `workspace` (and the credential files its configs include), with the cut version of each. */
async function scan(workspace: string, o: ScanOptions = {}): Promise<Scan> {
  const found = await findGitConfigs(workspace)
  const out: Scan = { files: [], secrets: [], notes: [] }
  if (found.truncated) {
    out.notes.push(
      `the workspace is larger than ${MAX_WALK_ENTRIES} entries or ${MAX_WALK_DEPTH} folders deep; repositories beyond were not searched`
    )
  }
  const home = homeFiles(o.home)
  const stores = new Set<string>()
  for (const store of home.stores) {
    try {
      stores.add(realpathSync(store))
    } catch {
      // none
    }
  }
  const queue = [...found.files, ...home.configs, ...stores]
  const realOf = (p: string) => {
    try {
      return realpathSync(p)
    } catch {
      return p
    }
  }
  const workspaceReal = realOf(workspace)
  const inWorkspace = (p: string) => isInside(p, workspaceReal)
  // what may be changed: files in the workspace, repository configs, checkout's credential files, the home's
  // git files; any other file an include points at is only read (its values taught), never written
  const known = new Set([...found.files, ...home.configs].map(realOf))
  const mayChange = (real: string) => inWorkspace(real) || known.has(real) || stores.has(real) || CHECKOUT_CREDENTIALS_FILE.test(real)
  const done = new Set<string>()
  const memo = new Map<string, boolean>()
  const hasCredentials = (target: string): boolean => {
    if (memo.has(target)) return memo.get(target) as boolean
    memo.set(target, false) // include loops
    const r = readSmallFile(target)
    const yes = r !== undefined && findInConfig(r.bytes, target, hasCredentials, inWorkspace(realOf(target))).cuts.length > 0
    memo.set(target, yes)
    return yes
  }
  while (queue.length > 0) {
    const file = queue.shift() as string
    let real: string
    try {
      real = realpathSync(file)
    } catch {
      continue // an include of a file that is not there (checkout's container path /github/runner_temp/...)
    }
    if (done.has(real)) continue
    done.add(real)
    const r = readSmallFile(real)
    if (!r) continue
    const f = stores.has(real)
      ? findInBrokenFile(r.bytes, 'a credential store')
      : findInConfig(r.bytes, real, hasCredentials, inWorkspace(real))
    queue.push(...f.includes)
    out.secrets.push(...f.secrets)
    if (f.cuts.length === 0) continue
    if (!mayChange(real)) {
      out.notes.push(`${real} (included by a repository's config) holds credentials; its values are redacted, the file is left as it is`)
      continue
    }
    out.files.push({
      path: real,
      dirReal: path.dirname(real),
      original: r.bytes,
      stripped: applyCuts(r.bytes, f.cuts),
      uid: Number(r.st.uid),
      gid: Number(r.st.gid),
      mode: Number(r.st.mode) & 0o7777,
      inPlace: Number(r.st.nlink) > 1
    })
    out.notes.push(`${real}: ${f.what.join(', ')}`)
  }
  return out
}

function teach(redactor: Redactor, secrets: string[]): void {
  for (const s of secrets) if (s) redactor.add(s)
}

/**
 * Find the credentials of every repository under `workspace` and teach the
 * redactor their values, changing nothing (for `sandbox: user`, whose copy
 * holds none, while the values may still turn up elsewhere). Returns how many
 * files hold some.
 */
export async function collectCredentials(workspace: string, redactor: Redactor, log?: Log, o: ScanOptions = {}): Promise<number> {
  const s = await scan(workspace, o)
  teach(redactor, s.secrets)
  for (const note of s.notes) log?.(`Git credentials: ${note}.`)
  return s.files.length
}

/**
 * Take every credential out of the repositories under `root` for good, with
 * nothing saved to put back: for a working copy that must hold none (sandbox:
 * user). Only files inside `root` are changed (a copied config's includes of
 * checkout's credential files are cut from it; the files themselves stay).
 * Teaches the redactor the values. Returns the problems, none when all went well.
 */
export async function removeCredentials(root: string, redactor: Redactor, log?: Log): Promise<string[]> {
  const s = await scan(root)
  teach(redactor, s.secrets)
  let rootReal = root
  try {
    rootReal = realpathSync(root)
  } catch {
    // checked by the walk
  }
  const problems: string[] = []
  for (const f of s.files) {
    if (!isInside(f.path, rootReal)) continue
    try {
      writeExact(f, f.stripped)
    } catch (e) {
      problems.push(`${f.path}: ${(e as Error).message}`)
    }
  }
  if (s.files.length > 0)
    log?.(`Git credentials removed from the working copy (${s.files.filter(f => isInside(f.path, rootReal)).length} files).`)
  return problems
}

// ---------------------------------------------------------------------------
// Writing files without a child process, never through a symlink
// ---------------------------------------------------------------------------

/**
 * Give `file` the bytes `bytes`, owner and mode: a new file beside it, renamed
 * over it (as git itself writes configs), so a symlink put in its place is
 * replaced, never written through. The folder must still be the one recorded.
 * When we may not give the new file its owner (not root, not ours), the
 * regular file is rewritten in place instead (O_NOFOLLOW).
 */
function writeExact(h: HiddenFile, bytes: Buffer): void {
  const dir = path.dirname(h.path)
  if (realpathSync(dir) !== h.dirReal) throw new Error(`its folder was replaced`)
  const me = typeof process.getuid === 'function' ? process.getuid() : -1
  const canOwn = me === 0 || me === h.uid
  let exists = true
  try {
    lstatSync(h.path)
  } catch {
    exists = false
  }
  if (canOwn && !(h.inPlace && exists)) {
    const tmp = path.join(dir, `${tempPrefix(h.path)}${randomBytes(6).toString('hex')}`)
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
    try {
      writeAll(fd, bytes)
      if (me === 0) fchownSync(fd, h.uid, h.gid)
      else {
        try {
          fchownSync(fd, h.uid, h.gid) // the group, where we are in it
        } catch {
          // keep our own group
        }
      }
      fchmodSync(fd, h.mode)
      fsyncSync(fd)
    } catch (e) {
      closeSync(fd)
      unlinkSync(tmp)
      throw e
    }
    closeSync(fd)
    try {
      renameSync(tmp, h.path)
    } catch (e) {
      unlinkSync(tmp)
      throw e
    }
    return
  }
  const fd = openSync(h.path, constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW)
  try {
    writeAll(fd, bytes)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Our temporary files beside `file` (one a kill left behind holds the original bytes). */
const tempPrefix = (file: string) => `.${path.basename(file)}.bash-agent-`

function removeOurTemps(file: string): void {
  const prefix = tempPrefix(file)
  try {
    for (const name of readdirSync(path.dirname(file))) {
      if (name.startsWith(prefix)) unlinkSync(path.join(path.dirname(file), name))
    }
  } catch {
    // nothing to clean
  }
}

function writeAll(fd: number, bytes: Buffer): void {
  let at = 0
  while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at)
}

// ---------------------------------------------------------------------------
// The saved state: original bytes, encrypted, in a file only we can read
// ---------------------------------------------------------------------------

interface SavedFile {
  path: string
  dirReal: string
  original: string
  stripped: string
  uid: number
  gid: number
  mode: number
  inPlace?: boolean
}

interface Saved {
  version: 1
  files: SavedFile[]
  secrets: string[]
}

/**
 * A reference to where the state will be kept: `<hex key>:<path>`. Save it in
 * the action's state (core.saveState) before calling hideCredentials; only
 * its holder can read the file's content.
 */
export function newCredentialState(dir: string): string {
  return `${randomBytes(32).toString('hex')}:${path.join(path.resolve(dir), `bash-agent-git-${randomBytes(8).toString('hex')}.bin`)}`
}

function parseRef(ref: string): { key: Buffer; file: string } {
  const m = /^([0-9a-f]{64}):(\/.+)$/.exec(ref)
  if (!m) throw new Error('not a credential state reference')
  return { key: Buffer.from(m[1], 'hex'), file: m[2] }
}

function writeState(ref: string, saved: Saved): void {
  const { key, file } = parseRef(ref)
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const body = Buffer.concat([cipher.update(JSON.stringify(saved), 'utf8'), cipher.final()])
  const blob = Buffer.concat([iv, cipher.getAuthTag(), body])
  // a new file, only ours (O_EXCL: never an existing one, never through a symlink)
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
  try {
    writeAll(fd, blob)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function readState(ref: string): Saved | undefined {
  const { key, file } = parseRef(ref)
  let st
  try {
    st = lstatSync(file)
  } catch {
    return undefined // nothing saved, or already put back
  }
  const me = typeof process.getuid === 'function' ? process.getuid() : -1
  if (!st.isFile() || (me >= 0 && st.uid !== me)) throw new Error(`${file} is not our state file`)
  const blob = readFileSync(file)
  const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(0, 12))
  decipher.setAuthTag(blob.subarray(12, 28))
  const text = Buffer.concat([decipher.update(blob.subarray(28)), decipher.final()]).toString('utf8')
  const saved = JSON.parse(text) as Saved
  if (saved.version !== 1) throw new Error(`${file}: unknown state version`)
  return saved
}

/** Whether the state `ref` still holds files to put back. */
export function credentialsPending(ref: string): boolean {
  try {
    return lstatSync(parseRef(ref).file).isFile()
  } catch {
    return false
  }
}

function removeState(ref: string): void {
  try {
    unlinkSync(parseRef(ref).file)
  } catch {
    // gone
  }
}

// ---------------------------------------------------------------------------
// Hide and put back
// ---------------------------------------------------------------------------

export interface HiddenCredentials {
  /** the files changed */
  files: string[]
  /** put every file back (exact bytes, owner, mode); the problems, none when all went well */
  restore(): Promise<string[]>
}

/**
 * Take the credentials out of every git config under `workspace` (and the
 * credential files they include) for the run, teaching the redactor each
 * secret value first. The original bytes go to the state `ref`
 * (newCredentialState) before any file changes.
 */
export async function hideCredentials(
  workspace: string,
  redactor: Redactor,
  ref: string,
  log: Log = () => undefined,
  o: ScanOptions = {}
): Promise<HiddenCredentials> {
  const s = await scan(workspace, o)
  teach(redactor, s.secrets)
  const files = s.files
  let saved = true
  if (files.length > 0) {
    try {
      writeState(ref, {
        version: 1,
        secrets: [...new Set(s.secrets)],
        files: files.map(f => ({ ...f, original: f.original.toString('base64'), stripped: f.stripped.toString('base64') }))
      })
    } catch (e) {
      // still taken out (fail closed): this step puts them back; only a kill would leave them removed
      saved = false
      log(
        `Git credentials: the original configs could not be saved for the post step (${(e as Error).message}); if this step is killed, they stay removed.`
      )
    }
  }
  const problems: string[] = []
  for (const f of files) {
    try {
      writeExact(f, f.stripped)
    } catch (e) {
      problems.push(`${f.path}: ${(e as Error).message}`)
    }
  }
  for (const note of s.notes) log(`Git credentials taken out for the run: ${note}.`)
  if (problems.length > 0) log(`Git credentials: could not take them out of ${problems.join('; ')}.`)
  let restored = false
  return {
    files: files.map(f => f.path),
    restore: async () => {
      if (restored || files.length === 0) return []
      const r = putBack(files, log)
      if (r.length === 0) {
        restored = true
        if (saved) removeState(ref)
      }
      return r
    }
  }
}

function putBack(files: HiddenFile[], log: Log): string[] {
  const problems: string[] = []
  const discarded: string[] = []
  for (const f of files) {
    try {
      let current: Buffer | undefined
      try {
        const st = lstatSync(f.path)
        if (st.isDirectory()) throw new Error('it was replaced by a folder')
        if (st.isFile()) {
          current = readFileSync(f.path)
          if (current.equals(f.original) && Number(st.uid) === f.uid && (Number(st.mode) & 0o7777) === f.mode) continue
        }
        // a symlink or another kind of file in its place is replaced, never written through
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
      }
      if (current === undefined || !current.equals(f.stripped)) discarded.push(f.path)
      writeExact(f, f.original)
      removeOurTemps(f.path)
    } catch (e) {
      problems.push(`git credentials not put back in ${f.path}: ${(e as Error).message}`)
    }
  }
  if (discarded.length > 0) {
    log(
      `Git credentials: ${discarded.join(', ')} changed during the run; the original file is back and the agent's edits to it are discarded.`
    )
  }
  if (problems.length === 0) log(`Git credentials put back in ${files.map(f => f.path).join(', ')}.`)
  return problems
}

/**
 * For the post step: put back what hideCredentials took out, from the state
 * `ref` alone (the main step may have died at any point). Nothing to do when
 * the state is gone (put back already, or nothing was taken). Teaches
 * `redactor`, when given, the secrets found. Never throws: returns problems.
 */
export async function restoreFromState(ref: string, log: Log = () => undefined, redactor?: Redactor): Promise<string[]> {
  if (!ref) return []
  let saved: Saved | undefined
  try {
    saved = readState(ref)
  } catch (e) {
    return [`git credentials: the saved state could not be read (${(e as Error).message})`]
  }
  if (!saved) return []
  if (redactor) teach(redactor, saved.secrets)
  const files: HiddenFile[] = saved.files.map(f => ({
    ...f,
    original: Buffer.from(f.original, 'base64'),
    stripped: Buffer.from(f.stripped, 'base64')
  }))
  const problems = putBack(files, log)
  if (problems.length === 0) removeState(ref)
  return problems
}
