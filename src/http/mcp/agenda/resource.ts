// The agenda view of list_citas for hosts that draw MCP Apps (the `io.modelcontextprotocol/ui`
// extension, SEP-1865): the tool names the view in its `_meta.ui.resourceUri`, and resources/read
// of that `ui://` address gives the view's one HTML document (./page.ts), which the host shows in
// a sandboxed frame, hands the tool's result to, and lets call list_citas again for another week.
//
// The server is stateless: a tools/list request does not carry what the client declared at
// initialize, so the tool's metadata is the same for every client. That is what the extension
// allows: a host without it ignores `_meta.ui` and reads the usual text and structured result,
// which are the same for every host. The document holds no clinic data (the data comes with each
// tool result), so any authenticated key may read it; it is listed to keys that may call list_citas.
import { EXTENSION_ID, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server';
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import { AGENDA_HTML } from './page.js';

export const UI_EXTENSION = EXTENSION_ID;
export const AGENDA_URI = 'ui://clinic-api/agenda';
/** The tool whose results the view draws. */
export const AGENDA_TOOL = 'list_citas';

/** No border of the host's own around it: the view draws its own columns. */
const UI_META = { ui: { prefersBorder: false } };

/** The tool's metadata: the view's address (and its older flat key, which hosts from before the extension's 2026-01-26 version read). */
export const AGENDA_TOOL_META = { ui: { resourceUri: AGENDA_URI }, [RESOURCE_URI_META_KEY]: AGENDA_URI };

export const AGENDA_RESOURCE: Resource = {
  uri: AGENDA_URI,
  name: 'agenda',
  title: 'Appointments agenda',
  description:
    "A day and week agenda of the clinic's appointments, drawn from list_citas results in the clinic's time zone, in Spanish or English.",
  mimeType: RESOURCE_MIME_TYPE,
  _meta: UI_META,
};

export const AGENDA_READ: ReadResourceResult = {
  contents: [{ uri: AGENDA_URI, mimeType: RESOURCE_MIME_TYPE, text: AGENDA_HTML, _meta: UI_META }],
};
