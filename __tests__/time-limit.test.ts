// The time limit, end to end: a real timeout-minutes of 0.2 (12 s; the input
// takes decimals as a workflow's does). In a file of its own so that it waits
// beside the other test files, not after them.
import { afterAll, describe, expect, it } from '@jest/globals'
import { bash, text } from './helpers/fake-anthropic'
import { cleanupRuns } from './helpers/run-action'
import { agent, gone, sleepers, unique } from './helpers/agent-run'

const S4 = unique(4)
afterAll(() => {
  cleanupRuns()
  for (const pid of sleepers(S4)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone
    }
  }
})

describe('time limit', () => {
  it('a 12-second timeout-minutes (0.2): the running command is stopped, the report says so, success', async () => {
    const { run, comment } = await agent([bash('echo start'), bash(`sleep ${S4}`), text('never')], {
      inputs: { 'timeout-minutes': '0.2' },
      timeoutMs: 60_000
    })
    expect(run.code).toBe(0)
    expect(run.outputs).toMatchObject({ 'exit-reason': 'timeout', turns: '2', commands: '2' })
    // the 94-second command was stopped at the limit, not waited for (how close to 12 s the step ends
    // depends on the machine's load: no wall-time bound here)
    expect(run.durationMs).toBeLessThan(60_000)
    expect(comment.body).toContain(
      '⚠️ **Stopped at the time limit** (timeout-minutes: 0.2) before the agent finished. 2 commands ran in 2 turns'
    )
    expect(comment.body).toContain('$ echo start\nstart')
    expect(comment.body).toMatch(new RegExp(`stopped · [\\d.]+ s\n\n\`\`\`console\n\\$ sleep ${S4}\n\\(no output\\)\n`))
    expect(await gone(S4)).toEqual([])
  }, 90_000)
})
