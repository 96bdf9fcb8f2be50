// A model call for the pure loop's tests: it answers with the given replies in
// order and keeps a copy of every request. The real SDK against the fake
// Messages API is covered end to end elsewhere.
import type { Message, MessageCreateParams } from '../../src/types'

export function scriptedModel(replies: Message[]): {
  requests: MessageCreateParams[]
  callModel: (p: MessageCreateParams) => Promise<Message>
} {
  const requests: MessageCreateParams[] = []
  return {
    requests,
    callModel: async (p: MessageCreateParams) => {
      requests.push(structuredClone(p))
      const r = replies.shift()
      if (!r) throw new Error('script ran out')
      return r
    }
  }
}
