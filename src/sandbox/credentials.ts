// Git credentials at any depth: taught to the redactor, taken out for the run (sandbox: none) and put back byte for byte.
//
// Everything is done on the files' bytes in this process: no credential is
// ever on a command line or in a child process. The parts: credentials-walk.ts
// finds the repositories, credentials-find.ts what counts as a credential in
// a file, credentials-scan.ts the files of a workspace, credentials-state.ts
// the encrypted state written before any change, credentials-write.ts the
// writes (exact bytes, owner and mode, no symlink followed).
//
// Putting back: each file gets its exact original bytes, owner and mode
// again. Edits the agent made to such a file meanwhile are discarded (and
// logged): they are edits to git config files, which later steps would run
// (core.fsmonitor, hooks paths, filters).
import { lstatSync, readFileSync } from 'node:fs'
import type { Redactor } from '../report/redact'
import { messageOf } from '../util'
import { scan, type HiddenFile, type ScanOptions } from './credentials-scan'
import { readState, removeState, writeState, type CredentialState } from './credentials-state'
import { removeOurTemps, writeExact } from './credentials-write'
import { isInside, realpathOr } from './privilege'

export { findGitConfigs, MAX_WALK_DEPTH, MAX_WALK_ENTRIES, type FoundConfigs } from './credentials-walk'
export { credentialsPending, newCredentialState } from './credentials-state'
export type { HiddenFile, ScanOptions } from './credentials-scan'

type Log = (message: string) => void

function teach(redactor: Redactor, secrets: string[]): void {
  for (const s of secrets) if (s) redactor.add(s)
}

/** Give each file its cut bytes; the problems, none when all went well. */
function takeOut(files: HiddenFile[]): string[] {
  const problems: string[] = []
  for (const f of files) {
    try {
      writeExact(f, f.stripped)
    } catch (e) {
      problems.push(`${f.path}: ${messageOf(e)}`)
    }
  }
  return problems
}

/**
 * Find the credentials of every repository under `workspace` and teach the
 * redactor their values, changing nothing (for `sandbox: user`, whose copy
 * holds none, while the values may still turn up elsewhere). Returns how many
 * files hold some.
 */
export async function collectCredentials(workspace: string, redactor: Redactor, log?: Log, o: ScanOptions = {}): Promise<string[]> {
  const s = await scan(workspace, o)
  teach(redactor, s.secrets)
  for (const note of s.notes) log?.(`Git credentials: ${note}.`)
  return s.files.map(f => f.path)
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
  const rootReal = realpathOr(root)
  const inRoot = s.files.filter(f => isInside(f.path, rootReal))
  const problems = takeOut(inRoot)
  if (s.files.length > 0) log?.(`Git credentials removed from the working copy (${inRoot.length} files).`)
  return problems
}

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
      writeState(ref, { files, secrets: s.secrets })
    } catch (e) {
      // still taken out (fail closed): this step puts them back; only a kill would leave them removed
      saved = false
      log(
        `Git credentials: the original configs could not be saved for the post step (${messageOf(e)}); if this step is killed, they stay removed.`
      )
    }
  }
  const problems = takeOut(files)
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
      problems.push(`git credentials not put back in ${f.path}: ${messageOf(e)}`)
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
  let saved: CredentialState | undefined
  try {
    saved = readState(ref)
  } catch (e) {
    return [`git credentials: the saved state could not be read (${messageOf(e)})`]
  }
  if (!saved) return []
  if (redactor) teach(redactor, saved.secrets)
  const problems = putBack(saved.files, log)
  if (problems.length === 0) removeState(ref)
  return problems
}
