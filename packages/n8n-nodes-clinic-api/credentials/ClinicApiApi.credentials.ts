import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

/**
 * A clinic-api key: every request carries it as `Authorization: Bearer <key>`. The test n8n runs
 * on "Save" asks `GET /api/v1/me`, which answers for any valid key (its clinic, the key, the
 * rate limit) and 401 for a wrong, revoked or expired one.
 */
export class ClinicApiApi implements ICredentialType {
	name = 'clinicApiApi';

	displayName = 'Clinic API';

	icon: Icon = { light: 'file:../icons/clinicApi.svg', dark: 'file:../icons/clinicApi.dark.svg' };

	documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-clinic-api#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			placeholder: 'https://api.clinic.example',
			required: true,
			description:
				'Where the clinic API is served, e.g. https://api.clinic.example (a trailing slash or /api/v1 is ignored)',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'A key made in the clinic dashboard (Settings > API); it is shown once, when made',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.apiKey}}',
			},
		},
	};

	test: ICredentialTestRequest = {
		request: {
			baseURL:
				'={{$credentials.baseUrl.trim().replace(/\\/+$/, "").replace(/\\/api\\/v1$/, "").replace(/\\/+$/, "")}}',
			url: '/api/v1/me',
			method: 'GET',
		},
	};
}
