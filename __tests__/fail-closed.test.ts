// SPEC "Secrets", Sandbox and `sandbox: none`, through dist/: `sandbox: user`
// (the default) never falls back to none. Run as a user without sudo (nobody,
// launched by this root test), the run stops before the agent starts: the
// fake Messages API records no request, the step fails, and the comment and
// the job summary say what was missing and name `sandbox: none`. With
// `sandbox: none` the same user's run completes and the report says in one
// line that it was not contained.
import { afterAll, describe, expect, test } from '@jest/globals'
import { spawnSync } from 'node:child_process'
import { bash, startFakeAnthropic, text } from './helpers/fake-anthropic'
import { startFakeGitHub } from './helpers/fake-github'
import { cleanupRuns, runAction } from './helpers/run-action'
import { issueCommentEvent } from './helpers/events'
import { hasSudo, isRoot } from './helpers/kinds'

const API_KEY = 'sk-ant-api03-failClosedTestKey00000000000000000000'
afterAll(() => cleanupRuns())

/** A user without sudo: this one when it has none, else nobody (launched by this root test). */
const NOBODY = { uid: 65534, gid: 65534 }
const nobodyHasNoSudo = isRoot && spawnSync('sudo', ['-n', '-u', 'nobody', 'sudo', '-n', 'true']).status !== 0
const withoutSudo: { asUser?: { uid: number; gid: number } } | undefined =
  !isRoot && !hasSudo ? {} : nobodyHasNoSudo ? { asUser: NOBODY } : undefined
const t = withoutSudo ? test : test.skip

async function run(inputs: Record<string, string>) {
  const fake = await startFakeAnthropic([bash('echo hi > made-by-agent.txt; id -un'), text('Done.')], { apiKey: API_KEY })
  const gh = await startFakeGitHub({ permissions: { Codertocat: 'admin' } })
  try {
    const r = await runAction({
      eventName: 'issue_comment',
      payload: issueCommentEvent({ body: '/agent say hi' }),
      inputs: { 'anthropic-api-key': API_KEY, 'anthropic-base-url': fake.url, ...inputs },
      env: { GITHUB_API_URL: gh.url },
      timeoutMs: 120_000,
      ...withoutSudo
    })
    const comment = [...gh.comments.values()].map(c => c.body).join('\n')
    return { r, comment, requests: fake.requests.length }
  } finally {
    await fake.close()
    await gh.close()
  }
}

describe('sandbox: user fails closed (a user without sudo)', () => {
  t(
    'no model request, no command, a failed step, and a report and summary naming sandbox: none',
    async () => {
      const { r, comment, requests } = await run({})
      expect(requests).toBe(0)
      expect(r.code).not.toBe(0)
      expect(r.outputs['exit-reason']).toBe('error')
      expect(r.outputs.commands ?? '0').toBe('0')
      for (const where of [comment, r.summary]) {
        expect(where).toMatch(/could not be set up \(not root and no passwordless sudo\)/)
        expect(where).toContain('`sandbox: none` runs the agent uncontained')
      }
      expect(r.stdout).toMatch(/::error::.*could not be set up/)
    },
    150_000
  )

  t(
    'with sandbox: none the run completes and the report says it was not contained',
    async () => {
      const { r, comment, requests } = await run({ sandbox: 'none' })
      expect(requests).toBe(2)
      expect(r.code).toBe(0)
      expect(r.outputs['exit-reason']).toBe('end_turn')
      expect(comment).toMatch(/sandbox: none \(not contained: the commands ran as the runner user in the workspace/)
      expect(r.summary).toMatch(/sandbox: none \(not contained/)
    },
    150_000
  )
})
