// The workflows of docs/structured-output.md are what users copy: each passes GitHub's own
// parser, its schema is one the action takes, and the `if:` of the step after the agent
// (evaluated with GitHub's expressions) runs it on a yes only, and never on an empty output.
import { describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow, type WorkflowTemplate } from '@actions/workflow-parser'
import { data, Evaluator, Lexer, Parser } from '@actions/expressions'
import { truthy } from '@actions/expressions/result'
import { REPO_ROOT } from './helpers/run-action'
import { parseOutputSchema } from '../src/structured/schema'
import { compileSchema } from '../src/structured/validator'

const page = readFileSync(join(REPO_ROOT, 'docs', 'structured-output.md'), 'utf8')
const workflows = [...page.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map(m => m[1]).filter(y => /^jobs:/m.test(y))

async function parse(yaml: string): Promise<WorkflowTemplate> {
  const result = parseWorkflow({ name: 'docs.yml', content: yaml }, new NoOperationTraceWriter())
  expect(result.context.errors.getErrors().map(e => e.message)).toEqual([])
  const template = await convertWorkflowTemplate(result.context, result.value!)
  expect((template.errors ?? []).map(e => e.Message)).toEqual([])
  return template
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

/** A step's `if:` evaluated with the agent's output (GitHub adds success() && to a condition without a status function). */
function runs(condition: string, output: string): boolean {
  const contexts = ['github', 'steps', 'env', 'inputs', 'vars']
  const ast = new Parser(new Lexer(condition).lex().tokens, contexts, [{ name: 'success', minArgs: 0, maxArgs: 0 }]).parse()
  const context = JSON.parse(JSON.stringify({ steps: { agent: { outputs: { 'structured-output': output } } }, github: {} }), data.reviver)
  const functions = new Map([['success', { name: 'success', minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(true) }]])
  return truthy(new Evaluator(ast, context as data.Dictionary, functions).evaluate())
}

describe('docs/structured-output.md', () => {
  it('has the two workflows: a triage job and a scheduled check', () => {
    expect(workflows).toHaveLength(2)
    expect(workflows[0]).toMatch(/fromJSON\(steps\.agent\.outputs\.structured-output\)\.label/)
    expect(workflows[1]).toMatch(/schedule:/)
  })

  for (const [i, yaml] of workflows.entries()) {
    it(`workflow ${i + 1} parses, its schema is valid, and the next step runs on a yes only`, async () => {
      const template = await parse(yaml)
      const steps: Json[] = (template.jobs[0] as Json).steps
      const agent = steps.findIndex(s => s.id === 'agent')
      expect(agent).toBeGreaterThan(-1)
      const schemaText = /output-schema: \|\n((?: {12,}.*\n)+)/.exec(yaml)![1]
      const schema = parseOutputSchema(schemaText)!
      const validate = compileSchema(schema)
      const next = steps[agent + 1]
      const condition = String(next.if.expression ?? next.if)
      const yes =
        i === 0 ? { label: 'bug', confidence: 'high', reason: 'r' } : { out_of_date: true, findings: [{ file: 'README.md', problem: 'p' }] }
      const no = i === 0 ? { label: 'bug', confidence: 'low', reason: 'r' } : { out_of_date: false, findings: [] }
      for (const answer of [yes, no]) expect(validate(answer)).toEqual([])
      expect(runs(condition, JSON.stringify(yes))).toBe(true)
      expect(runs(condition, JSON.stringify(no))).toBe(false)
      // a run ended by a limit: structured-output is empty, and fromJSON('') is never reached
      expect(runs(condition, '')).toBe(false)
    })
  }
})
