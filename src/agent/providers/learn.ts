// A fetch that teaches the redactor every credential a provider's request carries (a Google or
// Entra access token, a federation token, a key) before it is sent: the SDKs mint them at run
// time, where the action never sees them otherwise. A SigV4 signature is no credential (it
// signs one request) and is left alone; the session token beside it is learned.
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'api-key', 'x-amz-security-token', 'x-goog-api-key']

export function learningFetch(learn: (secret: string) => void, inner: typeof fetch = globalThis.fetch): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
    for (const name of CREDENTIAL_HEADERS) {
      const value = headers.get(name)
      if (!value || /^AWS4-HMAC-SHA256\s/i.test(value)) continue
      learn(value.replace(/^(bearer|basic|token)\s+/i, ''))
    }
    return inner(input, init)
  }
}
