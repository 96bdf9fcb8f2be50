// The GitHub side of a run: who may start it, the eyes reaction and the
// progress comment. Octokit (and @actions/github, which parses the event file
// when it loads) is loaded lazily, once the first model request is on its
// way; the permission check before it uses Node's fetch.
import type { ReportComment } from './comment'
import type { Octokit } from './octokit'
import type { Log } from '../report/log'
import { readPermission } from './permission'
import { mayStart } from '../gate'
import type { Settings } from '../settings'
import type { Task } from '../trigger'
import { messageOf, repoOf, within, type Repo } from '../util'
import * as state from '../run/state'

export class GitHubSide {
  readonly repo: Repo | undefined
  /** the report comment, once asked for (undefined without a token, repository or thread) */
  comment: ReportComment | undefined
  readonly token: string
  private readonly writeIntervalMs: number
  private commentModule: Promise<typeof import('./comment')> | undefined
  private octokit: Promise<Octokit> | undefined
  private started: Promise<void> | undefined
  private reaction: Promise<void> = Promise.resolve()

  constructor(
    settings: Settings,
    private readonly task: Task,
    private readonly out: Log,
    env: NodeJS.ProcessEnv = process.env
  ) {
    this.repo = repoOf(env.GITHUB_REPOSITORY)
    this.token = this.repo ? settings.githubToken : ''
    this.writeIntervalMs = settings.githubWriteIntervalMs
  }

  /** Whether there is a token and a repository to commit with. */
  get canCommit(): boolean {
    return Boolean(this.token && this.repo)
  }

  /** Whether there is a comment to write the report to. */
  get canComment(): boolean {
    return Boolean(this.token && this.repo && this.task.thread)
  }

  /** Logs it when the report goes to the job summary only. */
  sayWhereTheReportGoes(): void {
    if (this.canComment) return
    this.out.log(
      this.task.thread
        ? 'No github-token: the report goes to the job summary only.'
        : 'No issue to answer in: the report goes to the job summary only.'
    )
  }

  private loadComment() {
    return (this.commentModule ??= import('./comment'))
  }

  getOctokit(): Promise<Octokit> {
    return (this.octokit ??= import('./octokit').then(gh =>
      gh.createOctokit(this.token, this.out.warn, { writeSpacingMs: this.writeIntervalMs })
    ))
  }

  /** Whether the people behind the task may start a run (fails closed). */
  async gate(settings: Settings): Promise<{ allowed: boolean; reason: string }> {
    const { token, repo } = this
    return mayStart(this.task.people, settings, async login => {
      if (!token || !repo) throw new Error('no github-token to ask GitHub with')
      return readPermission({ token, getOctokit: () => this.getOctokit() }, repo, login)
    })
  }

  /**
   * The progress comment first (it is what users look for), the reaction beside
   * it. Called once the first model request is sent, and again (at once) at the
   * end in case the run ended before.
   */
  start(firstBody: () => string): Promise<void> {
    return (this.started ??= (async () => {
      const { token, repo, task, out } = this
      if (!token || !repo) return
      const [gh, octokit] = await Promise.all([this.loadComment(), this.getOctokit()])
      if (task.thread) {
        this.comment = new gh.ReportComment(octokit, repo, task.thread, out.redact, out.warn, {
          onCreate: ref => {
            state.setComment(ref)
            out.log(`Progress comment: ${ref.url}`)
          }
        })
        void this.comment.start(firstBody())
      }
      if (task.reactTo) {
        this.reaction = gh.addEyes(octokit, repo, task.reactTo).catch(e => out.warn(`Could not add the eyes reaction: ${messageOf(e)}`))
      }
    })().catch(e => this.out.warn(`Could not reach GitHub for the progress comment: ${messageOf(e)}`)))
  }

  /** A reaction still going (it is retried once) gets a moment, so its failure shows in the log. */
  settleReaction(ms: number): Promise<unknown> {
    return within(this.reaction, ms, undefined)
  }
}
