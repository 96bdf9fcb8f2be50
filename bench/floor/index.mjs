// The floor `npm run bench` measures the action against: a JavaScript action on Node's built-ins
// doing the least the job needs. One permission read, the Messages loop as JSON over fetch, one
// `bash -c` per tool call, one comment. No sandbox, no redaction, no report: what is left of the
// action's figures over this one's is the action's own cost, on whatever machine runs both.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
/* global fetch */

process.stdout.write('floor: started\n') // the bench finds the process by its first output
const input = name => process.env[`INPUT_${name.toUpperCase()}`] ?? ''
const event = JSON.parse(readFileSync(process.env.GITHUB_EVENT_PATH, 'utf8'))
const api = process.env.GITHUB_API_URL
const repo = process.env.GITHUB_REPOSITORY
const gh = (path, init = {}) =>
  fetch(`${api}/repos/${repo}${path}`, {
    ...init,
    headers: { authorization: `token ${input('github-token')}`, accept: 'application/vnd.github+json', 'content-type': 'application/json' }
  }).then(r => r.json())

const login = event.comment.user.login
const { permission } = await gh(`/collaborators/${encodeURIComponent(login)}/permission`)
if (permission !== 'admin' && permission !== 'write') process.exit(0)

const base = process.env.ANTHROPIC_BASE_URL || input('anthropic-base-url') || 'https://api.anthropic.com'
const tools = [
  {
    name: 'bash',
    description: 'Run a bash command',
    input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] }
  }
]
const bash = command =>
  new Promise(resolve => {
    const c = spawn('bash', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = Buffer.alloc(0) // the last 20,000 bytes
    const keep = d => (out = Buffer.concat([out, d]).subarray(-20000))
    c.stdout.on('data', keep)
    c.stderr.on('data', keep)
    c.on('close', code => resolve(`${out.toString()}\n[exit ${code}]`))
  })

const messages = [{ role: 'user', content: event.comment.body }]
const maxTurns = Number(input('max-turns') || 50)
let answer = ''
for (let turn = 0; turn < maxTurns; turn++) {
  const r = await fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': input('anthropic-api-key'), 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 4096, tools, messages })
  })
  const message = await r.json()
  messages.push({ role: 'assistant', content: message.content })
  const calls = message.content.filter(b => b.type === 'tool_use')
  answer = message.content
    .filter(b => b.type === 'text')
    .map(b => b.text)
    .join('\n')
  if (calls.length === 0) break
  const results = []
  for (const call of calls) results.push({ type: 'tool_result', tool_use_id: call.id, content: await bash(String(call.input.command)) })
  messages.push({ role: 'user', content: results })
}
await gh(`/issues/${event.issue.number}/comments`, { method: 'POST', body: JSON.stringify({ body: answer || '(no answer)' }) })
