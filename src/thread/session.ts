// The thread is the session: a run loads the conversation the last run in its
// thread left, and leaves its own for the next one.
//
// Where the history lives: a workflow artifact of the run that wrote it,
// uploaded with the official @actions/artifact (its service protocol is not
// public), found through the run's report comment, whose hidden marker names
// the run, the artifact and the sha256 of its bytes. Why an artifact: the
// runner is gone after the run, a comment cannot hold a conversation (65,536
// characters, and everyone reads it), a git ref would need `contents: write`
// and put data in the repository, and the Actions cache is shared across
// branches by key. An artifact needs no permission to upload (the runner's
// own token), `actions: read` to download from a later run, and lives as long
// as the repository's artifact retention (90 days by default). The content is
// sealed (history.ts), so the artifact is readable only by the action.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Octokit } from '../github/octokit'
import type { Repo } from '../util'
import { MARKER, type Thread } from '../trigger'
import type { MessageParam } from '../types'
import { closeUnfinished, fitHistory } from '../agent/history'
import { downloadRunArtifact, uploadRunArtifact } from '../github/runs'
import { isOurs, type Identity, type ThreadComment } from '../github/thread'
import { artifactName, seal, sha256Hex, threadKey, unseal, type LoadedHistory } from './history'
import { parseRunMarker } from './marker'
import { messageOf } from '../util'
import type { CarriedPatch } from './carry'

export type HistoryLoad =
  | { kind: 'loaded'; history: LoadedHistory }
  /** no earlier run of the action in this thread */
  | { kind: 'none' }
  /** there was one, but its history cannot be had: the run starts afresh and the report says why */
  | { kind: 'unavailable'; why: string }

export interface LoadOptions {
  repo: Repo
  thread: Thread
  /** the thread's comments, oldest first */
  comments: () => Promise<ThreadComment[]>
  /** Octokit, loaded only when the thread holds a run of the action */
  octokit: () => Promise<Octokit>
  identity: (octokit: Octokit) => Promise<Identity>
  /** the key material the history was sealed with (the model API key) */
  secret: string
  /** the history is fitted into this many estimated tokens (the context share) */
  budgetTokens: number
}

/**
 * The last run's conversation in `thread`, closed (no tool call left without a
 * result) and fitted into budgetTokens; never throws.
 */
export async function loadThreadHistory(o: LoadOptions): Promise<HistoryLoad> {
  const { repo, thread } = o
  const afresh = (why: string): HistoryLoad => ({ kind: 'unavailable', why })
  let last: { runId: number; history?: { artifact: string; sha256: string } } | undefined
  let octokit: Octokit
  try {
    // Only then is Octokit loaded and the identity asked: most threads hold no run of the action yet.
    const marked = (await o.comments()).filter(c => c.body.includes(MARKER) && parseRunMarker(c.body)?.state === 'done')
    if (marked.length === 0) return { kind: 'none' }
    octokit = await o.octokit()
    const me = await o.identity(octokit)
    for (const c of marked) if (isOurs(c, me)) last = parseRunMarker(c.body)
  } catch (error) {
    return afresh(`the thread's comments could not be read (${messageOf(error)})`)
  }
  if (!last) return { kind: 'none' }
  if (!last.history)
    return afresh(
      onGhes()
        ? `the last run here (${last.runId}) saved no conversation: ${NO_ARTIFACTS_ON_GHES}`
        : `the last run here (${last.runId}) saved no conversation`
    )
  const fetched = await downloadRunArtifact(octokit, repo, last.runId, last.history.artifact)
  const of = `the conversation of the last run here (${last.runId})`
  if (!fetched.ok) return afresh(`${of} could not be had: ${fetched.why}`)
  if (sha256Hex(fetched.bytes) !== last.history.sha256) return afresh(`${of} was not loaded: it is not what that run saved (tampered)`)
  const opened = unseal(fetched.bytes, o.secret, { repository: `${repo.owner}/${repo.repo}`, thread })
  if (!opened.ok) return afresh(`${of} was not loaded: ${opened.why}`)
  const h = opened.history
  const messages = fitHistory(closeUnfinished(h.messages), o.budgetTokens)
  return {
    kind: 'loaded',
    history: {
      messages,
      model: h.model,
      runId: h.runId,
      ...(h.branch ? { branch: h.branch } : {}),
      ...(h.commitSha ? { commitSha: h.commitSha } : {}),
      ...(h.pullNumber ? { pullNumber: h.pullNumber } : {}),
      ...(h.patch ? { patch: h.patch } : {})
    }
  }
}

export interface SaveOptions {
  repo: Repo
  thread: Thread
  secret: string
  runId: number
  attempt: number
  model: string
  /** already redacted (Redactor.redactDeep), as the transcript is */
  messages: MessageParam[]
  branch?: string
  commitSha?: string
  pullNumber?: number
  patch?: CarriedPatch
  /** where the file is written before the upload */
  dir: string
  env?: NodeJS.ProcessEnv
}

export type Saved = { ok: true; artifact: string; sha256: string } | { ok: false; why: string }

/** Seals the conversation and uploads it as an artifact of this run; never throws. */
export async function saveThreadHistory(o: SaveOptions): Promise<Saved> {
  const env = o.env ?? process.env
  if (!env.ACTIONS_RUNTIME_TOKEN || !env.ACTIONS_RESULTS_URL) {
    return { ok: false, why: 'the artifact service is not available (not a GitHub Actions runner)' }
  }
  try {
    const name = artifactName(o.thread, o.attempt)
    const bytes = seal(
      {
        version: 1,
        repository: `${o.repo.owner}/${o.repo.repo}`,
        thread: threadKey(o.thread),
        runId: o.runId,
        model: o.model,
        messages: o.messages,
        ...(o.branch ? { branch: o.branch } : {}),
        ...(o.commitSha ? { commitSha: o.commitSha } : {}),
        ...(o.pullNumber ? { pullNumber: o.pullNumber } : {}),
        ...(o.patch ? { patch: o.patch } : {}),
        savedAt: new Date().toISOString()
      },
      o.secret
    )
    mkdirSync(o.dir, { recursive: true })
    const file = join(o.dir, name)
    writeFileSync(file, bytes, { mode: 0o600 })
    await uploadRunArtifact(name, file, o.dir)
    return { ok: true, artifact: name, sha256: sha256Hex(bytes) }
  } catch (error) {
    if ((error as Error)?.name === 'GHESNotSupportedError') return { ok: false, why: NO_ARTIFACTS_ON_GHES }
    return { ok: false, why: messageOf(error) }
  }
}

export const NO_ARTIFACTS_ON_GHES =
  'GitHub Enterprise Server has no artifact service for @actions/artifact v2+, where the conversation of a run is kept'

/** GitHub Enterprise Server, as @actions/artifact tells it: a server that is neither github.com nor *.ghe.com (nor *.localhost). */
export function onGhes(env: NodeJS.ProcessEnv = process.env): boolean {
  let host: string
  try {
    host = new URL(env.GITHUB_SERVER_URL || 'https://github.com').hostname.toUpperCase()
  } catch {
    return false
  }
  return host !== 'GITHUB.COM' && !host.endsWith('.GHE.COM') && !host.endsWith('.LOCALHOST')
}
