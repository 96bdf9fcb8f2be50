// Module hooks that let plain Node 20 import the project's TypeScript (the test helpers and a few
// src modules) without a build step: `.ts` files are transpiled on load with the TypeScript
// compiler the project already has (types are dropped, nothing is checked), and extensionless
// relative imports (`./output`, as `moduleResolution: bundler` allows) resolve to `.ts` files.
// Registered by bench/run.mjs with module.register().
import { readFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

export async function resolve(specifier, context, next) {
  const fromTs = context.parentURL?.endsWith('.ts')
  if (fromTs && (specifier.startsWith('./') || specifier.startsWith('../')) && !/\.[cm]?[jt]s$/.test(specifier)) {
    for (const suffix of ['.ts', '/index.ts']) {
      const url = new URL(specifier + suffix, context.parentURL)
      if (existsSync(fileURLToPath(url))) return { url: url.href, shortCircuit: true, format: 'module' }
    }
  }
  return next(specifier, context)
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context)
  const source = await readFile(fileURLToPath(url), 'utf8')
  const out = ts.transpileModule(source, {
    fileName: fileURLToPath(url),
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      isolatedModules: true,
      verbatimModuleSyntax: false,
      sourceMap: false
    }
  })
  return { format: 'module', source: out.outputText, shortCircuit: true }
}
