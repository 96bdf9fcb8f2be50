// The shipped workflows are part of the product: every workflow in README.md
// and docs/*.md (and the repository's own, .github/workflows/) passes GitHub's own parser (@actions/workflow-parser, as the
// workflow language service uses it), and what the comment workflows' `if:`
// and concurrency group make of real webhook payloads (evaluated with
// @actions/expressions) agrees with what the built action does with the same
// events: every request it acts on starts the job, a comment it answers as a
// stop gets a group of its own, one it runs as a task never does, and the
// requests of one thread queue (`queue: max`, no cancel-in-progress).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  convertWorkflowTemplate,
  isBasicExpression,
  isBoolean,
  isMapping,
  isString,
  NoOperationTraceWriter,
  parseWorkflow,
  type WorkflowTemplate
} from '@actions/workflow-parser'
import { data, Evaluator, Lexer, Parser } from '@actions/expressions'
import { truthy } from '@actions/expressions/result'
import type { TemplateToken } from '@actions/workflow-parser/templates/tokens/template-token'
import { startFakeAnthropic, text } from './helpers/fake-anthropic'
import { startFakeGitHub, type FakeGitHub } from './helpers/fake-github'
import { cleanupRuns, REPO_ROOT, runAction } from './helpers/run-action'
import { issueCommentEvent, issuesEvent, reviewCommentEvent, workflowDispatchEvent } from './helpers/events'
import { decide } from '../src/trigger'
import type { Settings } from '../src/settings'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Payload = any

interface Block {
  file: string
  line: number
  yaml: string
}

/** Every ```yaml block of a markdown file, with the line it starts on. */
function yamlBlocks(file: string): Block[] {
  const lines = readFileSync(join(REPO_ROOT, file), 'utf8').split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^```ya?ml\s*$/.test(lines[i])) continue
    const start = i + 1
    let end = start
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++
    blocks.push({ file, line: start + 1, yaml: lines.slice(start, end).join('\n') + '\n' })
    i = end
  }
  return blocks
}

/** The pages users copy workflows from: the README, SECURITY.md and every page of docs/. */
const PAGES = [
  'README.md',
  'SECURITY.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter(n => n.endsWith('.md'))
    .sort()
    .map(n => `docs/${n}`)
].filter(p => existsSync(join(REPO_ROOT, p)))
const BLOCKS = PAGES.flatMap(yamlBlocks)

/** The repository's own workflows (CI, the end-to-end run of the action), each file whole. */
const WORKFLOW_DIR = join(REPO_ROOT, '.github', 'workflows')
const OWN_WORKFLOWS: Block[] = (existsSync(WORKFLOW_DIR) ? readdirSync(WORKFLOW_DIR) : [])
  .filter(n => /\.ya?ml$/.test(n))
  .sort()
  .map(n => ({ file: `.github/workflows/${n}`, line: 1, yaml: readFileSync(join(WORKFLOW_DIR, n), 'utf8') }))
const isWorkflow = (b: Block): boolean => /^jobs:/m.test(b.yaml) && /^on:/m.test(b.yaml)

/** A step snippet (a list of steps) is checked as the steps of a job. */
const asWorkflow = (b: Block): string =>
  isWorkflow(b)
    ? b.yaml
    : `on: workflow_dispatch\njobs:\n  snippet:\n    runs-on: ubuntu-latest\n    steps:\n${b.yaml
        .split('\n')
        .map(l => (l ? `      ${l}` : l))
        .join('\n')}`

async function parse(b: Block): Promise<{ errors: string[]; template?: WorkflowTemplate }> {
  const name = `${b.file}:${b.line}.yml`
  const result = parseWorkflow({ name, content: asWorkflow(b) }, new NoOperationTraceWriter())
  const errors = result.context.errors.getErrors().map(e => e.message)
  if (errors.length > 0 || !result.value) return { errors }
  const template = await convertWorkflowTemplate(result.context, result.value)
  return { errors: [...result.context.errors.getErrors().map(e => e.message), ...(template.errors ?? []).map(e => e.Message)], template }
}

// --- GitHub's expressions ------------------------------------------------------

const CONTEXTS = ['github', 'inputs', 'vars', 'needs', 'strategy', 'matrix', 'secrets', 'steps', 'job', 'runner', 'env']
const STATUS = ['success', 'always', 'failure', 'cancelled'].map(name => ({ name, minArgs: 0, maxArgs: 0 }))

function evaluate(expression: string, context: Record<string, unknown>): data.ExpressionData {
  const lexed = new Lexer(expression).lex()
  const ast = new Parser(lexed.tokens, CONTEXTS, STATUS).parse()
  const ctx = JSON.parse(JSON.stringify(context), data.reviver) as data.Dictionary
  const functions = new Map(
    STATUS.map(f => [f.name, { ...f, call: () => new data.BooleanData(f.name !== 'failure' && f.name !== 'cancelled') }])
  )
  return new Evaluator(ast, ctx, functions).evaluate()
}

/** What a template token comes to for this event: a literal as is, an expression evaluated. */
function valueOf(token: TemplateToken | undefined, context: Record<string, unknown>): unknown {
  if (!token) return undefined
  if (isBasicExpression(token)) {
    const v = evaluate(token.expression, context)
    return v.kind === data.Kind.Boolean ? truthy(v) : v.coerceString()
  }
  if (isString(token)) return token.value
  if (isBoolean(token)) return token.value
  return String(token)
}

interface Concurrency {
  group: string
  queue?: string
  cancelInProgress?: unknown
}

function concurrencyOf(token: TemplateToken | undefined, context: Record<string, unknown>): Concurrency | undefined {
  if (!token) return undefined
  if (!isMapping(token)) return { group: String(valueOf(token, context)) }
  return {
    group: String(valueOf(token.find('group'), context)),
    queue: valueOf(token.find('queue'), context) as string | undefined,
    cancelInProgress: valueOf(token.find('cancel-in-progress'), context)
  }
}

interface Job {
  triggers: boolean
  group?: string
  queue?: string
  cancelInProgress?: unknown
}

/** What the workflow makes of an event: does its `on:` and the job's `if:` start the job, and in which concurrency group. */
function jobFor(template: WorkflowTemplate, eventName: string, payload: Payload, runId: number): Job {
  const on = template.events[eventName] as { types?: string[] } | undefined
  const types = on?.types
  const context = {
    github: { event_name: eventName, event: payload, run_id: String(runId), run_attempt: '1', repository: payload?.repository?.full_name },
    inputs: payload?.inputs ?? {},
    vars: {},
    needs: {},
    strategy: {},
    matrix: {}
  }
  const job = template.jobs[0]
  const filtered = on !== undefined && (!types || types.length === 0 || types.includes(payload?.action))
  const condition = job.if ? truthy(evaluate(job.if.expression, context)) : true
  const c = concurrencyOf(job.concurrency ?? (template.concurrency as TemplateToken | undefined), context)
  return { triggers: filtered && condition, group: c?.group, queue: c?.queue, cancelInProgress: c?.cancelInProgress }
}

// --- the events ------------------------------------------------------------------

type Expect = 'task' | 'stop' | 'skip'

interface Row {
  name: string
  event: string
  payload: Payload
  /** the thread the request belongs to (its issue or pull request number) */
  thread: number
  /** what the action does: runs a task, answers as a stop, or skips */
  expect: Expect
}

const PERMISSIONS = { Codertocat: 'admin', octocat: 'write', 'helper-app[bot]': 'write' } as const

let next = 100
const comment = (name: string, body: string, expect: Expect, extra: Partial<Parameters<typeof issueCommentEvent>[0]> = {}): Row => {
  const n = next++
  return {
    name,
    event: 'issue_comment',
    payload: issueCommentEvent({ body, login: 'octocat', issueNumber: n, ...extra }),
    thread: n,
    expect
  }
}
const review = (name: string, body: string, expect: Expect, extra: Partial<Parameters<typeof reviewCommentEvent>[0]> = {}): Row => {
  const n = next++
  return {
    name,
    event: 'pull_request_review_comment',
    payload: reviewCommentEvent({ body, login: 'octocat', pullNumber: n, ...extra }),
    thread: n,
    expect
  }
}
const issue = (name: string, opts: Parameters<typeof issuesEvent>[0], expect: Expect): Row => {
  const n = next++
  return { name, event: 'issues', payload: issuesEvent({ login: 'octocat', issueNumber: n, ...opts }), thread: n, expect }
}

const ROWS: Row[] = [
  comment('a task on an issue', '/agent fix the failing test', 'task'),
  comment('a task on a pull request', '/agent fix the failing test', 'task', { onPullRequest: true }),
  comment('a task after text', 'The build broke.\n\n/agent find out why', 'task'),
  comment('a mention of the phrase mid-sentence', 'Next time write /agent and a task', 'task'),
  comment('a fresh start', '/agent new write the tests', 'task'),
  comment('a task from the repository owner', '/agent count the files', 'task', { login: 'Codertocat' }),
  comment('stop', '/agent stop', 'stop'),
  comment('stop in capitals', '/AGENT Stop', 'stop'),
  comment('stop on a pull request', '/agent stop', 'stop', { onPullRequest: true }),
  comment('stop with more lines', '/agent stop\n\nit is looping', 'stop'),
  comment('stop with CRLF', '/agent stop\r\nthanks', 'stop'),
  comment('stop, please first', 'please /agent stop', 'skip'),
  comment('stop after a space', ' /agent stop', 'skip'),
  comment('stop with two spaces', '/agent  stop', 'skip'),
  comment('stop with a full stop', '/agent stop.', 'skip'),
  comment('stop with a trailing space', '/agent stop ', 'skip'),
  comment('stop on the second line', 'Enough.\n/agent stop', 'skip'),
  comment('a task that starts with stop', '/agent stop the server from crashing', 'task'),
  comment('a task about a stopwatch', '/agent stopwatch test is flaky', 'task'),
  comment('a quote of a request', '> /agent fix it\n\nI agree with this', 'skip'),
  comment('a quote of a stop', '> /agent stop\n\nwhy was it stopped?', 'skip'),
  comment('/agents', 'the /agents are busy', 'skip'),
  comment('inline code', 'write `/agent <task>` to ask', 'skip'),
  comment('a fenced block', '```\n/agent fix\n```', 'skip'),
  comment('an HTML comment', '<!-- /agent fix it -->\nLooks fine to me', 'skip'),
  comment('a request after an HTML comment', '<!-- template -->\n/agent fix it', 'task'),
  comment('a bot asking', '/agent fix it', 'skip', { login: 'other-bot[bot]', userType: 'Bot' }),
  comment('a bot stopping', '/agent stop', 'skip', { login: 'other-bot[bot]', userType: 'Bot' }),
  comment('the action’s own report', '<!-- bash-agent-action -->\n/agent fix it', 'skip', {
    login: 'github-actions[bot]',
    userType: 'Bot'
  }),
  comment('an edited comment', '/agent fix it', 'skip', { action: 'edited' }),
  comment('a deleted comment', '/agent fix it', 'skip', { action: 'deleted' }),
  comment('no phrase', 'Thanks!', 'skip'),
  review('a review comment task', '/agent rename this variable', 'task'),
  review('a review comment stop', '/agent stop', 'stop'),
  review('a review comment near-miss stop', 'please /agent stop', 'skip'),
  review('a review comment that quotes', '> /agent rename\n\nno', 'skip'),
  review('an edited review comment', '/agent rename this', 'skip', { action: 'edited' }),
  issue('an issue with the phrase in its title', { action: 'opened', title: '/agent fix the typo', body: 'In README.md' }, 'task'),
  issue('an issue with the phrase in its body', { action: 'opened', title: 'Typo', body: '/agent fix the typo in README.md' }, 'task'),
  issue(
    'an issue with the phrase only in an HTML comment',
    { action: 'opened', title: 'Bug', body: '<!-- write /agent to ask the agent -->\nIt crashes' },
    'skip'
  ),
  issue('an issue without the phrase', { action: 'opened', title: 'Bug', body: 'It crashes' }, 'skip'),
  issue('an issue with a null body', { action: 'opened', title: 'Bug', body: null }, 'skip'),
  issue('label agent', { action: 'labeled', label: 'agent', title: 'Fix the typo', body: 'In README.md' }, 'task'),
  issue('label Agent', { action: 'labeled', label: 'Agent', title: 'Fix the typo', body: 'In README.md' }, 'task'),
  issue('label /agent', { action: 'labeled', label: '/agent', title: 'Fix the typo', body: 'In README.md' }, 'task'),
  issue('label bug', { action: 'labeled', label: 'bug', title: 'Fix the typo', body: 'In README.md' }, 'skip'),
  issue(
    'label agent on an issue the opened event answered',
    { action: 'labeled', label: 'agent', title: 'x', body: '/agent fix it' },
    'skip'
  ),
  issue('an edited issue', { action: 'edited', title: '/agent fix', body: '' }, 'skip'),
  issue('a reopened issue', { action: 'reopened', title: '/agent fix', body: '' }, 'skip')
]

const dispatchRow = (name: string, inputs: Record<string, string>): Row & { inputs: Record<string, string> } => ({
  name,
  event: 'workflow_dispatch',
  payload: workflowDispatchEvent({ inputs, login: 'octocat' }),
  thread: Number(inputs['issue-number'] || 0),
  expect: 'task',
  inputs
})
const DISPATCH = [
  dispatchRow('dispatch on an issue', { task: 'count the files', 'issue-number': '142' }),
  dispatchRow('dispatch alone', { task: 'count the files' })
]

const SETTINGS = { task: '', triggerPhrase: '/agent', issueNumber: undefined } as unknown as Settings

/** The action's decision without running it: what the trigger makes of the event (the gate comes on top). */
function decided(row: Row): Expect {
  const d = decide(row.event, row.payload, SETTINGS)
  if (!d.run) return 'skip'
  return d.task.mode === 'stop' ? 'stop' : 'task'
}

// --- what the built action does ---------------------------------------------------

const API_KEY = 'sk-ant-api03-workflowsTestKey000000000000000000'

/** Runs the built action on the event: a task gets one model request; a stop, a reply; anything else, neither. */
async function actionDoes(gh: FakeGitHub, row: Row, runId: number, inputs: Record<string, string> = {}): Promise<Expect> {
  const ai = await startFakeAnthropic([text('Done.')], { apiKey: API_KEY })
  try {
    const before = gh.comments.size
    const run = await runAction({
      eventName: row.event,
      payload: row.payload,
      inputs: { 'anthropic-api-key': API_KEY, 'anthropic-base-url': ai.url, sandbox: 'none', ...inputs },
      env: { GITHUB_API_URL: gh.url, GITHUB_RUN_ID: String(runId) },
      timeoutMs: 60_000
    })
    const replies = [...gh.comments.values()].slice(before).map(c => c.body)
    if (ai.requests.length > 0) return 'task'
    if (run.outputs['exit-reason'] === 'skipped' && replies.some(b => /Nothing to stop|Stopping \[run/.test(b))) return 'stop'
    return 'skip'
  } finally {
    await ai.close()
  }
}

// --- the checks ---------------------------------------------------------------------

const blocks = BLOCKS.map(b => ({ ...b, label: `${b.file}:${b.line}` }))

describe('every workflow in README.md and docs/ passes GitHub’s parser', () => {
  it('finds the workflows', () => {
    expect(blocks.filter(isWorkflow).map(b => b.file)).toEqual(expect.arrayContaining(['README.md', 'docs/security.md', 'docs/usage.md']))
  })
  it.each(blocks.map(b => [b.label, b] as const))('%s', async (_label, b) => {
    const { errors, template } = await parse(b)
    expect(errors).toEqual([])
    expect(template?.jobs.length).toBeGreaterThan(0)
  })
})

describe('every workflow of the repository (.github/workflows/) passes GitHub’s parser', () => {
  it('has a CI workflow on pushes and pull requests that runs the tests on Ubuntu', () => {
    const ci = OWN_WORKFLOWS.find(w => w.file === '.github/workflows/ci.yml')
    expect(ci).toBeDefined()
    expect(ci?.yaml).toMatch(/^ {2}pull_request:/m)
    expect(ci?.yaml).toMatch(/^ {2}push:/m)
    expect(ci?.yaml).toMatch(/runs-on: ubuntu-latest/)
    expect(ci?.yaml).toMatch(/npm test/)
  })
  it('has a workflow that runs the action itself (uses: ./)', () => {
    expect(OWN_WORKFLOWS.some(w => /uses: \.\/\s*$/m.test(w.yaml))).toBe(true)
  })
  it('Dependabot keeps npm and the workflows’ actions up to date (.github/dependabot.yml)', () => {
    const text = readFileSync(join(REPO_ROOT, '.github', 'dependabot.yml'), 'utf8')
    expect(text).toMatch(/package-ecosystem: npm/)
    expect(text).toMatch(/package-ecosystem: github-actions/)
  })
  it.each(OWN_WORKFLOWS.map(w => [w.file, w] as const))('%s', async (_file, w) => {
    const { errors, template } = await parse(w)
    expect(errors).toEqual([])
    expect(template?.jobs.length).toBeGreaterThan(0)
  })
})

const commentWorkflows = blocks.filter(b => isWorkflow(b) && /issue_comment:/.test(b.yaml))
const dispatchWorkflows = blocks.filter(b => isWorkflow(b) && /workflow_dispatch:/.test(b.yaml))

interface Seen {
  row: Row
  action: Expect
  workflow: Record<string, Job & { groupOther?: string }>
}

function table(seen: Seen[]): string {
  const cell = (s: unknown) => JSON.stringify(s)
  return seen
    .map(s => {
      const wf = Object.entries(s.workflow)
        .map(
          ([label, j]) =>
            `${label}: ${j.triggers ? 'starts' : 'no job'} group=${cell(j.group)}${j.groupOther !== j.group ? ` / ${cell(j.groupOther)}` : ''} queue=${cell(j.queue)}`
        )
        .join('; ')
      const body = s.row.payload?.comment?.body ?? s.row.payload?.label?.name ?? s.row.payload?.issue?.title ?? s.row.payload?.inputs?.task
      return `${s.row.event}/${s.row.payload?.action ?? '-'} ${cell(body)} (${s.row.name}): action ${s.action} | ${wf}`
    })
    .join('\n')
}

/** Checks one row, returning what is wrong (empty when the workflow and the action agree). */
function disagreements(s: Seen): string[] {
  const wrong: string[] = []
  if (s.action !== s.row.expect) wrong.push(`the action does "${s.action}", expected "${s.row.expect}"`)
  for (const [label, j] of Object.entries(s.workflow)) {
    if (j.queue !== 'max') wrong.push(`${label}: the group does not queue (queue: ${j.queue})`)
    if (j.cancelInProgress !== undefined && j.cancelInProgress !== false) wrong.push(`${label}: cancel-in-progress is set`)
    if (s.action === 'skip') continue
    if (!j.triggers) wrong.push(`${label}: the job does not start for a request the action acts on`)
    const threadGroup = `bash-agent-${s.row.thread}`
    if (s.action === 'stop' && (j.group === threadGroup || j.group === j.groupOther))
      wrong.push(`${label}: a stop shares a group (${j.group}) and would wait behind the run it stops`)
    if (s.action === 'task' && s.row.thread && (j.group !== threadGroup || j.groupOther !== threadGroup))
      wrong.push(`${label}: a task is not in its thread's group (${j.group}, ${j.groupOther})`)
  }
  return wrong
}

describe('the shipped workflows agree with the action', () => {
  let gh: FakeGitHub
  const seen: Seen[] = []
  const templates = new Map<string, WorkflowTemplate>()

  beforeAll(async () => {
    for (const b of [...commentWorkflows, ...dispatchWorkflows]) {
      const { template } = await parse(b)
      if (template) templates.set(b.label, template)
    }
    gh = await startFakeGitHub({ permissions: { ...PERMISSIONS } })
    // The built action runs once per class of request (what the trigger decides, and the event);
    // every other row of the class is decided the same way, which `decide` checks without a process.
    const classes = new Map<string, Expect>()
    let runId = 9100
    for (const row of [...ROWS, ...DISPATCH]) {
      const key = `${row.event}/${row.payload.action}/${decided(row)}/${row.payload?.comment?.user?.type ?? ''}`
      let action = classes.get(key)
      if (action === undefined || row.expect !== decided(row)) {
        action = await actionDoes(gh, row, runId++, 'inputs' in row ? (row as (typeof DISPATCH)[number]).inputs : {})
        classes.set(key, action)
      }
      const workflow: Seen['workflow'] = {}
      const wfs = row.event === 'workflow_dispatch' ? dispatchWorkflows : commentWorkflows
      for (const b of wfs) {
        const t = templates.get(b.label)
        if (!t) continue
        const j = jobFor(t, row.event, row.payload, 1111)
        const other = jobFor(t, row.event, row.payload, 2222)
        workflow[b.label] = { ...j, groupOther: other.group }
      }
      seen.push({ row, action, workflow })
    }
  }, 300_000)
  afterAll(async () => {
    await gh?.close()
    cleanupRuns()
  })

  it('both the README and docs/security.md ship a comment workflow', () => {
    expect(commentWorkflows.map(b => b.file)).toEqual(expect.arrayContaining(['README.md', 'docs/security.md']))
    expect(templates.size).toBe(commentWorkflows.length + dispatchWorkflows.length)
  })

  it('every request the action acts on starts the job; stops get a group of their own, tasks their thread’s; requests queue', () => {
    const wrong = seen.map(s => ({ s, why: disagreements(s) })).filter(x => x.why.length > 0)
    if (wrong.length > 0) {
      const detail = wrong.map(x => `- ${x.s.row.name}: ${x.why.join('; ')}`).join('\n')
      throw new Error(`The workflows and the action disagree:\n${detail}\n\nThe whole table:\n${table(seen)}`)
    }
    expect(seen.length).toBe(ROWS.length + DISPATCH.length)
  })

  it('the dispatch workflow queues in the thread’s group of the issue it reports to', () => {
    const onIssue = seen.find(s => s.row.name === 'dispatch on an issue')!
    for (const j of Object.values(onIssue.workflow)) expect(j.group).toBe('bash-agent-142')
    const alone = seen.find(s => s.row.name === 'dispatch alone')!
    for (const j of Object.values(alone.workflow)) expect(j.group).not.toBe(j.groupOther)
  })
})
