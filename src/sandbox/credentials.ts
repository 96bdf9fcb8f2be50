// Git credentials at any depth, taught to the redactor (sandbox: user, whose
// copy holds none, while the values may still turn up elsewhere).
//
// Everything is done on the files' bytes in this process: no credential is
// ever on a command line or in a child process. The parts: credentials-walk.ts
// finds the repositories, credentials-find.ts what counts as a credential in
// a file, credentials-scan.ts the files of a workspace. (sandbox: none hides
// nothing: a command could get around it; SPEC "Secrets".)
import type { Redactor } from '../report/redact'
import { scan, type Scan, type ScanOptions } from './credentials-scan'

export { findGitConfigs, MAX_WALK_DEPTH, MAX_WALK_ENTRIES, type FoundConfigs } from './credentials-walk'
export type { HiddenFile, Scan, ScanOptions } from './credentials-scan'

type Log = (message: string) => void

/**
 * Find the credentials of every repository under `workspace` and teach the
 * redactor their values, changing nothing. Returns the files that hold some.
 */
export async function collectCredentials(workspace: string, redactor: Redactor, log?: Log, o: ScanOptions = {}): Promise<string[]> {
  return (await scanCredentials(workspace, redactor, log, o)).files.map(f => f.path)
}

/** collectCredentials, whole: with every repository config found and the credential stores (for the agent's copy). */
export async function scanCredentials(workspace: string, redactor: Redactor, log?: Log, o: ScanOptions = {}): Promise<Scan> {
  const s = await scan(workspace, o)
  for (const secret of s.secrets) if (secret) redactor.add(secret)
  for (const note of s.notes) log?.(`Git credentials: ${note}.`)
  return s
}
