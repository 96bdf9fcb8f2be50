// The patch applied to the runner's workspace as plain file changes, written
// by us from the checked blobs (byte for byte, no git and no attributes in
// the workspace involved): later steps see the files, `.git` stays untouched.
// Nothing is written outside the workspace, under a `.git` folder, or through
// a symlink.
import { chmodSync, lstatSync, mkdirSync, readdirSync, rmdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'
import type { FileChange, Patch } from './patch'
import { messageOf } from '../util'

export type Applied =
  | { kind: 'in-place' } // the agent worked in the workspace itself
  | { kind: 'applied'; files: number; failed: { path: string; why: string }[] }

/** A path the patch may name: relative, no `..`, no `.git` component, no NUL. */
export function safeRelative(path: string): boolean {
  if (!path || path.startsWith('/') || path.includes('\0')) return false
  return path.split('/').every(part => part !== '' && part !== '.' && part !== '..' && part.toLowerCase() !== '.git')
}

const exists = (p: string) => {
  try {
    return lstatSync(p)
  } catch {
    return undefined
  }
}

/** Throws when a folder on the way to `path` (inside `root`) is a symlink or not a folder. */
function checkParents(root: string, path: string): void {
  const parts = path.split('/').slice(0, -1)
  let at = root
  for (const part of parts) {
    at = join(at, part)
    const st = exists(at)
    if (!st) return
    if (st.isSymbolicLink()) throw new Error(`${at.slice(root.length + 1)} is a symlink in the workspace`)
    if (!st.isDirectory()) throw new Error(`${at.slice(root.length + 1)} is not a folder in the workspace`)
  }
}

function remove(root: string, path: string): void {
  checkParents(root, path)
  const full = join(root, path)
  const st = exists(full)
  if (!st) return
  if (st.isDirectory()) throw new Error('a folder is in the way')
  unlinkSync(full)
  // Folders left empty go, as git would remove them.
  for (let dir = dirname(full); dir.startsWith(root + sep); dir = dirname(dir)) {
    try {
      if (readdirSync(dir).length > 0) break
      rmdirSync(dir)
    } catch {
      break
    }
  }
}

function write(root: string, file: FileChange, content: Buffer): void {
  checkParents(root, file.path)
  const full = join(root, file.path)
  mkdirSync(dirname(full), { recursive: true })
  checkParents(root, file.path) // a folder made by mkdir is a folder, but check what it went through
  const st = exists(full)
  if (st?.isDirectory()) throw new Error('a folder is in the way')
  // Unlink first: never write through a symlink that is there.
  if (st) unlinkSync(full)
  if (file.newMode === '120000') {
    symlinkSync(content.toString('utf8'), full)
  } else {
    const mode = file.newMode === '100755' ? 0o755 : 0o644
    writeFileSync(full, content, { mode, flag: 'wx' })
    chmodSync(full, mode)
  }
}

/** Applies `patch` to `workspace`. Every file that could not be written is named; nothing is swallowed. */
export function applyPatch(patch: Patch, blobs: Map<string, Buffer>, workspace: string): Applied {
  const failed: { path: string; why: string }[] = []
  const attempt = (path: string, fn: () => void) => {
    try {
      if (!safeRelative(path)) throw new Error('not a path inside the repository')
      fn()
    } catch (error) {
      failed.push({ path, why: messageOf(error) })
    }
  }
  // Removals first, so a file can take the place of what was there.
  for (const f of patch.files) {
    if (f.status === 'deleted') attempt(f.path, () => remove(workspace, f.path))
    if (f.status === 'renamed' && f.oldPath !== undefined) attempt(f.oldPath, () => remove(workspace, f.oldPath as string))
  }
  let written = 0
  for (const f of patch.files) {
    if (f.status === 'deleted' || !f.newSha) continue
    const content = blobs.get(f.newSha)
    if (!content) {
      failed.push({ path: f.path, why: 'its content is missing' })
      continue
    }
    attempt(f.path, () => {
      // new to the start's tree, yet in the workspace: an ignored or untracked file of the workspace's own
      // (the agent may have un-ignored it), never overwritten
      if ((f.status === 'added' || f.status === 'renamed') && lstatSync(join(workspace, f.path), { throwIfNoEntry: false }))
        throw new Error('the workspace already has a file there (ignored or untracked), which is not overwritten')
      write(workspace, f, content)
      written++
    })
  }
  return { kind: 'applied', files: written + patch.files.filter(f => f.status === 'deleted').length, failed }
}

/**
 * Where the agent worked in the workspace itself, files held back (a secret, a
 * limit) are put back as they were at the start (an added one removed), so no later
 * step finds them. Returns what could not be put back.
 */
export function revertInPlace(secrets: { file: FileChange; old?: Buffer }[], workspace: string): { path: string; why: string }[] {
  const failed: { path: string; why: string }[] = []
  for (const { file, old } of secrets) {
    const back = file.oldPath ?? file.path
    try {
      if (!safeRelative(file.path) || !safeRelative(back)) throw new Error('not a path inside the repository')
      if (file.status === 'added' || file.status === 'renamed') remove(workspace, file.path)
      if (file.status !== 'added') {
        if (!old) throw new Error('its content at the start is missing')
        write(workspace, { ...file, path: back, newMode: file.oldMode }, old)
      }
    } catch (error) {
      failed.push({ path: file.path, why: messageOf(error) })
    }
  }
  return failed
}
