// The code stays a house others can live in: no source file over 500 lines, no
// function over 60 lines of its own (the lines of functions declared inside it
// are not counted: they are read on their own), main.ts well under 150 lines.
import { describe, expect, it } from '@jest/globals'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { REPO_ROOT } from './helpers/run-action'

const MAX_FILE_LINES = 500
const MAX_FUNCTION_LINES = 60
const MAX_MAIN_LINES = 100

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(e =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : []
  )
}

const isFunction = (n: ts.Node): n is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(n) ||
  ts.isMethodDeclaration(n) ||
  ts.isArrowFunction(n) ||
  ts.isFunctionExpression(n) ||
  ts.isConstructorDeclaration(n) ||
  ts.isGetAccessor(n)

/** Each function's own lines: its span less the spans of the functions nested in it. */
export function functionSizes(file: string, text: string): Array<{ name: string; lines: number }> {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line
  const span = (n: ts.Node) => lineOf(n.getEnd()) - lineOf(n.getStart(sf)) + 1
  const out: Array<{ name: string; lines: number }> = []
  const visit = (node: ts.Node): number => {
    // returns the lines taken by functions inside `node` (to subtract from the enclosing one)
    let nested = 0
    node.forEachChild(child => {
      if (isFunction(child)) {
        const inner = visit(child)
        const own = span(child) - inner
        const name =
          (child.name && ts.isIdentifier(child.name) ? child.name.text : undefined) ??
          `(anonymous at line ${lineOf(child.getStart(sf)) + 1})`
        out.push({ name, lines: own })
        nested += span(child)
      } else {
        nested += visit(child)
      }
    })
    return nested
  }
  visit(sf)
  return out
}

describe('the house', () => {
  const files = sources(join(REPO_ROOT, 'src'))

  it('no source file is over 500 lines ', () => {
    const long = files
      .map(f => [relative(REPO_ROOT, f), readFileSync(f, 'utf8').split('\n').length] as const)
      .filter(([, n]) => n > MAX_FILE_LINES)
    expect(long).toEqual([])
  })

  it('no function is over 60 lines of its own ', () => {
    const long = files.flatMap(f =>
      functionSizes(f, readFileSync(f, 'utf8'))
        .filter(s => s.lines > MAX_FUNCTION_LINES)
        .map(s => `${relative(REPO_ROOT, f)}: ${s.name} (${s.lines} lines)`)
    )
    expect(long).toEqual([])
  })

  it('main.ts reads like the run, in well under 150 lines', () => {
    expect(readFileSync(join(REPO_ROOT, 'src', 'main.ts'), 'utf8').split('\n').length).toBeLessThanOrEqual(MAX_MAIN_LINES)
  })

  it('the measure counts a function without the functions declared inside it', () => {
    const text = ['function outer() {', '  const a = 1', '  function inner() {', '    return 2', '  }', '  return a', '}'].join('\n')
    expect(functionSizes('x.ts', text)).toEqual([
      { name: 'inner', lines: 3 },
      { name: 'outer', lines: 4 }
    ])
  })
})
