import { useEffect, useState } from "preact/hooks";

/** Console pages live under /ui; the server answers index.html for any of them (SPA fallback). */
export const BASE = "/ui";

export function href(path: string): string {
  return `${BASE}${path}`;
}

const listeners = new Set<() => void>();
addEventListener("popstate", () => listeners.forEach((l) => l()));

export function navigate(path: string): void {
  history.pushState(null, "", href(path));
  listeners.forEach((l) => l());
  scrollTo(0, 0);
}

/** The current page's path below /ui (e.g. `/envs/reverse-text`) and its query. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const read = () => ({ path: location.pathname.slice(BASE.length) || "/", query: new URLSearchParams(location.search) });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const l = () => setLoc(read());
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return loc;
}

/** Same-origin links navigate without a reload; modified clicks (new tab) keep the browser's behaviour. */
export function onLinkClick(e: MouseEvent): void {
  const a = (e.target as Element | null)?.closest?.("a");
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || a.target) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(`${BASE}/`)) return;
  // An in-page link (the skip link's #main) is the browser's to follow: routing it would drop the hash.
  if (url.hash && url.pathname === location.pathname && url.search === location.search) return;
  e.preventDefault();
  navigate(url.pathname.slice(BASE.length) + url.search);
}
