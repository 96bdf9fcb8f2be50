// src/actions-core.ts writes what @actions/core would, without loading @actions/core (and its HTTP
// client): the job summary is checked here byte for byte against the real package.
import { afterAll, describe, expect, it } from '@jest/globals'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { summary } from '@actions/core'
import { overwriteSummary } from '../src/actions-core'

/** A new core.summary: the package's own caches the first file it wrote to. */
const coreSummary = () => new (summary.constructor as new () => typeof summary)()
const dir = mkdtempSync(join(tmpdir(), 'actions-core-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function withSummaryFile<T>(file: string, f: () => Promise<T>): Promise<T> {
  const before = process.env.GITHUB_STEP_SUMMARY
  process.env.GITHUB_STEP_SUMMARY = file
  try {
    return await f()
  } finally {
    if (before === undefined) delete process.env.GITHUB_STEP_SUMMARY
    else process.env.GITHUB_STEP_SUMMARY = before
  }
}

describe('overwriteSummary', () => {
  it('replaces what the step wrote before with the same bytes as core.coreSummary().addRaw(text, true).write({ overwrite: true })', async () => {
    const text = '## Report\n\n| a | b |\n| - | - |\n| ü | `x` |'
    const ours = join(dir, 'ours')
    const theirs = join(dir, 'theirs')
    for (const f of [ours, theirs]) writeFileSync(f, 'an earlier summary of this step\n')
    await withSummaryFile(ours, () => overwriteSummary(text))
    await withSummaryFile(theirs, () => coreSummary().addRaw(text, true).write({ overwrite: true }))
    expect(readFileSync(ours, 'utf8')).toBe(readFileSync(theirs, 'utf8'))
    expect(readFileSync(ours, 'utf8')).toBe(`${text}\n`)
  })

  it('fails as @actions/core does when the file is not there to write, or no file is given', async () => {
    const missing = join(dir, 'missing')
    await expect(withSummaryFile(missing, () => overwriteSummary('x'))).rejects.toThrow(`Unable to access summary file: '${missing}'`)
    await expect(withSummaryFile(missing, () => coreSummary().addRaw('x', true).write({ overwrite: true }))).rejects.toThrow(
      `Unable to access summary file: '${missing}'`
    )
    const before = process.env.GITHUB_STEP_SUMMARY
    delete process.env.GITHUB_STEP_SUMMARY
    try {
      await expect(overwriteSummary('x')).rejects.toThrow('$GITHUB_STEP_SUMMARY')
    } finally {
      if (before !== undefined) process.env.GITHUB_STEP_SUMMARY = before
    }
  })

  // root may write any file: shown by the non-root pass of .ci/run
  ;(process.getuid?.() === 0 ? it.skip : it)('writes nothing into a file it may not write', async () => {
    const locked = join(dir, 'locked')
    writeFileSync(locked, 'kept\n')
    chmodSync(locked, 0o444)
    await expect(withSummaryFile(locked, () => overwriteSummary('x'))).rejects.toThrow('Unable to access summary file')
    expect(readFileSync(locked, 'utf8')).toBe('kept\n')
  })
})
