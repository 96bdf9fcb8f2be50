#!/usr/bin/env node
// The Inputs and Outputs tables of docs/configuration.md, generated from action.yml (as
// actions/checkout generates its usage block from its action.yml): the runner reads action.yml,
// users read the page, and the two cannot drift apart.
//
//   npm run docs                        # rewrites the tables between the markers
//   node .ci/generate-docs.mjs --check  # exits 1 (and says which) when the page differs
//
// The tables go between `<!-- inputs:start -->` / `<!-- inputs:end -->` and the outputs' markers;
// the rest of the page is hand-written. The page is formatted with the project's Prettier, so the
// check agrees with `npm run lint`. `yaml` is the YAML reader @actions/workflow-parser brings.
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import * as prettier from 'prettier'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const PAGE = join(ROOT, 'docs', 'configuration.md')

/** A markdown table cell: one line, pipes escaped. */
const cell = text =>
  String(text)
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .trim()

/** Literal text in a code span, with a fence longer than any backtick run inside. */
function code(text) {
  const longest = Math.max(0, ...(String(text).match(/`+/g) ?? []).map(r => r.length))
  const fence = '`'.repeat(longest + 1)
  const pad = /^`|`$/.test(text) ? ' ' : ''
  return `${fence}${pad}${text}${pad}${fence}`
}

/** A default as the table shows it: `empty` for none, each line of a multi-line default in its own code span. */
export function defaultCell(value) {
  if (value === undefined || value === null || String(value) === '') return 'empty'
  const lines = String(value)
    .split('\n')
    .filter(l => l.trim() !== '')
  return lines.length > 1 ? `${lines.map(code).join(', ')} (one a line)` : code(lines[0])
}

export function tables(actionYml) {
  const action = parse(actionYml)
  const inputs = Object.entries(action.inputs ?? {}).map(
    ([name, i]) =>
      `| \`${name}\` | ${cell(defaultCell(i?.default))} | ${cell(i?.description ?? '')}${i?.required ? ' **Required.**' : ''} |`
  )
  const outputs = Object.entries(action.outputs ?? {}).map(([name, o]) => `| \`${name}\` | ${cell(o?.description ?? '')} |`)
  return {
    inputs: ['| Input | Default | Description |', '| --- | --- | --- |', ...inputs].join('\n'),
    outputs: ['| Output | Description |', '| --- | --- |', ...outputs].join('\n')
  }
}

function splice(page, name, table) {
  const start = `<!-- ${name}:start -->`
  const end = `<!-- ${name}:end -->`
  const a = page.indexOf(start)
  const b = page.indexOf(end)
  if (a < 0 || b < a) throw new Error(`docs/configuration.md has no ${start} … ${end} markers`)
  return `${page.slice(0, a + start.length)}\n\n${table}\n\n${page.slice(b)}`
}

/** The page as it should be: the current page with both tables regenerated, formatted. */
export async function expectedPage(page = readFileSync(PAGE, 'utf8'), actionYml = readFileSync(join(ROOT, 'action.yml'), 'utf8')) {
  const t = tables(actionYml)
  const text = splice(splice(page, 'inputs', t.inputs), 'outputs', t.outputs)
  const options = (await prettier.resolveConfig(PAGE)) ?? {}
  return prettier.format(text, { ...options, filepath: PAGE })
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const current = readFileSync(PAGE, 'utf8')
  const expected = await expectedPage(current)
  if (process.argv.includes('--check')) {
    if (current !== expected) {
      console.error('docs/configuration.md differs from action.yml: run `npm run docs` and commit it')
      process.exit(1)
    }
    console.log('docs/configuration.md says what action.yml declares')
  } else if (current !== expected) {
    writeFileSync(PAGE, expected)
    console.log('docs/configuration.md: the Inputs and Outputs tables regenerated from action.yml')
  } else console.log('docs/configuration.md: already up to date')
}
