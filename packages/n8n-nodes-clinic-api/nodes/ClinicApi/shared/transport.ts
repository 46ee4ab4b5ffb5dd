import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
	IPollFunctions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

export const CREDENTIAL_NAME = 'clinicApiApi';

/** The largest `limit` the API takes on a list or the feed. */
export const MAX_PAGE_SIZE = 500;

export type ClinicContext = IExecuteFunctions | IPollFunctions;

export interface ClinicResponse {
	statusCode: number;
	body: IDataObject;
}

/** The credential's base URL without trailing slashes or a pasted `/api/v1`. */
export function apiRoot(baseUrl: string): string {
	return baseUrl
		.trim()
		.replace(/\/+$/, '')
		.replace(/\/api\/v1$/, '')
		.replace(/\/+$/, '');
}

/** What to do about an API error, by its code: the API's own message says what was wrong. */
const HINTS: Record<string, string> = {
	missing_api_key: 'Add an API key to the Clinic API credential.',
	invalid_api_key:
		'The key is unknown, revoked or expired: make a new one in the clinic dashboard (Settings > API) and put it in the Clinic API credential.',
	not_found:
		"No record with this ID in the key's clinic (or the Base URL does not point at the API).",
	invalid_parameter: 'Change the parameter the message names.',
	unknown_parameter: 'Remove the parameter the message names.',
	too_many_requests:
		'Over the key\'s rate limit: wait the Retry-After seconds, or turn on "Retry On Fail" in the node\'s settings.',
	service_unavailable:
		'The API is overloaded: retry later, or turn on "Retry On Fail" in the node\'s settings.',
	database_error:
		'The API\'s database failed: retry later, or turn on "Retry On Fail" in the node\'s settings.',
	cursor_expired: 'Read the collections again and follow the feed from cursor=now.',
};

/**
 * The error a node shows for an API error answer (`{"error": {"code", "message", "param",
 * "scope", "request_id"}}`): the API's message, then its status, code, parameter or scope,
 * request id and what to do.
 */
export function apiErrorDetails(
	statusCode: number,
	body: IDataObject,
): { message: string; description: string } {
	const error = (
		typeof body.error === 'object' && body.error !== null ? body.error : {}
	) as IDataObject;
	const code = typeof error.code === 'string' ? error.code : `http_${statusCode}`;
	const message =
		typeof error.message === 'string' ? error.message : `The Clinic API answered ${statusCode}`;
	const facts = [`HTTP ${statusCode}`, `code ${code}`];
	if (typeof error.param === 'string') facts.push(`parameter ${error.param}`);
	// insufficient_scope: the scope the key lacks (the API's message says who can add it).
	if (typeof error.scope === 'string') facts.push(`scope ${error.scope}`);
	if (typeof error.request_id === 'string') facts.push(`request_id ${error.request_id}`);
	const hint = HINTS[code] ?? '';
	return { message, description: `${facts.join(', ')}. ${hint}`.trim() };
}

/**
 * GET `<base URL>/api/v1<path>` with the credential's key. Returns the status and the JSON body;
 * an error status throws a NodeApiError with the API's message unless `allowStatus` lists it
 * (the trigger handles 410 itself). A server that cannot be reached is an error naming the URL.
 */
export async function clinicApiRequest(
	ctx: ClinicContext,
	path: string,
	qs: IDataObject = {},
	allowStatus: number[] = [],
): Promise<ClinicResponse> {
	const credentials = await ctx.getCredentials<{ baseUrl: string }>(CREDENTIAL_NAME);
	const url = `${apiRoot(String(credentials.baseUrl ?? ''))}/api/v1${path}`;
	const options: IHttpRequestOptions = {
		method: 'GET',
		url,
		qs,
		json: true,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
	};
	let response: IN8nHttpFullResponse;
	try {
		response = (await ctx.helpers.httpRequestWithAuthentication.call(
			ctx,
			CREDENTIAL_NAME,
			options,
		)) as IN8nHttpFullResponse;
	} catch (error) {
		throw new NodeApiError(ctx.getNode(), error as JsonObject, {
			message: `Could not reach the Clinic API at ${url}`,
			description: `${(error as Error).message}. Check the Base URL of the Clinic API credential and that the API is running.`,
		});
	}
	const body = (
		typeof response.body === 'object' && response.body !== null ? response.body : {}
	) as IDataObject;
	if (response.statusCode >= 400 && !allowStatus.includes(response.statusCode)) {
		const { message, description } = apiErrorDetails(response.statusCode, body);
		throw new NodeApiError(ctx.getNode(), body as JsonObject, {
			httpCode: String(response.statusCode),
			message,
			description,
		});
	}
	return { statusCode: response.statusCode, body };
}

/**
 * Reads a list page by page (offset paging, at most 500 a page) until `max` records were read
 * (Infinity: all of them) or the list's `total` is reached. A page shorter than asked for also
 * ends it, so a list that shrinks while it is read cannot loop.
 */
export async function clinicApiGetMany(
	ctx: IExecuteFunctions,
	resource: string,
	qs: IDataObject,
	max: number,
): Promise<IDataObject[]> {
	const out: IDataObject[] = [];
	let offset = 0;
	while (out.length < max) {
		const limit = Math.min(MAX_PAGE_SIZE, max - out.length);
		const { body } = await clinicApiRequest(ctx, `/${resource}`, { ...qs, limit, offset });
		const page = Array.isArray(body[resource]) ? (body[resource] as IDataObject[]) : [];
		out.push(...page.slice(0, max - out.length));
		offset += page.length;
		const total = typeof body.total === 'number' ? body.total : Infinity;
		if (page.length < limit || offset >= total) break;
	}
	return out;
}
