// The local run: `npm run agent -- "task"` and the interactive session, run
// from the built dist/cli/index.js against the fake Messages API.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { bash, startFakeAnthropic, text } from './helpers/fake-anthropic'
import { REPO_ROOT } from './helpers/run-action'

const entry = process.env.CLI_DIST ? join(resolve(process.env.CLI_DIST), 'index.js') : join(REPO_ROOT, 'dist', 'cli', 'index.js')
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cli-'))
  writeFileSync(join(dir, 'hello.txt'), 'hi there\n')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function runCli(args: string[], env: Record<string, string>, stdin = ''): Promise<{ code: number | null; out: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [entry, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, ...env },
      stdio: ['pipe', 'pipe', 'pipe']
    })
    let out = ''
    child.stdout.on('data', d => (out += d))
    child.stderr.on('data', d => (out += d))
    child.stdin.end(stdin)
    const timer = setTimeout(() => child.kill('SIGKILL'), 30000)
    child.on('error', fail)
    child.on('close', code => {
      clearTimeout(timer)
      done({ code, out })
    })
  })
}

describe('local run', () => {
  test('a task runs in the current directory and prints each command, its first lines and the final text', async () => {
    const ai = await startFakeAnthropic([bash('cat hello.txt; seq 1 50'), text('The file says hi.')])
    try {
      const r = await runCli(['read', 'the', 'file'], {
        ANTHROPIC_API_KEY: 'sk-ant-local-123456789',
        ANTHROPIC_BASE_URL: ai.url,
        MODEL_ID: 'claude-haiku-4-5'
      })
      expect(r.code).toBe(0)
      expect(r.out).toContain('$ cat hello.txt; seq 1 50')
      expect(r.out).toContain('hi there')
      expect(r.out).not.toContain('\n50\n')
      expect(r.out).toContain('The file says hi.')
      expect(ai.requests[0].body.model).toBe('claude-haiku-4-5')
      expect(ai.requests[0].body.messages[0].content[0].text).toBe('read the file')
      expect(ai.requests[0].body.system[0].text).toContain(dir)
      expect(r.out).not.toContain('sk-ant-local-123456789')
    } finally {
      await ai.close()
    }
  })

  test('with no task it is an interactive session that keeps the history; q quits', async () => {
    const ai = await startFakeAnthropic([text('first answer'), bash('pwd'), text('second answer')])
    try {
      const r = await runCli(
        [],
        { ANTHROPIC_API_KEY: 'sk-ant-local-123456789', ANTHROPIC_BASE_URL: ai.url },
        'what is here?\nand now?\nq\nnever sent\n'
      )
      expect(r.code).toBe(0)
      expect(r.out).toContain('first answer')
      expect(r.out).toContain('second answer')
      expect(ai.requests).toHaveLength(3)
      // The second question's request carries the first exchange.
      const second = ai.requests[1].body.messages
      expect(second.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user'])
      expect(JSON.stringify(second)).toContain('what is here?')
      expect(JSON.stringify(second)).toContain('first answer')
    } finally {
      await ai.close()
    }
  })

  test('a bad value is refused with one line naming the variable, before any request', async () => {
    const ai = await startFakeAnthropic([text('never')])
    try {
      const r = await runCli(['x'], { ANTHROPIC_API_KEY: 'sk-ant-local-123456789', ANTHROPIC_BASE_URL: ai.url, MAX_TURNS: 'lots' })
      expect(r.code).toBe(2)
      expect(r.out.trim()).toBe('MAX_TURNS must be a positive whole number, got "lots".')
      expect(ai.requests).toHaveLength(0)
    } finally {
      await ai.close()
    }
  })

  test('after a question ends at max-turns (a tool call left unanswered), the next question is still answered', async () => {
    const ai = await startFakeAnthropic([bash('echo one'), text('second answer')])
    try {
      const r = await runCli(
        [],
        { ANTHROPIC_API_KEY: 'sk-ant-local-123456789', ANTHROPIC_BASE_URL: ai.url, MAX_TURNS: '1' },
        'first?\nsecond?\nq\n'
      )
      expect(r.code).toBe(0)
      expect(r.out).toContain('max_turns')
      expect(r.out).toContain('second answer')
      // The fake rejects, like the API, a tool_use without its tool_result: both requests were accepted.
      expect(ai.requests.map(q => q.status)).toEqual([200, 200])
      const messages = ai.requests[1].body.messages
      expect(messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user'])
      const [result, question] = messages[2].content
      expect(result).toMatchObject({ type: 'tool_result', tool_use_id: messages[1].content[0].id, is_error: true })
      expect(JSON.stringify(result.content)).toMatch(/Not run/)
      expect(question).toMatchObject({ type: 'text', text: 'second?' })
    } finally {
      await ai.close()
    }
  })

  test('without a key it says what to set', async () => {
    const r = await runCli(['x'], {})
    expect(r.code).toBe(2)
    expect(r.out).toMatch(/ANTHROPIC_API_KEY/)
  })
})
