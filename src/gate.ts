// Who may start a run. Fails closed: any doubt means no run.
import type { Settings } from './settings'
import type { Person } from './trigger'
import { messageOf } from './util'

const WRITERS = new Set(['admin', 'maintain', 'write'])

export type PermissionLookup = (login: string) => Promise<string>

export const isBot = (p: Person): boolean => p.type === 'Bot' || p.login.endsWith('[bot]')

export async function mayStart(
  people: Person[],
  settings: Pick<Settings, 'allowedUsers'>,
  permissionOf: PermissionLookup
): Promise<{ allowed: boolean; reason: string }> {
  const named = new Set(settings.allowedUsers.map(u => u.toLowerCase()))
  for (const person of people) {
    const login = person.login.toLowerCase()
    if (named.has(login)) continue
    if (isBot(person)) return { allowed: false, reason: `${person.login} is a bot and is not named in allowed-users` }
    if (named.has('*')) continue
    let permission: string
    try {
      permission = await permissionOf(person.login)
    } catch (error) {
      return {
        allowed: false,
        reason: `could not read the repository permission of ${person.login} (${messageOf(error)}); refusing`
      }
    }
    if (!WRITERS.has(permission)) {
      return { allowed: false, reason: `${person.login} has "${permission}" permission; admin, maintain or write is needed` }
    }
  }
  return { allowed: true, reason: people.length ? `allowed: ${people.map(p => p.login).join(', ')}` : 'no sender to check' }
}
