// The code stays a house others can live in: no source file over 500 lines, no
// function over 60 lines counting its whole body (callbacks, IIFEs and nested
// functions included: closures do not make a long function short), main.ts
// well under 150 lines, and no import cycle in src/ (type-only imports count:
// they tie the files together for a reader just the same).
import { describe, expect, it } from '@jest/globals'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
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
  ts.isGetAccessor(n) ||
  ts.isSetAccessor(n)

/** A function's name: its own, else the variable or property it is assigned to, else where it starts. */
function nameOf(fn: ts.FunctionLikeDeclaration, sf: ts.SourceFile): string {
  if (fn.name && (ts.isIdentifier(fn.name) || ts.isPrivateIdentifier(fn.name))) return fn.name.text
  if (ts.isConstructorDeclaration(fn)) return 'constructor'
  const parent = fn.parent
  if (
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
    ts.isIdentifier(parent.name)
  )
    return parent.name.text
  return `(anonymous at line ${sf.getLineAndCharacterOfPosition(fn.getStart(sf)).line + 1})`
}

/** Each function's whole span in lines, the functions nested in it included. */
export function functionSizes(file: string, text: string): Array<{ name: string; lines: number }> {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line
  const out: Array<{ name: string; lines: number }> = []
  const visit = (node: ts.Node): void => {
    if (isFunction(node)) out.push({ name: nameOf(node, sf), lines: lineOf(node.getEnd()) - lineOf(node.getStart(sf)) + 1 })
    node.forEachChild(visit)
  }
  visit(sf)
  return out
}

/** The files under src/ that `file` imports or re-exports, type-only imports included. */
export function importsOf(file: string, text: string, exists: (path: string) => boolean): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const specifiers: string[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      specifiers.push(node.moduleSpecifier.text)
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal))
      specifiers.push(node.argument.literal.text)
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(node.arguments[0]))
      specifiers.push(node.arguments[0].text)
    node.forEachChild(visit)
  }
  visit(sf)
  return specifiers
    .filter(s => s.startsWith('.'))
    .flatMap(s => {
      const base = resolve(dirname(file), s.replace(/\.js$/, ''))
      return [`${base}.ts`, join(base, 'index.ts')].filter(exists).slice(0, 1)
    })
}

/** The strongly connected components of more than one file (or a file importing itself): Tarjan's algorithm. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const connect = (v: string): void => {
    index.set(v, counter)
    low.set(v, counter++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort())
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v)
  return cycles
}

/** One path around a cycle, from its first file back to it, and the component's other files, for the message. */
function walkOf(component: string[], graph: Map<string, string[]>): string[] {
  const inside = new Set(component)
  const start = component[0]
  const seen = new Map<string, string>()
  const queue = [start]
  while (queue.length) {
    const v = queue.shift()!
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue
      if (w === start) {
        const path = [start]
        for (let x: string | undefined = v; x !== undefined && x !== start; x = seen.get(x)) path.splice(1, 0, x)
        return [...path, start]
      }
      if (!seen.has(w)) {
        seen.set(w, v)
        queue.push(w)
      }
    }
  }
  return component
}

describe('the house', () => {
  const files = sources(join(REPO_ROOT, 'src'))
  const known = new Set(files)

  it('no source file is over 500 lines', () => {
    const long = files
      .map(f => [relative(REPO_ROOT, f), readFileSync(f, 'utf8').split('\n').length] as const)
      .filter(([, n]) => n > MAX_FILE_LINES)
    expect(long).toEqual([])
  })

  it('no function is over 60 lines, counting its whole body', () => {
    const sizes = files.flatMap(f =>
      functionSizes(f, readFileSync(f, 'utf8')).map(s => ({ key: `${relative(REPO_ROOT, f)}: ${s.name}`, lines: s.lines }))
    )
    const long = sizes.filter(s => s.lines > MAX_FUNCTION_LINES)
    expect(long.map(s => `${s.key} (${s.lines} lines)`)).toEqual([])
  })

  it('main.ts reads like the run, in well under 150 lines', () => {
    expect(readFileSync(join(REPO_ROOT, 'src', 'main.ts'), 'utf8').split('\n').length).toBeLessThanOrEqual(MAX_MAIN_LINES)
  })

  it('no import cycle in src/, type-only imports included', () => {
    const graph = new Map(files.map(f => [f, importsOf(f, readFileSync(f, 'utf8'), p => known.has(p))]))
    const name = (f: string) => relative(join(REPO_ROOT, 'src'), f)
    const cycles = importCycles(graph).map(c => {
      const walk = walkOf(c, graph)
      const others = c.filter(f => !walk.includes(f))
      return walk.map(name).join(' → ') + (others.length ? ` (and through ${others.map(name).join(', ')})` : '')
    })
    expect(cycles).toEqual([])
  })

  it('the measure counts a function with the functions declared inside it', () => {
    const text = ['function outer() {', '  const a = 1', '  const inner = () => {', '    return 2', '  }', '  return a', '}'].join('\n')
    expect(functionSizes('x.ts', text)).toEqual([
      { name: 'outer', lines: 7 },
      { name: 'inner', lines: 3 }
    ])
  })

  it('the cycle check sees type-only imports and reports each cycle once', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['e']],
      ['e', ['d']],
      ['f', ['a']]
    ])
    expect(importCycles(graph)).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e']
    ])
    const text = "import type { X } from './x'\nexport type { Y } from './y'\ntype Z = import('./z').Z\nconst w = () => import('./w.js')"
    const found = importsOf('/s/a.ts', text, p => ['/s/x.ts', '/s/y/index.ts', '/s/z.ts', '/s/w.ts'].includes(p))
    expect(found.sort()).toEqual(['/s/w.ts', '/s/x.ts', '/s/y/index.ts', '/s/z.ts'])
  })
})
