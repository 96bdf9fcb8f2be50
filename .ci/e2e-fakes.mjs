#!/usr/bin/env node
// The test fakes for a workflow that runs the action itself (`uses: ./`, .github/workflows/e2e.yml):
// the fake Messages API of the tests (__tests__/helpers/fake-anthropic.ts, which refuses a wrong key
// and a malformed conversation as the real API does) on 127.0.0.1, scripted to run one command that
// writes a file, then to answer. The model is the only fake: the action reads the sender's permission
// and writes the job summary with the job's real token and runner.
//
//   node .ci/e2e-fakes.mjs start <dir>   # serves until killed; writes <dir>/url once listening
//   node .ci/e2e-fakes.mjs check <dir>   # after the action's step: what the fake received (requests, key)
//
// The key the workflow passes must be E2E_KEY below (the fake answers 401 to any other).
import { register } from 'node:module'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

register('../bench/ts-hooks.mjs', import.meta.url)

export const E2E_KEY = 'sk-ant-api03-e2eWorkflowFakeKey0000000000000000000'
const [mode, dir] = process.argv.slice(2)
if (!dir || (mode !== 'start' && mode !== 'check')) {
  console.error('usage: node .ci/e2e-fakes.mjs start|check <dir>')
  process.exit(2)
}

if (mode === 'start') {
  const { startFakeAnthropic, bash, text } = await import('../__tests__/helpers/fake-anthropic.ts')
  mkdirSync(dir, { recursive: true })
  const ai = await startFakeAnthropic(
    [bash('printf "hello from the agent\\n" > e2e-hello.txt && cat e2e-hello.txt'), text('Wrote e2e-hello.txt.')],
    {
      apiKey: E2E_KEY
    }
  )
  const record = () =>
    writeFileSync(
      join(dir, 'requests.json'),
      JSON.stringify({ requests: ai.requests.length, remaining: ai.remaining(), other: ai.otherRequests.length })
    )
  setInterval(record, 200)
  record()
  writeFileSync(join(dir, 'url'), ai.url)
  console.log(`fake Messages API on ${ai.url}`)
} else {
  const file = join(dir, 'requests.json')
  if (!existsSync(file)) throw new Error('the fakes did not start')
  const seen = JSON.parse(readFileSync(file, 'utf8'))
  console.log(`the fake Messages API received ${seen.requests} requests; ${seen.remaining} scripted replies left`)
  if (seen.requests !== 2 || seen.remaining !== 0) process.exit(1)
}
