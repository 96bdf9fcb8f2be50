// The state file that keeps the original bytes of the files changed, encrypted, for the post step to put back.
//
// State before change: the original bytes of every file are written,
// encrypted (AES-256-GCM, key kept in the action's state, not beside the
// file), to a file only we can read BEFORE any file changes. A cancel or kill
// at any moment is then put right by restore() or, in the post step, by
// restoreFromState().
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, lstatSync, readFileSync, unlinkSync } from 'node:fs'
import path from 'node:path'
import { currentUid } from '../util'
import type { HiddenFile } from './credentials-scan'
import { openNew, writeAll } from './credentials-write'

/** A changed file as kept in the state: its bytes in base64. */
type SavedFile = Omit<HiddenFile, 'original' | 'stripped'> & { original: string; stripped: string }

interface Saved {
  version: 1
  files: SavedFile[]
  secrets: string[]
}

/** What the state keeps: the files changed (original and cut bytes, owner, mode) and the secrets found. */
export interface CredentialState {
  files: HiddenFile[]
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

export function writeState(ref: string, state: CredentialState): void {
  const { key, file } = parseRef(ref)
  const saved: Saved = {
    version: 1,
    secrets: [...new Set(state.secrets)],
    files: state.files.map(f => ({ ...f, original: f.original.toString('base64'), stripped: f.stripped.toString('base64') }))
  }
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const body = Buffer.concat([cipher.update(JSON.stringify(saved), 'utf8'), cipher.final()])
  const blob = Buffer.concat([iv, cipher.getAuthTag(), body])
  const fd = openNew(file)
  try {
    writeAll(fd, blob)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

export function readState(ref: string): CredentialState | undefined {
  const { key, file } = parseRef(ref)
  let st
  try {
    st = lstatSync(file)
  } catch {
    return undefined // nothing saved, or already put back
  }
  const me = currentUid()
  if (!st.isFile() || (me >= 0 && st.uid !== me)) throw new Error(`${file} is not our state file`)
  const blob = readFileSync(file)
  const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(0, 12))
  decipher.setAuthTag(blob.subarray(12, 28))
  const text = Buffer.concat([decipher.update(blob.subarray(28)), decipher.final()]).toString('utf8')
  const saved = JSON.parse(text) as Saved
  if (saved.version !== 1) throw new Error(`${file}: unknown state version`)
  return {
    secrets: saved.secrets,
    files: saved.files.map(f => ({ ...f, original: Buffer.from(f.original, 'base64'), stripped: Buffer.from(f.stripped, 'base64') }))
  }
}

/** Whether the state `ref` still holds files to put back. */
export function credentialsPending(ref: string): boolean {
  try {
    return lstatSync(parseRef(ref).file).isFile()
  } catch {
    return false
  }
}

export function removeState(ref: string): void {
  try {
    unlinkSync(parseRef(ref).file)
  } catch {
    // gone
  }
}
