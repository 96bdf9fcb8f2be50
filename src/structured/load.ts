// The validator of the run's schema, compiled once: at start (a bad schema fails the step
// before any model request) and handed to the loop from there. Ajv is a chunk of its own in
// dist/, read only by runs that set output-schema.
import type { JsonSchema } from './schema'
import type { Validate } from './validator'

let compiled: { text: string; validate: Validate } | undefined

/** The schema's validator; rejects with an Error completing "Input output-schema …" when it is no valid JSON Schema. */
export async function loadValidator(schema: JsonSchema): Promise<Validate> {
  const text = JSON.stringify(schema)
  if (compiled?.text === text) return compiled.validate
  const { compileSchema } = await import('./validator')
  compiled = { text, validate: compileSchema(schema) }
  return compiled.validate
}
