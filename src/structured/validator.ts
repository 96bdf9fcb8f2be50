// The JSON Schema validator: Ajv 8, draft 2020-12 (the default) or draft-07, chosen by the
// schema's `$schema`, with the formats of ajv-formats. This file is loaded on demand (a chunk of
// its own in dist/): a run without output-schema never reads Ajv.
import Ajv2020 from 'ajv/dist/2020'
import Ajv07, { type Options, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { describeErrors } from './errors'

/** Checks one value; returns what is wrong with it, one line each (empty when it is valid). */
export type Validate = (value: unknown) => string[]

const DRAFT_2020 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/

const OPTIONS: Options = {
  allErrors: true,
  // Unknown keywords (a typo such as `requried`, which would quietly allow anything) and
  // unknown formats are errors at start; the type and tuple hints Ajv would print are not.
  strictSchema: true,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  logger: false
}

/** The draft a `$schema` names, or a sentence saying it is not one this action reads. */
export function draftOf(schema: Record<string, unknown>): '2020-12' | '07' | string {
  const named = schema.$schema
  if (named === undefined) return '2020-12'
  if (typeof named === 'string' && DRAFT_2020.test(named)) return '2020-12'
  if (typeof named === 'string' && DRAFT_07.test(named)) return '07'
  return `its $schema must name draft 2020-12 (https://json-schema.org/draft/2020-12/schema) or draft-07 (http://json-schema.org/draft-07/schema), or be left out (2020-12), got ${JSON.stringify(named)}`
}

/**
 * The schema compiled, or an Error whose message says why it is no JSON Schema (as the
 * meta-schema or Ajv's strict mode found it).
 */
export function compileSchema(schema: Record<string, unknown>): Validate {
  const draft = draftOf(schema)
  if (draft !== '2020-12' && draft !== '07') throw new Error(draft)
  const ajv = draft === '07' ? new Ajv07(OPTIONS) : new Ajv2020(OPTIONS)
  addFormats(ajv)
  if (!ajv.validateSchema(schema))
    throw new Error(`it is not a valid JSON Schema (draft ${draft}): ${describeErrors(ajv.errors ?? [], schema, 3).join('; ')}`)
  let validate: ValidateFunction
  try {
    validate = ajv.compile(schema)
  } catch (error) {
    throw new Error(`it is not a valid JSON Schema (draft ${draft}): ${(error as Error).message}`)
  }
  return value => (validate(value) ? [] : describeErrors(validate.errors ?? [], value))
}
