import { afterAll, describe, expect, it } from '@jest/globals'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Recorder } from '../src/run/recorder'
import { createLog } from '../src/report/log'
import { readTranscript } from '../src/transcript'
import { emptyUsage, type CommandRecord, type RunResult } from '../src/types'

const dir = mkdtempSync(path.join(os.tmpdir(), 'recorder-test-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const record = (command: string): CommandRecord => ({
  command,
  exitCode: 0,
  durationMs: 1,
  output: 'ok',
  truncated: false,
  timedOut: false,
  blocked: false
})

function recorder(name: string): Recorder {
  return new Recorder({ path: path.join(dir, `${name}.json`), model: 'm', startedAt: Date.now(), sandbox: 'none' }, createLog({}))
}

describe('the run record', () => {
  it('a late event of a loop that did not stop in time cannot rewrite the finished transcript', () => {
    const rec = recorder('late')
    rec.onEvent({ type: 'command-start', turn: 1, command: 'sleep 100' })
    const result: RunResult = { ...rec.snapshot('the run ended while this command ran'), exitReason: 'cancelled' }
    rec.close(result)
    const before = readFileSync(rec.info.path, 'utf8')
    // The loop winds down after the report went out: its events change nothing.
    rec.onEvent({ type: 'command-end', turn: 1, record: record('sleep 100') })
    rec.onEvent({ type: 'response', turn: 2, usage: emptyUsage(), costUsd: null, text: 'late', stopReason: 'end_turn', notes: [] })
    rec.saveSoon()
    expect(readFileSync(rec.info.path, 'utf8')).toBe(before)
    const t = readTranscript(rec.info.path)
    expect(t?.finished).toBe(true)
    expect(t?.exitReason).toBe('cancelled')
    expect(t?.running).toBeUndefined()
  })

  it('while the run goes on, the transcript says it is unfinished and names the running command', () => {
    const rec = recorder('live')
    rec.onEvent({ type: 'command-start', turn: 1, command: 'make test' })
    const t = readTranscript(rec.info.path)
    expect(t?.finished).toBe(false)
    expect(t?.running?.command).toBe('make test')
  })

  it('a running command shows as stopped in a snapshot', () => {
    const rec = recorder('snap')
    rec.onEvent({ type: 'command-end', turn: 1, record: record('ls') })
    rec.onEvent({ type: 'command-start', turn: 2, command: 'sleep 9' })
    const s = rec.snapshot('stopped here')
    expect(s.commands.map(c => [c.command, c.aborted ?? false])).toEqual([
      ['ls', false],
      ['sleep 9', true]
    ])
    expect(s.commands[1].output).toBe('(stopped here)')
  })
})
