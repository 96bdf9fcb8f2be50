// The same loop from a terminal, in the current directory: `npm run agent -- "task"`,
// or an interactive session that keeps its history when no task is given.
import { existsSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { DEFAULT_BLOCKED, DEFAULT_MODEL } from './settings'
import { systemPrompt } from './agent/prompt'
import { createModelCall } from './agent/model'
import { runLoop, type AgentEvent } from './agent/loop'
import { formatUsd } from './agent/cost'
import { runBash, toolResult } from './tools/bash'
import { Redactor, secretsFromEnv } from './report/redact'
import { commandEnv as allowedEnv } from './sandbox/env'
import { homedir, tmpdir, userInfo } from 'node:os'
import type { MessageParam } from './types'

const yellow = (s: string) => `\x1b[33m${s}\x1b[0m`
const dim = (s: string) => `\x1b[2m${s}\x1b[0m`
const cyan = (s: string) => `\x1b[36m${s}\x1b[0m`

/** The first lines of an output, as the original harness showed them while it worked. */
function firstLines(output: string, lines = 8, chars = 600): string {
  const head = output.split('\n').slice(0, lines).join('\n').slice(0, chars)
  return head.length < output.length ? `${head}\n…` : head
}

async function cli(): Promise<number> {
  // npm runs scripts from the package root; INIT_CWD is where `npm run agent` was typed.
  if (process.env.INIT_CWD) process.chdir(process.env.INIT_CWD)
  // Like the original harness: a .env file in the current directory configures the run.
  if (existsSync('.env') && typeof process.loadEnvFile === 'function') process.loadEnvFile('.env')
  const env = process.env
  const baseUrl = env.ANTHROPIC_BASE_URL || undefined
  const apiKey = env.ANTHROPIC_API_KEY || ''
  const authToken = baseUrl ? undefined : env.ANTHROPIC_AUTH_TOKEN
  if (!apiKey && !authToken) {
    console.error('Set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL, MODEL_ID) in the environment or in .env.')
    return 2
  }
  const model = env.MODEL_ID || DEFAULT_MODEL
  const redactor = new Redactor(secretsFromEnv(env))
  const timeoutMs = Number(env.COMMAND_TIMEOUT ?? 120) * 1000
  const maxOutputChars = Number(env.MAX_OUTPUT_CHARS ?? 50000)
  // PASS_ENV: names (one a line or comma-separated, `*` suffix allowed) the commands may see beyond the built-in list
  const commandEnv = allowedEnv(env, {
    passEnv: (env.PASS_ENV ?? '').split(/[\n,]/).map(s => s.trim()).filter(Boolean),
    home: env.HOME ?? homedir(),
    user: env.USER ?? userInfo().username,
    tmpdir: env.TMPDIR ?? tmpdir(),
    redactor
  })
  const cwd = process.cwd()
  const system = systemPrompt({ workspace: cwd, commandTimeoutSec: timeoutMs / 1000, maxOutputChars, blocked: DEFAULT_BLOCKED })
  const callModel = createModelCall({ apiKey, authToken, baseUrl })
  // Ctrl-C stops the question being worked on; at the prompt it quits.
  let current: AbortController | undefined
  process.on('SIGINT', () => (current ? current.abort('cancelled') : process.exit(130)))

  const onEvent = (e: AgentEvent) => {
    if (e.type === 'command-start') console.log(yellow(`$ ${e.command}`))
    else if (e.type === 'command-end') console.log(dim(firstLines(e.record.output)))
    else if (e.type === 'tool-error') console.log(dim(e.message))
  }
  const ask = async (history: MessageParam[], query: string): Promise<boolean> => {
    history.push({ role: 'user', content: query })
    const controller = (current = new AbortController())
    const r = await runLoop(
      history,
      { model, system, maxTokens: 8000, maxTurns: Number(env.MAX_TURNS ?? 50), signal: controller.signal },
      {
        callModel,
        runCommand: async (command, signal) => {
          const record = await runBash(command, {
            cwd,
            env: commandEnv,
            timeoutMs,
            maxOutputChars,
            blocked: DEFAULT_BLOCKED,
            redact: s => redactor.redact(s),
            signal
          })
          return { record, ...toolResult(record, timeoutMs) }
        },
        onEvent
      }
    )
    current = undefined
    if (r.finalText) console.log(`\n${redactor.redact(r.finalText)}`)
    const cost = r.costUsd === null ? '' : ` · ~$${formatUsd(r.costUsd)}`
    console.log(dim(`[${r.exitReason} · ${r.turns} turns · ${r.commands.length} commands${cost}]`))
    if (r.error) console.error(r.error)
    return r.exitReason !== 'error' && r.exitReason !== 'cancelled'
  }

  const task = process.argv.slice(2).join(' ').trim()
  if (task) return (await ask([], task)) ? 0 : 1

  console.log(`bash agent (${model}) in ${cwd}. Ask a question; q, exit or an empty line quits.`)
  // Lines are read through the async iterator, which queues what arrives while the agent works.
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: Boolean(process.stdin.isTTY) })
  const history: MessageParam[] = []
  rl.setPrompt(cyan('agent >> '))
  rl.prompt()
  for await (const line of rl) {
    if (['', 'q', 'exit'].includes(line.trim().toLowerCase())) break
    await ask(history, line)
    rl.prompt()
  }
  rl.close()
  return 0
}

cli().then(
  code => process.exit(code),
  error => {
    console.error(error)
    process.exit(1)
  }
)
