// What may leave the agent's copy. A changed file is held back (left out of the
// patch, the workspace and the commit, and named in the report) when it holds
// a known secret in any form the Redactor knows (content old or new, as text or
// as raw bytes, or its name), when it is a submodule or nested repository, or
// when it passes a limit.
import { sectionsOf, type FileChange } from './files'
import { posix } from 'node:path'
import { isAscii } from 'node:buffer'

/** Most changed files handed back; the rest (in path order) are held back. */
export const MAX_CHANGED_FILES = 5000
/** Largest single file handed back (GitHub warns at 50 MB and blobs travel base64-encoded). */
export const MAX_FILE_BYTES = 20 * 1024 * 1024
/** Most new content handed back in all. */
export const MAX_CHANGE_BYTES = 100 * 1024 * 1024

export interface Hold {
  file: FileChange
  why: string
}
export interface Checked {
  heldBack: Hold[]
}

const mib = (n: number) => `${Math.round(n / (1024 * 1024))} MiB`
const isSubmodule = (f: FileChange) => f.oldMode === '160000' || f.newMode === '160000'

/** Limits and submodules, from the sizes of the new blobs alone (nothing big is read). */
export function checkLimits(files: FileChange[], sizes: Map<string, number>): Hold[] {
  const held: Hold[] = []
  let count = 0
  let bytes = 0
  for (const file of files) {
    const size = file.newSha ? (sizes.get(file.newSha) ?? 0) : 0
    if (isSubmodule(file)) held.push({ file, why: 'a submodule or nested repository (not handed back)' })
    else if (size > MAX_FILE_BYTES) held.push({ file, why: `larger than ${mib(MAX_FILE_BYTES)} (the limit for one file)` })
    else if (count >= MAX_CHANGED_FILES) held.push({ file, why: `over the limit of ${MAX_CHANGED_FILES} changed files` })
    else if (bytes + size > MAX_CHANGE_BYTES) held.push({ file, why: `over the limit of ${mib(MAX_CHANGE_BYTES)} of changed content` })
    else {
      count++
      bytes += size
    }
  }
  return held
}

/**
 * The new bytes as UTF-8 and as Latin-1: one pass where both read the same
 * (ASCII), so a big text file is read once.
 */
export function contentHoldsSecret(content: Buffer, containsSecret: (text: string) => boolean): boolean {
  return containsSecret(content.toString('utf8')) || (!isAscii(content) && containsSecret(content.toString('latin1')))
}

/**
 * Secrets: in a file's name, its new bytes (read as UTF-8 and as Latin-1, so a
 * secret in a binary file is found too) or its diff (which shows old lines and
 * context). `sections` are the per-file texts of the whole diff, in order.
 * An added file's section is its name and its new bytes line by line, both
 * read already: it is not read again (a 100 MiB change costs a pass less).
 */
export function checkSecrets(
  files: FileChange[],
  sections: string[],
  blobs: Map<string, Buffer>,
  containsSecret: (text: string) => boolean
): Hold[] {
  const held: Hold[] = []
  let at = 0
  for (const file of files) {
    const n = sectionsOf(file)
    const text = sections.slice(at, at + n).join('')
    at += n
    const content = file.newSha ? blobs.get(file.newSha) : undefined
    if (containsSecret(file.path) || (file.oldPath !== undefined && containsSecret(file.oldPath))) {
      held.push({ file, why: 'its name holds a secret' })
    } else if (
      (!(file.status === 'added' && content) && containsSecret(text)) ||
      (content !== undefined && contentHoldsSecret(content, containsSecret))
    ) {
      held.push({ file, why: 'it holds a secret (a known secret value, or a string shaped like a token)' })
    }
  }
  return held
}

/**
 * Shapes that do not come back: a symlink whose target is absolute or leaves
 * the repository (`-> /proc/self/environ`, `-> ../../x`), paths that differ
 * only in case (on a case-insensitive checkout one overwrites the other), and
 * a top-level `.gitmodules` added or changed: it says where submodules are
 * fetched from (any URL, for every later `git submodule update`), and
 * submodules themselves never come back.
 */
export function checkShapes(files: FileChange[], blobs: Map<string, Buffer>): Hold[] {
  const held: Hold[] = []
  const byFolded = new Map<string, FileChange[]>()
  for (const file of files) {
    if (file.status === 'deleted') continue
    const key = file.path.toLowerCase()
    byFolded.set(key, [...(byFolded.get(key) ?? []), file])
  }
  for (const file of files) {
    if (file.status === 'deleted') continue
    if (file.path.toLowerCase() === '.gitmodules') {
      held.push({ file, why: 'it configures submodules (where they are fetched from), which the agent may not change' })
      continue
    }
    if (file.newMode === '120000') {
      const target = (file.newSha ? blobs.get(file.newSha) : undefined)?.toString('utf8') ?? ''
      const inside = posix.normalize(posix.join(posix.dirname(file.path), target))
      if (target.startsWith('/')) held.push({ file, why: 'a symlink to an absolute path' })
      else if (inside === '..' || inside.startsWith('../')) held.push({ file, why: 'a symlink that leaves the repository' })
      else if (!target || target.includes('\0')) held.push({ file, why: 'a symlink with no valid target' })
      continue
    }
    if ((byFolded.get(file.path.toLowerCase())?.length ?? 0) > 1)
      held.push({ file, why: 'its path differs only in case from another changed path' })
  }
  return held
}
