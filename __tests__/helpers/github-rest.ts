// GitHub's own published REST description (@octokit/openapi, the api.github.com
// description), as the fake GitHub checks every request against it: the route
// and method exist, the path and query parameters and the JSON body validate
// against the operation (Ajv, a real JSON Schema validator), and a write made
// with an installation token (the job's GITHUB_TOKEN, ghs_…) goes to an
// operation enabled for GitHub Apps. A fake that accepted what GitHub refuses
// would let a test pass on a call that fails on every real run.
//
// The description is 13 MB: the operations are extracted once (their $refs
// resolved) into node_modules/.cache/github-rest/<version>.json, written whole
// then renamed (another jest worker may read it meanwhile), and read once per
// test file.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Schema = any

interface Parameter {
  name: string
  in: 'path' | 'query' | 'header' | 'cookie'
  required?: boolean
  schema?: Schema
}

export interface Operation {
  method: string
  /** the path template, e.g. /repos/{owner}/{repo}/issues/{issue_number}/comments */
  path: string
  operationId: string
  parameters: Parameter[]
  /** the application/json request body's schema, and whether a body is required */
  body?: { required: boolean; schema: Schema }
  /** x-github.enabledForGitHubApps (false: an installation token gets 403) */
  enabledForGitHubApps: boolean
}

/** What GitHub would answer to a request the description refuses. */
export interface Refusal {
  status: number
  message: string
  /** the operation the request was matched to, when one was */
  operationId?: string
}

const require = createRequire(import.meta.url)

function openapiPackage(): { dir: string; version: string } {
  const pkg = require.resolve('@octokit/openapi/package.json')
  return { dir: dirname(pkg), version: (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version }
}

/** `#/components/...` references replaced by what they name (a reference inside itself is left as any value). */
function resolve(doc: Schema, value: Schema, seen: string[] = []): Schema {
  if (Array.isArray(value)) return value.map(v => resolve(doc, v, seen))
  if (value === null || typeof value !== 'object') return value
  if (typeof value.$ref === 'string') {
    const ref = value.$ref as string
    if (seen.includes(ref)) return {}
    const target = ref
      .slice(2)
      .split('/')
      .reduce((o: Schema, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc)
    return resolve(doc, target, [...seen, ref])
  }
  const out: Schema = {}
  for (const [k, v] of Object.entries(value)) out[k] = resolve(doc, v, seen)
  return out
}

function extract(): Operation[] {
  const { dir } = openapiPackage()
  const doc = JSON.parse(readFileSync(join(dir, 'generated', 'api.github.com.json'), 'utf8')) as Schema
  const ops: Operation[] = []
  for (const [path, item] of Object.entries(doc.paths as Record<string, Schema>)) {
    const shared = (item.parameters ?? []) as Schema[]
    for (const method of ['get', 'put', 'post', 'delete', 'patch', 'head']) {
      const op = item[method]
      if (!op) continue
      const json = op.requestBody?.content?.['application/json']?.schema
      ops.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        parameters: resolve(doc, [...shared, ...(op.parameters ?? [])]).map((p: Parameter) => ({
          name: p.name,
          in: p.in,
          required: p.required,
          schema: p.schema
        })),
        body: json ? { required: Boolean(op.requestBody.required), schema: resolve(doc, json) } : undefined,
        enabledForGitHubApps: op['x-github']?.enabledForGitHubApps !== false
      })
    }
  }
  return ops
}

let cached: Operation[] | undefined
/** Every operation of the api.github.com description (from the cache file when there is one). */
export function operations(): Operation[] {
  if (cached) return cached
  const { dir, version } = openapiPackage()
  const file = join(dir, '..', '..', '.cache', 'github-rest', `${version}.json`)
  try {
    if (existsSync(file)) return (cached = JSON.parse(readFileSync(file, 'utf8')) as Operation[])
  } catch {
    // written again below
  }
  cached = extract()
  try {
    mkdirSync(dirname(file), { recursive: true })
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify(cached))
    renameSync(tmp, file)
  } catch {
    // read from the description again next time
  }
  return cached
}

const segments = (p: string): string[] => p.split('/').filter(Boolean)

/** The operation GitHub routes `method pathname` to (a literal segment wins over a parameter, as GitHub routes), with its path parameters. */
export function findOperation(method: string, pathname: string): { op: Operation; params: Record<string, string> } | undefined {
  const parts = segments(pathname)
  let best: { op: Operation; params: Record<string, string>; score: string } | undefined
  for (const op of operations()) {
    if (op.method !== method) continue
    const tpl = segments(op.path)
    // a last parameter may hold slashes (a ref such as heads/agent/x, a file path), as GitHub reads them
    const rest = /^\{.+\}$/.test(tpl[tpl.length - 1] ?? '') && parts.length > tpl.length
    if (tpl.length !== parts.length && !rest) continue
    const params: Record<string, string> = {}
    let score = rest ? '' : '2'
    let ok = true
    for (let i = 0; i < tpl.length && ok; i++) {
      const m = /^\{(.+)\}$/.exec(tpl[i])
      const part = i === tpl.length - 1 ? parts.slice(i).join('/') : parts[i]
      if (m) {
        params[m[1]] = decodeURIComponent(part)
        score += '0'
      } else if (tpl[i] === part) score += '1'
      else ok = false
    }
    if (ok && (!best || score > best.score)) best = { op, params, score }
  }
  return best && { op: best.op, params: best.params }
}

/** Whether any method has this path (GitHub answers 404 either way; the message says which). */
const pathExists = (pathname: string): boolean =>
  ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'].some(m => findOperation(m, pathname) !== undefined)

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as (a: Ajv) => Ajv
// formats GitHub invented (repo.nwo, …) are not checked; the standard ones are
const logger = { log: () => undefined, warn: () => undefined, error: console.error }
const ajv = addFormats(new Ajv({ strict: false, allErrors: true, logger }))
// path and query parameters arrive as text: coerced to the schema's type, as GitHub reads them
const ajvParams = addFormats(new Ajv({ strict: false, allErrors: true, coerceTypes: 'array', logger }))
const bodyValidators = new Map<string, ValidateFunction>()
const paramValidators = new Map<string, ValidateFunction>()

function paramsSchema(op: Operation): Schema {
  const ps = op.parameters.filter(p => p.in === 'path' || p.in === 'query')
  return {
    type: 'object',
    properties: Object.fromEntries(ps.map(p => [p.name, p.schema ?? {}])),
    required: ps.filter(p => p.required || p.in === 'path').map(p => p.name),
    additionalProperties: false
  }
}

const errorsText = (v: ValidateFunction): string =>
  (v.errors ?? [])
    .slice(0, 5)
    .map(
      e =>
        `${e.instancePath || '(root)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`
    )
    .join('; ')

/**
 * Why GitHub would refuse this request, as GitHub would answer it, or undefined when the
 * description accepts it. `token`: the bearer token sent (an installation token starts with ghs_).
 */
export function refusal(method: string, pathname: string, query: URLSearchParams, body: unknown, token: string): Refusal | undefined {
  const found = findOperation(method, pathname)
  if (!found) {
    return {
      status: 404,
      message: `${method} ${pathname}: ${pathExists(pathname) ? 'no such method on this route' : 'no such route'} in GitHub's REST description`
    }
  }
  const { op, params } = found
  const at = `${method} ${op.path} (${op.operationId})`
  const values: Record<string, unknown> = { ...params }
  for (const key of new Set(query.keys())) {
    const all = query.getAll(key)
    values[key] = all.length > 1 ? all : all[0]
  }
  let pv = paramValidators.get(at)
  if (!pv) paramValidators.set(at, (pv = ajvParams.compile(paramsSchema(op))))
  if (!pv(values)) {
    const bad = (pv.errors ?? []).some(e => Object.hasOwn(params, e.instancePath.slice(1)))
    return { status: bad ? 404 : 422, message: `${at}: parameters do not validate: ${errorsText(pv)}`, operationId: op.operationId }
  }
  const hasBody = body !== undefined && !(typeof body === 'object' && body !== null && Object.keys(body).length === 0)
  if (op.body) {
    if (op.body.required && body === undefined) return { status: 422, message: `${at}: a body is required`, operationId: op.operationId }
    if (body !== undefined) {
      let bv = bodyValidators.get(at)
      if (!bv) bodyValidators.set(at, (bv = ajv.compile(op.body.schema)))
      if (!bv(body)) return { status: 422, message: `${at}: the body does not validate: ${errorsText(bv)}`, operationId: op.operationId }
    }
  } else if (hasBody && method !== 'GET') {
    return { status: 422, message: `${at}: this operation takes no body`, operationId: op.operationId }
  }
  if (token.startsWith('ghs_') && method !== 'GET' && method !== 'HEAD' && !op.enabledForGitHubApps) {
    return {
      status: 403,
      message: `${at} is not enabled for GitHub Apps: with an installation token (GITHUB_TOKEN) GitHub answers 403 Resource not accessible by integration`,
      operationId: op.operationId
    }
  }
  return undefined
}
