// The examples of each operation in curl, JavaScript and Python, as Markdown for its description
// in the OpenAPI document (the /docs page renders them) and as the curl line of /llms.txt. They
// read the server and the key from the environment (CLINIC_API_URL, CLINIC_API_KEY), and
// test/http/code-samples.test.ts runs every one against a real server.

export interface SampleRequest {
  /** e.g. /api/v1/citas */
  path: string;
  query?: Record<string, string>;
  /** the response field the sample prints, as a path: ['clinica', 'nombre'] */
  print: string[];
}

export const SAMPLE_ENV = { url: 'CLINIC_API_URL', key: 'CLINIC_API_KEY' } as const;

/** Where an operation's description turns to its examples. */
export const EXAMPLES_HEADING = '**Examples**';

function pathAndQuery(r: SampleRequest): string {
  const qs = new URLSearchParams(r.query ?? {}).toString();
  return qs ? `${r.path}?${qs}` : r.path;
}

export function curlSample(r: SampleRequest): string {
  return `curl -H "Authorization: Bearer $${SAMPLE_ENV.key}" "$${SAMPLE_ENV.url}${pathAndQuery(r)}"`;
}

export function javascriptSample(r: SampleRequest): string {
  return [
    `const res = await fetch(\`\${process.env.${SAMPLE_ENV.url}}${pathAndQuery(r)}\`, {`,
    `  headers: { Authorization: \`Bearer \${process.env.${SAMPLE_ENV.key}}\` },`,
    '});',
    'const body = await res.json();',
    'if (!res.ok) throw new Error(`${body.error.code}: ${body.error.message}`);',
    `console.log(body.${r.print.join('.')});`,
  ].join('\n');
}

export function pythonSample(r: SampleRequest): string {
  return [
    'import json, os, urllib.request',
    '',
    'req = urllib.request.Request(',
    `    os.environ["${SAMPLE_ENV.url}"] + "${pathAndQuery(r)}",`,
    `    headers={"Authorization": "Bearer " + os.environ["${SAMPLE_ENV.key}"]},`,
    ')',
    'with urllib.request.urlopen(req) as res:  # raises HTTPError on 4xx/5xx',
    '    body = json.load(res)',
    `print(body${r.print.map((k) => `["${k}"]`).join('')})`,
  ].join('\n');
}

/** The three samples as Markdown, for an operation's description. */
export function samplesMarkdown(r: SampleRequest): string {
  return [
    `${EXAMPLES_HEADING} (set \`${SAMPLE_ENV.url}\`, e.g. \`http://127.0.0.1:3000\`, and \`${SAMPLE_ENV.key}\`)`,
    '',
    'curl:',
    '```sh',
    curlSample(r),
    '```',
    '',
    'JavaScript (Node.js 22 or later, an ES module):',
    '```js',
    javascriptSample(r),
    '```',
    '',
    'Python 3 (standard library only):',
    '```python',
    pythonSample(r),
    '```',
  ].join('\n');
}
