// The command loop of the JavaScript SDK client drivers, and the way every
// JavaScript peer loads the SDK of its environment.
//
// Protocol and result shapes: the same as pydriver.py. One JSON command per
// line on stdin; one answer line per command on stdout, prefixed "@@interop ",
// so whatever a library logs is never taken for an answer.
//
// The SDK is loaded from the environment given on the command line
// (.interop/js-<version>/, made by scripts/interop-setup), not from a
// node_modules beside this file. It is imported as an ES module, the way the
// SDK's documentation does; --cjs loads its CommonJS build with require().

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';

export const PREFIX = '@@interop ';

/** `require` that resolves packages inside the SDK environment `envDir`. */
export function sdkRequire(envDir) {
  return createRequire(path.resolve(envDir, 'package.json'));
}

/**
 * A loader of `@a2a-js/sdk` entry points (`'@a2a-js/sdk/server'` ...) from the
 * SDK environment `envDir`: the package's ES module build (its exports'
 * "import" condition), or with `cjs` its CommonJS build.
 */
export function sdkLoader(envDir, cjs = false) {
  const require = sdkRequire(envDir);
  if (cjs) return async (specifier) => require(specifier);
  const root = path.resolve(envDir, 'node_modules', '@a2a-js', 'sdk');
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  return async (specifier) => {
    const sub = '.' + specifier.slice('@a2a-js/sdk'.length);
    const entry = manifest.exports[sub];
    const file = typeof entry === 'string' ? entry : entry.import;
    return import(pathToFileURL(path.join(root, file)).href);
  };
}

/** `--name value` options (and the flag `--cjs`) and positional arguments of argv. */
export function parseArgs(argv) {
  const opts = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--cjs') {
      opts.cjs = true;
    } else if (argv[i].startsWith('--')) {
      opts[argv[i].slice(2)] = argv[i + 1];
      i++;
    } else {
      opts._.push(argv[i]);
    }
  }
  return opts;
}

export function emit(obj) {
  process.stdout.write(PREFIX + JSON.stringify(obj) + '\n');
}

export function errorOf(err) {
  let code = null;
  for (const holder of [err, err?.error, err?.cause]) {
    if (holder && Number.isInteger(holder.code)) {
      code = holder.code;
      break;
    }
  }
  return {
    type: err?.constructor?.name ?? typeof err,
    message: String(err?.message ?? err).slice(0, 2000),
    code,
  };
}

/** Answer commands with `handlers[op](args)` until stdin closes. */
export async function serve(handlers) {
  emit({ ready: true });
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const cmd = JSON.parse(line);
    const handler = handlers[cmd.op];
    if (!handler) {
      emit({ id: cmd.id, ok: false, error: { type: 'UnknownOp', message: cmd.op, code: null } });
      continue;
    }
    try {
      const result = await handler(cmd.args ?? {});
      emit({ id: cmd.id, ok: true, result });
    } catch (err) {
      process.stderr.write(`${err?.stack ?? err}\n`);
      emit({ id: cmd.id, ok: false, error: errorOf(err) });
    }
  }
}
