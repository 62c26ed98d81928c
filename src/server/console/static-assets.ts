/**
 * Where the console's built files come from. The runtime entries supply one: the Node
 * server reads `dist/console` from disk, the Worker asks its static-assets binding. The
 * path given is already checked (see `safeAssetPath`): relative, `/`-separated, no `..`.
 */
export interface StaticAssets {
  /** The file's bytes, or null when there is no such file. */
  read(path: string): Promise<Uint8Array | null>;
}

/** Most path segments and characters a console asset path may have; a longer one is not ours. */
const MAX_PATH_CHARS = 256;
const MAX_SEGMENTS = 8;
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/**
 * The asset path under the console root for a request path (already URL-decoded by the
 * router), or null when it is not one we could have built: every segment must be plain
 * (letters, digits, `_ . -`, not starting with a dot), so `..`, `%2f`, backslashes, NUL and
 * hidden files never reach the file system or the binding.
 */
export function safeAssetPath(requestPath: string): string | null {
  if (requestPath.length === 0 || requestPath.length > MAX_PATH_CHARS) return null;
  const segments = requestPath.split("/");
  if (segments.length > MAX_SEGMENTS) return null;
  for (const segment of segments) if (!SEGMENT.test(segment)) return null;
  return segments.join("/");
}

const CONTENT_TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  ico: "image/x-icon",
  woff2: "font/woff2",
  txt: "text/plain; charset=utf-8",
  map: "application/json; charset=utf-8",
};

/** The Content-Type for a file name, by extension; unknown kinds are served as bytes, never sniffed. */
export function contentTypeFor(path: string): string {
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? "";
  return CONTENT_TYPES[ext] ?? "application/octet-stream";
}
