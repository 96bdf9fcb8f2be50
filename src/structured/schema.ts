// The output-schema input, read at start: JSON text of at most 64 KiB whose top level is an
// object schema. Whether it is a valid JSON Schema is asked of the validator (validator.ts),
// loaded only when the input is set (load.ts).
export const MAX_SCHEMA_BYTES = 64 * 1024

/** A schema's JSON as an object (what `output_config.format.schema` carries). */
export type JsonSchema = Record<string, unknown>

/**
 * The schema in `text`, undefined when `text` is empty. Throws an Error whose message
 * completes "Input output-schema …" with what is wrong.
 *
 * An object schema: the top level must be an object with `"type": "object"` (the API
 * constrains an object at the top, and `fromJSON(...).field` in a workflow needs one).
 */
export function parseOutputSchema(text: string): JsonSchema | undefined {
  if (text.trim() === '') return undefined
  const bytes = Buffer.byteLength(text, 'utf8')
  if (bytes > MAX_SCHEMA_BYTES) throw new Error(`must be at most 64 KiB (${MAX_SCHEMA_BYTES} bytes), got ${bytes} bytes`)
  let schema: unknown
  try {
    schema = JSON.parse(text)
  } catch (error) {
    throw new Error(
      `must be a JSON Schema written as JSON (in a workflow, a YAML block scalar: \`output-schema: |\`), but it is not JSON: ${(error as Error).message}`
    )
  }
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw new Error(`must be an object schema (a JSON object with "type": "object"), got ${kindOf(schema)}`)
  }
  const type = (schema as JsonSchema).type
  if (type !== 'object') {
    throw new Error(
      `must be an object schema: its top level needs "type": "object", got ${type === undefined ? 'no type' : JSON.stringify(type)}`
    )
  }
  return schema as JsonSchema
}

const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`)
