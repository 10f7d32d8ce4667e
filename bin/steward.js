#!/usr/bin/env node
// The installed `steward` command: runs the compiled CLI (npm run build first).
import '../dist/src/cli.js';
