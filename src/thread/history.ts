// The conversation a run leaves for the next /agent comment in its thread, as
// bytes: what it holds, how it is sealed, and what a loader checks before it
// believes it.
//
// Sealed, not just hashed: the history travels as a workflow artifact, and
// anyone who can read the repository can download its artifacts, and anyone
// who can get a workflow run into it (a pull request from a fork) can upload
// some. So the bytes are gzip-compressed and encrypted with AES-256-GCM under
// a key derived (HKDF) from the model API key, which only the action's runs
// have: nobody else can read a history ("read only by the action"),
// and nobody else can make one the action would load (the GCM tag fails). The
// repository and the thread are inside the sealed content and checked too, so
// a history is never loaded in another repository or another thread (not even
// with the same key). A new API key makes older histories unreadable: the run
// then starts afresh and says so.
//
// The key is the `history-key` input when set (a secret the workflow passes),
// else the API key. A provider without a stored key (Bedrock, Vertex, Foundry
// with Entra ID, the Claude API through federation: their credentials change
// every run) and no history-key has no secret the next run shares: the
// history is then sealed with an empty key, so it is NOT confidential (anyone
// who can download the repository's artifacts can read it; docs/providers.md
// says so), while its integrity still holds: the loader believes only the
// artifact of the run that the action's own comment names, with the sha256 of
// its bytes (session.ts), and that comment only the action's identity writes.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto'
import { gunzipSync, gzipSync } from 'node:zlib'
import type { Thread } from '../trigger'
import type { MessageParam } from '../types'
import type { CarriedPatch } from './carry'

const MAGIC = Buffer.from('BAH1')
const IV_BYTES = 12
const TAG_BYTES = 16
/** A history is refused past this size once unpacked (a zip bomb is not a conversation). */
export const MAX_HISTORY_BYTES = 64 * 1024 * 1024

/** What the next run gets. */
export interface LoadedHistory {
  messages: MessageParam[]
  /** the model that wrote it: thinking blocks are bound to it */
  model: string
  /** the branch and commit the run committed its changes to, when it did: the next working copy starts there */
  branch?: string
  commitSha?: string
  /** the pull request that branch is the head of, when known */
  pullNumber?: number
  /** the patch from the run's checked-out commit to the branch's tree, when small enough (carry.ts) */
  patch?: CarriedPatch
  /** the workflow run that saved it */
  runId: number
}

export interface StoredHistory extends LoadedHistory {
  version: 1
  repository: string
  thread: string
  savedAt: string
}

/** A stable name for a thread: `issue-12`, or `review-12-345` (pull request 12, thread of comment 345). */
export function threadKey(thread: Thread): string {
  return thread.kind === 'issue' ? `issue-${thread.number}` : `review-${thread.pullNumber}-${thread.commentId}`
}

/** The artifact a run saves its history in: one per thread and run attempt. */
export function artifactName(thread: Thread, attempt: number): string {
  return `bash-agent-history-${threadKey(thread)}-attempt-${attempt}.bin`
}

function keyOf(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'bash-agent-action', 'thread history v1', 32))
}

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

/** gzip, then AES-256-GCM: MAGIC | iv | tag | ciphertext. */
export function seal(history: StoredHistory, secret: string): Buffer {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv)
  cipher.setAAD(MAGIC)
  const body = Buffer.concat([cipher.update(gzipSync(JSON.stringify(history))), cipher.final()])
  return Buffer.concat([MAGIC, iv, cipher.getAuthTag(), body])
}

export type Unsealed = { ok: true; history: StoredHistory } | { ok: false; why: string }

/** The history in `bytes`, when they were sealed with `secret` for this repository and thread. */
export function unseal(bytes: Buffer, secret: string, expect: { repository: string; thread: Thread }): Unsealed {
  const bad = (why: string): Unsealed => ({ ok: false, why })
  if (bytes.length < MAGIC.length + IV_BYTES + TAG_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    return bad('it is not a history this action wrote')
  }
  let plain: Buffer
  try {
    const iv = bytes.subarray(MAGIC.length, MAGIC.length + IV_BYTES)
    const tag = bytes.subarray(MAGIC.length + IV_BYTES, MAGIC.length + IV_BYTES + TAG_BYTES)
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), iv)
    decipher.setAAD(MAGIC)
    decipher.setAuthTag(tag)
    const packed = Buffer.concat([decipher.update(bytes.subarray(MAGIC.length + IV_BYTES + TAG_BYTES)), decipher.final()])
    plain = gunzipSync(packed, { maxOutputLength: MAX_HISTORY_BYTES })
  } catch {
    return bad('it could not be verified (changed since it was saved, or saved with another API key)')
  }
  let h: StoredHistory
  try {
    h = JSON.parse(plain.toString('utf8')) as StoredHistory
  } catch {
    return bad('it could not be read')
  }
  if (h?.version !== 1 || !Array.isArray(h.messages) || typeof h.model !== 'string') return bad('it could not be read')
  if (h.repository !== expect.repository) return bad('it belongs to another repository')
  if (h.thread !== threadKey(expect.thread)) return bad('it belongs to another thread')
  return { ok: true, history: h }
}
