/**
 * The files `edgegym init NAME` writes: an environment package that passes its own tests
 * as generated (an env, its dataset, tests, a README, a Worker entry and its wrangler
 * config). Plain JavaScript with JSDoc, so it runs on Node 22 with no build step.
 */
export interface InitOptions {
  /** npm package name and environment id (validated by the caller). */
  name: string;
  /** What package.json's `edgegym` dependency points at: a version range, a tarball or a folder. */
  edgegymSpec: string;
  /** The running edgegym's version, for the README. */
  version: string;
}

const TASKS = `/**
 * The environment's dataset: one row per task. \`prompt\` is what the model sees, \`answer\`
 * the reference the rubric compares with. Replace these with your own (or load a JSONL,
 * CSV or Parquet file with loadDataset from "edgegym"; see the authoring guide).
 */
export const tasks = [
  { prompt: "What is the opposite of hot?", answer: "cold" },
  { prompt: "What is the opposite of up?", answer: "down" },
  { prompt: "What is the opposite of early?", answer: "late" },
  { prompt: "What is the opposite of light?", answer: "dark" },
  { prompt: "What is the opposite of full?", answer: "empty" },
  { prompt: "What is the opposite of open?", answer: "closed" },
  { prompt: "What is the opposite of win?", answer: "lose" },
  { prompt: "What is the opposite of before?", answer: "after" },
];
`;

function envModule(name: string): string {
  return `import { defineRubric, formatReward, rowsDataset, singleTurnEnv, XmlParser } from "edgegym";
import { tasks } from "./tasks.js"; // [{ prompt: "What is the opposite of hot?", answer: "cold" }, …]

/**
 * ${name}: the model names the opposite of a word inside <answer>…</answer>.
 * Reward: 1 for the right word (any case, surrounding spaces ignored) plus 0.2 for the format.
 */
export const env = singleTurnEnv({
  id: ${JSON.stringify(name)},
  version: "0.1.0",
  description: "Name the opposite of a word.",
  systemPrompt: "Answer with one word inside <answer>…</answer>.",
  parser: new XmlParser({ fields: ["answer"] }),
  // Six tasks to train on, two held out for evaluation; the split is seeded, so it never moves.
  dataset: rowsDataset({ rows: tasks, evalFraction: 0.25, seed: 1 }),
  rubric: defineRubric([
    { name: "correct", weight: 1, fn: ({ completion, answer, parser }) => Number(parser.parseAnswer(completion)?.trim().toLowerCase() === answer?.toLowerCase()) },
    formatReward({ weight: 0.2 }),
  ]),
});

// \`edgegym serve --env .\` serves every environment this module exports.
export default env;
`;
}

const WORKER = `// The Cloudflare Workers entry: this package's environment over D1 (wrangler.jsonc "main").
// To serve edgegym's built-ins too: createWorker([env, ...builtinEnvs]) with builtinEnvs from "edgegym".
import { createWorker } from "edgegym/worker";
import { env } from "./index.js";

export default createWorker([env]);
`;

function testModule(name: string): string {
  return `import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { scoreEpisode, startEpisode, stepEpisode } from "edgegym";
import { env } from "../src/index.js";
import worker from "../src/worker.js";

/** Plays one episode of task \`index\` with \`content\` as the model's answer; returns the score. */
async function play(split, index, content) {
  const start = await startEpisode(env, { split, index, seed: 1 });
  const { snapshot } = await stepEpisode(env, start, { role: "assistant", content });
  assert.equal(snapshot.done, true);
  return scoreEpisode(env, snapshot);
}

describe(${JSON.stringify(name)}, () => {
  it("gives the best score, 1.2, to the right answer on every task", async () => {
    for (const split of ["train", "eval"]) {
      for (let index = 0; index < env.dataset.size(split); index++) {
        const { answer } = await env.dataset.row(split, index);
        const score = await play(split, index, \`<answer>\${answer}</answer>\`);
        assert.equal(score.reward, 1.2, \`\${split} \${index}\`);
      }
    }
  });

  it("gives a wrong answer only the format reward, and an untagged one nothing", async () => {
    assert.equal((await play("train", 0, "<answer>banana</answer>")).reward, 0.2);
    assert.equal((await play("train", 0, "banana")).reward, 0);
  });

  it("splits eight tasks into six to train on and two to evaluate", () => {
    assert.deepEqual([env.dataset.size("train"), env.dataset.size("eval")], [6, 2]);
  });

  it("has a Worker entry with the fetch and cron handlers", () => {
    assert.equal(typeof worker.fetch, "function");
    assert.equal(typeof worker.scheduled, "function");
  });
});
`;
}

function wranglerConfig(name: string): string {
  return `// The Cloudflare Workers build of this environment package (README: "On Cloudflare Workers").
{
  "name": ${JSON.stringify(name)},
  "main": "src/worker.js",
  "compatibility_date": "2026-11-01",
  "d1_databases": [
    {
      "binding": "DB",
      "database_name": ${JSON.stringify(name)},
      // edgegym's SQL migrations, shipped in its package.
      "migrations_dir": "node_modules/edgegym/drizzle"
    }
  ],
  // Reaps expired episodes (the Node server does it on a timer).
  "triggers": { "crons": ["*/10 * * * *"] },
  // EDGEGYM_API_KEYS is a secret: npx wrangler secret put EDGEGYM_API_KEYS
  "vars": { "EDGEGYM_TTL_SECONDS": "3600" }
}
`;
}

function readme(opts: InitOptions): string {
  return `# ${opts.name}

An edgegym ${opts.version} environment package: \`src/index.js\` is the
environment, \`src/tasks.js\` its dataset, \`test/\` its tests, \`src/worker.js\` and
\`wrangler.jsonc\` its Cloudflare Workers build.

\`\`\`sh
npm install
npm test                          # node --test: the rubric on every task
npm start                         # edgegym serve --env . on http://127.0.0.1:8787
curl -s localhost:8787/v1/envs/${opts.name}/episodes -H 'content-type: application/json' -d '{"index": 0}'
\`\`\`

Evaluate a model on it (any OpenAI-compatible endpoint):

\`\`\`sh
npx edgegym eval ${opts.name} --env-module . -m MODEL -b http://127.0.0.1:8080/v1 -n 6 -r 2
\`\`\`

## On Cloudflare Workers

\`src/worker.js\` serves this environment with edgegym's Worker runtime over D1, and
\`wrangler.jsonc\` applies edgegym's migrations from \`node_modules/edgegym/drizzle\`.

\`\`\`sh
npx wrangler d1 migrations apply DB --local && npx wrangler dev     # local, in workerd
npx wrangler d1 create ${opts.name}                                 # once: put its id in wrangler.jsonc
npx wrangler secret put EDGEGYM_API_KEYS                            # before strangers can reach it
npx wrangler d1 migrations apply DB --remote && npx wrangler deploy
\`\`\`

The \`edgegym\` dependency in package.json is \`${opts.edgegymSpec}\`.
`;
}

/** Relative path → contents of every file `edgegym init` writes. */
export function initFiles(opts: InitOptions): Record<string, string> {
  const pkg = {
    name: opts.name,
    version: "0.1.0",
    private: true,
    type: "module",
    exports: { ".": "./src/index.js" },
    engines: { node: ">=22.3" },
    scripts: {
      start: "edgegym serve --env .",
      test: "node --test",
    },
    dependencies: { edgegym: opts.edgegymSpec },
  };
  return {
    "package.json": `${JSON.stringify(pkg, null, 2)}\n`,
    "src/index.js": envModule(opts.name),
    "src/tasks.js": TASKS,
    "src/worker.js": WORKER,
    "test/env.test.js": testModule(opts.name),
    "wrangler.jsonc": wranglerConfig(opts.name),
    "README.md": readme(opts),
    ".gitignore": "node_modules/\n.edgegym/\n.wrangler/\noutputs/\n",
  };
}
