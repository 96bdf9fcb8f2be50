export const id = 634;
export const ids = [634];
export const modules = {

/***/ 79634:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

// ESM COMPAT FLAG
__webpack_require__.r(__webpack_exports__);

// EXPORTS
__webpack_require__.d(__webpack_exports__, {
  DEFAULT_WRITE_SPACING_MS: () => (/* binding */ DEFAULT_WRITE_SPACING_MS),
  GITHUB_RETRIES: () => (/* binding */ GITHUB_RETRIES),
  createOctokit: () => (/* binding */ createOctokit)
});

// EXTERNAL MODULE: ./node_modules/@octokit/core/dist-src/index.js + 12 modules
var dist_src = __webpack_require__(14730);
// EXTERNAL MODULE: ./node_modules/@octokit/plugin-paginate-rest/dist-bundle/index.js
var dist_bundle = __webpack_require__(93779);
// EXTERNAL MODULE: ./node_modules/@octokit/plugin-rest-endpoint-methods/dist-src/index.js + 3 modules
var plugin_rest_endpoint_methods_dist_src = __webpack_require__(49210);
// EXTERNAL MODULE: ./node_modules/@octokit/plugin-retry/dist-bundle/index.js
var plugin_retry_dist_bundle = __webpack_require__(49735);
// EXTERNAL MODULE: ./node_modules/bottleneck/light.js
var light = __webpack_require__(63251);
var light_default = /*#__PURE__*/__webpack_require__.n(light);
;// CONCATENATED MODULE: ./node_modules/@octokit/plugin-throttling/dist-bundle/index.js
// pkg/dist-src/index.js


// pkg/dist-src/version.js
var VERSION = "0.0.0-development";

// pkg/dist-src/wrap-request.js
var noop = () => Promise.resolve();
function wrapRequest(state, request, options) {
  return state.retryLimiter.schedule(doRequest, state, request, options);
}
async function doRequest(state, request, options) {
  const { pathname } = new URL(options.url, "http://github.test");
  const isAuth = isAuthRequest(options.method, pathname);
  const isWrite = !isAuth && options.method !== "GET" && options.method !== "HEAD";
  const isSearch = options.method === "GET" && pathname.startsWith("/search/");
  const isGraphQL = pathname.startsWith("/graphql");
  const retryCount = ~~request.retryCount;
  const jobOptions = retryCount > 0 ? { priority: 0, weight: 0 } : {};
  if (state.clustering) {
    jobOptions.expiration = 1e3 * 60;
  }
  if (isWrite || isGraphQL) {
    await state.write.key(state.id).schedule(jobOptions, noop);
  }
  if (isWrite && state.triggersNotification(pathname)) {
    await state.notifications.key(state.id).schedule(jobOptions, noop);
  }
  if (isSearch) {
    await state.search.key(state.id).schedule(jobOptions, noop);
  }
  const req = (isAuth ? state.auth : state.global).key(state.id).schedule(jobOptions, request, options);
  if (isGraphQL) {
    const res = await req;
    if (res.data.errors != null && res.data.errors.some((error) => error.type === "RATE_LIMITED")) {
      const error = Object.assign(new Error("GraphQL Rate Limit Exceeded"), {
        response: res,
        data: res.data
      });
      throw error;
    }
  }
  return req;
}
function isAuthRequest(method, pathname) {
  return method === "PATCH" && // https://docs.github.com/en/rest/apps/apps?apiVersion=2022-11-28#create-a-scoped-access-token
  /^\/applications\/[^/]+\/token\/scoped$/.test(pathname) || method === "POST" && // https://docs.github.com/en/rest/apps/oauth-applications?apiVersion=2022-11-28#reset-a-token
  (/^\/applications\/[^/]+\/token$/.test(pathname) || // https://docs.github.com/en/rest/apps/apps?apiVersion=2022-11-28#create-an-installation-access-token-for-an-app
  /^\/app\/installations\/[^/]+\/access_tokens$/.test(pathname) || // https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
  pathname === "/login/oauth/access_token");
}

// pkg/dist-src/generated/triggers-notification-paths.js
var triggers_notification_paths_default = [
  "/orgs/{org}/invitations",
  "/orgs/{org}/invitations/{invitation_id}",
  "/orgs/{org}/teams/{team_slug}/discussions",
  "/orgs/{org}/teams/{team_slug}/discussions/{discussion_number}/comments",
  "/repos/{owner}/{repo}/collaborators/{username}",
  "/repos/{owner}/{repo}/commits/{commit_sha}/comments",
  "/repos/{owner}/{repo}/issues",
  "/repos/{owner}/{repo}/issues/{issue_number}/comments",
  "/repos/{owner}/{repo}/issues/{issue_number}/sub_issue",
  "/repos/{owner}/{repo}/issues/{issue_number}/sub_issues/priority",
  "/repos/{owner}/{repo}/pulls",
  "/repos/{owner}/{repo}/pulls/{pull_number}/comments",
  "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
  "/repos/{owner}/{repo}/pulls/{pull_number}/merge",
  "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers",
  "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
  "/repos/{owner}/{repo}/releases",
  "/teams/{team_id}/discussions",
  "/teams/{team_id}/discussions/{discussion_number}/comments"
];

// pkg/dist-src/route-matcher.js
function routeMatcher(paths) {
  const regexes = paths.map(
    (path) => path.split("/").map((c) => c.startsWith("{") ? "(?:.+?)" : c).join("/")
  );
  const regex2 = `^(?:${regexes.map((r) => `(?:${r})`).join("|")})[^/]*$`;
  return new RegExp(regex2, "i");
}

// pkg/dist-src/index.js
var regex = routeMatcher(triggers_notification_paths_default);
var triggersNotification = regex.test.bind(regex);
var groups = {};
var createGroups = function(Bottleneck, common) {
  groups.global = new Bottleneck.Group({
    id: "octokit-global",
    maxConcurrent: 10,
    ...common
  });
  groups.auth = new Bottleneck.Group({
    id: "octokit-auth",
    maxConcurrent: 1,
    ...common
  });
  groups.search = new Bottleneck.Group({
    id: "octokit-search",
    maxConcurrent: 1,
    minTime: 2e3,
    ...common
  });
  groups.write = new Bottleneck.Group({
    id: "octokit-write",
    maxConcurrent: 1,
    minTime: 1e3,
    ...common
  });
  groups.notifications = new Bottleneck.Group({
    id: "octokit-notifications",
    maxConcurrent: 1,
    minTime: 3e3,
    ...common
  });
};
function throttling(octokit, octokitOptions) {
  const {
    enabled = true,
    Bottleneck = light,
    id = "no-id",
    timeout = 1e3 * 60 * 2,
    // Redis TTL: 2 minutes
    connection
  } = octokitOptions.throttle || {};
  if (!enabled) {
    return {};
  }
  const common = { timeout };
  if (typeof connection !== "undefined") {
    common.connection = connection;
  }
  const state = Object.assign(
    {
      clustering: connection != null,
      triggersNotification,
      fallbackSecondaryRateRetryAfter: 60,
      retryAfterBaseValue: 1e3,
      id
    },
    octokitOptions.throttle
  );
  if (typeof state.onSecondaryRateLimit !== "function" || typeof state.onRateLimit !== "function") {
    throw new Error(`octokit/plugin-throttling error:
        You must pass the onSecondaryRateLimit and onRateLimit error handlers.
        See https://octokit.github.io/rest.js/#throttling

        const octokit = new Octokit({
          throttle: {
            onSecondaryRateLimit: (retryAfter, options) => {/* ... */},
            onRateLimit: (retryAfter, options) => {/* ... */}
          }
        })
    `);
  }
  let initialized = false;
  const initializeBottleneck = () => {
    if (initialized) {
      return;
    }
    initialized = true;
    if (groups.global == null) {
      createGroups(Bottleneck, common);
    }
    state.global = state.global ?? groups.global;
    state.auth = state.auth ?? groups.auth;
    state.search = state.search ?? groups.search;
    state.write = state.write ?? groups.write;
    state.notifications = state.notifications ?? groups.notifications;
    state.retryLimiter = state.retryLimiter ?? new Bottleneck();
    const events = {};
    const emitter = new Bottleneck.Events(events);
    events.on("secondary-limit", state.onSecondaryRateLimit);
    events.on("rate-limit", state.onRateLimit);
    events.on(
      "error",
      (e) => octokit.log.warn("Error in throttling-plugin limit handler", e)
    );
    state.retryLimiter.on("failed", async function(error, info) {
      const [state2, request, options] = info.args;
      const { pathname } = new URL(options.url, "http://github.test");
      const shouldRetryGraphQL = pathname.startsWith("/graphql") && error.status !== 401;
      if (!(shouldRetryGraphQL || error.status === 403 || error.status === 429)) {
        return;
      }
      const retryCount = ~~request.retryCount;
      request.retryCount = retryCount;
      options.request.retryCount = retryCount;
      const { wantRetry, retryAfter = 0 } = await (async function() {
        if (/\bsecondary rate\b/i.test(error.message)) {
          const retryAfter2 = Number(error.response.headers["retry-after"]) || state2.fallbackSecondaryRateRetryAfter;
          const wantRetry2 = await emitter.trigger(
            "secondary-limit",
            retryAfter2,
            options,
            octokit,
            retryCount
          );
          return { wantRetry: wantRetry2, retryAfter: retryAfter2 };
        }
        if (error.response.headers != null && error.response.headers["x-ratelimit-remaining"] === "0" || (error.response.data?.errors ?? []).some(
          (error2) => error2.type === "RATE_LIMITED"
        )) {
          const rateLimitReset = new Date(
            ~~error.response.headers["x-ratelimit-reset"] * 1e3
          ).getTime();
          const retryAfter2 = Math.max(
            // Add one second so we retry _after_ the reset time
            // https://docs.github.com/en/rest/overview/resources-in-the-rest-api?apiVersion=2022-11-28#exceeding-the-rate-limit
            Math.ceil((rateLimitReset - Date.now()) / 1e3) + 1,
            0
          );
          const wantRetry2 = await emitter.trigger(
            "rate-limit",
            retryAfter2,
            options,
            octokit,
            retryCount
          );
          return { wantRetry: wantRetry2, retryAfter: retryAfter2 };
        }
        return {};
      })();
      if (wantRetry) {
        request.retryCount++;
        return retryAfter * state2.retryAfterBaseValue;
      }
    });
  };
  octokit.hook.wrap("request", (request, options) => {
    initializeBottleneck();
    return wrapRequest(state, request, options);
  });
  return {};
}
throttling.VERSION = VERSION;
throttling.triggersNotification = triggersNotification;


// EXTERNAL MODULE: ./src/github/rest.ts
var rest = __webpack_require__(66417);
;// CONCATENATED MODULE: ./src/github/octokit.ts
// The one GitHub client: Octokit with its retry plugin (5xx and network
// errors: 3 retries after 1, 4 and 9 s) and throttling plugin (writes at least
// 1 s apart, what notifies people, comments and pull requests, 3 s apart, rate
// limits waited out twice; the spacings and the retries' waits all follow
// github-write-interval-ms: those figures are its default, 1000). It is
// imported lazily, once the first model request is on its way; the reads
// before it go through ./rest.ts.
//
// Without a proxy it is the Octokit @actions/github builds (the same core and
// plugins, its token and user agent) on Node's fetch: @actions/github always
// loads the copy of undici it bundles for proxies (~1 MB of code and a second
// WebAssembly HTTP parser, ~60 ms of CPU per run), which only a proxy needs.
// With one set, @actions/github's own client honours it.







/** What @actions/github's client is: the REST methods and pagination (the retry and throttling plugins add no methods we call). */
const GitHub = dist_src/* Octokit */.E.plugin(plugin_rest_endpoint_methods_dist_src/* restEndpointMethods */._, dist_bundle/* paginateRest */.ud);
/** Retries of a request that matters (the final report); progress updates get none. */
const GITHUB_RETRIES = 3;
/** GitHub's advice against secondary rate limits: at least a second between writes (the throttling plugin's default). */
const DEFAULT_WRITE_SPACING_MS = 1000;
/**
 * The retries wait 1, 4 and 9 times this: the retry plugin's own 1 s at the default spacing. A GitHub
 * without write spacing (0) still gets a moment between the attempts, not three at once.
 */
const MIN_RETRY_BASE_MS = 100;
/** Writes that notify people (a comment, a pull request): the plugin's 3 s, three times the write spacing. */
const NOTIFICATION_SPACING_PER_WRITE_SPACING = 3;
/** Our own groups, so the spacing is a setting; one group per kind and spacing for the process, as the plugin's own. */
const octokit_groups = new Map();
function group(kind, minTime) {
    const id = `bash-agent-${kind}-${minTime}`;
    let g = octokit_groups.get(id);
    if (!g)
        octokit_groups.set(id, (g = new (light_default()).Group({ id, maxConcurrent: 1, minTime })));
    return g;
}
async function createOctokit(token, log, opts = {}) {
    const onLimit = (kind) => (after, o, _k, count) => {
        const what = `${o.method ?? ''} ${o.url ?? ''}`.trim();
        if (o.request?.noRateLimitWait) {
            log(`GitHub ${kind} hit (${what}); skipping this progress update`);
            return false;
        }
        log(`GitHub ${kind} hit (${what}); retrying in ${after} s`);
        return count < 2;
    };
    const spacingMs = opts.writeSpacingMs ?? DEFAULT_WRITE_SPACING_MS;
    const options = {
        ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
        log: { debug: () => { }, info: () => { }, warn: log, error: log },
        throttle: {
            onRateLimit: onLimit('rate limit'),
            onSecondaryRateLimit: onLimit('secondary rate limit'),
            write: group('write', spacingMs),
            notifications: group('notifications', spacingMs * NOTIFICATION_SPACING_PER_WRITE_SPACING)
        },
        retry: { retries: GITHUB_RETRIES, retryAfterBaseValue: Math.max(spacingMs, MIN_RETRY_BASE_MS) }
    };
    if ((0,rest/* proxyConfigured */.$o)(process.env)) {
        const github = await Promise.all(/* import() */[__webpack_require__.e(119), __webpack_require__.e(351)]).then(__webpack_require__.bind(__webpack_require__, 61351));
        return github.getOctokit(token, options, plugin_retry_dist_bundle/* retry */.L, throttling);
    }
    const WithPlugins = GitHub.plugin(plugin_retry_dist_bundle/* retry */.L, throttling);
    const direct = { ...options, auth: `token ${token}`, baseUrl: opts.baseUrl ?? (0,rest/* apiBase */.av)(), userAgent: userAgent() };
    return new WithPlugins(direct);
}
/** @actions/github's user agent: Octokit's own, tagged with the job's orchestration id when the runner gives one. */
function userAgent() {
    const id = process.env.ACTIONS_ORCHESTRATION_ID?.trim();
    return id ? `actions_orchestration_id/${id.replace(/[^a-z0-9_.-]/gi, '_')}` : undefined;
}


/***/ })

};
