// The examples of each operation in curl, JavaScript and Python, as Markdown for its description
// in the OpenAPI document (the /docs page renders them) and as the curl line of /llms.txt. They
// read the server and the key from the environment (CLINIC_API_URL, CLINIC_API_KEY), and
// test/http/code-samples.test.ts runs every one against a real server.

export interface SampleRequest {
  /** e.g. /api/v1/citas, or /api/v1/citas/{id} for one record (see `idFrom`) */
  path: string;
  query?: Record<string, string>;
  /** the response field the sample prints, as a path: ['clinica', 'nombre'] */
  print: string[];
  /**
   * One record: the sample first asks this list for one record and puts its id in the path's
   * {id} (an id that exists wherever the sample is run). `items` is the list's array field.
   */
  idFrom?: { path: string; query: Record<string, string>; items: string };
}

/** The placeholder of a record's id in a sample's path. */
const ID = '{id}';

export const SAMPLE_ENV = { url: 'CLINIC_API_URL', key: 'CLINIC_API_KEY' } as const;

/** Where an operation's description turns to its examples. */
export const EXAMPLES_HEADING = '**Examples**';

function pathAndQuery(r: { path: string; query?: Record<string, string> }): string {
  const qs = new URLSearchParams(r.query ?? {}).toString();
  return qs ? `${r.path}?${qs}` : r.path;
}

const curlGet = (pathAndQuery: string, silent = false) =>
  `curl${silent ? ' -s' : ''} -H "Authorization: Bearer $${SAMPLE_ENV.key}" "$${SAMPLE_ENV.url}${pathAndQuery}"`;

export function curlSample(r: SampleRequest): string {
  if (!r.idFrom) return curlGet(pathAndQuery(r));
  // The list's first "id" is its first record's (the first field of the first item); plain
  // grep and cut, so the sample needs no JSON tool.
  return [
    `ID=$(${curlGet(pathAndQuery(r.idFrom), true)} | grep -o '"id":"[^"]*"' | head -n 1 | cut -d '"' -f 4)`,
    curlGet(pathAndQuery(r).replace(ID, '$ID')),
  ].join('\n');
}

export function javascriptSample(r: SampleRequest): string {
  if (r.idFrom) {
    const [before, after] = pathAndQuery(r).split(ID);
    return [
      'const get = async (path) => {',
      `  const res = await fetch(\`\${process.env.${SAMPLE_ENV.url}}\${path}\`, {`,
      `    headers: { Authorization: \`Bearer \${process.env.${SAMPLE_ENV.key}}\` },`,
      '  });',
      '  const body = await res.json();',
      '  if (!res.ok) throw new Error(`${body.error.code}: ${body.error.message}`);',
      '  return body;',
      '};',
      '// the id of a record, from the list',
      `const list = await get('${pathAndQuery(r.idFrom)}');`,
      `const body = await get(\`${before}\${list.${r.idFrom.items}[0].id}${after}\`);`,
      `console.log(body.${r.print.join('.')});`,
    ].join('\n');
  }
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
  if (r.idFrom) {
    const [before, after] = pathAndQuery(r).split(ID);
    return [
      'import json, os, urllib.request',
      '',
      'def get(path):',
      '    req = urllib.request.Request(',
      `        os.environ["${SAMPLE_ENV.url}"] + path,`,
      `        headers={"Authorization": "Bearer " + os.environ["${SAMPLE_ENV.key}"]},`,
      '    )',
      '    with urllib.request.urlopen(req) as res:  # raises HTTPError on 4xx/5xx',
      '        return json.load(res)',
      '',
      '# the id of a record, from the list',
      `record_id = get("${pathAndQuery(r.idFrom)}")["${r.idFrom.items}"][0]["id"]`,
      `body = get("${before}" + record_id${after ? ` + "${after}"` : ''})`,
      `print(body${r.print.map((k) => `["${k}"]`).join('')})`,
    ].join('\n');
  }
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
