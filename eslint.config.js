// Lint what bites in async code, and the layering of docs/design.md §2:
// api → core ← store; modules → sdk only; sdk imports nothing from the rest of src;
// inside core only sync/ reaches into core/sync/; client CLI commands speak HTTP only.
import js from '@eslint/js';
import eslintConfigPrettier from 'eslint-config-prettier';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** What core never imports: the frameworks, the outer layers and the composition root. */
const CORE_BANS = [
  'express',
  'kysely',
  'better-sqlite3',
  'pg',
  'prom-client',
  '**/api/**',
  '**/store/**',
  '**/metrics/**',
  '**/cli/**',
  '**/contract/**',
  '**/steward*',
  '**/config*',
];
const CORE_MESSAGE = 'core never imports express, kysely, prom-client or the outer layers';
/** Only the composition root (steward.ts) and the CLI that starts it may import these. */
const ROOT_ONLY = ['**/steward*', '**/cli/**', '**/cli.js'];

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
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: globals.node,
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.tsx', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: ['./tsconfig.json', './ui/tsconfig.json'],
          noWarnOnMultipleProjects: true,
        }),
      ],
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
  // A file matched by two layer() entries gets only the later one: each entry lists all its bans.
  layer(['src/core/**/*.ts'], [...CORE_BANS], CORE_MESSAGE),
  layer(
    ['src/core/{requests,secrets,events,modules,schedules}/**/*.ts'],
    [...CORE_BANS, '**/core/sync/**', '../sync/**'],
    `${CORE_MESSAGE}; only the sync engine reaches into core/sync/`,
  ),
  layer(
    ['src/metrics/**/*.ts'],
    ['express', 'kysely', 'better-sqlite3', 'pg', '**/api/**', '**/store/**', ...ROOT_ONLY],
    "metrics see core's ports only",
  ),
  layer(
    ['src/store/**/*.ts'],
    ['express', '**/api/**', ...ROOT_ONLY],
    'the store does not know about HTTP',
  ),
  layer(
    ['src/api/**/*.ts'],
    ['kysely', 'better-sqlite3', 'pg', 'prom-client', '**/store/**', '**/metrics/**', ...ROOT_ONLY],
    'the API reaches storage only through core, metrics only through its observer',
  ),
  layer(
    ['src/contract/**/*.ts'],
    ['express', 'prom-client', '**/metrics/**', ...ROOT_ONLY],
    'the contract kit builds its own Steward from core and the store; it serves no HTTP',
  ),
  // The client commands reach Steward over HTTP only; the wire documents' types are fine. The local
  // commands are the exceptions: server-commands (serve, worker, migrate), the module authors' commands
  // (module test, init, dev), token-commands (the tokens file) and secrets-rotate (rewrites the database offline).
  {
    files: ['src/cli/**/*.ts'],
    ignores: [
      'src/cli/server-commands.ts',
      'src/cli/module-test-command.ts',
      'src/cli/module-target.ts',
      'src/cli/module-init-command.ts',
      'src/cli/token-commands.ts',
      'src/cli/secrets-rotate.ts',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/src/**',
                '../*',
                '!../sdk',
                '!../sdk/**',
                'express',
                'kysely',
                'better-sqlite3',
                'pg',
              ],
              allowTypeImports: true,
              message: 'a client command reaches Steward over HTTP only (import types, not code)',
            },
          ],
        },
      ],
    },
  },
  layer(
    ['src/cli/token-commands.ts'],
    ['**/core/**', '**/store/**', '**/metrics/**', '**/contract/**', ...ROOT_ONLY],
    'token commands edit the tokens file (api/auth) and nothing else of Steward',
  ),
  layer(
    ['modules/**/*.ts', 'examples/**/*.ts'],
    ['**/src/**', '!**/src/sdk', '!**/src/sdk/**', '../../*', '!../../src'],
    'modules import the SDK only (their own folder, node builtins and npm packages aside)',
  ),
  // The console (ui/) runs in a browser and reaches Steward over HTTP only: types from src/ (the
  // generated API types), never its code but the CLI's pure event-stream parser; no innerHTML, so a caller's data is never parsed as HTML.
  {
    files: ['ui/**/*.ts', 'ui/**/*.tsx'],
    languageOptions: { globals: globals.browser },
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // The CLI's event-stream parser is pure and shared (ui/src/api/event-stream.ts).
              regex: '/src/(?!cli/(?:sse|lines)\\.js$)',
              allowTypeImports: true,
              message: 'the console reaches Steward over HTTP only (import types, not code)',
            },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        { property: 'innerHTML', message: 'render with JSX: never insert data as HTML' },
        { property: 'outerHTML', message: 'render with JSX: never insert data as HTML' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "JSXAttribute[name.name='dangerouslySetInnerHTML']",
          message: 'render with JSX: never insert data as HTML',
        },
        {
          selector: "JSXAttribute[name.name='style']",
          message: "the CSP has no 'unsafe-inline': use a class from ui/styles.css",
        },
      ],
    },
  },
  eslintConfigPrettier,
);
