// The same loop from a terminal, in the current directory: `npm run agent -- "task"`,
// or an interactive session that keeps its history when no task is given.
import { existsSync, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { inputVariable, readSettings, secretsOf, SettingsError, type Settings } from './settings'
import { systemPrompt } from './agent/prompt'
import { createModelCall } from './agent/model'
import { runLoop, type AgentEvent } from './agent/loop'
import { appendTask, closeUnfinished } from './agent/history'
import { formatUsd } from './agent/cost'
import { LocalEnvironment } from './environments/local'
import { commandRunner } from './tools/runner'
import { Redactor, secretsFromEnv } from './report/redact'
import { commandEnv as allowedEnv } from './sandbox/env'
import { homedir, tmpdir, userInfo } from 'node:os'
import type { MessageParam, RunResult } from './types'
import { loadValidator } from './structured/load'
import { checkAnswer } from './structured/answer'
import type { Validate } from './structured/validator'
import { messageOf } from './util'

const yellow = (s: string) => `\x1b[33m${s}\x1b[0m`
const dim = (s: string) => `\x1b[2m${s}\x1b[0m`
const cyan = (s: string) => `\x1b[36m${s}\x1b[0m`

/** The first lines of an output, as the original harness showed them while it worked. */
function firstLines(output: string, lines = 8, chars = 600): string {
  const head = output.split('\n').slice(0, lines).join('\n').slice(0, chars)
  return head.length < output.length ? `${head}\n…` : head
}

/** Environment variables of a local run, and the inputs they stand for. */
const LOCAL_VARIABLES: Record<string, string> = {
  MAX_TURNS: 'max-turns',
  MAX_TOKENS: 'max-tokens',
  COMMAND_TIMEOUT: 'command-timeout',
  MAX_OUTPUT_CHARS: 'max-output-chars',
  MAX_COST_USD: 'max-cost-usd',
  EFFORT: 'effort',
  OUTPUT_SCHEMA: 'output-schema',
  PROVIDER: 'provider'
}

/** The action's settings parser over the local environment: the same defaults and the same checks. */
function localSettings(env: NodeJS.ProcessEnv): Settings {
  const vars: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(env)) if (!name.startsWith('INPUT_')) vars[name] = value
  for (const [name, input] of Object.entries(LOCAL_VARIABLES)) if (env[name] !== undefined) vars[inputVariable(input)] = env[name]
  vars[inputVariable('sandbox')] = 'none'
  try {
    return readSettings(vars)
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error
    if (/anthropic-api-key/.test(error.message)) {
      throw new SettingsError('Set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL, MODEL_ID) in the environment or in .env.')
    }
    // name the variable the user set, not the action's input
    let message = error.message.replace('Input output-schema ', 'The output schema (--output-schema or OUTPUT_SCHEMA) ')
    for (const [name, input] of Object.entries(LOCAL_VARIABLES)) message = message.replace(`Input ${input} `, `${name} `)
    throw new SettingsError(message)
  }
}

/** The command line: `--output-schema <json or @file>` (or `--output-schema=…`) taken out; the rest is the task. */
function parseArgs(argv: string[]): { task: string; outputSchema?: string } {
  const rest: string[] = []
  let outputSchema: string | undefined
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--output-schema') outputSchema = argv[++i] ?? ''
    else if (argv[i].startsWith('--output-schema=')) outputSchema = argv[i].slice('--output-schema='.length)
    else rest.push(argv[i])
  }
  return { task: rest.join(' ').trim(), outputSchema }
}

/** A schema given as `@file` is that file's text. */
function schemaText(value: string): string {
  if (!value.startsWith('@')) return value
  try {
    return readFileSync(value.slice(1), 'utf8')
  } catch (error) {
    throw new SettingsError(`The output schema file ${value.slice(1)} could not be read: ${messageOf(error)}`)
  }
}

/** A local run configures itself like the original harness: from the current folder and its `.env`. */
async function loadLocal(outputSchema: string | undefined): Promise<{ settings: Settings; validate?: Validate } | undefined> {
  // npm runs scripts from the package root; INIT_CWD is where `npm run agent` was typed.
  if (process.env.INIT_CWD) process.chdir(process.env.INIT_CWD)
  if (existsSync('.env') && typeof process.loadEnvFile === 'function') process.loadEnvFile('.env')
  try {
    const schema = outputSchema ?? process.env.OUTPUT_SCHEMA
    const settings = localSettings(schema === undefined ? process.env : { ...process.env, OUTPUT_SCHEMA: schemaText(schema) })
    if (!settings.outputSchema) return { settings }
    // a valid JSON Schema, compiled once, before any model request
    const validate = await loadValidator(settings.outputSchema).catch(e => {
      throw new SettingsError(`The output schema (--output-schema or OUTPUT_SCHEMA) ${messageOf(e)}.`)
    })
    return { settings, validate }
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error
    console.error(error.message)
    return undefined
  }
}

/** Prints the run as it goes: each command, its note, the first lines of its output. */
function printer(redactor: Redactor, say: (line: string) => void): (e: AgentEvent) => void {
  return e => {
    if (e.type === 'command-start') {
      if (e.note) say(cyan(redactor.redact(e.note)))
      say(yellow(`$ ${e.command}`))
    } else if (e.type === 'retry-longer') say(dim(`(the reply was cut inside a tool call; asking again with max_tokens ${e.maxTokens})`))
    else if (e.type === 'command-end') say(dim(firstLines(e.record.output)))
    else if (e.type === 'tool-error') say(dim(e.message))
    else if (e.type === 'correction')
      say(dim(`(the answer does not match the output schema; asking once more)\n${redactor.redact(e.errors.join('\n'))}`))
    else if (e.type === 'format-refused')
      say(dim(`(structured outputs are not supported by this endpoint: ${e.detail}; asked again without output_config.format)`))
  }
}

/** One question asked of the loop, in a history kept between questions; true when it ended well. */
type Ask = (history: MessageParam[], query: string) => Promise<boolean>

/**
 * The end of one question. With an output schema, stdout holds only the structured output (one
 * line of JSON, for a shell pipeline) and everything else goes to stderr; the question ended
 * well only with a valid one.
 */
function answered(r: RunResult, redactor: Redactor, structured: boolean): boolean {
  const say = structured ? console.error : console.log
  if (r.finalText && !(structured && r.structured?.json !== undefined)) say(`\n${redactor.redact(r.finalText)}`)
  const cost = r.costUsd === null ? '' : ` · ~$${formatUsd(r.costUsd)}`
  say(dim(`[${r.exitReason} · ${r.turns} turns · ${r.commands.length} commands${cost}]`))
  if (r.error) console.error(r.error)
  if (structured && r.structured?.json === undefined) {
    console.error(`No structured output (${r.exitReason})${r.structured?.errors ? `:\n${r.structured.errors.join('\n')}` : '.'}`)
  }
  if (structured && r.structured?.json !== undefined) process.stdout.write(`${r.structured.json}\n`)
  return r.exitReason !== 'error' && r.exitReason !== 'cancelled' && (!structured || r.structured?.json !== undefined)
}

function session(settings: Settings, env: NodeJS.ProcessEnv, validate: Validate | undefined): Ask {
  const { model } = settings
  const redactor = new Redactor(secretsFromEnv(env))
  for (const secret of secretsOf(settings)) if (secret) redactor.add(secret)
  // PASS_ENV: names (one a line or comma-separated, `*` suffix allowed) the commands may see beyond the built-in list
  const commandEnv = allowedEnv(env, {
    passEnv: (env.PASS_ENV ?? '')
      .split(/[\n,]/)
      .map(s => s.trim())
      .filter(Boolean),
    home: env.HOME ?? homedir(),
    user: env.USER ?? userInfo().username,
    tmpdir: env.TMPDIR ?? tmpdir(),
    redactor
  })
  const cwd = process.cwd()
  const { commandTimeoutMs, maxOutputChars, blocked } = settings
  const { outputSchema } = settings
  const system = systemPrompt({
    workspace: cwd,
    commandTimeoutSec: commandTimeoutMs / 1000,
    maxOutputChars,
    blocked,
    structured: !!outputSchema
  })
  const callModel = createModelCall({
    apiKey: settings.apiKey,
    authToken: settings.authToken,
    baseUrl: settings.baseUrl,
    provider: settings.provider,
    learn: secret => redactor.add(secret)
  })
  const runCommand = commandRunner(new LocalEnvironment(cwd, commandEnv), settings, {
    redact: s => redactor.redact(s),
    margin: Math.max(512, redactor.maxFormLength)
  })
  // Ctrl-C stops the question being worked on; at the prompt it quits.
  let current: AbortController | undefined
  process.on('SIGINT', () => (current ? current.abort('cancelled') : process.exit(130)))
  const onEvent = printer(redactor, outputSchema ? console.error : console.log)
  const check = validate && ((text: string) => checkAnswer(text, s => redactor.redact(s), validate))
  return async (history, query) => {
    // A question that ended at a limit or Ctrl-C may have left tool calls unanswered.
    history.splice(0, history.length, ...appendTask(closeUnfinished(history), query))
    const controller = (current = new AbortController())
    // The session's history is this model's own: its thinking blocks go back with it.
    const { maxTokens, effort, maxTurns, maxCostUsd } = settings
    const limits = { model, system, maxTokens, effort, historyModel: model, maxTurns, maxCostUsd, outputSchema, signal: controller.signal }
    const r = await runLoop(history, limits, { callModel, runCommand, onEvent, checkAnswer: check })
    current = undefined
    return answered(r, redactor, !!outputSchema)
  }
}

/** The interactive session: questions until q, exit or an empty line. */
async function interactive(ask: Ask, model: string): Promise<void> {
  console.log(`bash agent (${model}) in ${process.cwd()}. Ask a question; q, exit or an empty line quits.`)
  // Lines are read through the async iterator, which queues what arrives while the agent works.
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: Boolean(process.stdin.isTTY) })
  const history: MessageParam[] = []
  // Input that ended (a pipe, Ctrl-D) closes the interface while queued lines are still read; Node 24
  // throws ERR_USE_AFTER_CLOSE on a prompt after that, so there is none.
  let closed = false
  rl.on('close', () => (closed = true))
  rl.setPrompt(cyan('agent >> '))
  rl.prompt()
  for await (const line of rl) {
    if (['', 'q', 'exit'].includes(line.trim().toLowerCase())) break
    await ask(history, line)
    if (!closed) rl.prompt()
  }
  rl.close()
}

async function cli(): Promise<number> {
  const args = parseArgs(process.argv.slice(2))
  const local = await loadLocal(args.outputSchema)
  if (!local) return 2
  const ask = session(local.settings, process.env, local.validate)
  if (args.task) return (await ask([], args.task)) ? 0 : 1
  await interactive(ask, local.settings.model)
  return 0
}

cli().then(
  // what is written to a pipe is flushed before the process exits
  code => process.stdout.write('', () => process.exit(code)),
  error => {
    console.error(error)
    process.exit(1)
  }
)
