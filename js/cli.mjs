#!/usr/bin/env node
// `node …/cli.mjs`: the launcher (cli.cjs, the package's bin) by the name
// it had before, which hook commands installed then still run.
import './cli.cjs';
