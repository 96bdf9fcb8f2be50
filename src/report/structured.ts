// The report's Structured output part (with output-schema): the JSON in a collapsed block, or
// why there is none and what was wrong with the answer. The JSON and the errors are agent
// text: shown inert, in code blocks nothing inside can close.
import { inert } from './inert'
import type { StructuredResult } from '../types'

/** Why a run has no structured output, by how it ended. */
const WHY: Record<string, string> = {
  'invalid-output': 'the final answer did not match output-schema (after the one correction turn allowed, or with no turn left for it)',
  max_turns: 'the run stopped at the turn limit (max-turns) before a valid final answer',
  timeout: 'the run stopped at the time limit (timeout-minutes) before a valid final answer',
  budget: 'the run stopped at the cost limit (max-cost-usd) before a valid final answer',
  cancelled: 'the run was cancelled before a valid final answer',
  error: 'the run failed before a valid final answer',
  refusal: 'the model declined to answer',
  model_context_window_exceeded: "the conversation outgrew the model's context window before a final answer"
}

/** The Structured output part within about `maxChars` characters; empty without output-schema. */
export function renderStructured(s: StructuredResult | undefined, exitReason: string, maxChars: number): string {
  if (!s) return ''
  const parts: string[] = []
  if (s.unsupported) {
    parts.push(
      `**Structured output:** this model endpoint does not support structured outputs (it refused \`output_config.format\`: ${inert.inline(s.unsupported)}); the answer was checked by the action alone.`
    )
  }
  if (s.json !== undefined) {
    parts.push(shownJson(s.json, maxChars))
  } else {
    parts.push(
      `**Structured output:** none, \`structured-output\` is empty: ${WHY[exitReason] ?? 'the run ended without a valid final answer'}.`
    )
    if (s.errors?.length) parts.push(`What was wrong with the last answer checked:\n\n${inert.code(s.errors.join('\n'), 'text')}`)
  }
  return parts.join('\n\n')
}

/** The JSON in a collapsed block, exactly as the output holds it; its head when it does not fit (the output and the job summary hold it whole). */
function shownJson(json: string, maxChars: number): string {
  const bytes = Buffer.byteLength(json, 'utf8')
  const room = Math.max(200, maxChars - 400)
  const shown =
    json.length > room
      ? `${json.slice(0, room)}\n[... ${json.length - room} characters cut here; the output structured-output and the job summary hold it whole ...]`
      : json
  const summary = `Structured output (${bytes} bytes, valid against output-schema; the output <code>structured-output</code>)`
  return `<details><summary>${summary}</summary>\n\n${inert.code(shown, 'json')}\n</details>`
}
