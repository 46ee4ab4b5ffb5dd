// @clinic-api/sdk: the client of the Clinic Integration API. Standard Webhooks verification is
// its own entry point, @clinic-api/sdk/webhooks, so that this one has no dependency at all and
// loads as it is in a browser.
export { ClinicApi, Collection, Eventos, Webhooks, type ClinicApiOptions, type CreateWebhookOptions } from './client.js';
export { ClinicApiConnectionError, ClinicApiError, CursorExpiredError, type ErrorCode } from './errors.js';
export type { FeedBatch, FollowOptions } from './feed.js';
export { DEFAULT_RETRY, type RetryOptions } from './retry.js';
export type { ResponseInfo, RetryInfo } from './transport.js';
export type * from './types.js';
export type { components, operations, paths } from './generated/openapi.js';
