export const id = 112;
export const ids = [112];
export const modules = {

/***/ 2112:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

__webpack_require__.r(__webpack_exports__);
/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   open: () => (/* binding */ open)
/* harmony export */ });
/* harmony import */ var _anthropic_ai_vertex_sdk__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(2033);
/* harmony import */ var google_auth_library__WEBPACK_IMPORTED_MODULE_1__ = __webpack_require__(492);
/* harmony import */ var google_auth_library__WEBPACK_IMPORTED_MODULE_1___default = /*#__PURE__*/__webpack_require__.n(google_auth_library__WEBPACK_IMPORTED_MODULE_1__);
// Google Vertex AI through @anthropic-ai/vertex-sdk: Application Default Credentials from the
// file GOOGLE_APPLICATION_CREDENTIALS names, as google-github-actions/auth writes it (its
// workload identity `external_account` form asks the runner for the job's OIDC token itself,
// then Google's STS, then, when the file says so, impersonates a service account). Loaded only
// when provider is vertex (a chunk of its own).


function open(p, ctx) {
    // the project given: GoogleAuth would otherwise ask Cloud Resource Manager for it
    const googleAuth = new google_auth_library__WEBPACK_IMPORTED_MODULE_1__.GoogleAuth({
        keyFilename: p.credentialsFile,
        projectId: p.projectId,
        scopes: 'https://www.googleapis.com/auth/cloud-platform'
    });
    const client = new _anthropic_ai_vertex_sdk__WEBPACK_IMPORTED_MODULE_0__/* .AnthropicVertex */ .dc({
        googleAuth,
        region: p.region,
        projectId: p.projectId,
        ...(ctx.baseUrl ? { baseURL: ctx.baseUrl } : {}),
        maxRetries: ctx.maxRetries,
        fetch: ctx.fetch,
        openTelemetry: false
    });
    return { client: client, description: `Google Vertex AI (${p.projectId}, ${p.region})` };
}


/***/ })

};
