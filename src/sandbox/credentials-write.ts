// Writes a file's exact bytes, owner and mode from this process (no child process), never through a symlink.
import { randomBytes } from 'node:crypto'
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  realpathSync,
  renameSync,
  unlinkSync,
  writeSync
} from 'node:fs'
import path from 'node:path'
import { currentUid } from '../util'
import type { HiddenFile } from './credentials-scan'

/**
 * Give `file` the bytes `bytes`, owner and mode: a new file beside it, renamed
 * over it (as git itself writes configs), so a symlink put in its place is
 * replaced, never written through. The folder must still be the one recorded.
 * When we may not give the new file its owner (not root, not ours), the
 * regular file is rewritten in place instead (O_NOFOLLOW).
 */
export function writeExact(h: HiddenFile, bytes: Buffer): void {
  const dir = path.dirname(h.path)
  if (realpathSync(dir) !== h.dirReal) throw new Error(`its folder was replaced`)
  const me = currentUid()
  const canOwn = me === 0 || me === h.uid
  let exists = true
  try {
    lstatSync(h.path)
  } catch {
    exists = false
  }
  if (canOwn && !(h.inPlace && exists)) {
    const tmp = path.join(dir, `${tempPrefix(h.path)}${randomBytes(6).toString('hex')}`)
    const fd = openNew(tmp)
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

export function removeOurTemps(file: string): void {
  const prefix = tempPrefix(file)
  try {
    for (const name of readdirSync(path.dirname(file))) {
      if (name.startsWith(prefix)) unlinkSync(path.join(path.dirname(file), name))
    }
  } catch {
    // nothing to clean
  }
}

/** A new file, only ours, open for writing: never an existing one (O_EXCL), never through a symlink. */
export function openNew(file: string): number {
  return openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
}

export function writeAll(fd: number, bytes: Buffer): void {
  let at = 0
  while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at)
}
