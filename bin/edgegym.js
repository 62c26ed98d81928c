#!/usr/bin/env node
// The CLI is compiled to dist/ by `npm install` (the prepare script) and `npm start`.
import "../dist/server/node/cli.js";
