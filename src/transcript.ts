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
  finished: boolean
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
    return JSON.parse(readFileSync(path, 'utf8')) as Transcript
  } catch {
    return undefined
  }
}
