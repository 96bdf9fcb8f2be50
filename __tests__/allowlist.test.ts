// The allowed-domains input: what it accepts, what it refuses, and what a host matches.
import { describe, expect, test } from '@jest/globals'
import { forbiddenAddress, hostOf, ipListed, isAllowed, lineFor, parseAllowedDomains, entryText } from '../src/network/allowlist'
import { readSettings, SettingsError } from '../src/settings'
import { expandPresets, parseAllowedInput, PRESETS } from '../src/network/presets'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from './helpers/run-action'

const env = (over: Record<string, string>) => ({ 'INPUT_ANTHROPIC-API-KEY': 'k', ...over })

describe('allowed-domains', () => {
  test('names, wildcards and IP literals, on lines or comma-separated, normalised', () => {
    const e = parseAllowedDomains('Example.COM.\n*.npmjs.org, 127.0.0.1\n[::1]\n\n2001:DB8::0:1')
    expect(e.map(entryText)).toEqual(['example.com', '*.npmjs.org', '127.0.0.1', '::1', '2001:db8::1'])
  })
  test.each([
    ['https://example.com', 'scheme'],
    ['example.com/path', 'path'],
    ['example.com:443', 'port'],
    ['[::1]:80', 'port'],
    ['exa mple.com', 'spaces'],
    ['*', 'not a host'],
    ['a.*.com', 'not a host'],
    ['127.1', 'not a host'],
    ['user@example.com', 'not a host'],
    ['<b>x</b>', 'path'],
    ['*.com', 'not a host'],
    ['npmm', 'not a preset (the presets: github, npm, pypi, go, crates, rubygems, maven, gradle, debian, ubuntu)']
  ])('refuses %s (%s), in one line naming the input', (bad, why) => {
    expect(() => parseAllowedInput(bad)).toThrow(why)
    let err: unknown
    try {
      readSettings(env({ 'INPUT_ALLOWED-DOMAINS': `ok.example\n${bad}` }))
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(SettingsError)
    expect((err as Error).message).toMatch(/^Input allowed-domains /)
    expect((err as Error).message).not.toContain('\n')
  })
  test('network: allowlist by default, open allowed, anything else refused', () => {
    expect(readSettings(env({})).network).toBe('allowlist')
    expect(readSettings(env({})).allowedDomains).toEqual([])
    expect(readSettings(env({ INPUT_NETWORK: 'open' })).network).toBe('open')
    expect(() => readSettings(env({ INPUT_NETWORK: 'none' }))).toThrow(/^Input network must be/)
  })
  test('matching: a name is itself, a wildcard its subdomains only, an IP only itself', () => {
    const e = parseAllowedDomains('example.com,*.npmjs.org,10.0.0.1')
    const ok = (h: string) => isAllowed(e, hostOf(h) as { name: string })
    expect(ok('EXAMPLE.com.')).toBe(true)
    expect(ok('www.example.com')).toBe(false)
    expect(ok('registry.npmjs.org')).toBe(true)
    expect(ok('npmjs.org')).toBe(false)
    expect(ok('evilnpmjs.org')).toBe(false)
    expect(ok('10.0.0.1')).toBe(true)
    expect(ok('[::ffff:10.0.0.1]')).toBe(false)
    expect(hostOf('a b')).toBeUndefined()
    expect(lineFor(hostOf('[2001:DB8::1]') as { ip: string })).toBe('2001:db8::1')
  })
  test("the runner's own addresses are forbidden, in every spelling", () => {
    const own = new Set(['10.1.2.3'])
    for (const ip of [
      '127.0.0.1',
      '127.5.6.7',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '169.254.169.254',
      'fe80::1',
      '0.0.0.0',
      '::',
      '10.1.2.3'
    ])
      expect([ip, forbiddenAddress(ip, own)]).toEqual([ip, expect.any(String)])
    for (const ip of ['93.184.216.34', '2606:4700::1', '10.1.2.4']) expect(forbiddenAddress(ip, own)).toBeUndefined()
  })

  test("an address resolving to a mapped IPv6 form of the runner's own address is forbidden; an entry naming it in either form allows it", () => {
    const own = new Set(['10.1.2.3', 'fd00::5'])
    for (const ip of ['::ffff:10.1.2.3', '::ffff:a01:203', '::FFFF:0A01:0203', 'fd00:0::5'])
      expect([ip, forbiddenAddress(ip, own)]).toEqual([ip, "one of the runner's own addresses"])
    expect(forbiddenAddress('::ffff:10.1.2.4', own)).toBeUndefined()
    expect(ipListed(parseAllowedDomains('127.0.0.1'), '::ffff:7f00:1')).toBe(true)
    expect(ipListed(parseAllowedDomains('::ffff:127.0.0.1'), '127.0.0.1')).toBe(true)
    expect(ipListed(parseAllowedDomains('127.0.0.2'), '::ffff:127.0.0.1')).toBe(false)
  })
})

describe('presets', () => {
  test('a preset is one word, kept as written and expanded to host entries for the proxy', () => {
    const entries = parseAllowedInput('NPM, pypi\nexample.com\nlocalhost\nnpm')
    expect(entries).toEqual(['npm', 'pypi', 'example.com', 'localhost'])
    expect(readSettings(env({ 'INPUT_ALLOWED-DOMAINS': 'npm\npypi' })).allowedDomains).toEqual(['npm', 'pypi'])
    const hosts = expandPresets(entries)
    expect(hosts).toEqual(expect.arrayContaining(['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org', 'example.com']))
    expect(hosts).not.toContain('npm')
    // what the proxy gets parses as plain entries
    expect(() => parseAllowedDomains(hosts.join('\n'))).not.toThrow()
  })
  test('the required presets exist; every host is a plain entry; no wildcard wider than a domain of the ecosystem', () => {
    for (const name of ['github', 'npm', 'pypi', 'go', 'crates', 'rubygems', 'maven', 'debian', 'ubuntu'])
      expect(PRESETS[name]?.length).toBeGreaterThan(0)
    for (const [name, hosts] of Object.entries(PRESETS))
      for (const h of hosts) {
        const e = parseAllowedDomains(h)
        expect([name, h, e[0].kind]).toEqual([name, h, h.startsWith('*.') ? 'wildcard' : 'name'])
        // a wildcard sits under a name of at least three labels (*.archive.ubuntu.com, not *.ubuntu.com)
        if (h.startsWith('*.')) expect(h.split('.').length).toBeGreaterThanOrEqual(4)
      }
  })
})

describe('docs/network.md', () => {
  test('lists every preset with exactly its hosts', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'network.md'), 'utf8')
    for (const [name, hosts] of Object.entries(PRESETS)) {
      const cells = doc
        .split('\n')
        .map(l => l.split('|').map(c => c.trim()))
        .find(c => c[1] === `\`${name}\``)
      expect([name, cells?.[2]]).toEqual([name, hosts.map(h => `\`${h}\``).join(', ')])
    }
  })
})
