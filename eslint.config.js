// One linter for the whole repository, type-aware: a durable runtime that drops a promise loses
// data, so `no-floating-promises` and `no-misused-promises` are errors everywhere.
import { existsSync } from "node:fs";
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    // The consumer fixture is type-checked against the installed tarballs by its own test, not
    // against the sources.
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "**/.tsbuild/**",
      "scratch/**",
      "tests/consumer/fixture/*.ts",
      // The bench has its own install (scripts/ensure-bench.mjs); without it its imports of
      // LangGraph.js cannot be typed, so it is linted once installed (`npm run test:bench`).
      ...(existsSync("bench/node_modules") ? [] : ["bench/**"]),
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ["vitest.config.ts", "eslint.config.js", "scripts/*.mjs"],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false },
      globals: {
        console: "readonly",
        process: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
      },
    },
  },
  {
    files: ["**/*.cjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: "commonjs",
      parserOptions: { projectService: false },
      globals: { console: "readonly", process: "readonly", require: "readonly" },
    },
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      "@typescript-eslint/no-require-imports": "off",
    },
  },
);
