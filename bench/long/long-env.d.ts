import type { AnyEnvironment } from "../../src/envs/index.js";

/** bench/long/long-env.js: plain JS so `edgegym serve --env` loads it from dist/ as a user's package would. */
export declare const benchLong: AnyEnvironment;
