// The request log by OAuth app, for the dashboard's filter and `clinic-api logs --app`: the
// clinic's apps (one per client, with every grant the clinic gave it: each consent is a grant),
// the app a filter names (a client id or a grant id, of this clinic only: another clinic's is
// unknown). Its entries are the log's own pages with the app's grants in the filter
// (LogFilter.grantIds: services/request-log-read.ts).
import { DomainError } from '../errors.js';

/** An app as the clinic knows it: its client id, its name, and the grants the clinic gave it. */
export interface ClinicApp {
  clientId: string;
  name: string;
  grantIds: string[];
}

/** The clinic's apps from its grants (newest grant first, as listGrants returns them): one per client, named as its latest grant. */
export function appsOfGrants(grants: readonly { id: string; client_id: string; client_name: string }[]): ClinicApp[] {
  const byClient = new Map<string, ClinicApp>();
  for (const g of grants) {
    const app = byClient.get(g.client_id);
    if (app) app.grantIds.push(g.id);
    else byClient.set(g.client_id, { clientId: g.client_id, name: g.client_name, grantIds: [g.id] });
  }
  return [...byClient.values()].sort((a, b) => a.name.localeCompare(b.name) || a.clientId.localeCompare(b.clientId));
}

/** The app a filter names by client id or grant id, or null (unknown here, another clinic's too). */
export function findApp(apps: readonly ClinicApp[], raw: string): { app: ClinicApp; grantIds: string[] } | null {
  const byClient = apps.find((a) => a.clientId === raw);
  if (byClient) return { app: byClient, grantIds: byClient.grantIds };
  const byGrant = apps.find((a) => a.grantIds.includes(raw));
  return byGrant ? { app: byGrant, grantIds: [raw] } : null;
}

/** `--app`: the grants it names in the clinic, or an error that says where to find a valid one. */
export function requireApp(apps: readonly ClinicApp[], raw: string, clinicId: string): string[] {
  const found = findApp(apps, raw.trim());
  if (found) return found.grantIds;
  throw new DomainError(
    'invalid_input',
    `--app must be a grant id or a client id of an app connected to clinic ${clinicId} ` +
      `(\`clinic-api apps list --clinic ${clinicId}\` shows the grant ids, with --json the client ids too), got "${raw}"`,
    { field: 'app' },
  );
}

/**
 * Which resource a grant is for, from the URL it is bound to (RFC 8707): the MCP server's ends in
 * /mcp (services/oauth/resources.ts), anything else is the REST API's. An app connected to both
 * has two grants that would otherwise look the same in Connected apps and the request log.
 */
export function grantResourceKind(resource: string): 'api' | 'mcp' {
  return /\/mcp\/?$/.test(resource) ? 'mcp' : 'api';
}
