// The validator's errors as lines that say exactly what is wrong and where: the model reads
// them in its correction turn, the user in the report. Values quoted here come from the
// redacted answer (or the schema), and are shortened.
import type { ErrorObject } from 'ajv'

/** At most this many errors are listed; the rest are counted. */
export const MAX_ERRORS = 20
const MAX_VALUE_CHARS = 200

/** One line per error: the instance path (a JSON pointer, `(the top)` for the whole value), what is wrong, and what was there. */
export function describeErrors(errors: readonly ErrorObject[], value: unknown, max = MAX_ERRORS): string[] {
  const lines = errors.slice(0, max).map(e => `${e.instancePath || '(the top)'}: ${whatIsWrong(e, valueAt(value, e.instancePath))}`)
  if (errors.length > max) lines.push(`… and ${errors.length - max} more`)
  return lines
}

function whatIsWrong(e: ErrorObject, found: unknown): string {
  const p = e.params as Record<string, unknown>
  const got = `, got ${show(found)}`
  switch (e.keyword) {
    case 'enum':
      return `must be one of the allowed values ${(p.allowedValues as unknown[]).map(show).join(', ')}${got}`
    case 'const':
      return `must be ${show(p.allowedValue)}${got}`
    case 'type':
      return `must be of type ${String(p.type)}, got ${typeName(found)}`
    case 'required':
      return `must have the property ${show(p.missingProperty)}`
    case 'additionalProperties':
      return `must not have the property ${show(p.additionalProperty)} (additionalProperties is false)`
    default:
      return `${e.message ?? 'is not valid'}${isScalar(found) ? got : ''}`
  }
}

const isScalar = (v: unknown): boolean => v === null || ['string', 'number', 'boolean'].includes(typeof v)

const typeName = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)

/** JSON text of `v`, cut to a readable length. */
function show(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v)
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}…` : s
}

/** The value a JSON pointer (`/a/0/b`, `~1` for `/`, `~0` for `~`) points at in `root`. */
function valueAt(root: unknown, pointer: string): unknown {
  let v = root
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined
    v = (v as Record<string, unknown>)[key]
  }
  return v
}
