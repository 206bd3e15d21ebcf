#!/usr/bin/env -S node --max-semi-space-size=64
// Thin launcher: the CLI lives in the compiled dist/ (built by `npm install` via the prepare script).
// A larger young generation (as `npm start` runs the server): request data mostly dies young, and with
// the default size too much of it survived into the old generation under load (GC was an eighth of a
// listing's CPU; with 64 MB semi-spaces a thirtieth).
import { runCliFromProcess } from '../dist/cli/index.js';
await runCliFromProcess();
