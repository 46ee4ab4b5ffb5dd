// ESLint: the recommended rules of ESLint and typescript-eslint (syntax only, no type-aware
// rules: they would re-run the type checker that `npm run typecheck` runs already), over every
// TypeScript file of the project. Formatting is Prettier's alone (`npm run format`).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const MAX_LEN = { code: 140, ignoreRegExpLiterals: true, ignoreUrls: true };

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'bench/.build/**',
      // The sources compiled for the tests' processes (test/helpers/built-sources.ts).
      '.cache/**',
      '.bench-data/**',
      'packages/sdk/src/generated/**',
      'src/**/*.generated.ts',
      'packages/*/dist/**',
      'packages/*/node_modules/**',
      // Linted by n8n's own rules instead (`n8n-node lint`, run by the root's `npm run lint`).
      'packages/n8n-nodes-clinic-api/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_name` marks a parameter or binding kept for its position or for documentation.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Prettier wraps code at 140 but leaves comments, strings and template literals (the dashboard's
      // HTML) as they are: the same width for them; break a long text into a concatenation, HTML where
      // whitespace does not matter. Only regexes and lines with a URL may run longer.
      // (ESLint's own rule, deprecated in favour of @stylistic's, which would be a dependency for one rule.)
      'max-len': ['error', MAX_LEN],
    },
  },
  {
    // The SDK's code runs in browsers and edge runtimes too: web platform globals only, and no
    // Node built-in module (its tsconfig has no Node types either; packages/sdk/test/portable.test.ts
    // checks the built files).
    files: ['packages/sdk/src/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^node:|^(fs|path|os|http|https|net|tls|crypto|stream|buffer|url|util|events|child_process|zlib|dns)(/|$)',
              message: 'the SDK runs outside Node too: use the web platform (fetch, URL, TextEncoder, AbortSignal)',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'Buffer', 'require', '__dirname', '__filename', 'global', 'setImmediate'],
    },
  },
  {
    // The MCP agenda view runs in an MCP host's frame: web platform globals only.
    files: ['src/http/mcp/agenda/view/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Tests walk parsed JSON documents by key, send control characters on purpose, and assign
    // a default before a try whose finally reads it.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-control-regex': 'off', 'no-useless-assignment': 'off' },
  },
  {
    // A test's title stays on the line of its it(...) however long: Prettier keeps it there, and
    // broken into a concatenation it would make Prettier indent the whole test again.
    files: ['test/**/*.ts', 'packages/*/test/**/*.ts'],
    rules: { 'max-len': ['error', { ...MAX_LEN, ignorePattern: '^\\s*(describe|it|test)\\([\'"`]' }] },
  },
);
