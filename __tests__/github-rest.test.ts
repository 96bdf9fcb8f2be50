// The fake GitHub's judge: GitHub's published REST description refuses what GitHub refuses.
import { describe, expect, test } from '@jest/globals'
import { refusal } from './helpers/github-rest'

const q = (s = '') => new URLSearchParams(s)
const APP = 'ghs_fakeJobToken000000000000000000000000'
const PAT = 'ghp_fakePersonalToken00000000000000000000'

describe("GitHub's REST description", () => {
  test('the review-comment /replies route is not enabled for GitHub Apps: 403 with the job token', () => {
    const path = '/repos/o/r/pulls/3/comments/99/replies'
    expect(refusal('POST', path, q(), { body: 'x' }, APP)).toMatchObject({
      status: 403,
      operationId: 'pulls/create-reply-for-review-comment'
    })
    expect(refusal('POST', path, q(), { body: 'x' }, PAT)).toBeUndefined()
  })
  test('a reply through POST …/pulls/{n}/comments with in_reply_to is accepted for an app', () => {
    const body = { body: 'x', in_reply_to: 99, commit_id: 'a'.repeat(40), path: 'f.txt' }
    expect(refusal('POST', '/repos/o/r/pulls/3/comments', q(), body, APP)).toBeUndefined()
  })
  test('unknown routes and methods are 404; bad bodies, parameters and unknown query parameters 422', () => {
    expect(refusal('POST', '/repos/o/r/nonsense', q(), {}, APP)?.status).toBe(404)
    expect(refusal('PUT', '/repos/o/r/issues/comments/5', q(), { body: 'x' }, APP)?.status).toBe(404)
    expect(refusal('PATCH', '/repos/o/r/issues/comments/5', q(), { body: 5 }, APP)?.status).toBe(422)
    expect(refusal('POST', '/repos/o/r/issues/1/comments', q(), undefined, APP)?.status).toBe(422)
    expect(refusal('POST', '/repos/o/r/issues/comments/5/reactions', q(), { content: 'wave' }, APP)?.status).toBe(422)
    expect(refusal('GET', '/repos/o/r/issues/1/comments', q('per_page=100&page=2'), undefined, APP)).toBeUndefined()
    expect(refusal('GET', '/repos/o/r/issues/1/comments', q('per_page=abc'), undefined, APP)?.status).toBe(422)
    expect(refusal('GET', '/repos/o/r/issues/1/comments', q('bogus=1'), undefined, APP)?.status).toBe(422)
    expect(refusal('GET', '/repos/o/r/issues/x/comments', q(), undefined, APP)?.status).toBe(404)
  })
  test('a literal segment wins over a parameter, as GitHub routes', () => {
    expect(refusal('GET', '/repos/o/r/issues/comments/5', q(), undefined, APP)).toBeUndefined()
    expect(refusal('GET', '/repos/o/r/pulls/comments/5', q(), undefined, APP)).toBeUndefined()
  })
})

describe('the calls the action makes, as it makes them', () => {
  test('a tree entry deleting a file (sha: null) and a draft pull request validate', () => {
    const tree = { base_tree: 'a'.repeat(40), tree: [{ path: 'gone.txt', mode: '100644', type: 'blob', sha: null }] }
    expect(refusal('POST', '/repos/o/r/git/trees', q(), tree, APP)).toBeUndefined()
    expect(refusal('POST', '/repos/o/r/pulls', q(), { title: 't', head: 'b', base: 'main', body: 'x', draft: true }, APP)).toBeUndefined()
    expect(refusal('PATCH', '/repos/o/r/git/refs/heads/agent/x', q(), { sha: 'a'.repeat(40), force: false }, APP)).toBeUndefined()
    expect(refusal('GET', '/repos/o/r/compare/main...agent/x', q(), undefined, APP)).toBeUndefined()
    expect(refusal('POST', '/repos/o/r/actions/runs/5/cancel', q(), undefined, APP)).toBeUndefined()
  })
})
