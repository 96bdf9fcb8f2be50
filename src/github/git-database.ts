// The Git database and pull requests through the REST API: what a commit made
// by the action itself needs (blobs, a tree, a commit, a ref), so the token
// never meets a git process in a folder the agent touched. Failures throw the
// request's error; the caller (src/changes/commit.ts) says what it means.
import type { Octokit } from './octokit'
import type { Repo } from '../util'

export type TreeEntry = { path: string; mode: '100644' | '100755' | '120000'; type: 'blob'; sha?: string | null; content?: string }

/** The repository's Git database and pull requests, for one token. */
export class GitDatabase {
  constructor(
    private readonly octokit: Octokit,
    private readonly repo: Repo
  ) {}

  /** The tree of a commit. */
  async treeOf(sha: string): Promise<string> {
    return (await this.octokit.rest.git.getCommit({ ...this.repo, commit_sha: sha })).data.tree.sha
  }

  async createBlob(content: Buffer): Promise<string> {
    const { data } = await this.octokit.rest.git.createBlob({ ...this.repo, content: content.toString('base64'), encoding: 'base64' })
    return data.sha
  }

  async createTree(baseTree: string, tree: TreeEntry[]): Promise<string> {
    return (await this.octokit.rest.git.createTree({ ...this.repo, base_tree: baseTree, tree })).data.sha
  }

  async createCommit(message: string, tree: string, parent: string): Promise<string> {
    return (await this.octokit.rest.git.createCommit({ ...this.repo, message, tree, parents: [parent] })).data.sha
  }

  async createBranch(branch: string, sha: string): Promise<void> {
    await this.octokit.rest.git.createRef({ ...this.repo, ref: `refs/heads/${branch}`, sha })
  }

  /** Moves a branch to `sha` without force: fails (422) when `sha` does not descend from it. */
  async fastForward(branch: string, sha: string): Promise<void> {
    await this.octokit.rest.git.updateRef({ ...this.repo, ref: `heads/${branch}`, sha, force: false })
  }

  /** Whether `head` is ahead of `base`. */
  async isAhead(base: string, head: string): Promise<boolean> {
    return (
      (await this.octokit.rest.repos.compareCommitsWithBasehead({ ...this.repo, basehead: `${base}...${head}` })).data.status === 'ahead'
    )
  }

  async pull(number: number): Promise<{ number: number; head: { ref: string; sha: string; repo: string | undefined } }> {
    const { data } = await this.octokit.rest.pulls.get({ ...this.repo, pull_number: number })
    return { number: data.number, head: { ref: data.head.ref, sha: data.head.sha, repo: data.head.repo?.full_name } }
  }

  async openDraft(o: { title: string; head: string; base: string; body: string }): Promise<{ number: number; url: string }> {
    const { data } = await this.octokit.rest.pulls.create({ ...this.repo, ...o, draft: true })
    return { number: data.number, url: data.html_url }
  }
}
