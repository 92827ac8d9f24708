// ESLint 9 (flat config) for the pages' plain ES modules: no bundler, browser globals only,
// plus Chart.js, which the pages load as a vendored global script.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["static/**/vendor/**", "staticfiles/**", "node_modules/**", ".venv/**"] },
  js.configs.recommended,
  {
    files: ["static/raterapp/js/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: { ...globals.browser, Chart: "readonly" },
    },
    rules: {
      "no-unused-vars": ["error", { caughtErrors: "none" }],
      eqeqeq: ["error", "always"],
      "no-restricted-globals": ["error", { name: "fetch", message: "Requests go through js/http.js." }],
    },
  },
  {
    files: ["static/raterapp/js/http.js"],
    rules: { "no-restricted-globals": "off" },
  },
  {
    // The unit tests of those modules, run by Node's own test runner (`make test-js`).
    files: ["tests/js/**/*.mjs"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.node } },
  },
];
