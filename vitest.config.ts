import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // test/workerd runs inside workerd, through vitest.workerd.config.ts.
    exclude: [...configDefaults.exclude, "test/workerd/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores here: the process tests start servers, keep the pool small.
    maxWorkers: 2,
  },
});
