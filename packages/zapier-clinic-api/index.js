// The entry point Zapier's CLI and runtime load (package.json "main"): the app definition that
// `npm run build` compiles from src/ into dist/.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- Zapier loads a CommonJS module
module.exports = require('./dist/index.js');
