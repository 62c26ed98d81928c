/**
 * The methods the app's routes answer at a path, for the 405 reply's `Allow` header: a
 * request that reaches notFound with a path some route serves under another method is a
 * wrong method, not an unknown route. Built once from the route table (`app.routes`), where
 * middleware shows up as method "ALL" and is left out.
 */
export function allowedMethodsLookup(routes: readonly { method: string; path: string }[]): (path: string) => string[] {
  let table: { pattern: RegExp; methods: Set<string> }[] | undefined;
  const build = () => {
    const byPath = new Map<string, Set<string>>();
    for (const r of routes) {
      if (r.method === "ALL") continue;
      const methods = byPath.get(r.path) ?? new Set<string>();
      methods.add(r.method);
      // hono answers HEAD for every GET route.
      if (r.method === "GET") methods.add("HEAD");
      byPath.set(r.path, methods);
    }
    return [...byPath].map(([path, methods]) => ({ pattern: pathPattern(path), methods }));
  };
  return (path) => {
    table ??= build();
    const allowed = new Set<string>();
    for (const entry of table) if (entry.pattern.test(path)) for (const m of entry.methods) allowed.add(m);
    return [...allowed].sort();
  };
}

function pathPattern(path: string): RegExp {
  const source = path
    .split("/")
    .map((part) => (part.startsWith(":") ? "[^/]+" : part === "*" ? ".*" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}/?$`);
}
