// The run saved as it goes: a JSON file under RUNNER_TEMP that the post step
// can finish a report from, and users can upload as an artifact.
import { mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Outcome } from './report/render'
import type { MessageParam } from './types'

export interface Transcript extends Outcome {
  version: 1
  model: string
  system: string
  startedAt: string
  sandbox: string
  /** false while the run goes on: a reader (the post step) then knows the main step never finished */
  finished: boolean
  /** the command running when this was written, if any */
  running?: { command: string; startedAt: string }
  messages: MessageParam[]
}

export function writeTranscript(path: string, t: Transcript, redactDeep: <T>(v: T) => T): void {
  mkdirSync(dirname(path), { recursive: true })
  // Write then rename, so a reader (the post step) never sees half a file.
  const tmp = `${path}.tmp`
  writeFileSync(tmp, JSON.stringify(redactDeep(t), null, 1), { mode: 0o600 })
  renameSync(tmp, path)
}

export function readTranscript(path: string): Transcript | undefined {
  try {
    const t = JSON.parse(readFileSync(path, 'utf8')) as Transcript
    if (t === null || typeof t !== 'object' || !Array.isArray(t.commands)) return undefined
    return t
  } catch {
    return undefined
  }
}
