type OpenAIModule = typeof import("openai");

let loading: Promise<OpenAIModule> | undefined;
let loaded: OpenAIModule | undefined;

/**
 * The `openai` package, imported on first use: the judge rubric and the evaluator's model
 * client need it only when they call a model, and its ~240 modules were a tenth of
 * `edgegym serve`'s start-up (`node scripts/startup-time.mjs`). On a Worker esbuild bundles
 * it all the same (the client class reaches every part of it either way).
 */
export function importOpenAI(): Promise<OpenAIModule> {
  loading ??= import("openai").then((m) => (loaded = m));
  return loading;
}

/**
 * The package once imported, else undefined: what tells the openai client's errors apart
 * (`instanceof APIError`). Until it is imported no such error can exist, so a classifier
 * that finds it undefined has none to recognise.
 */
export function openaiIfImported(): OpenAIModule | undefined {
  return loaded;
}
