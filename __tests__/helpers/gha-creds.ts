// What google-github-actions/auth leaves in the workspace with workload identity federation (its default).

/** The file google-github-actions/auth writes (workload identity federation): the job's OIDC request token as a bearer header. */
export function ghaCreds(token: string, requestUrl: string): string {
  return `${JSON.stringify(
    {
      type: 'external_account',
      audience: '//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/pool/providers/github',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: 'https://sts.googleapis.com/v1/token',
      service_account_impersonation_url:
        'https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/agent@project.iam.gserviceaccount.com:generateAccessToken',
      credential_source: {
        url: `${requestUrl}&audience=https%3A%2F%2Fiam.googleapis.com%2Fprojects%2F123456`,
        headers: { Authorization: `Bearer ${token}` },
        format: { type: 'json', subject_token_field_name: 'value' }
      }
    },
    null,
    2
  )}\n`
}
