#!/usr/bin/env node
// Thin launcher: the CLI lives in the compiled dist/ (built by `npm install` via the prepare script).
import { runCliFromProcess } from '../dist/cli/index.js';
await runCliFromProcess();
