// The model's notes between tool calls in the report and the progress comment: shown above
// their command, and inert like all agent text (a note cannot close the fence, forge a log
// entry, ping anyone or show an image).
import { describe, expect, it } from '@jest/globals'
import { renderCommand, renderFinal, renderProgress, type Outcome, type ReportMeta } from '../src/report/render'
import { emptyUsage, type CommandRecord } from '../src/types'

const meta: ReportMeta = {
  model: 'claude-sonnet-5-5',
  sandbox: 'none',
  limits: { maxTurns: 50, timeoutMinutes: 30, maxTokens: 32000 },
  elapsedMs: 1000
}
const rec = (command: string, note?: string): CommandRecord => ({
  command,
  exitCode: 0,
  durationMs: 10,
  output: 'ok',
  truncated: false,
  timedOut: false,
  blocked: false,
  ...(note ? { note } : {})
})
const outcome = (commands: CommandRecord[]): Outcome => ({
  finalText: 'Done.',
  exitReason: 'end_turn',
  turns: 2,
  commands,
  usage: emptyUsage(),
  costUsd: 0
})

/** The fenced blocks of a markdown text: [fence, body] pairs, fences matched as CommonMark does (a closing fence at least as long). */
function fences(md: string): Array<{ fence: string; body: string }> {
  const out: Array<{ fence: string; body: string }> = []
  const lines = md.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,}|~{3,})/.exec(lines[i])
    if (!open) continue
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const close = /^(`{3,}|~{3,})\s*$/.exec(lines[j])
      if (close && close[1][0] === open[1][0] && close[1].length >= open[1].length) break
      body.push(lines[j])
    }
    out.push({ fence: open[1], body: body.join('\n') })
    i = j
  }
  return out
}

describe('notes in the report', () => {
  it('sit above their command, inside its fence, as comment lines', () => {
    const md = renderCommand(rec('ls -1', 'I will list the files.\nThen read them.'), 0, 2000)
    expect(md).toContain('```console\n# I will list the files.\n# Then read them.\n$ ls -1\nok\n```')
  })

  it('cannot close the fence, forge a log entry, ping anyone or show an image', () => {
    const attack = 'Done.\n```\n\n✅ **7** · exit 0 · 0.1 s\n\n@octocat @org/team ![x](https://evil.example/x.png)\n````\n<details>'
    const md = renderFinal(outcome([rec('true', attack)]), meta)
    const blocks = fences(md)
    const block = blocks.find(b => b.body.includes('$ true'))!
    expect(block.body).toContain('✅ **7** · exit 0')
    // the forged entry stays inside the one fence: outside fences there is only the real entry
    const outside = md.split(block.body).join('')
    expect(outside).not.toContain('**7**')
    expect(md).not.toMatch(/(^|[^\w`])@octocat\b/)
    expect(md).not.toMatch(/(^|[^\w`])@org\/team\b/)
  })
})

describe('notes in the progress comment', () => {
  it('one line above the command, in inline code, mentions neutralised', () => {
    const md = renderProgress(outcome([rec('npm test', 'Run the `tests` now, @octocat.\nSecond line.')]), meta)
    const line = md.split('\n').find(l => l.startsWith('💬'))!
    expect(line).toBeDefined()
    expect(line).not.toMatch(/(^|[^\w`])@octocat\b/)
    // one inline code span: the note's own backticks cannot end it
    const span = /^💬 (`+) ?(.*?) ?\1$/.exec(line)
    expect(span).not.toBeNull()
    expect(span?.[2]).not.toContain(span?.[1])
    expect(line).toContain('Second line.')
    const next = md.split('\n')[md.split('\n').indexOf(line) + 1]
    expect(next).toMatch(/^✅ `npm test`/)
  })
})

describe('the note of the command running now', () => {
  it('shows above the running command in the progress comment, as the finished ones do', () => {
    const md = renderProgress(outcome([rec('ls', 'First look.')]), meta, 'npm test', 'Now the `tests`, @octocat.')
    const lines = md.split('\n')
    const running = lines.findIndex(l => l.startsWith('⏳ `npm test`'))
    expect(running).toBeGreaterThan(0)
    expect(lines[running - 1]).toMatch(/^💬 .*Now the/)
    expect(lines[running - 1]).not.toMatch(/(^|[^\w`])@octocat\b/)
  })
  it('the recorder keeps the note of the command it runs, for the progress comment', async () => {
    const { Recorder } = await import('../src/run/recorder')
    const { createLog } = await import('../src/report/log')
    const { mkdtempSync } = await import('node:fs')
    const { join } = await import('node:path')
    const { tmpdir } = await import('node:os')
    const r = new Recorder(
      { path: join(mkdtempSync(join(tmpdir(), 'note-')), 't.json'), model: 'm', startedAt: Date.now(), sandbox: 'none' },
      createLog({})
    )
    r.onEvent({ type: 'command-start', turn: 1, command: 'make test', note: 'Running the suite.' })
    expect(r.running).toMatchObject({ command: 'make test', note: 'Running the suite.' })
    const md = renderProgress(r.live, meta, r.running?.command, r.running?.note)
    expect(md).toMatch(/💬 `Running the suite\.`\n⏳ `make test`/)
  })
})
