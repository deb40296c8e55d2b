// ESLint (typescript-eslint) for the sources, tests, benchmarks and scripts; Prettier owns the layout.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/dist-test/**',
      'node_modules/**',
      'data/**',
      '.bench/**',
      'packages/client/src/generated/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Tests and benchmarks poke at untyped JSON answers and driver internals on purpose.
    files: ['**/*.test.ts', 'test/**', 'bench/**', 'packages/client/test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
