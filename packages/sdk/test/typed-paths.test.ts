// The SDK's requests are typed by the generated `paths` (src/generated/openapi.ts), so a change of
// the API that the SDK does not follow fails the SDK's typecheck instead of shipping: the SDK's
// sources are type-checked here (the TypeScript compiler API, the package's own tsconfig.json)
// against the document's types as they are, then with a route renamed, a query parameter renamed
// and a field of an answer renamed, as `npm run generate:client` would write them after such a
// change of the API.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const PKG = fileURLToPath(new URL('..', import.meta.url));
const GENERATED = path.join(PKG, 'src/generated/openapi.ts');

const parsed = ts.getParsedCommandLineOfConfigFile(
  path.join(PKG, 'tsconfig.json'),
  { noEmit: true },
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  },
)!;

// Parsed once for every program below (lib.dom.d.ts is most of the time): all but the generated file.
const parsedFiles = new Map<string, ts.SourceFile | undefined>();

/** The SDK's type errors, as `file: message`, with the generated types changed by `change`. */
function typeErrors(change: (generated: string) => string = (text) => text): string[] {
  const host = ts.createCompilerHost(parsed.options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, onError) => {
    if (path.resolve(fileName) === GENERATED) {
      const text = ts.sys.readFile(fileName)!;
      const changed = change(text);
      return ts.createSourceFile(fileName, changed, language);
    }
    if (!parsedFiles.has(fileName)) parsedFiles.set(fileName, read(fileName, language, onError));
    return parsedFiles.get(fileName);
  };
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, host });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? path.relative(PKG, d.file.fileName) : '(no file)';
    return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

/** `text` with `from` replaced once, failing when it is not there (the generated file changed shape). */
function rename(text: string, from: string, to: string): string {
  expect(text, `the generated types hold ${from}`).toContain(from);
  return text.replace(from, to);
}

describe("the SDK's typecheck follows the OpenAPI document", () => {
  it('compiles against the document as it is', () => {
    expect(typeErrors()).toEqual([]);
  }, 60_000);

  it('fails when a route it calls is renamed', () => {
    const errors = typeErrors((text) => rename(text, '"/api/v1/citas/{id}": {', '"/api/v1/appointments/{id}": {'));
    expect(errors).toContainEqual(
      expect.stringMatching(/^src\/client\.ts: Argument of type '"\/api\/v1\/citas\/\{id\}"' is not assignable to parameter of type/),
    );
    expect(errors.every((e) => e.startsWith('src/client.ts: '))).toBe(true);
  }, 60_000);

  it('fails when a query parameter it sends is renamed', () => {
    const errors = typeErrors((text) => rename(text, '                cursor?: string;', '                after?: string;'));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e.startsWith('src/feed.ts: ') || e.startsWith('src/client.ts: '))).toBe(true);
    expect(errors.join('\n')).toMatch(/'cursor' does not exist in type/);
  }, 60_000);

  it('fails when a field of an answer it reads is renamed', () => {
    const errors = typeErrors((text) => rename(text, '            next_cursor: string;', '            cursor: string;'));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join('\n')).toMatch(/Property 'next_cursor' does not exist on type/);
  }, 60_000);
});
