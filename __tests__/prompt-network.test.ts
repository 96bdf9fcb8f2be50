// The system prompt says what the commands' network allows and that there is no sudo, so the
// model does not spend turns finding out.
import { describe, expect, test } from '@jest/globals'
import { systemPrompt } from '../src/agent/prompt'

const place = { workspace: '/w', commandTimeoutSec: 60, maxOutputChars: 1000, blocked: [] }

describe('the system prompt on the machine', () => {
  test('user sandbox, empty allowlist: no network and no sudo', () => {
    const p = systemPrompt({ ...place, sandbox: 'user', network: { mode: 'allowlist', allowed: [] } })
    expect(p).toContain('without sudo')
    expect(p).toContain('Commands have no network')
  })
  test('hosts and presets are named, a preset with its hosts', () => {
    const p = systemPrompt({ ...place, sandbox: 'user', network: { mode: 'allowlist', allowed: ['npm', 'example.com'] } })
    expect(p).toMatch(/only these hosts: npm \(registry\.npmjs\.org, [^)]*\); example\.com\./)
    expect(p).toContain('403')
  })
  test('network: open says so; sandbox: none says nothing of either', () => {
    expect(systemPrompt({ ...place, sandbox: 'user', network: { mode: 'open', allowed: [] } })).toContain(
      "the runner's network, unfiltered"
    )
    const none = systemPrompt({ ...place, sandbox: 'none', network: { mode: 'allowlist', allowed: [] } })
    expect(none).not.toContain('sudo')
    expect(none).not.toContain('network')
  })
})
