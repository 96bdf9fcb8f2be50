// What the main step hands to the post step, behind named functions (as
// actions/checkout's state-helper.ts). Each is saved before the change it
// guards, so the post step can finish whatever the main step could not.
import * as core from '../actions-core'
import type { CommentRef } from '../github/comment'
import type { Thread } from '../trigger'

function parse<T>(text: string): T | undefined {
  try {
    return text ? (JSON.parse(text) as T) : undefined
  } catch {
    return undefined
  }
}

/** Read without @actions/core so that index.ts can tell main from post before loading anything. */
export const isPost = (env: NodeJS.ProcessEnv = process.env): boolean => env.STATE_isPost === 'true'
/** Saved first: from then on the post step runs as the post step. */
export const setIsPost = (): void => core.saveState('isPost', 'true')

/** Where the run's transcript is written as it goes (the post step finishes the report from it). */
export const setTranscriptPath = (path: string): void => core.saveState('transcript', path)
export const getTranscriptPath = (): string => core.getState('transcript')

/** The issue or review thread the report goes to. */
export const setThread = (thread: Thread): void => core.saveState('thread', JSON.stringify(thread))
export const getThread = (): Thread | undefined => parse<Thread>(core.getState('thread'))

/** The progress comment, once created. */
export const setComment = (ref: CommentRef): void => core.saveState('comment', JSON.stringify(ref))
export const getComment = (): CommentRef | undefined => parse<CommentRef>(core.getState('comment'))

/** The main step wrote its final report: the post step has nothing to finish. */
export const setDone = (): void => core.saveState('done', 'true')
export const isDone = (): boolean => core.getState('done') === 'true'

/** The main step received a cancel (SIGINT/SIGTERM): a main step that ended without one was killed, not cancelled. */
export const setSignalled = (name: string): void => core.saveState('signalled', name)
export const getSignalled = (): string => core.getState('signalled')

/** The main step crashed with this (redacted) message. */
export const setCrash = (message: string): void => core.saveState('error', message)
export const getCrash = (): string => core.getState('error')

/** The sandbox's own record (run folder, namespace), saved before each change it guards. */
export const setSandbox = (value: string): void => core.saveState('sandbox', value)
export const getSandbox = (): string => core.getState('sandbox')

/** Where none mode keeps the git configs' original bytes (and the key to them), saved before they change. */
