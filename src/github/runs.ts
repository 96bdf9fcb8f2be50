// Workflow runs: the artifacts a run leaves (the thread's saved conversation)
// and cancelling a run (`/agent stop`).
import type { Octokit } from './octokit'
import { ONE_RETRY } from './thread'
import { messageOf, statusOf, type Repo } from '../util'

/**
 * Uploads `file` (in `dir`) as the artifact `name` of this run, unarchived,
 * with the official @actions/artifact (its service protocol is not public).
 * Loaded only here: the artifact client and the storage SDK are large and no
 * run needs them before its report.
 */
export async function uploadRunArtifact(name: string, file: string, dir: string): Promise<void> {
  const { DefaultArtifactClient } = await import('@actions/artifact')
  await new DefaultArtifactClient().uploadArtifact(name, [file], dir, { skipArchive: true })
}

export type Fetched = { ok: true; bytes: Buffer } | { ok: false; why: string }

/** The bytes of the artifact `name` of workflow run `runId` (needs `actions: read`). */
export async function downloadRunArtifact(octokit: Octokit, repo: Repo, runId: number, name: string): Promise<Fetched> {
  const fail = (why: string): Fetched => ({ ok: false, why })
  const refused = (error: unknown, what: string): Fetched => {
    const status = statusOf(error)
    if (status === 401 || status === 403)
      return fail(`the github-token may not read the run's artifacts (the workflow needs \`actions: read\`)`)
    if (status === 410) return fail('it has expired')
    if (status === 404) return fail(`${what} was not found (deleted or expired)`)
    return fail(`GitHub did not give it (${status ? `HTTP ${status}` : messageOf(error)})`)
  }
  let artifact: { id: number; expired?: boolean } | undefined
  try {
    const { data } = await octokit.rest.actions.listWorkflowRunArtifacts({
      ...repo,
      run_id: runId,
      name,
      per_page: 100,
      request: ONE_RETRY
    })
    artifact = data.artifacts.find(a => a.name === name)
  } catch (error) {
    return refused(error, 'the run')
  }
  if (!artifact) return fail('it was not found (deleted or expired)')
  if (artifact.expired) return fail('it has expired')
  let location: string | undefined
  try {
    const res = await octokit.rest.actions.downloadArtifact({
      ...repo,
      artifact_id: artifact.id,
      archive_format: 'zip',
      request: { redirect: 'manual', ...ONE_RETRY }
    })
    location = (res.headers as Record<string, string | undefined>).location
  } catch (error) {
    return refused(error, 'it')
  }
  if (!location) return fail('GitHub gave no download address for it')
  try {
    // A pre-signed storage address: no token goes with it.
    const res = await fetch(location, { signal: AbortSignal.timeout(30_000) })
    if (!res.ok) return fail(`the download failed (HTTP ${res.status})`)
    return { ok: true, bytes: Buffer.from(await res.arrayBuffer()) }
  } catch (error) {
    return fail(`the download failed (${(error as Error).message})`)
  }
}

export type Cancelled = { ok: true } | { ok: false; finished: boolean; why: string }

/** POST /repos/{o}/{r}/actions/runs/{id}/cancel (needs `actions: write`). */
export async function cancelRun(octokit: Octokit, repo: Repo, runId: number): Promise<Cancelled> {
  try {
    await octokit.rest.actions.cancelWorkflowRun({ ...repo, run_id: runId })
    return { ok: true }
  } catch (error) {
    const status = statusOf(error)
    if (status === 409) return { ok: false, finished: true, why: 'it has already finished' }
    if (status === 401 || status === 403)
      return { ok: false, finished: false, why: 'the github-token may not cancel runs (the workflow needs `actions: write`)' }
    if (status === 404) return { ok: false, finished: true, why: 'it was not found' }
    return {
      ok: false,
      finished: false,
      why: `GitHub refused (${status ? `HTTP ${status}` : messageOf(error)})`
    }
  }
}
