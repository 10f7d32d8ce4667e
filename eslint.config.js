// Lint what bites in async code, and the layering of docs/design.md §2:
// api → core ← store; modules → sdk only; sdk imports nothing from the rest of src.
import js from '@eslint/js';
import eslintConfigPrettier from 'eslint-config-prettier';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const layer = (files, patterns, message) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ group: patterns, message }] }] },
});

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      'data/',
      'jest.config.js',
      'bin/',
      'test/summary-reporter.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { files: ['**/*.js', '**/*.mjs', '**/*.cjs'], languageOptions: { globals: globals.node } },
  // Imports sorted by one rule everywhere (--fix sorts them); layout is Prettier's (`npm run format`).
  {
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: { 'simple-import-sort/imports': 'error', 'simple-import-sort/exports': 'error' },
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: globals.node,
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'import-x/no-cycle': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='jest'][callee.property.name='mock']",
          message: 'inject dependencies instead of jest.mock',
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  layer(
    ['src/sdk/**/*.ts'],
    ['../*', '!./*', 'express', 'kysely', 'better-sqlite3', 'pg'],
    'the SDK imports nothing from the rest of Steward',
  ),
  layer(
    ['src/core/**/*.ts'],
    [
      'express',
      'kysely',
      'better-sqlite3',
      'pg',
      'prom-client',
      '**/api/**',
      '**/store/**',
      '**/metrics/**',
    ],
    'core never imports express, kysely, prom-client or the api/store/metrics layers',
  ),
  layer(
    ['src/metrics/**/*.ts'],
    ['express', 'kysely', 'better-sqlite3', 'pg', '**/api/**', '**/store/**'],
    "metrics see core's ports only",
  ),
  layer(['src/store/**/*.ts'], ['express', '**/api/**'], 'the store does not know about HTTP'),
  layer(
    ['src/api/**/*.ts'],
    ['kysely', 'better-sqlite3', 'pg', 'prom-client', '**/store/**', '**/metrics/**'],
    'the API reaches storage only through core, metrics only through its observer',
  ),
  layer(
    ['modules/**/*.ts', 'examples/**/*.ts'],
    ['**/src/core/**', '**/src/api/**', '**/src/store/**', '**/src/config*', '**/src/steward*'],
    'modules import the SDK only',
  ),
  eslintConfigPrettier,
);
