// The report's Network part: counts, at most 20 hosts of each kind, the lines that would allow refusals, and host names inert.
import { describe, expect, test } from '@jest/globals'
import { renderNetwork } from '../src/report/render'

describe('renderNetwork', () => {
  test('not contained: one line', () => {
    expect(renderNetwork({ contained: false, why: 'sandbox: none' })).toBe(
      "**Network:** not contained (sandbox: none): the commands had the runner's network, unfiltered."
    )
  })
  test('at most 20 hosts each, then "and N more"; refusals with the allowed-domains lines', () => {
    const refused = Array.from({ length: 25 }, (_, i) => ({
      host: `h${i}.example`,
      count: 25 - i,
      line: `h${i}.example`,
      why: 'not in allowed-domains'
    }))
    const out = renderNetwork({
      contained: true,
      reached: [{ host: 'registry.npmjs.org', count: 3 }],
      refused,
      otherReached: 0,
      otherRefused: 7
    })
    expect(out).toContain('Reached: `registry.npmjs.org` (3 times).')
    expect(out).toContain('`h19.example` (6 times), and 6 more (7 times beyond the hosts counted).')
    expect(out).not.toContain('`h20.example`')
    expect(out).toContain('```text\nh0.example\nh1.example')
  })
  test('host names are inert: no links, mentions or markup', () => {
    const out = renderNetwork({
      contained: true,
      reached: [],
      refused: [{ host: '@octocat](https://evil.example)<b>x</b>`', count: 1, line: 'evil.example', why: 'x' }],
      otherReached: 0,
      otherRefused: 0
    })
    expect(out).not.toContain('@octocat')
    expect(out).toContain('@\u200boctocat')
    // in a code span: the link and the tag are shown, not made
    expect(out).toContain('`` @\u200boctocat](https://evil.example)<b>x</b>` ``')
  })
  test('closed without a proxy: says why', () => {
    expect(
      renderNetwork({ contained: true, problem: 'ip (iproute2) was not found', reached: [], refused: [], otherReached: 0, otherRefused: 0 })
    ).toContain('**Network:** closed: ip (iproute2) was not found.')
  })
  test('a refused host of a preset is named with the preset, and the line to add is its one word', () => {
    const out = renderNetwork({
      contained: true,
      reached: [],
      refused: [{ host: 'registry.npmjs.org', count: 2, line: 'npm', why: 'not in allowed-domains', preset: 'npm' }],
      otherReached: 0,
      otherRefused: 0
    })
    expect(out).toContain('Refused: `registry.npmjs.org` (2 times, a host of the preset `npm`).')
    expect(out).toContain('```text\nnpm\n```')
  })
})
