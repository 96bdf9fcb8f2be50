// The final answer as data: redacted first, then parsed, then checked against the schema.
// What passes is set as the output `structured-output`; what does not gets the model one
// correction turn whose text says exactly what is wrong.
import type { JsonSchema } from './schema'
import type { Validate } from './validator'

/** The most a structured output may hold (UTF-8 bytes of the answer); a larger one is invalid, never cut. */
export const MAX_ANSWER_BYTES = 256 * 1024

export type AnswerCheck = { ok: true; json: string } | { ok: false; errors: string[] }

const invalid = (error: string): AnswerCheck => ({ ok: false, errors: [error] })

/**
 * `text` (the final answer) redacted, parsed and validated. The compact JSON is redacted
 * again and parsed again before it is checked: a secret written with JSON escapes
 * (`"\u0067hp_…"`) only shows once parsed, and what is set must be what was checked.
 */
export function checkAnswer(text: string, redact: (s: string) => string, validate: Validate): AnswerCheck {
  const redacted = redact(text)
  if (redacted.trim() === '') return invalid('(the top): the final answer was empty; it must be a JSON value matching the schema')
  const bytes = Buffer.byteLength(redacted, 'utf8')
  if (bytes > MAX_ANSWER_BYTES) {
    return invalid(
      `(the top): the answer is ${bytes} bytes, more than the ${MAX_ANSWER_BYTES} bytes (256 KiB) a structured output may hold`
    )
  }
  let value: unknown
  try {
    value = JSON.parse(redacted)
  } catch (error) {
    return invalid(
      `(the top): the answer is not JSON (${(error as Error).message}); it must be only the JSON value, no other text and no code fence`
    )
  }
  const json = redact(JSON.stringify(value))
  try {
    value = JSON.parse(json)
  } catch {
    return invalid('(the top): the answer is not JSON once a secret in it is redacted; leave secrets out of the answer')
  }
  const errors = validate(value)
  return errors.length ? { ok: false, errors } : { ok: true, json }
}

/** The user message of the correction turn: what is wrong, and (when the endpoint does not take the schema) the schema itself. */
export function correctionText(errors: string[], schema?: JsonSchema): string {
  const lines = [
    'Your final answer does not match the output schema, so it cannot be used:',
    ...errors.map(e => `- ${e}`),
    '',
    'Reply again with only the corrected JSON value (no other text, no code fence). You may run commands first if you need to check something.'
  ]
  if (schema) lines.push('', 'The schema:', JSON.stringify(schema))
  return lines.join('\n')
}

/** A system prompt for an endpoint that refused output_config.format: the schema the answer must match, in words. */
export function systemWithSchema(system: string, schema: JsonSchema): string {
  return `${system}\n\nThis endpoint does not enforce the output schema, so keep to it yourself: your final answer (the reply in which you run no command) must be only a JSON value matching this JSON Schema, with no other text and no code fence:\n${JSON.stringify(schema)}`
}

/** An error of the model API saying the endpoint does not take `output_config.format`: a 400 that names it. */
export function refusesFormat(error: unknown): string | undefined {
  const e = error as { status?: unknown; message?: unknown; error?: { error?: { message?: unknown }; message?: unknown } }
  if (e?.status !== 400) return undefined
  const inner = e.error?.error?.message ?? e.error?.message
  const text = typeof inner === 'string' && inner ? inner : String(e.message ?? '')
  // names the format (not only output_config's other field, effort, which asking again without the format would not mend)
  const named = /\bformat\b|output_format/i.test(text) || (/output_config/i.test(text) && !/effort/i.test(text))
  return named ? (text.length > 300 ? `${text.slice(0, 300)}…` : text) : undefined
}
