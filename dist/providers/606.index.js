export const id = 606;
export const ids = [606];
export const modules = {

/***/ 4606:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

__webpack_require__.r(__webpack_exports__);
/* harmony export */ __webpack_require__.d(__webpack_exports__, {
/* harmony export */   open: () => (/* binding */ open)
/* harmony export */ });
/* harmony import */ var _anthropic_ai_bedrock_sdk__WEBPACK_IMPORTED_MODULE_0__ = __webpack_require__(2057);
// Amazon Bedrock through @anthropic-ai/bedrock-sdk: SigV4 with the AWS credentials
// aws-actions/configure-aws-credentials exports (the session token too), or a Bedrock API key
// sent as a bearer token. Loaded only when provider is bedrock (a chunk of its own).

function open(p, ctx) {
    const common = {
        awsRegion: p.region,
        // null: never ANTHROPIC_BEDROCK_BASE_URL or another variable the action did not read itself
        baseURL: ctx.baseUrl || `https://bedrock-runtime.${p.region}.amazonaws.com`,
        maxRetries: ctx.maxRetries,
        fetch: ctx.fetch,
        openTelemetry: false
    };
    const client = p.apiKey
        ? new _anthropic_ai_bedrock_sdk__WEBPACK_IMPORTED_MODULE_0__/* .AnthropicBedrock */ .lv({ ...common, apiKey: p.apiKey })
        : new _anthropic_ai_bedrock_sdk__WEBPACK_IMPORTED_MODULE_0__/* .AnthropicBedrock */ .lv({
            ...common,
            apiKey: null,
            awsAccessKey: p.accessKeyId,
            awsSecretKey: p.secretAccessKey,
            awsSessionToken: p.sessionToken ?? null
        });
    return { client: client, description: `Amazon Bedrock (${p.region}${p.apiKey ? ', Bedrock API key' : ''})` };
}


/***/ })

};
