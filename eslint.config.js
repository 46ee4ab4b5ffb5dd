// ESLint: the recommended rules of ESLint and typescript-eslint (syntax only, no type-aware
// rules: they would re-run the type checker that `npm run typecheck` runs already), over every
// TypeScript file of the project. Formatting is Prettier's alone (`npm run format`).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/.build/**', 'data/**', 'test/client/api.d.ts', 'packages/*/dist/**', 'packages/*/node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_name` marks a parameter or binding kept for its position or for documentation.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests walk parsed JSON documents by key, send control characters on purpose, and assign
    // a default before a try whose finally reads it.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-control-regex': 'off', 'no-useless-assignment': 'off' },
  },
);
