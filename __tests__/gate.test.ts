// Who may start a run: writers, people named in allowed-users, and nobody when in doubt.
// The look-up is exercised both as a plain function and through the real Octokit
// against the fake GitHub API (role_name as GitHub reports it).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mayStart, isBot, type PermissionLookup } from '../src/gate'
import { getOctokit } from '@actions/github'
import { permissionOf } from '../src/github/permission'
import type { Person } from '../src/trigger'
import { startFakeGitHub, type FakeGitHub } from './helpers/fake-github'

const user = (login: string): Person => ({ login, type: 'User' })
const bot = (login: string): Person => ({ login, type: 'Bot' })

/** A lookup from a table; logins not in it throw like a 404 would. Records who was asked. */
function table(roles: Record<string, string>): PermissionLookup & { asked: string[] } {
  const asked: string[] = []
  const fn = async (login: string) => {
    asked.push(login)
    if (!(login in roles)) throw new Error('Not Found')
    return roles[login]
  }
  return Object.assign(fn, { asked })
}

describe('mayStart with a lookup', () => {
  it.each(['admin', 'maintain', 'write'])('%s is allowed', async role => {
    const r = await mayStart([user('alice')], { allowedUsers: [] }, table({ alice: role }))
    expect(r.allowed).toBe(true)
    expect(r.reason).toMatch(/alice/)
  })

  it.each(['triage', 'read', 'none', ''])('%j is refused, with the reason naming the user and permission', async role => {
    const r = await mayStart([user('alice')], { allowedUsers: [] }, table({ alice: role }))
    expect(r.allowed).toBe(false)
    expect(r.reason).toMatch(/alice/)
    expect(r.reason).toMatch(/admin, maintain or write/)
  })

  it('a failing lookup (404, API down) refuses: fail closed', async () => {
    const r = await mayStart([user('ghost')], { allowedUsers: [] }, table({}))
    expect(r.allowed).toBe(false)
    expect(r.reason).toMatch(/could not read the repository permission of ghost/)
  })

  it('a named user is allowed without a lookup, case-insensitively', async () => {
    const lookup = table({})
    expect((await mayStart([user('Alice')], { allowedUsers: ['alice'] }, lookup)).allowed).toBe(true)
    expect(lookup.asked).toEqual([])
  })

  it('a bot is refused unless named, even when it has write access', async () => {
    const lookup = table({ 'renovate[bot]': 'write', 'github-actions[bot]': 'admin' })
    expect((await mayStart([bot('renovate[bot]')], { allowedUsers: [] }, lookup)).allowed).toBe(false)
    // a "[bot]" login is a bot even when the type says User
    const r = await mayStart([user('github-actions[bot]')], { allowedUsers: [] }, lookup)
    expect(r.allowed).toBe(false)
    expect(r.reason).toMatch(/is a bot/)
    expect((await mayStart([bot('renovate[bot]')], { allowedUsers: ['renovate[bot]'] }, lookup)).allowed).toBe(true)
    expect(isBot(bot('x'))).toBe(true)
    expect(isBot(user('dependabot[bot]'))).toBe(true)
    expect(isBot(user('botanist'))).toBe(false)
  })

  it('"*" allows anyone without a lookup, but not an unnamed bot', async () => {
    const lookup = table({})
    expect((await mayStart([user('stranger')], { allowedUsers: ['*'] }, lookup)).allowed).toBe(true)
    expect(lookup.asked).toEqual([])
    expect((await mayStart([bot('evil[bot]')], { allowedUsers: ['*'] }, lookup)).allowed).toBe(false)
  })

  it('both author and sender are checked: one refused refuses the run', async () => {
    const lookup = table({ alice: 'write', mallory: 'read' })
    expect((await mayStart([user('alice'), user('mallory')], { allowedUsers: [] }, lookup)).allowed).toBe(false)
    expect((await mayStart([user('mallory'), user('alice')], { allowedUsers: [] }, lookup)).allowed).toBe(false)
    expect((await mayStart([user('alice'), user('mallory')], { allowedUsers: ['mallory'] }, lookup)).allowed).toBe(true)
    const both = table({ alice: 'write', bob: 'maintain' })
    expect((await mayStart([user('alice'), user('bob')], { allowedUsers: [] }, both)).allowed).toBe(true)
    expect(both.asked).toEqual(['alice', 'bob'])
  })

  it('nobody to check (schedule) is allowed', async () => {
    expect((await mayStart([], { allowedUsers: [] }, table({}))).allowed).toBe(true)
  })
})

describe('mayStart through the real Octokit and the fake GitHub API', () => {
  let gh: FakeGitHub
  const repo = { owner: 'Codertocat', repo: 'Hello-World' }
  beforeAll(async () => {
    gh = await startFakeGitHub({
      permissions: { admin1: 'admin', maint: 'maintain', writer: 'write', triager: 'triage', reader: 'read', nobody: 'none' }
    })
  })
  afterAll(async () => {
    await gh.close()
  })

  const check = async (login: string) => {
    // the same look-up main.ts does (role_name, else the legacy permission), without the retry plugin
    const octokit = getOctokit('ghs_test_token_0000000000000000000000', { baseUrl: gh.url })
    return mayStart([user(login)], { allowedUsers: [] }, l => permissionOf(octokit, repo, l))
  }

  it.each([
    ['admin1', true],
    ['maint', true],
    ['writer', true],
    ['triager', false],
    ['reader', false],
    ['nobody', false],
    ['stranger', false]
  ])('%s -> allowed %s', async (login, allowed) => {
    expect((await check(login)).allowed).toBe(allowed)
  })

  it('a 500 from the permission endpoint refuses', async () => {
    gh.fail('GET', /\/collaborators\/writer\/permission$/, 500)
    const r = await check('writer')
    expect(r.allowed).toBe(false)
    expect(r.reason).toMatch(/could not read the repository permission of writer/)
  })
})
